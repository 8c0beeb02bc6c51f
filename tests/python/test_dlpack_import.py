"""Imports of arrays that tests/fuzz/fuzz_dlpack.py found mishandled: NumPy arrays that
DLPack cannot describe, and a broadcast too large for memory. Every entry point that
takes an array must read them (or refuse them) alike."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import heliograph as hg

KEY = "shape.bsdf.reflectance.data"


def _texture_dict(x):
    return {"type": "scene", "shape": {"type": "rectangle", "bsdf": {"type": "diffuse",
            "reflectance": {"type": "bitmap", "data": x}}}}


def _via_tensor(x):
    return np.array(hg.TensorXf(x))


def _via_bitmap(x):
    return np.array(hg.Bitmap(x))


def _via_params(x):
    params = hg.traverse(hg.load_dict(_texture_dict(np.zeros(x.shape, np.float32))))
    params[KEY] = x
    return np.array(params[KEY])


def _via_load_dict(x):
    return np.array(hg.traverse(hg.load_dict(_texture_dict(x)))[KEY])


ENTRIES = [_via_tensor, _via_bitmap, _via_params, _via_load_dict]


def _values(dtype, shape=(3, 4, 3)):
    return (np.random.default_rng(5).random(shape) * 100).astype(dtype)


def _field(dtype, shape=(3, 4, 3), pad=1):
    """Field x of a structured array: strides of itemsize + pad bytes."""
    s = np.zeros(shape, dtype=[("x", dtype), ("pad", "u1", (pad,))])
    s["x"] = _values(dtype, shape)
    return s["x"]


def _odd_strides(dtype, shape=(3, 4, 3)):
    """An as_strided-style view whose byte strides are not a multiple of the item size."""
    size = np.dtype(dtype).itemsize
    strides = (shape[1] * shape[2] * (size + 3), shape[2] * (size + 3), size + 3)
    raw = np.zeros(strides[0] * shape[0] + size, np.uint8)
    x = np.ndarray(shape, dtype=dtype, buffer=raw, strides=strides)
    x[...] = _values(dtype, shape)
    return x


ARRAYS = [
    pytest.param(lambda: _values(">f4"), id="big-endian float32"),
    pytest.param(lambda: _values(">f8", (3, 8, 3))[::-1, ::2], id="big-endian float64, reversed, sliced"),
    pytest.param(lambda: _values(">f2").transpose(1, 0, 2), id="big-endian float16, transposed"),
    pytest.param(lambda: np.broadcast_to(_values(">f4", (1, 4, 3)), (3, 4, 3)), id="big-endian, broadcast"),
    pytest.param(lambda: _field("<f4"), id="field of a structured array"),
    pytest.param(lambda: _field(">f8", pad=3), id="big-endian field of a structured array"),
    pytest.param(lambda: _odd_strides("<f4"), id="byte strides not a multiple of 4"),
    pytest.param(lambda: _odd_strides("<f2"), id="float16, odd byte strides"),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda f: f.__name__[5:])
@pytest.mark.parametrize("make", ARRAYS)
def test_numpy_arrays_dlpack_cannot_describe_are_read(make, entry):
    # NumPy refuses to export these through DLPack ("only supports native byte order",
    # "strides which are a multiple of itemsize"); heliograph read none of them
    x = make()
    want = entry(x.astype(x.dtype.newbyteorder("="), order="C"))
    np.testing.assert_array_equal(want.reshape(x.shape), x.astype(np.float32))
    got = entry(x)
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [">i2", ">u4", ">i8", ">u8", "<u2"])
def test_big_endian_and_odd_strided_integers_are_read_exactly(dtype):
    x = np.arange(-50, 50).astype(dtype).reshape(10, 10)[::-1]
    np.testing.assert_array_equal(np.array(hg.TensorXf(x)), x.astype(np.float32))
    y = _odd_strides(dtype, (2, 5, 3))
    np.testing.assert_array_equal(np.array(hg.TensorXf(y)), y.astype(np.float32))


@pytest.mark.parametrize("x", [np.array(2.5, ">f4"), np.array(-7, ">i8"), np.zeros((2, 0, 3), ">f2"),
                               _field("<f4", ())])
def test_0d_and_empty_arrays_keep_their_shape(x):
    got = np.array(hg.TensorXf(x))
    assert got.shape == x.shape
    np.testing.assert_array_equal(got, x.astype(np.float32))


def test_a_long_double_array_is_still_refused_clearly():
    with pytest.raises(BufferError, match="IEEE"):
        hg.TensorXf(np.zeros(3, np.longdouble))


def test_a_broadcast_too_large_for_memory_is_a_value_error_from_every_entry_point():
    # In a child limited to 4 GiB of address space: a single float broadcast to 2^31
    # and 2^32 elements (8 and 16 GiB as float32). TensorXf raised RenderError ("a host
    # buffer could not be allocated"), Bitmap a ValueError: both must be ValueErrors.
    code = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({4 << 30}, {4 << 30}))
        import numpy as np
        import heliograph as hg
        for shape in [(2**31,), (2**16, 2**16), (2**15, 2**15, 4)]:
            x = np.broadcast_to(np.float32(0.5), shape)
            for make in (hg.TensorXf, hg.Bitmap):
                try:
                    make(x)
                    print("no error", shape)
                except Exception as e:
                    print(type(e).__name__, isinstance(e, ValueError), e)
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    out = (r.stdout + r.stderr).strip()
    assert r.returncode == 0, f"the interpreter died (exit status {r.returncode}): {out[-2000:]}"
    lines = out.splitlines()
    assert len(lines) == 6, out
    for line in lines:
        assert line.startswith("ValueError True out of memory: "), out
    assert "8.00 GiB for an array of shape [2147483648]" in lines[0], out
    assert "16.00 GiB for an array of shape [65536, 65536]" in lines[2], out
