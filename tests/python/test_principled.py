"""`principled` and `principledthin` from Python: Mitsuba's parameter keys, updates that
change the image, and refused out-of-range values."""

import numpy as np
import pytest

import heliograph as hg

# mi.traverse(scene) keys of the BSDF in Mitsuba 3.9.1 (scalar_rgb) for these dicts
PRINCIPLED_KEYS = {
    "anisotropic.value", "base_color.value", "clearcoat.value", "clearcoat_gloss.value",
    "clearcoat_sampling_rate", "diffuse_reflectance_sampling_rate", "flatness.value",
    "main_specular_sampling_rate", "metallic.value", "roughness.value", "sheen.value",
    "sheen_tint.value", "spec_tint.value", "spec_trans.value",
}
THIN_KEYS = {
    "anisotropic.value", "base_color.value", "diff_trans.value",
    "diffuse_reflectance_sampling_rate", "diffuse_transmittance_sampling_rate", "eta.value",
    "flatness.value", "roughness.value", "sheen.value", "sheen_tint.value", "spec_tint.value",
    "spec_trans.value", "specular_reflectance_sampling_rate",
    "specular_transmittance_sampling_rate",
}


def scene(bsdf):
    return hg.load_dict({
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 6},
        "sensor": {"type": "perspective", "to_world": hg.ScalarTransform4f.look_at([0, 0, 4], [0, 0, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": 16, "height": 16}},
        "emitter": {"type": "constant", "radiance": {"type": "rgb", "value": [0.8, 0.9, 1.0]}},
        "sphere": {"type": "sphere", "bsdf": bsdf},
        "floor": {"type": "rectangle", "to_world": hg.ScalarTransform4f.translate([0, 0, -2]).scale(4),
                  "bsdf": {"type": "diffuse", "reflectance": {"type": "checkerboard"}}},
    })


def bsdf_keys(params):
    return {k[len("sphere.bsdf."):] for k in params.keys() if k.startswith("sphere.bsdf.")}


@pytest.mark.parametrize("extra, eta_key", [({"spec_trans": 0.5}, "specular"), ({"eta": 1.4}, "eta")])
def test_principled_has_mitsubas_keys(extra, eta_key):
    p = hg.traverse(scene({"type": "principled", "roughness": 0.3, **extra}))
    assert bsdf_keys(p) == PRINCIPLED_KEYS | {eta_key}


def test_principledthin_has_mitsubas_keys():
    p = hg.traverse(scene({"type": "principledthin", "roughness": 0.3}))
    assert bsdf_keys(p) == THIN_KEYS


@pytest.mark.parametrize("kind", ["principled", "principledthin"])
def test_updates_change_the_image_and_out_of_range_values_are_refused(kind):
    s = scene({"type": kind, "roughness": 0.3, "spec_trans": 0.5, "base_color": {"type": "rgb", "value": [0.8, 0.3, 0.2]}})
    p = hg.traverse(s)
    before = np.array(hg.render(s, spp=16, seed=1))
    p["sphere.bsdf.spec_trans.value"] = 0.0
    p.update()
    after = np.array(hg.render(s, spp=16, seed=1))
    assert np.isfinite(after).all() and np.abs(after - before).max() > 0.05
    p["sphere.bsdf.roughness.value"] = 1.5
    with pytest.raises(Exception, match=r"roughness.*\[0, 1\].*1\.5"):
        p.update()
    p["sphere.bsdf.roughness.value"] = 0.3
    p.update()
    np.testing.assert_array_equal(np.array(hg.render(s, spp=16, seed=1)), after)


def test_load_errors_name_the_parameter():
    with pytest.raises(Exception, match=r"metallic.*\[0, 1\]"):
        scene({"type": "principled", "metallic": 2.0})
    with pytest.raises(Exception, match=r"diff_trans.*\[0, 2\]"):
        scene({"type": "principledthin", "diff_trans": 3.0})
    with pytest.raises(Exception, match=r"not both"):
        scene({"type": "principled", "eta": 1.5, "specular": 0.5})
