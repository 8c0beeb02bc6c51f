"""load_dict / load_file / load_string / cornell_box, and every loading error."""

import os

import numpy as np
import pytest

import heliograph as hg
from conftest import ROOT, seed_dict

CBOX_XML = os.path.join(ROOT, "scenes", "cbox.xml")


def _params(scene):
    return {k: np.asarray(v, dtype=np.float64) for k, v in hg.traverse(scene).items()}


def test_cornell_box_dict_matches_the_xml_scene_parameter_by_parameter():
    d = hg.cornell_box()
    d["sensor"]["film"]["width"] = d["sensor"]["film"]["height"] = 24
    from_dict = _params(hg.load_dict(d))
    from_xml = _params(hg.load_file(CBOX_XML, res=24, spp=4))
    assert set(from_dict) == set(from_xml)
    assert "light.emitter.radiance.value" in from_dict and "white.reflectance.value" in from_dict
    for k in from_dict:
        np.testing.assert_allclose(from_dict[k], from_xml[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_cornell_box_dict_and_xml_render_the_same_image():
    d = hg.cornell_box()
    d["sensor"]["film"]["width"] = d["sensor"]["film"]["height"] = 16
    a = np.array(hg.render(hg.load_dict(d), spp=4, seed=3))
    b = np.array(hg.render(hg.load_file(CBOX_XML, res=16), spp=4, seed=3))
    assert a.shape == b.shape == (16, 16, 3)
    # transforms are composed in float64 (dict) vs float32 (XML): tiny geometric
    # differences may flip a few edge samples, never the image
    assert np.mean(np.abs(a - b)) < 1e-3 * max(1.0, float(np.mean(b)))


def test_load_file_params_override_defaults_and_accept_pathlike(tmp_path):
    import pathlib

    s = hg.load_file(pathlib.Path(CBOX_XML), res=8, spp=2, max_depth=2)
    assert np.array(hg.render(s)).shape == (8, 8, 3)


def test_load_string_and_its_errors():
    xml = """<scene version="3.0.0"><sensor type="perspective"><film type="hdrfilm">
        <integer name="width" value="$w"/><integer name="height" value="4"/></film></sensor></scene>"""
    # hdrfilm defaults to rgba, as in Mitsuba
    assert hg.render(hg.load_string(xml, w=6), spp=1).shape == (4, 6, 4)
    with pytest.raises(hg.SceneError, match=r"<string>:2:.*\$w"):
        hg.load_string(xml)
    with pytest.raises(hg.SceneError, match=r"unknown bsdf plugin \"difuse\""):
        hg.load_string('<scene version="3.0.0"><bsdf type="difuse"/></scene>')


def test_load_file_missing_is_an_os_error(tmp_path):
    missing = str(tmp_path / "nope.xml")
    with pytest.raises(hg.SceneFileError, match="nope.xml") as e:
        hg.load_file(missing)
    assert isinstance(e.value, OSError)


def test_top_level_keys_are_ids_for_references():
    d = {
        "type": "scene",
        "mat": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.1, 0.2, 0.3]}},
        "ball": {"type": "sphere", "bsdf": {"type": "ref", "id": "mat"}},
        "sensor": {"type": "perspective", "film": {"type": "hdrfilm", "width": 4, "height": 4}},
    }
    p = hg.traverse(hg.load_dict(d))
    np.testing.assert_allclose(np.array(p["mat.reflectance.value"]), [0.1, 0.2, 0.3], rtol=1e-6)
    assert "ball.to_world" in p and "ball.bsdf.reflectance.value" not in p


def test_values_numbers_lists_and_arrays():
    d = {
        "type": "scene",
        "ball": {"type": "sphere", "center": [0, 0, 1], "radius": 2, "flip_normals": False},
        "light": {"type": "point", "position": np.array([1.0, 2.0, 3.0]), "intensity": {"type": "spectrum", "value": 5.0}},
    }
    p = hg.traverse(hg.load_dict(d))
    np.testing.assert_allclose(np.array(p["light.position"]), [1, 2, 3])
    # a uniform emission spectrum is 5 x sRGB(XYZ = 1, 1, 1) in RGB, as Mitsuba 3.9.1 gives it
    np.testing.assert_allclose(np.array(p["light.intensity.value"]), [6.02397, 4.74146, 4.54458], rtol=1e-5)


