"""TensorXf arithmetic and indexing on CUDA tensors: the elementwise kernel against NumPy
on the same float32 inputs, results that stay on the device, stream order after a
render, assignment that leaves earlier results and exports alone, and the errors for
mixing devices and for indexing that needs the host."""

import numpy as np
import pytest

import heliograph as hg

RNG = np.random.default_rng(5)

BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "true_divide": np.true_divide,
    "power": np.power, "minimum": np.minimum, "maximum": np.maximum, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "equal": np.equal, "not_equal": np.not_equal, "arctan2": np.arctan2,
}
UNARY = {
    "negative": np.negative, "absolute": np.absolute, "sqrt": np.sqrt, "exp": np.exp, "log": np.log,
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil, "sign": np.sign,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((5, 7, 3), (5, 7, 3)), ((5, 7, 3), (3,)), ((5, 1, 3), (7, 1)), ((4, 3), None)])
def test_binary_kernels_match_numpy(name, shapes):
    a = RNG.uniform(0.25, 2.0, shapes[0]).astype(np.float32)
    b = np.float32(1.25) if shapes[1] is None else RNG.uniform(0.25, 2.0, shapes[1]).astype(np.float32)
    if shapes[1] is not None:
        b.flat[0] = a.flat[0]
    ta = hg.TensorXf(a)
    tb = b if shapes[1] is None else hg.TensorXf(b)
    assert ta.device.startswith("cuda")
    r = getattr(np, name)(ta, tb)
    assert isinstance(r, hg.TensorXf) and r.device == ta.device  # stays on the device
    want = BINARY[name](a, b).astype(np.float32)
    np.testing.assert_allclose(r.numpy(), want, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_kernels_match_numpy(name):
    a = RNG.uniform(0.1, 3.0, (6, 9)).astype(np.float32)
    r = getattr(np, name)(hg.TensorXf(a))
    assert r.device.startswith("cuda")
    np.testing.assert_allclose(r.numpy(), UNARY[name](a), rtol=2e-6, atol=1e-7)


def test_operators_on_a_render_are_stream_ordered(make_seed):
    seed = make_seed()
    img = hg.render(seed.scene, spp=64, seed=1)
    out = (img * 2.0 + 1.0) ** (1.0 / 2.2)  # enqueued right behind the render, no host wait
    assert out.device == img.device
    want = (img.numpy() * np.float32(2.0) + np.float32(1.0)) ** np.float32(1 / 2.2)
    np.testing.assert_allclose(out.numpy(), want, rtol=2e-6)


def test_mixing_devices_is_an_error_not_a_copy():
    t = hg.TensorXf(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="host data"):
        t + np.ones((2, 3))
    with pytest.raises(ValueError, match="do not broadcast"):
        t + hg.TensorXf(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="not available on CUDA"):
        np.cbrt(t)


# ---------------------------------------------------------------- indexing

INDICES = [
    0, -1, (2, 3, 1), (-6, -5, -3), (slice(1, 4), slice(None, None, 2)), (Ellipsis, 0), (None, 1),
    slice(None, None, -1), (slice(5, 0, -2), Ellipsis, None, slice(None, None, -1)), slice(10, 20),
    (), Ellipsis, (-2, slice(None, 3), 2), (slice(None), None, slice(1, -1)), (Ellipsis, None),
    (slice(-100, 100, 3), slice(4, None, -3), slice(None, None, -2)),
]


def _ids(index):
    return repr(index).replace("slice", "s").replace("Ellipsis", "...")


@pytest.mark.parametrize("index", INDICES, ids=_ids)
def test_indexing_gathers_on_the_device_as_numpy_does(index):
    a = RNG.uniform(-1, 1, (6, 5, 3)).astype(np.float32)
    t = hg.TensorXf(a)
    want = a[index]
    r = t[index]
    if np.ndim(want) == 0:
        assert type(r) is float and r == want  # one element: a host read, as on the CPU
        return
    assert isinstance(r, hg.TensorXf) and r.device == t.device  # stays on the device
    assert r.shape == want.shape
    np.testing.assert_array_equal(r.numpy(), want)
    np.testing.assert_array_equal(t.numpy(), a)  # a read leaves the tensor alone


@pytest.mark.parametrize("value", ["number", "same shape", "last axis", "leading ones"])
@pytest.mark.parametrize("index", INDICES, ids=_ids)
def test_assignment_writes_on_the_device_as_numpy_does(index, value):
    a = RNG.uniform(-1, 1, (6, 5, 3)).astype(np.float32)
    sel = np.shape(a[index])
    v = {
        "number": np.float32(7.5),
        "same shape": RNG.uniform(2, 3, sel).astype(np.float32),
        "last axis": RNG.uniform(2, 3, sel[-1:]).astype(np.float32),
        # NumPy drops leading 1s of a value, except into one element ('setting an array
        # element with a sequence')
        "leading ones": RNG.uniform(2, 3, (1, 1) + sel if sel else ()).astype(np.float32),
    }[value]
    t = hg.TensorXf(a)
    t[index] = 7.5 if value == "number" else hg.TensorXf(v)
    want = a.copy()
    want[index] = v
    assert t.device.startswith("cuda") and t.shape == a.shape
    np.testing.assert_array_equal(t.numpy(), want)


def test_masks_select_on_the_device():
    a = RNG.uniform(0, 2, (8, 6, 3)).astype(np.float32)
    t = hg.TensorXf(a)
    t[t > 1] = 1  # Mitsuba's tutorial clamp
    want = np.where(a > 1, np.float32(1), a)
    np.testing.assert_array_equal(t.numpy(), want)
    # a pixel mask (H, W) over an (H, W, 3) image, one colour for every selected pixel
    pixels = a[..., 1] < 0.5
    t[hg.TensorXf(pixels.astype(np.float32))] = hg.TensorXf(np.array([0.1, 0.2, 0.3], np.float32))
    want[pixels] = [0.1, 0.2, 0.3]
    np.testing.assert_array_equal(t.numpy(), want)
    # non-zero is true, negative and NaN included (NumPy's mask != 0)
    m = np.zeros((8, 6, 3), np.float32)
    m[0, 0, 0], m[1, 1, 1], m[2, 2, 2] = -2.0, np.nan, 0.5
    t[hg.TensorXf(m)] = -9.0
    want[m != 0] = -9.0
    np.testing.assert_array_equal(t.numpy(), want)
    assert t.device.startswith("cuda")


def test_assignment_is_stream_ordered_and_earlier_results_keep_the_old_values(make_seed):
    seed = make_seed()
    ref = hg.render(seed.scene, spp=64, seed=1).numpy()  # the same scene and seed give the same bits
    img = hg.render(seed.scene, spp=64, seed=1)
    before = img * 1.0  # enqueued before the writes
    img[:20, :30, :] = 0.0  # enqueued right behind the render, no host wait
    img[img > 0.5] = 0.5
    after = img + 0.0  # enqueued after them: sees them
    want = ref.copy()
    want[:20, :30, :] = 0.0
    want[want > 0.5] = 0.5
    np.testing.assert_array_equal(after.numpy(), want)
    np.testing.assert_array_equal(img.numpy(), want)
    np.testing.assert_array_equal(before.numpy(), ref)


def test_exports_made_before_an_assignment_keep_the_old_values(torch):
    a = RNG.uniform(0, 1, (4, 5, 3)).astype(np.float32)
    t = hg.TensorXf(a)
    x = t.torch()  # shares t's memory at this point
    t[1:3] = 0.0  # as on the CPU, t takes new memory with the change
    torch.cuda.synchronize()
    np.testing.assert_array_equal(x.cpu().numpy(), a)
    want = a.copy()
    want[1:3] = 0.0
    np.testing.assert_array_equal(t.numpy(), want)


def test_indexing_errors_on_cuda_say_what_is_supported():
    a = np.ones((4, 5, 3), np.float32)
    t = hg.TensorXf(a)
    mask = t > 0
    with pytest.raises(IndexError, match=r"t\.numpy\(\)\[mask\.numpy\(\) != 0\]"):
        t[mask]
    with pytest.raises(IndexError, match=r"advanced\) indexing by a list is not supported; supported: ints, slices"):
        t[[0, 1]]
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 5"):
        t[0, 5]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 0 with size 4"):
        t[-5] = 0.0
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        t[::0] = 1.0
    with pytest.raises(ValueError, match=r"a CUDA tensor \(cuda:\d\) and host data \(ndarray\)"):
        t[0] = np.zeros((5, 3))
    with pytest.raises(ValueError, match="a host mask"):
        t[np.ones((4, 5, 3), bool)] = 0.0
    with pytest.raises(ValueError, match=r"a value of shape \(2, 3\) cannot be broadcast to the selected shape \(5, 3\)"):
        t[0] = hg.TensorXf(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="count of the mask on the host"):
        t[mask] = hg.TensorXf(np.ones((4, 5, 3), np.float32))
    with pytest.raises(IndexError, match="does not match the tensor along axis 1"):
        t[hg.TensorXf(np.ones((4, 4), np.float32))] = 0.0
    with pytest.raises(TypeError, match="'value' must be a number or an array, got str"):
        t[0] = "x"
    np.testing.assert_array_equal(t.numpy(), a)  # refused writes change nothing
    hg.set_variant("cpu_rgb")
    host = hg.TensorXf(a)
    hg.set_variant("cuda_rgb")
    with pytest.raises(ValueError, match="the value is a CUDA tensor and the target a host tensor"):
        host[0] = t[0]
    with pytest.raises(TypeError, match="a CUDA tensor cannot index a host tensor"):
        host[mask] = 0.0
