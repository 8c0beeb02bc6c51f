"""Mitsuba's samplers through dicts: `stratified`, `multijitter` and `ldsampler` build
from the same dicts as in Mitsuba, round their sample counts as Mitsuba does, render
the scene `independent` renders, and bad names or counts are errors naming the key."""

import numpy as np
import pytest

import heliograph as hg


def _scene(sampler):
    return {
        "type": "scene",
        "integrator": {"type": "direct"},
        "sensor": {
            "type": "perspective",
            "fov": 40,
            "to_world": hg.ScalarTransform4f().look_at(origin=[0, 0, 3], target=[0, 0, 0], up=[0, 1, 0]),
            "sampler": sampler,
            "film": {"type": "hdrfilm", "width": 16, "height": 16, "rfilter": {"type": "box"}},
        },
        "disk": {"type": "disk", "bsdf": {"type": "diffuse"}},
        "env": {"type": "constant", "radiance": {"type": "rgb", "value": 1.0}},
    }


@pytest.mark.parametrize(
    "name,requested,effective",
    [("stratified", 10, 16), ("multijitter", 10, 12), ("ldsampler", 10, 16), ("ldsampler", 1, 4), ("independent", 10, 10)],
)
def test_sample_counts_round_up_as_in_mitsuba(name, requested, effective):
    hg.set_variant("scalar_rgb")
    scene = hg.load_dict(_scene({"type": name, "sample_count": requested}))
    assert scene._info()["sample_count"] == effective


@pytest.mark.parametrize("name", ["stratified", "multijitter", "ldsampler"])
def test_each_sampler_renders_the_independent_image(name):
    # a diffuse disk under a white sky: each pixel's mean over 8 seeds agrees with the
    # independent sampler's to a few standard errors (the stratified estimates are the
    # less noisy of the two)
    hg.set_variant("scalar_rgb")
    extra = {"jitter": True} if name != "ldsampler" else {}
    strat = hg.load_dict(_scene({"type": name, "sample_count": 16, **extra}))
    ind = hg.load_dict(_scene({"type": "independent", "sample_count": 16}))
    a = np.stack([np.array(hg.render(strat, seed=s))[..., :3] for s in range(8)])
    b = np.stack([np.array(hg.render(ind, seed=s))[..., :3] for s in range(8)])
    se = np.sqrt(a.var(0, ddof=1) / 8 + b.var(0, ddof=1) / 8) + 1e-4
    z = np.abs(a.mean(0) - b.mean(0)) / se
    assert np.mean(z > 4.0) < 0.01, f"{name}: {np.mean(z > 4.0):.3f} of the pixels differ"
    assert a.mean(0).mean() == pytest.approx(b.mean(0).mean(), rel=0.02)


def test_a_misspelled_sampler_suggests_the_name():
    with pytest.raises(hg.SceneError, match=r'<dict>\[sensor.sampler\]: unknown plugin type "stratifed" \(known: .*\); did you mean "stratified"\?'):
        hg.load_dict(_scene({"type": "stratifed"}))


@pytest.mark.parametrize("count", [0, -3])
def test_sample_counts_below_one_are_errors_naming_the_key(count):
    with pytest.raises(hg.SceneError, match=rf'sampler.sample_count\]: parameter "sample_count": must be in \[1, 4294967295\], got {count}'):
        hg.load_dict(_scene({"type": "multijitter", "sample_count": count}))
