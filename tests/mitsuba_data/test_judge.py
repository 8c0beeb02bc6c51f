"""The acceptance criterion of run.py (Mitsuba's test_renders.py rule) on synthetic
images with known mean and variance: unbiased noise passes, a bias or a block of
wrong pixels fails."""

import importlib.util
from pathlib import Path

import numpy as np

spec = importlib.util.spec_from_file_location("run", Path(__file__).with_name("run.py"))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)

H = W = 48
SPP = run.SAMPLE_BUDGET // (H * W)


def reference(seed=0):
    rng = np.random.default_rng(seed)
    mean = rng.uniform(0.1, 1.0, (H, W, 3))
    var = 0.5 * mean**2  # per-sample variance
    return rng, mean, var


def noisy(rng, mean, var):
    return mean + rng.normal(0.0, 1.0, mean.shape) * np.sqrt(var / SPP)


def test_an_unbiased_render_passes():
    rng, mean, var = reference()
    for _ in range(5):
        r = run.judge(noisy(rng, mean, var), mean, var, SPP)
        assert r["pass"], r
        assert r["max_z"] < 6.0


def test_a_global_bias_fails():
    rng, mean, var = reference()
    r = run.judge(noisy(rng, mean, var) * 1.3, mean, var, SPP)
    assert not r["pass"], r


def test_swapped_channels_fail():
    rng, mean, var = reference()
    r = run.judge(noisy(rng, mean, var)[..., ::-1], mean, var, SPP)
    assert not r["pass"], r


def test_the_share_of_wrong_pixels_decides():
    # 99.75% of the pixels must pass: 2 wrong pixels of 2304 pass, 2% fail.
    rng, mean, var = reference()
    img = noisy(rng, mean, var)
    img[0, :2] += 10.0
    assert run.judge(img, mean, var, SPP)["pass"]
    img[:1, :] += 10.0
    assert not run.judge(img, mean, var, SPP)["pass"]


def test_spp_and_references_follow_test_renders():
    scene = Path("x/tests/scenes/spot_light/test_spot_direct.xml")
    assert run.integrator_of(scene) == "direct"
    ref, var = run.references(scene)
    assert (
        ref.name == "test_spot_ref_rgb.exr" and var.name == "test_spot_ref_rgb_var.exr"
    )
    assert SPP == 868
