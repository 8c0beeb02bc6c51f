"""Mesh vertex positions as parameters: Mitsuba 3.9's flat ``vertex_positions`` and the
newer ``positions`` of shape (N, 3), both views of the same world-space vertices. A write
moves the mesh (the BVH is refit); what the camera then sees is checked against a fresh
load of the same move expressed as a ``to_world``, with the depth integrator, whose
image depends on the positions only."""

import os

import numpy as np
import pytest

import heliograph as hg

TORUS = os.path.join(os.path.dirname(__file__), "..", "..", "assets", "meshes", "torus.obj")


def _dict(integrator="depth", to_world=None):
    torus = {"type": "obj", "filename": TORUS}
    if to_world is not None:
        torus["to_world"] = to_world
    return {
        "type": "scene",
        "integrator": {"type": integrator},
        "sensor": {
            "type": "perspective",
            "fov": 40,
            "to_world": hg.ScalarTransform4f().look_at(origin=[0, 3, 3], target=[0, 0, 0], up=[0, 1, 0]),
            "film": {"type": "hdrfilm", "width": 48, "height": 32},
        },
        "torus": torus,
        "sky": {"type": "constant"},
    }


def test_the_tutorials_edit_moves_the_mesh_where_a_transform_would():
    scene = hg.load_dict(_dict())
    params = hg.traverse(scene)
    n = params["torus.positions"].shape[0]
    assert params["torus.vertex_positions"].shape == (3 * n,)
    assert "torus.positions" in repr(params)
    before = np.array(hg.render(scene, spp=1))
    # the cell of Mitsuba's "editing a scene" tutorial
    params["torus.positions"] += hg.TensorXf([[0, 0, 0.5]])
    assert params.update() == ["torus.positions"]
    moved = np.array(hg.render(scene, spp=1))
    want = np.array(hg.render(hg.load_dict(_dict(to_world=hg.ScalarTransform4f().translate([0, 0, 0.5]))), spp=1))
    np.testing.assert_allclose(moved, want, rtol=1e-6, atol=1e-6)
    assert not np.allclose(moved, before)
    # both keys show the new positions, and the transform they now include is gone
    p = hg.traverse(scene)
    flat = np.array(p["torus.vertex_positions"])
    np.testing.assert_array_equal(flat.reshape(n, 3), np.array(p["torus.positions"]))
    np.testing.assert_array_equal(p["torus.to_world"].matrix, np.eye(4))


def test_a_flat_write_under_mitsuba_39s_key_moves_the_mesh_too():
    scene = hg.load_dict(_dict())
    p = hg.traverse(scene)
    v = np.array(p["torus.vertex_positions"]).reshape(-1, 3)
    v[:, 2] += 0.5
    p["torus.vertex_positions"] = v.ravel()
    p.update()
    np.testing.assert_array_equal(np.array(hg.traverse(scene)["torus.positions"]), v)
    want = hg.load_dict(_dict(to_world=hg.ScalarTransform4f().translate([0, 0, 0.5])))
    np.testing.assert_allclose(np.array(hg.render(scene, spp=1)), np.array(hg.render(want, spp=1)), rtol=1e-6, atol=1e-6)


def _bad_values(n):
    v = np.zeros((n, 3), dtype=np.float32)
    nan = v.copy()
    nan[7, 2] = np.nan
    return [
        ("torus.positions", v[1:], rf"expected an array of shape \({n}, 3\), got an array of shape \({n - 1}, 3\)"),
        ("torus.positions", v.ravel(), rf"shape \({n}, 3\), got an array of shape \({3 * n},\)"),
        ("torus.vertex_positions", v, rf"expected an array of shape \({3 * n},\)"),
        ("torus.positions", v.astype(np.int32), r"expected float data, got int32"),
        ("torus.positions", nan, r"NaN or infinite values \(the first at flat index 23, row 7, column 2\)"),
        ("torus.positions", 1.0, rf"expected an array of shape \({n}, 3\), got a float"),
    ]


@pytest.mark.parametrize("case", range(6))
def test_refused_positions_name_the_key_and_change_nothing(case):
    scene = hg.load_dict(_dict())
    p = hg.traverse(scene)
    n = p["torus.positions"].shape[0]
    key, value, pattern = _bad_values(n)[case]
    old = np.array(p[key])
    with pytest.raises(hg.SceneError, match=pattern) as e:
        p[key] = value
    assert f'"{key}"' in str(e.value)
    assert p.changed() == [] and p.update() == []
    np.testing.assert_array_equal(np.array(p[key]), old)
