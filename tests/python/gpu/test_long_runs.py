"""Long runs on CUDA: host and device memory stay flat over many exports, loads and
failed loads (the CPU twins, with the promise, are in ``../test_long_runs.py``).

- one film exported to PyTorch 10^6 times and to JAX 10^5 times (JAX's import costs
  ~100x PyTorch's), each import dropped at once;
- 10^4 scenes loaded on cuda_rgb, rendered, read and dropped;
- 10^4 failed loads on cuda_rgb.

``HELIOGRAPH_LONG=1`` (set by the GPU round) runs these counts; without it they are cut
by 10-100x for a quick run.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import heliograph as hg
from memory_trend import LONG, measure
from test_long_runs import failing_loads

from .common import scenes_root, settle


def _device_used(torch):
    def used():
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        return total - free

    return used


def test_one_film_exported_to_torch_again_and_again(make_seed, torch):
    img = make_seed(res=256, spp=4).render()
    want = np.array(img)

    def cycle(i):
        t = torch.from_dlpack(img)
        if i % 10_000 == 0:
            np.testing.assert_array_equal(t.cpu().numpy(), want)

    measure("CUDA: one film exported to PyTorch", cycle, cycles=10**6 if LONG else 10**4,
            warmup=2000, device_bytes=_device_used(torch), settle=settle).check()


def test_one_film_exported_to_jax_again_and_again(make_seed, torch, jax):
    img = make_seed(res=256, spp=4).render()
    want = np.array(img)

    def cycle(i):
        a = jax.dlpack.from_dlpack(img)
        if i % 10_000 == 0:
            np.testing.assert_array_equal(np.asarray(a), want)

    measure("CUDA: one film exported to JAX", cycle, cycles=10**5 if LONG else 2000,
            warmup=500, device_bytes=_device_used(torch), settle=settle).check()


def test_scenes_loaded_rendered_and_dropped(torch):
    path = os.path.join(scenes_root(), "scenes", "seed.xml")

    def cycle(i):
        scene = hg.load_file(path, res=64, spp=1)
        hg.render(scene, seed=i).numpy()

    measure("CUDA: scenes loaded, rendered and dropped", cycle, cycles=10**4 if LONG else 300,
            warmup=100, device_bytes=_device_used(torch), settle=settle).check()


def test_failed_loads(torch):
    loads = failing_loads()

    def cycle(i):
        error, load = loads[i % len(loads)]
        with pytest.raises(error):
            load()

    measure("CUDA: failed loads (6 kinds in turn)", cycle, cycles=10**4 if LONG else 1000,
            warmup=300, device_bytes=_device_used(torch), settle=settle).check()
