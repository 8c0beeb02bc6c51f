"""Mesh vertex positions written to a scene the GPU holds: the host refits the BVH and
the device copy is patched in place (the refit's arrays only). The patched scene renders
bit for bit what a scene first uploaded after the same write renders, and what the CPU
backend renders in expectation."""

from __future__ import annotations

import os

import numpy as np

import heliograph as hg

from .common import scenes_root, worst_block_p

RES, SPP, SEEDS = 64, 16, 8


def _dict() -> dict:
    torus = os.path.join(scenes_root(), "assets", "meshes", "torus.obj")
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 3},
        "sensor": {
            "type": "perspective",
            "fov": 40,
            "to_world": hg.ScalarTransform4f().look_at(origin=[0, 1.5, 4], target=[0, 0, 0], up=[0, 1, 0]),
            "film": {"type": "hdrfilm", "width": RES, "height": RES},
        },
        "torus": {"type": "obj", "filename": torus, "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.8, 0.5, 0.2]}}},
        "sky": {"type": "constant", "radiance": {"type": "rgb", "value": 1.0}},
    }


def _moved(p: hg.SceneParameters) -> np.ndarray:
    v = np.array(p["torus.positions"])
    v[:, 0] *= 1.3
    v[:, 1] += 0.3 * np.sin(3 * v[:, 0])
    return v.astype(np.float32)


def test_moved_vertices_patch_the_device_scene_as_a_first_upload_has_them():
    a, b = hg.load_dict(_dict()), hg.load_dict(_dict())
    before = hg.render(a, spp=SPP, seed=3).numpy()  # a is on the device now
    pa, pb = hg.traverse(a), hg.traverse(b)
    moved = _moved(pa)
    for p in (pa, pb):
        p["torus.positions"] = moved
        p.update()
    got = hg.render(a, spp=SPP, seed=3).numpy()
    want = hg.render(b, spp=SPP, seed=3).numpy()  # b's first upload comes after the write
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, before), "the torus moved"
    np.testing.assert_array_equal(np.array(pa["torus.vertex_positions"]), moved.ravel())


def _scenario(variant: str) -> np.ndarray:
    hg.set_variant(variant)
    scene = hg.load_dict(_dict())
    hg.render(scene, spp=SPP, seed=0).numpy()
    p = hg.traverse(scene)
    p["torus.positions"] = _moved(p)
    p.update()
    return np.stack([hg.render(scene, spp=SPP, seed=100 + k).numpy()[..., :3] for k in range(SEEDS)])


def test_moved_vertices_on_cuda_match_the_cpu():
    gpu = _scenario("cuda_rgb")
    cpu = _scenario("cpu_rgb")
    hg.set_variant("cuda_rgb")
    p = worst_block_p(gpu, cpu)
    biased = worst_block_p(gpu * 1.05, cpu)
    print(f"moved torus CUDA vs CPU: worst corrected p {p:.3g}; 1.05x image {biased:.3g}")
    assert p > 1e-3, f"CUDA and CPU differ after the move (corrected p {p:.3g})"
    assert biased < 1e-3, f"the comparison cannot see a 5% bias (p {biased:.3g})"
