"""The DLPack rules for CPU tensors, beyond test_tensor.py: exports of a render still running wait for
it, every stream other than None is refused (and how), max_version / dl_device / copy, and
the capsule's fields as the consumer reads them (ctypes, without consuming).
"""

import numpy as np
import pytest

import heliograph as hg
from conftest import seed_dict
from gpu.dlpack_structs import (
    FLAG_IS_COPIED,
    FLAG_READ_ONLY,
    CapsuleHolder,
    compact_strides,
    consume_on_another_thread,
    inspect,
)
from heliograph import _native

KINDS = [pytest.param(None, id="legacy"), pytest.param((1, 0), id="versioned")]


def _running_render(res=96, spp=128):
    scene = hg.load_dict(seed_dict(np.random.default_rng(0).random((8, 8, 3)), res=res))
    hg.render(scene, spp=4).numpy()  # warm: the pool, the scene's first build
    img = hg.render(scene, spp=spp, seed=3)
    if img.ready:
        pytest.skip("the render finished before it could be exported; cannot test the wait")
    return scene, img


@pytest.mark.parametrize("max_version", KINDS)
def test_an_export_waits_for_the_background_render(max_version):
    scene, img = _running_render()
    cap = img.__dlpack__(max_version=max_version)
    assert img.ready, "stream=None must wait for the render before handing out the memory"
    got = np.from_dlpack(CapsuleHolder(cap, (1, 0)))
    np.testing.assert_array_equal(got, np.array(hg.render(scene, spp=128, seed=3)))


def test_numpy_from_dlpack_of_a_running_render_waits_and_aliases():
    scene, img = _running_render()
    a = np.from_dlpack(img)  # NumPy passes dl_device=None, copy=None, max_version=(1, x)
    assert img.ready
    assert np.shares_memory(a, img.numpy()), "no copy was asked for"
    np.testing.assert_array_equal(a, np.array(hg.render(scene, spp=128, seed=3)))


def test_numpy_device_cpu_and_copy_keywords():
    t = hg.TensorXf(np.arange(12.0).reshape(2, 2, 3))
    view = t.numpy()
    assert np.shares_memory(np.from_dlpack(t, device="cpu"), view)
    copied = np.from_dlpack(t, copy=True)
    assert not np.shares_memory(copied, view)
    np.testing.assert_array_equal(copied, view)
    assert np.shares_memory(np.from_dlpack(t, copy=False), view)


@pytest.mark.parametrize("stream", [-1, 0, 1, 2, 3, 2**40])
def test_a_running_render_refuses_streams_and_stays_readable(stream):
    scene, img = _running_render(spp=32)
    with pytest.raises(BufferError, match="only stream=None"):
        img.__dlpack__(stream=stream)
    np.testing.assert_array_equal(np.array(img), np.array(hg.render(scene, spp=32, seed=3)))


@pytest.mark.parametrize("max_version", KINDS)
@pytest.mark.parametrize(
    "stream,exc",
    [(-2, ValueError), (-(2**40), ValueError), (1.0, TypeError), (False, TypeError), ("1", TypeError),
     ([1], TypeError), (b"\x01", TypeError)],
)
def test_stream_values_that_are_not_streams(max_version, stream, exc):
    t = hg.TensorXf(np.zeros((2, 3)))
    with pytest.raises(exc, match="stream"):
        t.__dlpack__(stream=stream, max_version=max_version)


