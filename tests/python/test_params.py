"""traverse / SceneParameters: Mitsuba key names, validation, update, errors."""

import numpy as np
import pytest

import heliograph as hg
from conftest import seed_dict

SEED_KEYS = {
    "shape.bsdf.reflectance.data",
    "emitter.radiance.value",
    "sensor.to_world",
    "sensor.x_fov",
    "shape.to_world",
}


def test_seed_scene_has_mitsubas_keys_and_values():
    tex = np.random.default_rng(3).random((4, 6, 3))
    p = hg.traverse(hg.load_dict(seed_dict(tex, res=8)))
    assert SEED_KEYS <= set(p.keys())
    assert len(p) == len(p.keys()) and list(p) == p.keys()
    assert "shape.bsdf.reflectance.data" in p and "nope" not in p and 3 not in p
    data = p["shape.bsdf.reflectance.data"]
    assert isinstance(data, hg.TensorXf) and data.shape == (4, 6, 3)
    np.testing.assert_allclose(np.array(data), tex.astype(np.float32))
    assert p["emitter.radiance.value"] == 1.0
    # Mitsuba 3.9.1 reports x_fov = 34.0221 deg for the default 50 mm lens on a square film
    assert p["sensor.x_fov"] == pytest.approx(34.022057, abs=1e-4)
    to_world = p["sensor.to_world"]
    assert isinstance(to_world, hg.ScalarTransform4f)
    np.testing.assert_allclose(to_world.matrix, hg.ScalarTransform4f.look_at([0, 0, 5], [0, 0, 0], [0, 1, 0]).matrix, atol=1e-6)
    assert dict(p.items()).keys() == set(p.keys()) and len(p.values()) == len(p)
    assert "shape.bsdf.reflectance.data" in repr(p)


def _image(scene, spp=256, seed=0):
    return np.array(hg.render(scene, spp=spp, seed=seed))


def test_update_applies_texture_emitter_and_camera_changes():
    scene = hg.load_dict(seed_dict(np.full((2, 2, 3), 0.2), res=8))
    p = hg.traverse(scene)
    before = _image(scene)
    p["shape.bsdf.reflectance.data"] = hg.TensorXf(np.full((2, 2, 3), 0.8))
    assert p.changed() == ["shape.bsdf.reflectance.data"]
    assert np.array_equal(_image(scene), before)  # nothing happens before update()
    assert p.update() == ["shape.bsdf.reflectance.data"]
    assert p.changed() == [] and p.update() == []
    after = _image(scene)
    # direct lighting of a diffuse plane under a unit constant sky: radiance = albedo,
    # so the centre pixels go from 0.2 to 0.8 (independent of heliograph's numbers)
    np.testing.assert_allclose(before[3:5, 3:5], 0.2, rtol=0.05)
    np.testing.assert_allclose(after[3:5, 3:5], 0.8, rtol=0.05)
    p["emitter.radiance.value"] = 2
    p.update()
    np.testing.assert_allclose(_image(scene)[3:5, 3:5], 1.6, rtol=0.05)
    p["sensor.to_world"] = hg.ScalarTransform4f.look_at([0, 0, -5], [0, 0, 0], [0, 1, 0])
    p.update()
    # seen from behind the one-sided plane is black; the sky around it stays at 2
    back = _image(scene)
    np.testing.assert_allclose(back[3:5, 3:5], 0.0, atol=1e-6)
    np.testing.assert_allclose(back[0, 0], 2.0, rtol=0.01)  # the filter spreads a little black


def test_numpy_arrays_lists_and_matrices_are_accepted():
    scene = hg.load_dict(seed_dict(np.ones((2, 2, 3)), res=4))
    p = hg.traverse(scene)
    p["shape.bsdf.reflectance.data"] = np.zeros((2, 2, 3), dtype=np.float64)
    p["shape.to_world"] = np.eye(4).tolist()
    p["sensor.x_fov"] = np.float32(30.0)
    p.update()
    q = hg.traverse(scene)
    assert np.array(q["shape.bsdf.reflectance.data"]).max() == 0.0
    assert q["sensor.x_fov"] == pytest.approx(30.0)


@pytest.mark.parametrize(
    "key,value,exc,pattern",
    [
        ("shape.bsdf.reflectance.data", np.zeros((5, 5, 3)), hg.SceneError, r"expected a tensor of shape \(2, 2, 3\), got a tensor of shape \(5, 5, 3\)"),
        ("shape.bsdf.reflectance.data", np.zeros((2, 2)), hg.SceneError, r"expected a tensor of shape \(2, 2, 3\), got a tensor of shape \(2, 2, 1\)"),
        ("shape.bsdf.reflectance.data", np.zeros(12), hg.SceneError, r"shape \(2, 2, 3\), got an array of shape \(12,\)"),
        ("shape.bsdf.reflectance.data", np.full((2, 2, 3), np.nan), hg.SceneError, r"NaN"),
        ("shape.bsdf.reflectance.data", np.zeros((2, 2, 3), dtype=np.int64), hg.SceneError, r"expected float data, got int64"),
        ("emitter.radiance.value", [1.0, 2.0, 3.0], hg.SceneError, r"expected a float of shape \(\), got a vector of shape \(3,\)"),
        ("emitter.radiance.value", float("inf"), hg.SceneError, r"NaN or infinite"),
        ("emitter.radiance.value", "bright", TypeError, r"expected a float of shape \(\), got str"),
        ("sensor.x_fov", 190.0, hg.SceneError, r"\(0, 180\)"),
        ("sensor.to_world", np.zeros((4, 4)), hg.SceneError, r"singular"),
        ("sensor.to_world", 1.0, hg.SceneError, r"expected a transform of shape \(4, 4\), got a float"),
    ],
)
def test_refused_values_name_key_and_shapes_and_change_nothing(key, value, exc, pattern):
    scene = hg.load_dict(seed_dict(np.full((2, 2, 3), 0.5), res=4))
    p = hg.traverse(scene)
    before = np.array(hg.render(scene, spp=2))
    old = np.asarray(p[key])
    with pytest.raises(exc, match=pattern) as e:
        p[key] = value
    if exc is hg.SceneError:
        assert f'"{key}"' in str(e.value)
    assert p.changed() == []
    np.testing.assert_array_equal(np.asarray(p[key]), old)
    assert p.update() == []
    np.testing.assert_array_equal(np.array(hg.render(scene, spp=2)), before)


