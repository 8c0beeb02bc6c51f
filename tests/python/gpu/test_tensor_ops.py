"""TensorXf arithmetic on CUDA tensors: the elementwise kernel against NumPy on the same
float32 inputs, results that stay on the device, stream order after a render, and the
errors for mixing devices."""

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