@pytest.mark.parametrize(
    "max_version,name",
    [(None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"), ((1, 9), "dltensor_versioned"),
     ((2, 0), "dltensor_versioned"), ((3, 1), "dltensor_versioned")],
)
def test_max_version_picks_the_capsule_and_the_version_is_1_x(max_version, name):
    info = inspect(hg.TensorXf(np.zeros((4, 5, 3))).__dlpack__(max_version=max_version))
    assert info.name == name
    if name == "dltensor_versioned":
        assert info.version[0] == 1, f"a producer may answer an older major: 1.x, got {info.version}"
        assert info.flags & ~(FLAG_READ_ONLY | FLAG_IS_COPIED) == 0, f"unknown flags {info.flags:#x}"


@pytest.mark.parametrize("max_version", KINDS)
def test_capsule_fields_as_a_consumer_reads_them(max_version):
    a = np.random.default_rng(2).random((7, 9, 3)).astype(np.float32)
    t = hg.TensorXf(a)
    info = inspect(t.__dlpack__(max_version=max_version))
    assert info.device == (1, 0)
    assert info.dtype == (2, 32, 1)
    assert info.shape == (7, 9, 3)
    assert info.strides == compact_strides((7, 9, 3)), "a full strides array (required from DLPack 1.2)"
    assert info.byte_offset == 0
    assert info.data % 64 == 0, "host buffers are 64-byte aligned (XLA:CPU copies others)"
    assert info.has_deleter
    if max_version is not None:
        assert not info.flags & FLAG_IS_COPIED
    # 0-d and 1-d tensors too
    assert inspect(hg.TensorXf(2.5).__dlpack__()).shape == ()
    assert inspect(hg.TensorXf([1.0, 2.0]).__dlpack__()).strides == (1,)


@pytest.mark.parametrize("max_version", KINDS)
def test_dl_device_and_copy(max_version):
    t = hg.TensorXf(np.arange(6.0).reshape(2, 3))
    base = inspect(t.__dlpack__(max_version=max_version))
    for kwargs in ({"dl_device": (1, 0)}, {"dl_device": (1, 0), "copy": False}, {"copy": False},
                   {"dl_device": None, "copy": None}):
        info = inspect(t.__dlpack__(max_version=max_version, **kwargs))
        assert info.data == base.data and info.device == (1, 0), kwargs
        if max_version is not None:
            assert not info.flags & FLAG_IS_COPIED, kwargs
    for kwargs in ({"copy": True}, {"dl_device": (1, 0), "copy": True}):
        cap = t.__dlpack__(max_version=max_version, **kwargs)
        info = inspect(cap)
        assert info.data != base.data and info.device == (1, 0), kwargs
        if max_version is not None:
            assert info.flags & FLAG_IS_COPIED, f"{kwargs}: a copy sets IS_COPIED"
        np.testing.assert_array_equal(np.from_dlpack(CapsuleHolder(cap, (1, 0))), t.numpy())
    for dev in ((2, 0), (1, 1), (3, 0), (13, 0)):
        with pytest.raises(BufferError):
            t.__dlpack__(max_version=max_version, dl_device=dev)


def test_refused_exports_leak_nothing():
    t = hg.TensorXf(np.zeros(3))
    n0 = _native._live_exports()
    for kwargs in ({"stream": -1}, {"stream": 5}, {"stream": -3}, {"stream": "x"}, {"dl_device": (2, 0)},
                   {"max_version": "1.0"}):
        with pytest.raises((BufferError, ValueError, TypeError)):
            t.__dlpack__(**kwargs)
    assert _native._live_exports() == n0


def test_dlpack_device_of_a_running_render_does_not_wait():
    _, img = _running_render()
    assert img.__dlpack_device__() == (1, 0)
    assert not img.ready, "__dlpack_device__ must not wait for the render"
    img.numpy()


@pytest.mark.skipif(not hasattr(hg, "sync_device"), reason="hg.sync_device is not in this build yet")
def test_cpu_side_of_the_cuda_api():
    t = hg.TensorXf(np.zeros((2, 2)))
    assert t.device == "cpu"
    hg.sync_device()  # a no-op on the CPU variant
    with pytest.raises(hg.CudaUnavailableError):
        hg.cuda_stream()
    count, nbytes = _native._cuda_live_buffers()
    assert isinstance(count, int) and isinstance(nbytes, int) and count >= 0 and nbytes >= 0


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_the_deleter_runs_on_another_thread_without_the_gil(max_version):
    n0 = _native._live_exports()
    t = hg.TensorXf(np.arange(12, dtype=np.float32).reshape(3, 4))
    cap = t.__dlpack__(max_version=max_version)
    del t  # the capsule holds the last share of the buffer
    assert _native._live_exports() == n0 + 1
    assert consume_on_another_thread(cap) == (3, 4)
    assert _native._live_exports() == n0
    del cap  # consumed: its destructor must not call the deleter again
    assert _native._live_exports() == n0
