"""The cost of heliograph.jax's XLA custom calls: value_and_grad of the fit_texture task
through heliograph.torch, through heliograph.jax, and through heliograph.jax under
jax.jit (medians of 10 after 2 warm-up). A program, not a test.

    target/pyenv/bin/python tests/bench_diff_jit.py
"""

import os
import statistics
import sys
import time

import heliograph as hg
import heliograph.jax as hgj
import heliograph.torch as hgt
import jax
import jax.numpy as jnp
import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "examples"))
import fit_texture as ex

RES, TEX, SPP = 64, 64, 4


def main():
    hg.set_progress(False)
    truth = ex.target_texture(TEX)
    scene = ex.load_scene(RES, truth)
    target = np.array(hg.render(scene, spp=16, seed=99))
    start = np.full_like(truth, 0.5)

    def with_torch():
        t = torch.tensor(start, requires_grad=True)
        times = []
        for i in range(12):
            t0 = time.perf_counter()
            img = hgt.render(scene, {ex.KEY: t}, spp=SPP, seed=i)
            ((img - torch.from_numpy(target)) ** 2).mean().backward()
            times.append(time.perf_counter() - t0)
        return statistics.median(times[2:])

    render = hgj.render_fn(scene, keys=[ex.KEY], spp=SPP, seed=0)
    f = jax.value_and_grad(lambda t: ((render(t) - target) ** 2).mean())

    def with_jax(fn):
        x = jnp.asarray(start)
        times = []
        for _ in range(12):
            t0 = time.perf_counter()
            fn(x)[1].block_until_ready()
            times.append(time.perf_counter() - t0)
        return statistics.median(times[2:])

    a, b, c = with_torch(), with_jax(f), with_jax(jax.jit(f))
    print(f"{RES}² film, {TEX}² texture, spp {SPP}: value_and_grad through heliograph.torch "
          f"{a * 1000:.1f} ms, heliograph.jax {b * 1000:.1f} ms, heliograph.jax under jax.jit {c * 1000:.1f} ms")


if __name__ == "__main__":
    main()
