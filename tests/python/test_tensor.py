"""TensorXf: construction, NumPy interop and CPU DLPack export (the README's rules)."""

import ctypes
import gc

import numpy as np
import pytest

import heliograph as hg
from heliograph import _native

_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _capsule_name(cap):
    for name in [b"dltensor", b"dltensor_versioned", b"used_dltensor", b"used_dltensor_versioned"]:
        if _capsule_is_valid(cap, name):
            return name.decode()
    return None


def test_construction_from_numpy_lists_tensors_and_dlpack_producers():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    t = hg.TensorXf(a)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and len(t) == 2
    assert t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), a.astype(np.float32))
    np.testing.assert_array_equal(np.array(hg.TensorXf([[1, 2], [3, 4]])), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(np.array(hg.TensorXf(t)), a)
    # a non-contiguous view goes through DLPack strides
    np.testing.assert_array_equal(np.array(hg.TensorXf(a[:, ::2, 1:])), a[:, ::2, 1:])
    np.testing.assert_array_equal(np.array(hg.TensorXf(np.float16([0.5, -2.0]))), [0.5, -2.0])
    assert hg.TensorXf(3.5).shape == ()


@pytest.mark.parametrize("bad,exc", [("text", TypeError), ({"a": 1}, TypeError), (np.array(["x"]), TypeError)])
def test_construction_errors(bad, exc):
    with pytest.raises(exc):
        hg.TensorXf(bad)


def test_numpy_view_is_zero_copy_aligned_and_array_protocol_works():
    t = hg.TensorXf(np.ones((5, 7, 3)))
    v1, v2 = t.numpy(), np.from_dlpack(t)
    assert np.shares_memory(v1, v2)
    assert v1.ctypes.data % 64 == 0
    assert np.asarray(t).dtype == np.float32
    c = np.array(t, copy=True)
    assert not np.shares_memory(c, v1)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(t, dtype=np.float64, copy=False)
    assert t[0, 0, 1] == 1.0
    assert repr(hg.TensorXf([1.0, 2.0])) == "TensorXf([1., 2.], shape=(2,))"


def test_dlpack_capsules_legacy_and_versioned():
    t = hg.TensorXf(np.zeros((2, 2)))
    assert t.__dlpack_device__() == (1, 0)
    assert _capsule_name(t.__dlpack__()) == "dltensor"
    assert _capsule_name(t.__dlpack__(stream=None)) == "dltensor"
    assert _capsule_name(t.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert _capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert _capsule_name(t.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)) == "dltensor_versioned"


@pytest.mark.parametrize("stream", [-1, 0, 1, 2, 7])
def test_a_cpu_tensor_accepts_only_stream_none(stream):
    t = hg.TensorXf(np.zeros(3))
    with pytest.raises(BufferError, match=f"only stream=None, got stream={stream}"):
        t.__dlpack__(stream=stream)


def test_dlpack_argument_errors():
    t = hg.TensorXf(np.zeros(3))
    with pytest.raises(ValueError, match="must be >= -1"):
        t.__dlpack__(stream=-2)
    with pytest.raises(TypeError, match="stream must be None or an int"):
        t.__dlpack__(stream="cuda")
    with pytest.raises(TypeError, match="stream must be None or an int"):
        t.__dlpack__(stream=True)
    with pytest.raises(BufferError, match=r"cannot be exported to device \(2, 0\)"):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError, match="max_version"):
        t.__dlpack__(max_version="1.0")
    with pytest.raises(TypeError):
        t.__dlpack__(None)  # keyword-only


class _Holder:
    """Hands out a capsule made earlier (to consume it after the tensor is gone)."""

    def __init__(self, cap, versioned):
        self.cap, self.versioned = cap, versioned

    def __dlpack__(self, max_version=None, **kwargs):
        if self.versioned and (max_version is None or max_version[0] < 1):
            raise TypeError("this holder only has a versioned capsule")
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


def test_copy_true_gives_independent_memory():
    t = hg.TensorXf(np.arange(4.0))
    view = np.from_dlpack(t)
    copied = np.from_dlpack(_Holder(t.__dlpack__(copy=True), versioned=False))
    assert not np.shares_memory(view, copied)
    np.testing.assert_array_equal(view, copied)


def _versioned_capsules_supported():
    try:
        np.from_dlpack(_Holder(hg.TensorXf([1.0]).__dlpack__(max_version=(1, 0)), versioned=True))
        return True
    except (TypeError, ValueError, BufferError):
        return False  # NumPy < 2.1 asks for legacy capsules only


