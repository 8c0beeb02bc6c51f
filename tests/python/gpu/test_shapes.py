"""Shapes on cuda_rgb: cylinders (kernels/shapes/cylinder.cuh) against the CPU backend,
judged as test_seed_cuda_vs_cpu judges the seed scenario (Welch's t per 16x16 block and
channel over independent seeds, Bonferroni-corrected, and the same test must reject a
5% bias); and scenes with instances (shapegroup/instance), which the CUDA backend
refuses with a message that names the CPU variants."""

import numpy as np
import pytest

import heliograph as hg

from .test_seed_cuda_vs_cpu import _worst_p

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
    p = _worst_p(gpu, cpu)
    biased = _worst_p(gpu * 1.05, cpu)
    print(f"cylinders CUDA vs CPU: worst corrected p {p:.3g}; 1.05x image {biased:.3g}")
    assert p > 1e-3, f"CUDA cylinders differ from the CPU's (p = {p:.3g})"
    assert biased < 1e-3, f"the test cannot tell a 5% bias (p = {biased:.3g})"


def test_instances_are_refused_on_cuda_naming_the_cpu_variants():
    d = hg.cornell_box()
    d["sensor"]["film"].update(width=16, height=16)
    d["grp"] = {"type": "shapegroup", "s": {"type": "sphere", "radius": 0.2}}
    d["inst"] = {"type": "instance", "g": {"type": "ref", "id": "grp"}}
    # refused when the scene is flattened for the GPU or at the render, whichever comes first
    with pytest.raises(hg.RenderError, match=r"instanced shapes.*\"cpu_rgb\""):
        hg.render(hg.load_dict(d), spp=1)
    hg.set_variant("cpu_rgb")
    img = hg.render(hg.load_dict(d), spp=1).numpy()
    assert img.shape == (16, 16, 3) and np.all(np.isfinite(img))
