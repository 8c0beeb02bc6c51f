"""The ``ptracer`` integrator (light tracing) from Python: in a scene or passed to
``render`` it gives the same image for a seed, its image agrees with ``path`` in
expectation on the Cornell box (a t-test per image quadrant and channel over independent
renders), and bad parameters are refused naming the key."""

import numpy as np
import pytest

import heliograph as hg
from test_seed import t_two_sided_p

RENDERS, SPP, ALPHA = 8, 16, 1e-3


def _cbox(res=16, **extra):
    d = hg.cornell_box()
    d["sensor"]["film"]["rfilter"]["type"] = "box"
    d["sensor"]["film"]["width"] = d["sensor"]["film"]["height"] = res
    d.update(extra)
    return d


def test_in_scene_and_passed_to_render_give_the_same_image():
    pt = {"type": "ptracer", "max_depth": 4}
    in_scene = hg.render(hg.load_dict(_cbox(integrator=pt)), spp=2, seed=3).numpy()
    passed = hg.render(hg.load_dict(_cbox()), spp=2, seed=3, integrator=hg.load_dict(pt)).numpy()
    assert in_scene.shape == (16, 16, 3) and in_scene.max() > 0
    np.testing.assert_array_equal(in_scene, passed)
    other_seed = hg.render(hg.load_dict(_cbox(integrator=pt)), spp=2, seed=4).numpy()
    assert not np.array_equal(in_scene, other_seed)


def _quadrant_means(integrator):
    scene = hg.load_dict(_cbox(integrator=integrator))
    out = []
    for seed in range(RENDERS):
        img = hg.render(scene, spp=SPP, seed=seed).numpy().astype(np.float64)
        q = img.reshape(2, 8, 2, 8, 3).mean(axis=(1, 3))
        out.append(q.ravel())
    return np.array(out)


def test_ptracer_agrees_with_path_in_expectation():
    a = _quadrant_means({"type": "ptracer", "max_depth": 4})
    b = _quadrant_means({"type": "path", "max_depth": 4})
    ma, mb = a.mean(0), b.mean(0)
    va, vb = a.var(0, ddof=1) / RENDERS, b.var(0, ddof=1) / RENDERS
    t = (ma - mb) / np.sqrt(va + vb)
    dof = (va + vb) ** 2 / (va**2 / (RENDERS - 1) + vb**2 / (RENDERS - 1))
    p = np.array([t_two_sided_p(x, d) for x, d in zip(t, dof)])
    assert p.min() > ALPHA / len(p), f"t = {t}, p = {p}"
    # and the test sees one bounce less
    c = _quadrant_means({"type": "ptracer", "max_depth": 2})
    assert np.max(np.abs(c.mean(0) - mb) / np.sqrt(c.var(0, ddof=1) / RENDERS + vb)) > 6


@pytest.mark.parametrize(
    "key,value",
    [("max_depth", 0), ("max_depth", -2), ("rr_depth", 0), ("samples_per_pass", 0)],
)
def test_bad_parameters_name_the_key(key, value):
    with pytest.raises(Exception, match=key):
        hg.load_dict(_cbox(integrator={"type": "ptracer", key: value}))


def test_unsupported_scenes_are_refused_with_the_reason():
    d = _cbox(integrator={"type": "ptracer"})
    d["sensor"].update(type="thinlens", aperture_radius=0.1)
    with pytest.raises(Exception, match='"perspective" sensor'):
        hg.load_dict(d)
