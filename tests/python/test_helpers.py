"""Bitmap, ScalarTransform4f and util.write_bitmap."""

import math

import numpy as np
import pytest

import heliograph as hg

T = hg.ScalarTransform4f


def test_transforms_match_their_definitions():
    np.testing.assert_allclose(T.translate([1, 2, 3]) @ [0, 0, 0], [1, 2, 3])
    np.testing.assert_allclose(T.scale([2, 3, 4]) @ [1, 1, 1], [2, 3, 4])
    np.testing.assert_allclose(T.scale(2) @ [1, 1, 1], [2, 2, 2])
    # right-handed: +90 deg about z takes x to y
    np.testing.assert_allclose(T.rotate([0, 0, 1], 90) @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    # look_at: +z maps to the view direction, the origin to the eye, +y towards up
    m = T.look_at(origin=[0, 0, 5], target=[0, 0, 0], up=[0, 1, 0])
    np.testing.assert_allclose(m @ [0, 0, 0], [0, 0, 5])
    np.testing.assert_allclose(m.matrix[:3, 2], [0, 0, -1])
    np.testing.assert_allclose(m.matrix[:3, 1], [0, 1, 0])
    np.testing.assert_allclose(m.matrix[:3, 0], [-1, 0, 0])  # Mitsuba: +x is the camera's left


def test_instance_and_static_forms_compose_right_to_left():
    a = T().translate([1, 0, 0]).rotate([0, 0, 1], 90)
    b = T.translate([1, 0, 0]) @ T.rotate([0, 0, 1], 90)
    np.testing.assert_allclose(a.matrix, b.matrix)
    # the last call acts first: rotate (1,0,0) to (0,1,0), then translate
    np.testing.assert_allclose(a @ [1, 0, 0], [1, 1, 0], atol=1e-12)
    np.testing.assert_allclose((a @ a.inverse()).matrix, np.eye(4), atol=1e-12)
    assert T(np.eye(4)) == T() and T(a) == a
    assert "ScalarTransform4f" in repr(a)
    assert math.isclose(np.asarray(T.scale(3))[0, 0], 3.0)


@pytest.mark.parametrize(
    "make,pattern",
    [
        (lambda: T.scale([1, 0, 1]), "zero"),
        (lambda: T.rotate([0, 0, 0], 10), "non-zero"),
        (lambda: T.look_at([0, 0, 0], [0, 0, 0], [0, 1, 0]), "coincide"),
        (lambda: T.look_at([0, 0, 0], [0, 1, 0], [0, 1, 0]), "parallel"),
        (lambda: T.translate([1, 2]), "3 finite numbers"),
        (lambda: T(np.eye(3)), "4x4"),
        (lambda: T(np.full((4, 4), np.nan)), "NaN"),
    ],
)
def test_transform_errors(make, pattern):
    with pytest.raises(ValueError, match=pattern):
        make()


def test_bitmap_from_arrays_uint8_is_srgb_and_files_round_trip(tmp_path):
    a = np.random.default_rng(2).random((3, 5, 3)).astype(np.float32)
    b = hg.Bitmap(a)
    assert (b.width(), b.height(), b.channel_count()) == (5, 3, 3) and "size = [5, 3]" in repr(b)
    np.testing.assert_array_equal(np.array(b), a)
    assert np.array(hg.Bitmap(np.zeros((2, 2)))).shape == (2, 2, 1)
    # 8-bit data is sRGB: kept as stored (as Mitsuba), 188/255 decodes to 0.5029 (IEC 61966-2-1)
    u8 = hg.Bitmap(np.full((1, 1, 3), 188, dtype=np.uint8))
    assert np.array(u8).dtype == np.uint8 and u8.srgb_gamma()
    lin = u8.convert(component_format=hg.Struct.Type.Float32, srgb_gamma=False)
    np.testing.assert_allclose(np.array(lin), ((188 / 255 + 0.055) / 1.055) ** 2.4, rtol=1e-5)
    path = tmp_path / "b.exr"
    b.write(path)
    np.testing.assert_array_equal(np.array(hg.Bitmap(path)), a)
    np.testing.assert_array_equal(np.array(hg.Bitmap(str(path))), a)


def test_write_bitmap_exr_and_png(tmp_path):
    img = np.random.default_rng(4).random((6, 4, 3)).astype(np.float32)
    hg.util.write_bitmap(tmp_path / "x.exr", hg.TensorXf(img))
    np.testing.assert_array_equal(np.array(hg.Bitmap(tmp_path / "x.exr")), img)
    hg.util.write_bitmap(str(tmp_path / "x.png"), img)
    png = hg.Bitmap(tmp_path / "x.png")
    assert png.component_format() == hg.Struct.Type.UInt8 and png.srgb_gamma()
    back = np.array(png.convert(component_format=hg.Struct.Type.Float32, srgb_gamma=False))
    np.testing.assert_allclose(back, img, atol=0.01)
    with pytest.raises(ValueError, match=r"\(H, W\) or \(H, W, 1\|3\|4\)"):
        hg.util.write_bitmap(tmp_path / "y.exr", np.zeros(5))
    with pytest.raises(hg.SceneFileError):
        hg.util.write_bitmap(tmp_path / "y.bmpx", img)
    with pytest.raises(hg.SceneFileError, match="missing.png"):
        hg.Bitmap(tmp_path / "missing.png")


def test_render_writes_through_util(tmp_path, small_scene):
    img = hg.render(small_scene, spp=2)
    hg.util.write_bitmap(tmp_path / "r.exr", img)
    np.testing.assert_array_equal(np.array(hg.Bitmap(tmp_path / "r.exr")), np.array(img))


def test_color3f_in_dicts_and_from_traverse():
    c = hg.ScalarColor3f(0.1, 0.2, 0.3)
    assert issubclass(hg.Color3f, hg.ScalarColor3f) and len(c) == 3 and list(c) == [0.1, 0.2, 0.3]
    assert hg.ScalarColor3f(0.5) == [0.5, 0.5, 0.5] and repr(c) == "[0.1, 0.2, 0.3]"
    d = {"type": "scene", "m": {"type": "diffuse", "reflectance": c}}
    p = hg.traverse(hg.load_dict(d))
    v = p["m.reflectance.value"]
    assert isinstance(v, hg.ScalarColor3f)
    np.testing.assert_allclose(np.array(v), [0.1, 0.2, 0.3], rtol=1e-6)
    p["m.reflectance.value"] = hg.Color3f(0.4, 0.5, 0.6)
    p.update()
    with pytest.raises(ValueError, match=r"ScalarColor3f: expected shape \(3,\), got shape \(2,\)"):
        hg.ScalarColor3f([1, 2])
    with pytest.raises(TypeError, match="one array-like or 3 components, got 2"):
        hg.ScalarColor3f(1, 2)
