"""Each consumer, the way its users call it, on a fresh ~50 ms render (a consumer whose
stream is not made to wait reads an unwritten film): JAX, PyTorch (default stream, side
stream, ExternalStream), CuPy, NumPy, TensorFlow, and heliograph's own convenience methods.
The truth is ``img.numpy()``: a host read after a full wait on that render.
"""

import numpy as np
import pytest

from heliograph import _native

from .common import settle


def _fresh(heavy, seed):
    img = heavy.render(seed=seed)
    assert not img.ready, "the render must still be running when the consumer takes it"
    return img


# ---------------------------------------------------------------- JAX


@pytest.mark.parametrize("how", ["jax.dlpack.from_dlpack", "jnp.from_dlpack", "img.jax()"])
def test_jax(heavy, jax, how):
    jnp = jax.numpy
    fn = {"jax.dlpack.from_dlpack": jax.dlpack.from_dlpack, "jnp.from_dlpack": jnp.from_dlpack,
          "img.jax()": lambda img: img.jax()}[how]
    fn(heavy.render()).block_until_ready()  # compile the import path
    for seed in range(3):
        img = _fresh(heavy, seed)
        y = jnp.asarray(fn(img)) + 0  # enqueued on JAX's stream at once
        y.block_until_ready()
        assert y.dtype == jnp.float32 and y.shape == img.shape
        np.testing.assert_array_equal(np.asarray(y), img.numpy())


# ---------------------------------------------------------------- PyTorch


def test_torch_default_stream(heavy, torch):
    for seed, fn in enumerate([torch.from_dlpack, lambda img: img.torch()]):
        img = _fresh(heavy, seed)
        y = fn(img).clone()
        assert y.device.type == "cuda" and y.dtype == torch.float32
        torch.cuda.current_stream().synchronize()
        np.testing.assert_array_equal(y.cpu().numpy(), img.numpy())


def test_torch_side_stream(heavy, torch):
    s = torch.cuda.Stream()
    for seed in range(3):
        img = _fresh(heavy, seed)
        with torch.cuda.stream(s):
            y = torch.from_dlpack(img).clone()
        s.synchronize()
        np.testing.assert_array_equal(y.cpu().numpy(), img.numpy())


@pytest.mark.parametrize("creator", ["cupy", "torch"])
def test_torch_external_stream(heavy, torch, request, creator):
    if creator == "cupy":
        cupy = request.getfixturevalue("cupy")
        raw = cupy.cuda.Stream(non_blocking=True)
        handle = raw.ptr
    else:
        raw = torch.cuda.Stream()
        handle = raw.cuda_stream
    ext = torch.cuda.ExternalStream(handle)
    for seed in range(2):
        img = _fresh(heavy, seed)
        with torch.cuda.stream(ext):
            y = torch.from_dlpack(img).clone()
        ext.synchronize()
        np.testing.assert_array_equal(y.cpu().numpy(), img.numpy())
    del raw  # kept alive until here: the ExternalStream does not own it


# ---------------------------------------------------------------- CuPy


def test_cupy_current_and_side_streams(heavy, cupy):
    img = _fresh(heavy, 0)
    y = cupy.from_dlpack(img).copy()  # null stream: CuPy passes stream=1
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(y), img.numpy())
    s = cupy.cuda.Stream(non_blocking=True)
    img = _fresh(heavy, 1)
    with s:
        y = cupy.from_dlpack(img).copy()
    s.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(y), img.numpy())
    img = _fresh(heavy, 2)
    y = img.cupy().copy()
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(y), img.numpy())


# ---------------------------------------------------------------- NumPy and host reads


def test_numpy_from_dlpack_refuses_or_copies_and_leaks_nothing(heavy):
    settle()
    n0 = _native._live_exports()
    img = heavy.render(seed=1)
    ref = img.numpy().copy()  # numpy() may be a view that holds an export of its own
    # NumPy 2.x passes dl_device=None and no stream; it then sees a kDLCUDA tensor and raises
    # BufferError ("Unsupported device in DLTensor"). A host copy would be right as well.
    try:
        arr = np.from_dlpack(img)
    except (BufferError, RuntimeError, ValueError, TypeError) as e:
        print(f"np.from_dlpack(cuda tensor) raised {type(e).__name__}: {e}")
    else:
        np.testing.assert_array_equal(arr, ref)
        del arr
    settle()
    assert _native._live_exports() == n0, "the refused capsule must be freed by its destructor"
    # device="cpu" makes NumPy pass dl_device=(1, 0): heliograph copies to the host
    img = heavy.render(seed=2)
    arr = np.from_dlpack(img, device="cpu")
    np.testing.assert_array_equal(arr, img.numpy())
    del arr, img
    settle()
    assert _native._live_exports() == n0


def test_numpy_asarray_and_indexing_wait_for_the_render(heavy):
    a = _fresh(heavy, 3).numpy()  # waits for this render only
    b = np.asarray(_fresh(heavy, 3))  # same seed and scene: same bits (deterministic backend)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.array(_fresh(heavy, 3)), a)
    assert float(_fresh(heavy, 3)[256, 256, 1]) == a[256, 256, 1]


# ---------------------------------------------------------------- TensorFlow


def test_tensorflow(heavy, tf):
    img = _fresh(heavy, 4)
    x = img.tf()  # a stream=None capsule: host wait, then TF computes on its own streams
    np.testing.assert_array_equal((x + 0).numpy(), img.numpy())
    img = _fresh(heavy, 5)
    x = tf.experimental.dlpack.from_dlpack(img.__dlpack__())
    np.testing.assert_array_equal((x + 0).numpy(), img.numpy())
