"""The seed scenario, compared with Mitsuba 3 (references/seed_reference.npz).

Sequence: load_dict with a Bitmap texture A, traverse, render,
set ``shape.bsdf.reflectance.data`` to texture B, update, render again (seed 1),
export. Each heliograph image is estimated from BATCHES independent renders (seeds
differ) so that its noise can be measured; the criterion, per block of BLOCK x BLOCK
pixels and channel, is a two-sided test of heliograph's block mean against Mitsuba's:

    t = (mean_hg - mean_ref) / sqrt(var_hg / BATCHES + se_ref^2 + floor^2)

with var_hg the batch variance of the block mean (Student t, BATCHES - 1 degrees of
freedom), se_ref the mean of the reference's per-pixel standard errors over the block
(an upper bound on the block mean's error), and a floor for float round-off on noise-free
blocks. An image fails if any p-value < ALPHA / number of tests (Bonferroni).
The second render must match reference B and must *fail* against reference A: the new
texture is visible, far above the noise.
"""

import math
import os

import numpy as np
import pytest

import heliograph as hg
from conftest import seed_dict

REF = os.path.join(os.path.dirname(__file__), "references", "seed_reference.npz")
BATCHES, BLOCK, ALPHA = 16, 4, 1e-3
REL_FLOOR, ABS_FLOOR = 0.005, 1e-4


def _betacf(a, b, x):
    """Continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _inc_beta(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t, dof):
    """P(|T| >= |t|) for Student's t with ``dof`` degrees of freedom."""
    return _inc_beta(dof / 2.0, 0.5, dof / (dof + t * t))


def test_student_t_p_values_match_tables():
    # two-sided critical values from standard t tables
    assert t_two_sided_p(2.131, 15) == pytest.approx(0.05, abs=2e-4)
    assert t_two_sided_p(4.073, 15) == pytest.approx(0.001, abs=2e-5)
    assert t_two_sided_p(1.960, 1e9) == pytest.approx(0.05, abs=1e-4)
    assert t_two_sided_p(0.0, 15) == pytest.approx(1.0)


def blocks(img):
    h, w, c = img.shape[-3:]
    return img.reshape(img.shape[:-3] + (h // BLOCK, BLOCK, w // BLOCK, BLOCK, c)).mean(axis=(-4, -2))


def worst_p(batches, ref_mean, ref_se):
    """(smallest p-value, Bonferroni level) of heliograph's batches against a reference."""
    hb = blocks(np.asarray(batches, dtype=np.float64))  # (BATCHES, bh, bw, c)
    mean, var = hb.mean(0), hb.var(0, ddof=1)
    rm = blocks(ref_mean.astype(np.float64))
    rse = blocks(ref_se.astype(np.float64))
    floor = REL_FLOOR * np.abs(rm) + ABS_FLOOR
    t = (mean - rm) / np.sqrt(var / BATCHES + rse**2 + floor**2)
    p = np.array([t_two_sided_p(float(x), BATCHES - 1) for x in t.ravel()])
    return p.min(), ALPHA / p.size


def load_ref():
    with np.load(REF) as f:
        return {k: f[k] for k in f.files}


def render_batches(scene, params, spp, seed0):
    return [np.array(hg.render(scene, params, spp=spp, seed=seed0 + i)) for i in range(BATCHES)]


def test_seed_scenario_matches_mitsuba_before_and_after_the_texture_update():
    ref = load_ref()
    res = ref["mean_a"].shape[0]
    scene = hg.load_dict(seed_dict(ref["tex_a"], res=res))
    params = hg.traverse(scene)

    # the first call, then batches for the statistics (128 spp in all)
    image = hg.render(scene, params, spp=128)
    assert image.shape == (res, res, 3)
    first = render_batches(scene, params, 8, 100)
    p, level = worst_p(first, ref["mean_a"], ref["se_a"])
    assert p >= level, f"render 1 differs from Mitsuba: p = {p:.3g} < {level:.3g}"
    # the single 128-spp render agrees with the batch average within its noise
    np.testing.assert_allclose(np.array(image).mean(), np.mean(first), rtol=0.02)

    params["shape.bsdf.reflectance.data"] = hg.TensorXf(ref["tex_b"])
    params.update()
    image2 = hg.render(scene, params, spp=32, seed=1)
    second = render_batches(scene, params, 2, 200)
    p, level = worst_p(second, ref["mean_b"], ref["se_b"])
    assert p >= level, f"render 2 differs from Mitsuba: p = {p:.3g} < {level:.3g}"
    p_old, _ = worst_p(second, ref["mean_a"], ref["se_a"])
    assert p_old < 1e-12, "the second render does not show the new texture"

    # export, as the script ends
    np.testing.assert_array_equal(np.from_dlpack(image2), np.array(image2))
    jax = pytest.importorskip("jax")
    np.testing.assert_array_equal(np.asarray(image2.jax()), np.array(image2))
    del jax


@pytest.mark.parametrize("slip", ["5% darker", "rows flipped", "columns flipped", "nearest filtering"])
def test_the_criterion_rejects_plausible_convention_slips(slip):
    """Power check: each slip of a convention must fail against reference A."""
    ref = load_ref()
    res = ref["mean_a"].shape[0]
    tex = {"5% darker": ref["tex_a"] * 0.95, "rows flipped": ref["tex_a"][::-1],
           "columns flipped": ref["tex_a"][:, ::-1]}.get(slip, ref["tex_a"])
    d = seed_dict(tex, res=res)
    if slip == "nearest filtering":
        d["shape"]["bsdf"]["reflectance"]["filter_type"] = "nearest"
    batches = render_batches(hg.load_dict(d), None, 8, 300)
    p, level = worst_p(batches, ref["mean_a"], ref["se_a"])
    assert p < level, f"{slip}: p = {p:.3g} not below {level:.3g}"
