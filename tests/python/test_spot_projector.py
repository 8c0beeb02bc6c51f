"""The `spot` and `projector` emitters through the Mitsuba-style API: their traverse keys
(Mitsuba 3.9.1's names), parameter updates, and errors for bad inputs."""

import numpy as np
import pytest

import heliograph as hg


def lit_plane(light, res=32):
    """A white plane at z = 0 seen from z = 4 (fov 60 covers x, y in [-2.3, 2.3]), lit
    only by ``light``."""
    return {
        "type": "scene",
        "integrator": {"type": "direct"},
        "light": light,
        "plane": {"type": "rectangle", "to_world": hg.ScalarTransform4f.scale([3, 3, 1]),
                  "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": 1.0}}},
        "sensor": {"type": "perspective", "fov": 60,
                   "to_world": hg.ScalarTransform4f.look_at([0, 0, 4], [0, 0, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": res, "height": res, "pixel_format": "rgb",
                            "rfilter": {"type": "box"}}},
    }


def above(origin_z=2.0):
    return hg.ScalarTransform4f.look_at([0, 0, origin_z], [0, 0, 0], [0, 1, 0])


def lit_fraction(scene):
    img = np.array(hg.render(scene, spp=4))
    return float((img[..., 0] > 1e-6).mean())


def test_spot_keys_and_cutoff_update():
    tex = hg.Bitmap(np.full((2, 2, 3), 0.5, dtype=np.float32))
    scene = hg.load_dict(lit_plane({"type": "spot", "to_world": above(), "cutoff_angle": 20.0,
                                    "texture": {"type": "bitmap", "bitmap": tex}}))
    p = hg.traverse(scene)
    # Mitsuba 3.9.1: mi.traverse lists these (plus sampling_weight and texture.to_uv)
    want = {"light.beam_width", "light.cutoff_angle", "light.intensity.value", "light.texture.data",
            "light.to_world"}
    assert want <= set(p.keys())
    assert p["light.cutoff_angle"] == pytest.approx(20.0)
    assert p["light.beam_width"] == pytest.approx(15.0)
    narrow = lit_fraction(scene)
    # the cone's footprint at distance 2 has radius 2 tan 20° = 0.73 in the 4.6-wide view:
    # 7.9 % of it
    assert 0.06 < narrow < 0.11
    p["light.cutoff_angle"] = 40.0
    p["light.beam_width"] = 30.0
    p.update()
    wide = lit_fraction(scene)
    assert 0.38 < wide < 0.47  # radius 2 tan 40° = 1.68: 41.7 %
    with pytest.raises(hg.SceneError, match="beam_width"):
        p["light.beam_width"] = 50.0
        p.update()


def test_updating_the_cutoff_keeps_the_beam_width_as_mitsuba():
    # Mitsuba 3.9.1: beam_width defaults to 3/4 of cutoff_angle at load and stays 15 after
    # cutoff_angle is set to 40 through traverse
    scene = hg.load_dict(lit_plane({"type": "spot", "to_world": above(), "cutoff_angle": 20.0}))
    p = hg.traverse(scene)
    assert p["light.beam_width"] == pytest.approx(15.0)
    p["light.cutoff_angle"] = 40.0
    p.update()
    assert hg.traverse(scene)["light.beam_width"] == pytest.approx(15.0)


def test_projector_keys_and_scale_update():
    scene = hg.load_dict(lit_plane({"type": "projector", "to_world": above(), "fov": 45.0,
                                    "irradiance": {"type": "rgb", "value": [1.0, 0.5, 0.25]}}))
    p = hg.traverse(scene)
    assert {"light.irradiance.value", "light.scale", "light.to_world"} <= set(p.keys())
    before = np.array(hg.render(scene, spp=4))
    p["light.scale"] = 2.0
    p.update()
    after = np.array(hg.render(scene, spp=4))
    lit = before[..., 0] > 0
    assert lit.any() and not lit.all()  # the frustum's square footprint
    np.testing.assert_allclose(after[lit], 2 * before[lit], rtol=1e-5)


@pytest.mark.parametrize(
    "light, match",
    [
        ({"type": "spot", "cutoff_angle": -5.0}, r"cutoff_angle.*\(0, 180\]"),
        ({"type": "spot", "cutoff_angle": 20.0, "beam_width": 25.0}, r"beam_width.*\[0, 20\]"),
        ({"type": "spot", "texture": {"type": "rgb", "value": 0.5}}, "texture.*spatially varying"),
        ({"type": "spot", "intensity": {"type": "bitmap", "bitmap": hg.Bitmap(np.ones((2, 2, 3)))}},
         "intensity.*constant"),
        ({"type": "projector", "fov": 190.0}, r"fov.*\(0, 180\)"),
        ({"type": "projector", "fov": 40.0, "fov_axis": "z"}, "fov_axis"),
        ({"type": "projector", "irradiance": "slide.png"}, "irradiance"),
        ({"type": "projector", "scale": -1.0}, "scale"),
    ],
)
def test_bad_inputs_name_the_parameter(light, match):
    with pytest.raises(hg.SceneError, match=match):
        hg.load_dict(lit_plane(light))
