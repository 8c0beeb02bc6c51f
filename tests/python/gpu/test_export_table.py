"""The DLPack export table (README), row by row, for both capsule kinds, on the GPU.

Each export is of a *fresh* heavy render (~50 ms of kernel on an H200), so an export that
forgets the wait it owes hands out a film that is not written yet, and the consumer's
copy differs from ``img.numpy()`` (the host read after a full wait on that render).
"""

import threading

import numpy as np
import pytest

import heliograph as hg
from heliograph import _native

from .common import CALL_FAILED, HEAVY, settle
from .dlpack_structs import FLAG_IS_COPIED, CapsuleHolder, capsule_name, compact_strides, inspect

KINDS = [pytest.param(None, id="legacy"), pytest.param((1, 0), id="versioned")]
SHAPE = (HEAVY["res"], HEAVY["res"], 3)


@pytest.fixture(autouse=True)
def _no_capsule_leaks(request):
    settle()
    n0 = _native._live_exports()
    yield
    if request.node.stash.get(CALL_FAILED, False):
        return  # the failure's traceback holds the test's capsules
    settle()
    assert _native._live_exports() == n0, "a capsule's deleter did not run (or ran twice)"


def _check_cuda_capsule(cap, versioned):
    info = inspect(cap)
    assert info.name == ("dltensor_versioned" if versioned else "dltensor")
    assert info.device == (2, 0), "a CUDA film exports as kDLCUDA device 0"
    assert info.dtype == (2, 32, 1), "float32"
    assert info.shape == SHAPE
    assert info.strides == compact_strides(SHAPE), "a full, compact strides array"
    assert info.byte_offset == 0 and info.data != 0 and info.has_deleter
    if versioned:
        assert info.version[0] == 1, f"versioned capsule of DLPack 1.x, got {info.version}"
        assert not info.flags & FLAG_IS_COPIED, "no copy was asked for"
    return info


def test_render_returns_at_once_and_the_film_is_a_cuda_tensor(heavy):
    img = heavy.render(seed=1)
    assert img.ready is False, "render() must return before a ~50 ms render finished (it is asynchronous)"
    assert img.device == "cuda:0"
    assert img.__dlpack_device__() == (2, 0)
    assert img.shape == SHAPE and img.dtype == np.float32
    a = img.numpy()
    assert img.ready is True
    assert a.shape == SHAPE and a.dtype == np.float32 and np.isfinite(a).all()
    np.testing.assert_array_equal(np.asarray(img), a)
    np.testing.assert_array_equal(np.array(img), a)
    # the texture shows: the centre is lit (albedo x unit sky), not a cleared film
    assert a[SHAPE[0] // 2 - 4:SHAPE[0] // 2 + 4, SHAPE[1] // 2 - 4:SHAPE[1] // 2 + 4].mean() > 0.01


@pytest.mark.parametrize("max_version", KINDS)
def test_stream_none_waits_on_the_host(heavy, torch, max_version):
    img = heavy.render(seed=2)
    cap = img.__dlpack__(stream=None, max_version=max_version)
    assert img.ready, "stream=None must host-wait on the film's ready event before returning"
    _check_cuda_capsule(cap, max_version is not None)
    y = torch.from_dlpack(cap).clone()
    torch.cuda.synchronize()
    assert capsule_name(cap).startswith("used_"), "torch consumed the capsule"
    np.testing.assert_array_equal(y.cpu().numpy(), img.numpy())


@pytest.mark.parametrize("max_version", KINDS)
def test_stream_minus_one_neither_waits_nor_blocks(heavy, torch, max_version):
    img = heavy.render(seed=3)
    cap = img.__dlpack__(stream=-1, max_version=max_version)
    assert not img.ready, "stream=-1 must not block the host"
    _check_cuda_capsule(cap, max_version is not None)
    ref = img.numpy()  # the consumer promised to order itself: here, by a host wait
    y = torch.from_dlpack(cap).clone()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), ref)


