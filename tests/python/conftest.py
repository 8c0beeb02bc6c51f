"""Shared fixtures for the heliograph Python suite."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

import numpy as np
import pytest

import heliograph as hg

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(autouse=True)
def _quiet_cpu_variant():
    """Every test starts on cpu_rgb with the progress line off."""
    hg.set_variant("cpu_rgb")
    hg.set_progress(False)
    yield
    hg.set_progress(False, delay=0.5)


def seed_dict(texture: Any, res: int = 32, spp: Optional[int] = None) -> Dict[str, Any]:
    """The seed scenario's scene dict at resolution ``res``."""
    sensor: Dict[str, Any] = {
        "type": "perspective",
        "to_world": hg.ScalarTransform4f.look_at([0, 0, 5], [0, 0, 0], [0, 1, 0]),
        "film": {"type": "hdrfilm", "width": res, "height": res, "pixel_format": "rgb"},
    }
    if spp is not None:
        sensor["sampler"] = {"type": "independent", "sample_count": spp}
    return {
        "type": "scene",
        "integrator": {"type": "direct"},
        "emitter": {"type": "constant"},
        "shape": {
            "type": "rectangle",
            "bsdf": {"type": "diffuse", "reflectance": {"type": "bitmap", "bitmap": hg.Bitmap(texture)}},
        },
        "sensor": sensor,
    }


@pytest.fixture
def small_scene():
    """A tiny textured scene (16x16 film, 4x4 texture)."""
    rng = np.random.default_rng(7)
    return hg.load_dict(seed_dict(rng.random((4, 4, 3)), res=16))
