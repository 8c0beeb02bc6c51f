"""The seed scenario (render, traverse, set the texture, update, render) on CUDA against
the CPU backend: same expected image, judged per 16x16 block and channel with Welch's
t-test over independent seeds, Bonferroni-corrected; the same test must reject the CUDA
images scaled by 1.05, so it can fail."""

import os

import numpy as np

import heliograph as hg

from .common import KEY, scenes_root, worst_block_p

RES, SPP, SEEDS = 64, 16, 8


def _scenario(variant: str) -> np.ndarray:
    """Per-seed images of the second render (after the texture update), shape (K, H, W, 3)."""
    hg.set_variant(variant)
    scene = hg.load_file(os.path.join(scenes_root(), "scenes", "seed.xml"), res=RES, spp=SPP)
    params = hg.traverse(scene)
    h, w, c = params[KEY].shape
    y, x = np.mgrid[0:h, 0:w]
    tex = np.stack([x / w, y / h, 0.5 + 0.4 * np.sin(x * 0.3)], axis=-1)[..., :c]
    hg.render(scene, spp=SPP, seed=0).numpy()
    params[KEY] = hg.TensorXf(tex.astype(np.float32))
    params.update()
    return np.stack([hg.render(scene, spp=SPP, seed=100 + k).numpy() for k in range(SEEDS)])


def test_seed_scenario_on_cuda_matches_the_cpu():
    gpu = _scenario("cuda_rgb")
    cpu = _scenario("cpu_rgb")
    hg.set_variant("cuda_rgb")
    assert gpu.shape == cpu.shape == (SEEDS, RES, RES, 3)
    p = worst_block_p(gpu, cpu)
    biased = worst_block_p(gpu * 1.05, cpu)
    print(f"seed scenario CUDA vs CPU: worst corrected p {p:.3g}; 1.05x image {biased:.3g}")
    assert p > 1e-3, f"the CUDA seed scenario differs from the CPU's (p = {p:.3g})"
    assert biased < 1e-3, f"the test cannot tell a 5% bias (p = {biased:.3g})"