@pytest.mark.parametrize("max_version", KINDS)
def test_stream_1_makes_the_legacy_default_stream_wait(heavy, torch, max_version):
    assert torch.cuda.current_stream().cuda_stream == 0, "torch's current stream is the legacy default"
    img = heavy.render(seed=4)
    cap = img.__dlpack__(stream=1, max_version=max_version)
    assert not img.ready, "stream=1 enqueues a wait; it must not block the host"
    _check_cuda_capsule(cap, max_version is not None)
    y = torch.from_dlpack(cap).clone()  # on the legacy default stream, at once
    torch.cuda.current_stream().synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), img.numpy())


def _per_thread_stream_copy(heavy, cupy, max_version, seed):
    img = heavy.render(seed=seed)
    cap = img.__dlpack__(stream=2, max_version=max_version)
    blocked = img.ready
    ptds = cupy.cuda.Stream.ptds
    with ptds:
        y = cupy.from_dlpack(CapsuleHolder(cap, (2, 0))).copy()
    ptds.synchronize()
    return blocked, cupy.asnumpy(y), img.numpy()


@pytest.mark.parametrize("max_version", KINDS)
def test_stream_2_makes_the_calling_threads_default_stream_wait(heavy, cupy, max_version):
    blocked, got, ref = _per_thread_stream_copy(heavy, cupy, max_version, seed=5)
    assert not blocked, "stream=2 enqueues a wait; it must not block the host"
    np.testing.assert_array_equal(got, ref)
    # from another thread: the wait must go on *that* thread's per-thread stream
    out = {}

    def worker():
        try:
            out["r"] = _per_thread_stream_copy(heavy, cupy, max_version, seed=6)
        except BaseException as e:  # reported below
            out["e"] = e

    t = threading.Thread(target=worker)
    t.start()
    t.join(60)
    assert not t.is_alive(), "the export on a second thread hung"
    if "e" in out:
        raise out["e"]
    np.testing.assert_array_equal(out["r"][1], out["r"][2])


@pytest.mark.parametrize("max_version", KINDS)
def test_stream_above_2_makes_that_stream_wait(heavy, torch, max_version):
    s = torch.cuda.Stream()
    img = heavy.render(seed=7)
    cap = img.__dlpack__(stream=s.cuda_stream, max_version=max_version)
    assert not img.ready, "a consumer stream gets a wait; the host must not block"
    _check_cuda_capsule(cap, max_version is not None)
    with torch.cuda.stream(s):
        y = torch.from_dlpack(cap).clone()
    s.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), img.numpy())


@pytest.mark.parametrize("max_version", KINDS)
@pytest.mark.parametrize(
    "stream,exc",
    [(0, ValueError), (-2, ValueError), (-(2**40), ValueError), ("1", TypeError), (1.0, TypeError),
     (True, TypeError), (False, TypeError), ([1], TypeError)],
)
def test_invalid_streams_are_refused(make_seed, max_version, stream, exc):
    img = make_seed().render()
    with pytest.raises(exc, match="stream"):
        img.__dlpack__(stream=stream, max_version=max_version)
    assert img.numpy().shape == (64, 64, 3)  # the tensor is still usable


@pytest.mark.parametrize(
    "max_version,name,major",
    [(None, "dltensor", None), ((0, 8), "dltensor", None), ((1, 0), "dltensor_versioned", 1),
     ((1, 7), "dltensor_versioned", 1), ((2, 0), "dltensor_versioned", 1), ((3, 1), "dltensor_versioned", 1)],
)
def test_max_version_picks_the_capsule_kind(make_seed, max_version, name, major):
    img = make_seed().render()
    cap = img.__dlpack__(max_version=max_version)
    info = inspect(cap)
    assert info.name == name
    if major is not None:
        assert info.version[0] == major, "heliograph returns a 1.x capsule to any consumer of major >= 1"


@pytest.mark.parametrize("max_version", KINDS)
def test_dl_device_cpu_is_a_host_copy(heavy, max_version):
    img = heavy.render(seed=8)
    cap = img.__dlpack__(max_version=max_version, dl_device=(1, 0))
    info = inspect(cap)
    assert info.device == (1, 0) and info.shape == SHAPE and info.byte_offset == 0
    assert info.strides == compact_strides(SHAPE)
    if max_version is not None:
        assert info.flags & FLAG_IS_COPIED, "a host copy of a CUDA tensor sets IS_COPIED"
    host = np.from_dlpack(CapsuleHolder(cap, (1, 0)))
    np.testing.assert_array_equal(host, img.numpy())