def test_missing_key_is_a_key_error_listing_the_keys():
    p = hg.traverse(hg.load_dict(seed_dict(np.ones((2, 2, 3)), res=4)))
    with pytest.raises(KeyError, match=r"'shape.bsdf.reflectance.dat' is not a parameter.*shape.bsdf.reflectance.data"):
        p["shape.bsdf.reflectance.dat"]
    with pytest.raises(KeyError, match="sensor.x_fov"):
        p["nope"] = 1.0


def test_traverse_takes_a_scene():
    with pytest.raises(TypeError, match="traverse\\(\\) takes a heliograph Scene"):
        hg.traverse({"type": "scene"})


def test_a_render_in_flight_keeps_its_scene_across_an_update():
    scene = hg.load_dict(seed_dict(np.full((2, 2, 3), 0.2), res=16))
    p = hg.traverse(scene)
    img = hg.render(scene, spp=64)
    p["shape.bsdf.reflectance.data"] = np.full((2, 2, 3), 0.9)
    p.update()
    np.testing.assert_allclose(np.array(img)[7:9, 7:9], 0.2, rtol=0.05)


def test_xml_seed_scene_exposes_its_file_texture_and_accepts_a_new_one():
    import os

    from conftest import ROOT

    scene = hg.load_file(os.path.join(ROOT, "scenes", "seed.xml"), res=8)
    p = hg.traverse(scene)
    assert SEED_KEYS - {"emitter.radiance.value"} <= set(p.keys())
    old = p["shape.bsdf.reflectance.data"]
    h, w, c = old.shape
    assert np.array(old).min() >= 0 and np.array(old).max() <= 1  # decoded sRGB texels
    p["shape.bsdf.reflectance.data"] = np.full((h, w, c), 0.5)
    p.update()
    img = np.array(hg.render(scene, spp=256))
    np.testing.assert_allclose(img[3:5, 3:5], 0.5, rtol=0.05)  # albedo x unit sky
    np.testing.assert_allclose(np.array(hg.traverse(scene)["shape.bsdf.reflectance.data"]), 0.5)


def test_a_failed_update_changes_nothing_and_keeps_the_change_pending():
    scene = hg.load_dict(seed_dict(np.full((2, 2, 3), 0.5), res=4))
    p = hg.traverse(scene)
    before = np.array(hg.render(scene, spp=2))
    p["sensor.near_clip"] = 2e4  # a valid distance, but beyond far_clip: refused by the sensor
    with pytest.raises(hg.SceneError, match=r"must be in \(0, inf\), got -1"):
        p["sensor.near_clip"] = -1.0  # refused at once by the parameter's range
    p["shape.bsdf.reflectance.data"] = np.zeros((2, 2, 3))
    with pytest.raises(hg.SceneError, match="near_clip"):
        p.update()
    assert sorted(p.changed()) == ["sensor.near_clip", "shape.bsdf.reflectance.data"]
    np.testing.assert_array_equal(np.array(hg.render(scene, spp=2)), before)
    p["sensor.near_clip"] = 0.01
    assert sorted(p.update()) == ["sensor.near_clip", "shape.bsdf.reflectance.data"]
    assert np.array(hg.render(scene, spp=2)).max() > 0  # the sky is still visible


def test_envmap_image_is_a_parameter():
    import os

    from conftest import ROOT

    scene = hg.load_file(os.path.join(ROOT, "scenes", "showcase.xml"))
    p = hg.traverse(scene)
    data = p["emitter.data"]
    assert data.ndim == 3 and data.shape[2] in (3, 4)
    p["emitter.data"] = np.ones(data.shape)
    p.update()
    # the rebuilt scene's description now holds the new image instead of the file
    np.testing.assert_array_equal(np.array(hg.traverse(scene)["emitter.data"]), 1.0)


def test_keep_by_list_or_regular_expression():
    scene = hg.load_dict(seed_dict(np.ones((2, 2, 3)), res=4))
    p = hg.traverse(scene)
    p.keep(r"\.to_world$")
    assert p.keys() == ["shape.to_world", "sensor.to_world"]
    p.keep(["sensor.to_world"])
    assert p.keys() == ["sensor.to_world"]
    with pytest.raises(KeyError, match="'shape.to_world' is not a parameter"):
        p.keep(["shape.to_world"])
    with pytest.raises(TypeError, match="list of keys or a regular expression"):
        p.keep(3)
    p["sensor.to_world"] = hg.ScalarTransform4f.translate([0, 0, 5])
    assert p.update() == ["sensor.to_world"]
