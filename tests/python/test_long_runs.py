"""Long runs on the CPU: memory stays flat over many exports, loads and failed loads.

The promise: after a warm-up, host memory grows by less than 1 KB per cycle of

- one film exported through DLPack and dropped, again and again;
- a scene loaded, rendered and dropped;
- a load that fails (malformed XML, a missing file, a reference cycle, a NaN, an unknown
  plugin, a dict that contains itself), its exception caught and dropped.

The default counts keep the suite fast; ``HELIOGRAPH_LONG=1`` runs the full ones
(10^6 exports, 10^4 loads, 10^4 failed loads). The GPU suite has the CUDA twins
(``gpu/test_long_runs.py``).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import heliograph as hg
from memory_trend import LONG, measure

SEED_XML = os.path.join(os.path.dirname(__file__), "..", "..", "scenes", "seed.xml")


def failing_loads():
    """Loads that must each fail with a clean error, one of every kind."""
    self_containing = {"type": "diffuse"}
    self_containing["reflectance"] = self_containing
    cycle = ("<scene version='3.0.0'><texture type='checkerboard' id='t'><ref name='color0' id='t'/>"
             "</texture><shape type='sphere'><bsdf type='diffuse'><ref name='reflectance' id='t'/>"
             "</bsdf></shape></scene>")
    return [
        (hg.SceneError, lambda: hg.load_string("<scene version='3.0.0'><shape type='sphere'>")),
        (hg.SceneFileError, lambda: hg.load_file("/nonexistent/heliograph/scene.xml")),
        (hg.SceneError, lambda: hg.load_string(cycle)),
        (hg.SceneError, lambda: hg.load_dict({"type": "scene", "s": {"type": "sphere", "radius": math.nan}})),
        (hg.SceneError, lambda: hg.load_dict({"type": "scene", "s": {"type": "spere"}})),
        (hg.SceneError, lambda: hg.load_dict({"type": "scene", "s": {"type": "sphere", "bsdf": self_containing}})),
    ]


def test_one_film_exported_again_and_again():
    img = hg.render(hg.load_file(SEED_XML, res=64), spp=1)
    want = np.array(img)

    def cycle(i):
        a = np.from_dlpack(img)
        if i % 1000 == 0:
            np.testing.assert_array_equal(a, want)

    measure("CPU: one film exported through DLPack", cycle, cycles=10**6 if LONG else 10**5,
            warmup=2000).check()


def test_scenes_loaded_rendered_and_dropped():
    def cycle(i):
        scene = hg.load_file(SEED_XML, res=16, spp=1)
        hg.render(scene, seed=i).numpy()

    measure("CPU: scenes loaded, rendered and dropped", cycle, cycles=10**4 if LONG else 500,
            warmup=50).check()


def test_failed_loads():
    loads = failing_loads()

    def cycle(i):
        error, load = loads[i % len(loads)]
        with pytest.raises(error):
            load()

    measure("CPU: failed loads (6 kinds in turn)", cycle, cycles=10**4 if LONG else 3000,
            warmup=300).check()
