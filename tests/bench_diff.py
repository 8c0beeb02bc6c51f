"""Differentiable-rendering benchmark: heliograph.torch against Mitsuba 3 prb, side by side.

A program, not a test: it prints a table and asserts nothing.

    python tests/bench_diff.py                          # 256² film and texture, spp 16
    python tests/bench_diff.py --res 128 --iters 20

The task of python/examples/fit_texture.py: a textured sphere under the sky environment
map, `path` (Mitsuba: `prb`) with max_depth 3, fitting its texture to a target image with
Adam (lr 0.02) on the mean squared error. Each renderer runs in its own Python process
(heliograph from --hg-python on `cpu_rgb`; Mitsuba from --mi-python on `llvm_ad_rgb`,
which needs Debian's libllvm19), one after the other; each times --iters iterations
after 2 warm-up ones and reports medians of: the forward pass (render + reading the
image), the backward pass (loss.backward / dr.backward), the whole iteration (render,
loss, backward, optimiser step), the first iteration, and the loss after the last
iteration. Peak memory is the process's peak resident set size minus its size after
the libraries were imported (PyTorch alone is ~500 MiB).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM = "/usr/lib/x86_64-linux-gnu/libLLVM-19.so"

WORKER = r"""
import json, os, resource, sys, time
import numpy as np
which, res, spp, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
KEY = "ball.bsdf.reflectance.data"
if which == "hg":
    import heliograph as m
    m.set_variant("cpu_rgb"); m.set_progress(False)
else:
    import mitsuba as m
    m.set_variant("llvm_ad_rgb")

def texture(size):
    png = m.Bitmap(os.path.join(ROOT, "assets", "textures", "seed_texture.png"))
    tex = np.asarray(png.convert(component_format=m.Struct.Type.Float32, srgb_gamma=False))[..., :3]
    rows = (np.arange(size) * tex.shape[0] // size)[:, None]
    cols = (np.arange(size) * tex.shape[1] // size)[None, :]
    return np.ascontiguousarray(tex[rows, cols], dtype=np.float32)

def scene(tex):
    # the scene of python/examples/fit_texture.py, in either library
    T = m.ScalarTransform4f
    return m.load_dict({
        "type": "scene",
        "integrator": {"type": "prb", "max_depth": 3},
        "sensor": {"type": "perspective", "fov": 35,
                   "to_world": T().look_at([0, 1.2, 4.5], [0, 0.6, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": res, "height": res, "pixel_format": "rgb"}},
        "sky": {"type": "envmap", "filename": os.path.join(ROOT, "assets", "envmaps", "sky.exr")},
        "ball": {"type": "sphere", "center": [0, 0.8, 0], "radius": 0.8,
                 "bsdf": {"type": "diffuse", "reflectance": {"type": "bitmap", "bitmap": m.Bitmap(tex)}}},
        "floor": {"type": "rectangle", "to_world": T().rotate([1, 0, 0], -90).scale(4),
                  "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.4, 0.4, 0.4]}}},
    })

def rss_mib():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) / 1024

if which == "hg":
    import torch, heliograph.torch as hgt  # counted in the baseline, as drjit is
base_mib = rss_mib()
truth = texture(res)
start = np.full_like(truth, 0.5)
out = {"forward": [], "backward": [], "iteration": []}
def record(i, t0, t1, t2, t3, t4):
    if i == 0:
        out["first"] = t4 - t0
    if i >= 2:
        out["forward"].append(t1 - t0); out["backward"].append(t3 - t2); out["iteration"].append(t4 - t0)

sc = scene(truth)
if which == "hg":
    target = torch.from_numpy(np.array(m.render(sc, spp=4 * spp, seed=1 << 20)))
    tex = torch.tensor(start, requires_grad=True)
    opt = torch.optim.Adam([tex], lr=0.02)
    for i in range(iters + 2):
        t0 = time.perf_counter()
        opt.zero_grad()
        image = hgt.render(sc, {KEY: tex}, spp=spp, seed=i)
        t1 = time.perf_counter()
        loss = ((image - target) ** 2).mean()
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        opt.step()
        with torch.no_grad():
            tex.clamp_(0, 1)
        record(i, t0, t1, t2, t3, time.perf_counter())
    out["loss"] = loss.item()
else:
    import drjit as dr
    target = m.render(sc, spp=4 * spp, seed=1 << 20)
    dr.eval(target)
    params = m.traverse(sc)
    opt = m.ad.Adam(lr=0.02)
    opt[KEY] = m.TensorXf(start)
    params.update(opt)
    for i in range(iters + 2):
        t0 = time.perf_counter()
        image = m.render(sc, params, spp=spp, seed=i)
        image.numpy()  # the values on the host: Dr.Jit evaluates lazily
        t1 = time.perf_counter()
        loss = dr.mean(dr.square(image - target), axis=None)
        dr.eval(loss)
        t2 = time.perf_counter()
        dr.backward(loss)
        dr.grad(opt[KEY]).numpy()
        t3 = time.perf_counter()
        opt.step()
        opt[KEY] = dr.clip(opt[KEY], 0.0, 1.0)
        params.update(opt)
        record(i, t0, t1, t2, t3, time.perf_counter())
    out["loss"] = float(np.asarray(loss).ravel()[0])
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base_mib
print("RESULT " + json.dumps(out))
"""


def run(python, which, args, env):
    code = f"ROOT = {ROOT!r}\n" + WORKER
    p = subprocess.run([python, "-c", code, which, str(args.res), str(args.spp), str(args.iters)],
                       capture_output=True, text=True, env=env, timeout=3600, check=False)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit(f"{which} worker failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--res", type=int, default=256)
    ap.add_argument("--spp", type=int, default=16)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--hg-python", default=os.path.join(ROOT, "target", "pyenv", "bin", "python"))
    ap.add_argument("--mi-python", default="/work/mi-venv/bin/python")
    args = ap.parse_args()
    env = dict(os.environ, DRJIT_LIBLLVM_PATH=LLVM)
    load = os.getloadavg()
    rows = [("heliograph cpu_rgb (path)", run(args.hg_python, "hg", args, env)),
            ("mitsuba llvm_ad_rgb (prb)", run(args.mi_python, "mi", args, env))]
    print(f"differentiable rendering: {args.res}² film and texture, spp {args.spp}, max_depth 3, "
          f"Adam, median of {args.iters} iterations after 2 warm-up")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs; "
          f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    print("| renderer | forward ms | backward ms | iteration ms | first iteration s | peak RSS over imports, MiB | loss after |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        med = {k: statistics.median(r[k]) * 1000 for k in ("forward", "backward", "iteration")}
        print(f"| {name} | {med['forward']:.0f} | {med['backward']:.0f} | {med['iteration']:.0f} | "
              f"{r['first']:.2f} | {r['peak_mib']:.0f} | {r['loss']:.5f} |")


if __name__ == "__main__":
    sys.exit(main())
