"""Shape groups and instances on cpu_rgb: loading from dicts, editing an instance's
placement and a group shape's material through traverse (each must render exactly what
a fresh load of the edited scene renders), and errors for wrong groups. The CUDA
variant's refusal is in gpu/test_shapes.py."""

from __future__ import annotations

import numpy as np
import pytest

import heliograph as hg


def scene_dict(a_to_world=None, reflectance=0.5):
    a = {"type": "instance", "g": {"type": "ref", "id": "grp"}}
    if a_to_world is not None:
        a["to_world"] = a_to_world
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 3},
        "grp": {
            "type": "shapegroup",
            "s": {
                "type": "sphere",
                "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": reflectance}},
            },
            "c": {"type": "cube", "to_world": hg.ScalarTransform4f().translate([0, -1.5, 0]).scale(0.4)},
        },
        "a": a,
        "b": {
            "type": "instance",
            "g": {"type": "ref", "id": "grp"},
            "to_world": hg.ScalarTransform4f().translate([-2.5, 0, 0]).rotate([0, 0, 1], 30),
        },
        "sensor": {
            "type": "perspective",
            "to_world": hg.ScalarTransform4f().look_at([0, 0, 9], [0, 0, 0], [0, 1, 0]),
            "film": {"type": "hdrfilm", "width": 32, "height": 24},
        },
        "emitter": {"type": "constant"},
    }


def render(scene):
    return np.array(hg.render(scene, spp=4, seed=3))


def test_moving_an_instance_renders_what_a_fresh_load_renders():
    moved = hg.ScalarTransform4f().translate([2.0, 0.5, 0]).scale(0.8)
    scene = hg.load_dict(scene_dict())
    params = hg.traverse(scene)
    assert "a.to_world" in params and "b.to_world" in params
    before = render(scene)
    params["a.to_world"] = moved
    params.update()
    after = render(scene)
    fresh = render(hg.load_dict(scene_dict(a_to_world=moved)))
    assert np.array_equal(after, fresh)
    assert not np.array_equal(after, before)


def test_a_group_shapes_material_shows_on_every_instance():
    dark = render(hg.load_dict(scene_dict(reflectance=0.1)))
    bright = render(hg.load_dict(scene_dict(reflectance=0.9)))
    # both instances' spheres change: the middle row crosses them (and the cubes stay)
    row = dark.shape[0] // 2
    assert bright[row].sum() > 1.5 * dark[row].sum()


@pytest.mark.parametrize(
    "group, message",
    [
        ({"type": "shapegroup", "s": {"type": "sphere", "e": {"type": "area"}}}, "emit"),
        ({"type": "shapegroup"}, "no shapes"),
    ],
)
def test_wrong_groups_are_scene_errors(group, message):
    d = scene_dict()
    d["grp"] = group
    with pytest.raises(hg.SceneError, match=message):
        hg.load_dict(d)


def test_editing_a_group_shapes_material_renders_what_a_fresh_load_renders():
    scene = hg.load_dict(scene_dict(reflectance=0.5))
    params = hg.traverse(scene)
    # Mitsuba's key for the material of shape "s" of group "grp"
    params["grp.s.bsdf.reflectance.value"] = [0.9, 0.9, 0.9]
    params.update()
    assert np.array_equal(render(scene), render(hg.load_dict(scene_dict(reflectance=0.9))))
