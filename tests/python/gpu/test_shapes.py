"""Shapes on cuda_rgb: cylinders (kernels/shapes/cylinder.cuh) against the CPU backend,
judged as test_seed_cuda_vs_cpu judges the seed scenario (Welch's t per 16x16 block and
channel over independent seeds, Bonferroni-corrected, and the same test must reject a
5% bias); and, judged the same way, instances of a shapegroup (the two-level BVH walk)."""

import numpy as np

import heliograph as hg

from .common import worst_block_p

RES, SPP, SEEDS = 64, 32, 8


def _cylinders() -> dict:
    """The Cornell box with a tilted tube and a glowing tube under a mirroring to_world."""
    d = hg.cornell_box()
    d["sensor"]["film"].update(width=RES, height=RES)
    d["tube"] = {
        "type": "cylinder",
        "p0": [-0.5, -0.2, -0.4],
        "p1": [0.1, 0.5, 0.2],
        "radius": 0.15,
        "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.6, 0.2, 0.2]}},
    }
    d["glow"] = {
        "type": "cylinder",
        "radius": 0.08,
        "to_world": hg.ScalarTransform4f().translate([0.1, 0.6, -0.2]).rotate([0, 1, 0], 80).scale([-1, 1, 0.6]),
        "emitter": {"type": "area", "radiance": {"type": "rgb", "value": [4, 3, 2]}},
    }
    return d


def _renders(variant: str) -> np.ndarray:
    hg.set_variant(variant)
    scene = hg.load_dict(_cylinders())
    return np.stack([hg.render(scene, spp=SPP, seed=100 + k).numpy() for k in range(SEEDS)])


def test_cylinders_on_cuda_match_the_cpu():
    gpu = _renders("cuda_rgb")
    cpu = _renders("cpu_rgb")
    hg.set_variant("cuda_rgb")
    p = worst_block_p(gpu, cpu)
    biased = worst_block_p(gpu * 1.05, cpu)
    print(f"cylinders CUDA vs CPU: worst corrected p {p:.3g}; 1.05x image {biased:.3g}")
    assert p > 1e-3, f"CUDA cylinders differ from the CPU's (p = {p:.3g})"
    assert biased < 1e-3, f"the test cannot tell a 5% bias (p = {biased:.3g})"


def _instanced() -> dict:
    """The Cornell box with three instances of one group (a cube mesh and a sphere, each with
    its own material): rotated, scaled, and squashed with a mirror; the box itself is no
    instance."""
    d = hg.cornell_box()
    d["sensor"]["film"].update(width=RES, height=RES)
    d["grp"] = {
        "type": "shapegroup",
        "block": {
            "type": "cube",
            "to_world": hg.ScalarTransform4f().scale([0.12, 0.2, 0.12]),
            "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.2, 0.6, 0.3]}},
        },
        "ball": {
            "type": "sphere",
            "center": [0, 0.32, 0],
            "radius": 0.12,
            "bsdf": {"type": "plastic", "diffuse_reflectance": {"type": "rgb", "value": [0.7, 0.2, 0.1]}},
        },
    }
    placements = [
        hg.ScalarTransform4f().translate([-0.5, -0.6, 0.2]),
        hg.ScalarTransform4f().translate([0.45, -0.2, -0.1]).rotate([0, 1, 0], 40).scale(1.4),
        hg.ScalarTransform4f().translate([0.0, 0.3, 0.3]).rotate([1, 0, 0], 30).scale([-1.3, 0.7, 1.0]),
    ]
    for k, t in enumerate(placements):
        d[f"inst{k}"] = {"type": "instance", "g": {"type": "ref", "id": "grp"}, "to_world": t}
    return d


def test_instances_on_cuda_match_the_cpu():
    def renders(variant: str) -> np.ndarray:
        hg.set_variant(variant)
        scene = hg.load_dict(_instanced())
        return np.stack([hg.render(scene, spp=SPP, seed=200 + k).numpy() for k in range(SEEDS)])

    gpu = renders("cuda_rgb")
    cpu = renders("cpu_rgb")
    hg.set_variant("cuda_rgb")
    p = worst_block_p(gpu, cpu)
    biased = worst_block_p(gpu * 1.05, cpu)
    print(f"instances CUDA vs CPU: worst corrected p {p:.3g}; 1.05x image {biased:.3g}")
    assert p > 1e-3, f"CUDA instances differ from the CPU's (p = {p:.3g})"
    assert biased < 1e-3, f"the test cannot tell a 5% bias (p = {biased:.3g})"
