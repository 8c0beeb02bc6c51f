"""Constants and helpers shared by the GPU tests (imported relatively: ``from .common import``)."""

from __future__ import annotations

import gc
import math
import os
import time
from dataclasses import dataclass
from typing import Any, Tuple

import numpy as np
import pytest

import heliograph as hg

KEY = "shape.bsdf.reflectance.data"
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EXAMPLE = os.path.join(REPO, "python", "examples", "texture_update_bug.py")
# A render long enough (~50 ms on an H200: 6 ms per 32 spp at 512x512) that a consumer
# which does not wait for it reads the film before it is written.
HEAVY = {"res": 512, "spp": 256}
# set by conftest on a test whose call failed (its traceback keeps its capsules alive)
CALL_FAILED = pytest.StashKey[bool]()


def scenes_root() -> str:
    """$HELIOGRAPH_ROOT when it holds the scenes (the GPU bundle), else this checkout."""
    env = os.environ.get("HELIOGRAPH_ROOT")
    if env and os.path.isfile(os.path.join(env, "scenes", "seed.xml")):
        return env
    return REPO


def _block_means(imgs: np.ndarray, block: int) -> np.ndarray:
    k, h, w, c = imgs.shape
    b = imgs.reshape(k, h // block, block, w // block, block, c)
    return b.mean(axis=(2, 4)).reshape(k, -1)


def worst_block_p(a: np.ndarray, b: np.ndarray, block: int = 16) -> float:
    """Smallest Bonferroni-corrected two-sided p of Welch's t over blocks x channels
    between per-seed images ``a`` and ``b`` (shape (K, H, W, C); block means of
    ``block`` x ``block`` pixels; t-distribution tail by its normal approximation with
    Welch's dof correction)."""
    ma, mb = _block_means(a, block), _block_means(b, block)
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


def frame_colour(i: int) -> np.ndarray:
    """A float32 RGB albedo that differs from frame to frame (golden-ratio steps)."""
    phase = (i * 0.6180339887 + np.array([0.0, 1 / 3, 2 / 3])) % 1.0
    return (0.05 + 0.9 * phase).astype(np.float32)


@dataclass
class Seed:
    """scenes/seed.xml loaded at some resolution and sample count, with its parameters."""

    scene: Any
    params: Any
    res: int
    spp: int

    @property
    def tex_shape(self) -> Tuple[int, int, int]:
        return tuple(self.params[KEY].shape)

    def texture(self, i: int) -> np.ndarray:
        return np.ascontiguousarray(np.broadcast_to(frame_colour(i), self.tex_shape))

    def set_texture(self, value: Any) -> None:
        self.params[KEY] = value
        self.params.update()

    def render(self, seed: int = 0) -> Any:
        return hg.render(self.scene, spp=self.spp, seed=seed)


def settle() -> None:
    """Collects garbage and lets deleters run (they may run on other threads), and waits
    (up to a second) until the reclaimer has freed what consumers that named no stream
    let go of and the capsules of finished imports are released."""
    from heliograph import _native

    for _ in range(3):
        gc.collect()
    hg.sync_device()
    time.sleep(0.01)
    gc.collect()
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and (_native._cuda_held_bytes()[1] or _native._parked_imports()):
        time.sleep(0.005)