def test_dl_device_cpu_on_a_consumer_stream_is_ordered_on_that_stream(heavy, torch):
    s = torch.cuda.Stream()
    img = heavy.render(seed=9)
    cap = img.__dlpack__(stream=s.cuda_stream, max_version=(1, 0), dl_device=(1, 0))
    s.synchronize()  # the copy to the host went on s (or after a host wait)
    host = np.from_dlpack(CapsuleHolder(cap, (1, 0)))
    np.testing.assert_array_equal(host, img.numpy())


@pytest.mark.parametrize("max_version", KINDS)
def test_dl_device_cpu_without_copy_is_a_buffer_error(make_seed, max_version):
    img = make_seed().render()
    with pytest.raises(BufferError):
        img.__dlpack__(max_version=max_version, dl_device=(1, 0), copy=False)


@pytest.mark.parametrize("max_version", KINDS)
def test_dl_device_cuda_0_is_the_same_as_none(heavy, torch, max_version):
    img = heavy.render(seed=10)
    cap = img.__dlpack__(max_version=max_version, dl_device=(2, 0))
    assert img.ready, "dl_device=(2, 0) with stream=None host-waits like stream=None"
    _check_cuda_capsule(cap, max_version is not None)
    np.testing.assert_array_equal(torch.from_dlpack(cap).cpu().numpy(), img.numpy())


@pytest.mark.parametrize("dl_device", [(2, 1), (3, 0), (1, 1), (13, 0), (10, 0)])
def test_other_devices_are_buffer_errors(make_seed, dl_device):
    img = make_seed().render()
    for mv in (None, (1, 0)):
        with pytest.raises(BufferError):
            img.__dlpack__(max_version=mv, dl_device=dl_device)


@pytest.mark.parametrize("max_version", KINDS)
def test_copy_true_is_an_independent_device_copy(heavy, torch, max_version):
    img = heavy.render(seed=11)
    cap = img.__dlpack__(stream=None, max_version=max_version, copy=True)
    alias = img.__dlpack__(stream=None, max_version=max_version)
    ci, ai = inspect(cap), inspect(alias)
    assert ci.device == (2, 0) and ci.shape == SHAPE and ci.strides == compact_strides(SHAPE)
    assert ci.data != ai.data, "copy=True must not hand out the film's own memory"
    if max_version is not None:
        assert ci.flags & FLAG_IS_COPIED and not ai.flags & FLAG_IS_COPIED
    copied = torch.from_dlpack(cap)
    np.testing.assert_array_equal(copied.cpu().numpy(), img.numpy())
    copied.zero_()  # writing the copy leaves the film alone
    torch.cuda.synchronize()
    np.testing.assert_array_equal(torch.from_dlpack(alias).cpu().numpy(), img.numpy())
    assert img.numpy().max() > 0


def test_failed_exports_leak_nothing(make_seed):
    img = make_seed().render()
    n0 = _native._live_exports()
    for kwargs in ({"stream": 0}, {"stream": -5}, {"stream": "x"}, {"dl_device": (3, 0)},
                   {"dl_device": (1, 0), "copy": False}):
        with pytest.raises((ValueError, TypeError, BufferError)):
            img.__dlpack__(**kwargs)
    assert _native._live_exports() == n0


def test_cpu_tensors_under_cuda_rgb_keep_the_cpu_rules():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    # as Mitsuba's, a TensorXf made from host data under cuda_rgb is on the GPU
    g = hg.TensorXf(a)
    assert g.device == "cuda:0" and g.__dlpack_device__() == (2, 0)
    np.testing.assert_array_equal(g.numpy(), a)
    # one made under cpu_rgb stays on the host, and keeps the host rules under cuda_rgb
    hg.set_variant("cpu_rgb")
    try:
        t = hg.TensorXf(a)
    finally:
        hg.set_variant("cuda_rgb")
    assert t.device == "cpu"
    for s in (-1, 1, 2, 12345):
        with pytest.raises(BufferError):
            t.__dlpack__(stream=s)
    with pytest.raises(ValueError):
        t.__dlpack__(stream=-2)
    with pytest.raises(TypeError):
        t.__dlpack__(stream=1.5)
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(6.0).reshape(2, 3))
