"""render(scene, sensor=, integrator=) on cuda_rgb: the device scene renders through a
lone sensor or integrator for that render only. Each image must equal (bit for bit, same
backend and seed) the render of a scene that holds that sensor or integrator, and renders
after it must be the scene's own again (the camera and film records on the device are
restored in stream order)."""

from __future__ import annotations

import numpy as np

import heliograph as hg
from test_mitsuba_api import _scene

BOX = {"type": "box"}


def _sensor_dict(rfilter=None):
    film = {"type": "hdrfilm", "width": 20, "height": 12}
    if rfilter:
        film["rfilter"] = rfilter
    return {"type": "perspective", "fov": 30,
            "to_world": hg.ScalarTransform4f().look_at(origin=[3, -3, 2], target=[0, 0, 0], up=[0, 0, 1]),
            "sampler": {"type": "independent", "sample_count": 5},
            "film": film}


def _img(scene, **kw):
    return np.array(hg.render(scene, seed=3, **kw))


def test_a_lone_sensor_and_integrator_render_as_if_the_scene_held_them():
    scene = hg.load_dict(_scene())
    own = _img(scene, spp=4)  # uploaded; the swaps below are one-off views of it
    sensor = hg.load_dict(_sensor_dict())
    np.testing.assert_array_equal(_img(scene, sensor=sensor), _img(hg.load_dict(_scene(sensor=_sensor_dict()))))
    direct = hg.load_dict({"type": "direct"})
    np.testing.assert_array_equal(_img(scene, integrator=direct, spp=4),
                                  _img(hg.load_dict(_scene(integrator={"type": "direct"})), spp=4))
    both = _img(scene, sensor=sensor, integrator=direct)
    np.testing.assert_array_equal(both, _img(hg.load_dict(_scene(sensor=_sensor_dict(), integrator={"type": "direct"}))))
    np.testing.assert_array_equal(_img(scene, spp=4), own, "the scene's own sensor and integrator again")


def test_the_depth_kernel_reads_the_swapped_camera_and_then_the_scenes_own():
    # the depth kernel reads camera and film from device memory, not by value
    scene = hg.load_dict(_scene(integrator={"type": "depth"}, sensor=dict(_sensor_dict(BOX), fov=45)))
    own = _img(scene, spp=2)
    sensor = hg.load_dict(_sensor_dict(BOX))
    got = _img(scene, sensor=sensor, spp=2)
    want = _img(hg.load_dict(_scene(integrator={"type": "depth"}, sensor=_sensor_dict(BOX))), spp=2)
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, own)
    np.testing.assert_array_equal(_img(scene, spp=2), own)
