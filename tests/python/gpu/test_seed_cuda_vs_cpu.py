"""The seed scenario (render, traverse, set the texture, update, render) on CUDA against
the CPU backend: same expected image, judged per 16x16 block and channel with Welch's
t-test over independent seeds, Bonferroni-corrected; the same test must reject the CUDA
images scaled by 1.05, so it can fail."""

import math
import os

import numpy as np

import heliograph as hg

from .common import KEY, scenes_root

RES, SPP, SEEDS, BLOCK = 64, 16, 8, 16


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


def _block_means(imgs: np.ndarray) -> np.ndarray:
    k, h, w, c = imgs.shape
    b = imgs.reshape(k, h // BLOCK, BLOCK, w // BLOCK, BLOCK, c)
    return b.mean(axis=(2, 4)).reshape(k, -1)


def _worst_p(a: np.ndarray, b: np.ndarray) -> float:
    """Smallest Bonferroni-corrected two-sided p of Welch's t over blocks x channels
    (t-distribution tail by its normal approximation with Welch's dof correction)."""
    ma, mb = _block_means(a), _block_means(b)
    va, vb = ma.var(axis=0, ddof=1) / len(ma), mb.var(axis=0, ddof=1) / len(mb)
    # noise-free blocks (the bare environment) may differ by float rounding only
    floor = (1e-5 * np.abs(mb.mean(0))) ** 2 + 1e-30
    t = np.abs(ma.mean(0) - mb.mean(0)) / np.sqrt(va + vb + floor)
    # (at least 1: a noise-free block, such as a bare sky or alpha, has no variance)
    dof = np.maximum((va + vb) ** 2 / (va**2 / (len(ma) - 1) + vb**2 / (len(mb) - 1) + 1e-30), 1.0)
    # Fisher's normalising transform of Student's t (accurate to ~1e-3 in p for dof >= 7)
    z = t * (1 - 1 / (4 * dof)) / np.sqrt(1 + t**2 / (2 * dof))
    p = np.array([math.erfc(v / math.sqrt(2)) for v in z])
    return float(min(1.0, p.min() * p.size))


def test_seed_scenario_on_cuda_matches_the_cpu():
    gpu = _scenario("cuda_rgb")
    cpu = _scenario("cpu_rgb")
    hg.set_variant("cuda_rgb")
    assert gpu.shape == cpu.shape == (SEEDS, RES, RES, 3)
    p = _worst_p(gpu, cpu)
    biased = _worst_p(gpu * 1.05, cpu)
    print(f"seed scenario CUDA vs CPU: worst corrected p {p:.3g}; 1.05x image {biased:.3g}")
    assert p > 1e-3, f"the CUDA seed scenario differs from the CPU's (p = {p:.3g})"
    assert biased < 1e-3, f"the test cannot tell a 5% bias (p = {biased:.3g})"