def test_numpy_array_and_bitmap_give_the_same_texture():
    rng = np.random.default_rng(1)
    tex = rng.random((4, 5, 3))
    d1 = seed_dict(tex, res=8)
    d2 = seed_dict(tex, res=8)
    d2["shape"]["bsdf"]["reflectance"]["bitmap"] = tex  # a plain NumPy array
    a = np.array(hg.traverse(hg.load_dict(d1))["shape.bsdf.reflectance.data"])
    b = np.array(hg.traverse(hg.load_dict(d2))["shape.bsdf.reflectance.data"])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, tex.astype(np.float32))


BAD_DICTS = [
    ({"type": "scene", "a.b": {"type": "sphere"}}, hg.SceneError, r"key \"a.b\" contains a '\.'"),
    ({"type": "scene", "s": {"type": "spheer"}}, hg.SceneError, r"<dict>\[s\]: unknown plugin type \"spheer\".*sphere"),
    ({"type": "scene", "s": {"type": "sphere", "radiuss": 1.0}}, hg.SceneError, r"<dict>\[s.radiuss\].*radiuss"),
    ({"type": "scene", "s": {"type": "sphere", "radius": "big"}}, hg.SceneError, r"radius.*expected float, got string"),
    ({"type": "scene", "s": {"radius": 1.0}}, hg.SceneError, r"<dict>\[s\]: the dict has no 'type'"),
    ({"type": "scene", "s": {"type": "sphere", "radius": None}}, hg.SceneError, r"<dict>\[s.radius\]: unsupported value of type NoneType"),
    ({"type": "scene", "s": {"type": "sphere", "bsdf": {"type": "ref", "id": "nothing"}}}, hg.SceneError, r"unknown id \"nothing\""),
    ({"type": "scene", "s": {"type": "sphere", "bsdf": {"type": "ref"}}}, hg.SceneError, r"'ref' needs a string 'id'"),
    ({"type": "scene", "m": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [1, 2]}}}, hg.SceneError, r"<dict>\[m.reflectance\].*shape \(2,\)"),
    ({"type": "scene", "m": {"type": "diffuse", "reflectance": {"type": "rgb", "value": 0.5, "x": 1}}}, hg.SceneError, r"unexpected key \"x\""),
    ({"type": "spheer"}, hg.SceneError, r'unknown plugin type "spheer" \(known: .*sphere'),
    ({"type": "scene", "s": {"type": "scene"}}, hg.SceneError, r"cannot be nested"),
    ({"type": "scene", "s": {"type": "sphere", "center": [1, 2, 3, 4]}}, hg.SceneError, r"3 numbers \(a vector\) or an image .* got \(4,\)"),
    ({"type": "scene", "s": {"type": "sphere", "to_world": "identity"}}, hg.SceneError, r"to_world.*expected transform, got string"),
]


@pytest.mark.parametrize("d,exc,pattern", BAD_DICTS)
def test_bad_dicts_raise_clear_errors(d, exc, pattern):
    with pytest.raises(exc, match=pattern):
        hg.load_dict(d)


def test_load_dict_wrong_python_type():
    with pytest.raises(TypeError, match="takes a dict, got list"):
        hg.load_dict([("type", "scene")])


@pytest.mark.parametrize(
    "array,pattern",
    [
        (np.zeros((2, 2, 2, 3)), r"shape \(H, W\) or \(H, W, C\), got \(2, 2, 2, 3\)"),
        (np.zeros((4, 4, 2)), r"1, 3 or 4 channels, got shape \(4, 4, 2\)"),
        (np.zeros((4, 4, 3), dtype=np.int32), r"float16/32/64 or uint8, got int32"),
        (np.array([[[0.1, np.nan, 0.3]]]), r"NaN or infinite"),
    ],
)
def test_bad_bitmap_arrays_in_dicts(array, pattern):
    d = seed_dict(np.ones((2, 2, 3)), res=4)
    d["shape"]["bsdf"]["reflectance"]["bitmap"] = array
    with pytest.raises(hg.SceneError, match=r"<dict>\[shape.bsdf.reflectance.bitmap\]: .*" + pattern):
        hg.load_dict(d)
    with pytest.raises(ValueError, match=pattern):
        hg.Bitmap(array)