@pytest.mark.parametrize("versioned", [False, True])
def test_capsule_keeps_memory_alive_and_is_freed_exactly_once(versioned):
    if versioned and not _versioned_capsules_supported():
        pytest.skip("this NumPy consumes only legacy capsules")
    gc.collect()
    n0 = _native._live_exports()
    # unconsumed capsule: the capsule destructor frees it
    cap = hg.TensorXf(np.ones(8)).__dlpack__(max_version=(1, 0) if versioned else None)
    assert _native._live_exports() == n0 + 1
    del cap
    gc.collect()
    assert _native._live_exports() == n0
    # consumed after the producer is gone: data still valid, freed when the consumer is
    t = hg.TensorXf(np.arange(1000.0))
    cap = t.__dlpack__(max_version=(1, 0) if versioned else None)
    del t
    gc.collect()
    arr = np.from_dlpack(_Holder(cap, versioned))
    assert _capsule_name(cap) == ("used_dltensor_versioned" if versioned else "used_dltensor")
    del cap
    gc.collect()
    np.testing.assert_array_equal(arr, np.arange(1000.0))
    assert _native._live_exports() == n0 + 1
    del arr
    gc.collect()
    assert _native._live_exports() == n0


def test_png_repr_is_a_png_of_the_tonemapped_image():
    t = hg.TensorXf(np.full((3, 4, 3), 0.5))
    png = t._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert hg.TensorXf(np.zeros((2, 2, 2, 2)))._repr_png_() is None


def test_jax_interop():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    a = np.random.default_rng(0).random((4, 5, 3)).astype(np.float32)
    t = hg.TensorXf(a)
    np.testing.assert_array_equal(np.asarray(t.jax()), a)
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(t)), a)
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(t)), a)
    # and back: a JAX array is a DLPack producer
    np.testing.assert_array_equal(np.array(hg.TensorXf(jnp.asarray(a) * 2)), a * 2)


def test_torch_interop():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).random((4, 5, 3)).astype(np.float32)
    t = hg.TensorXf(a)
    np.testing.assert_array_equal(t.torch().numpy(), a)
    np.testing.assert_array_equal(torch.from_dlpack(t).numpy(), a)
    np.testing.assert_array_equal(np.array(hg.TensorXf(torch.from_numpy(a) * 2)), a * 2)


def test_tf_interop():
    pytest.importorskip("tensorflow")
    a = np.random.default_rng(0).random((4, 5, 3)).astype(np.float32)
    np.testing.assert_array_equal(hg.TensorXf(a).tf().numpy(), a)


class _FakeProducer:
    def __init__(self, device=(1, 0), result=None):
        self.device, self.result = device, result

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        return self.result


def test_import_refuses_cuda_producers_and_bad_capsules():
    with pytest.raises(BufferError, match="CUDA array cannot be imported without the CUDA backend"):
        hg.TensorXf(_FakeProducer(device=(2, 0)))
    with pytest.raises(TypeError, match="did not return a capsule"):
        hg.TensorXf(_FakeProducer(result=42))
    used = hg.TensorXf([1.0]).__dlpack__()
    np.from_dlpack(_Holder(used, versioned=False))  # consumes it
    with pytest.raises(ValueError, match="not an unconsumed DLPack tensor"):
        hg.TensorXf(_FakeProducer(result=used))


def test_import_of_a_legacy_only_producer():
    class Legacy:
        def __init__(self, t):
            self.t = t

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None):  # no max_version: an older producer
            return self.t.__dlpack__(stream=stream)

    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(np.array(hg.TensorXf(Legacy(hg.TensorXf(a)))), a)


def test_png_repr_is_clamped_srgb(tmp_path):
    vals = np.array([[[0.0, 0.2140, 1.0], [2.0, -1.0, 0.5]]], dtype=np.float32)  # 0.2140 linear = 0.5 sRGB
    path = tmp_path / "repr.png"
    path.write_bytes(hg.TensorXf(vals)._repr_png_())
    png = hg.Bitmap(path).convert(component_format=hg.Struct.Type.Float32, srgb_gamma=False)
    back = np.array(png)  # decoded from sRGB to linear again
    np.testing.assert_allclose(back, np.clip(vals, 0, 1), atol=0.005)


def test_concurrent_readers_of_one_render_see_the_same_image(small_scene):
    import threading

    img = hg.render(small_scene, spp=64)
    out = [None] * 4

    def read(i):
        out[i] = np.array(img)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in out[1:]:
        np.testing.assert_array_equal(o, out[0])
