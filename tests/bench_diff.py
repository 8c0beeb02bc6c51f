"""Differentiable-rendering benchmark: heliograph.torch against Mitsuba 3 prb, side by side.

A program, not a test: it prints a table and asserts nothing.

    python tests/bench_diff.py                          # 256² film and texture, spp 16
    python tests/bench_diff.py --res 128 --iters 20
    python3 tests/bench_diff.py --cuda --hg-python python3 --hg-path SITE \
        --mi-python python3 --mi-path MITSUBA_SITE          # the GPU: cuda_rgb vs cuda_ad_rgb

The task of python/examples/fit_texture.py: a textured sphere under the sky environment
map, `path` (Mitsuba: `prb`) with max_depth 3, fitting its texture to a target image with
Adam (lr 0.02) on the mean squared error. Each renderer runs in its own Python process
(heliograph from --hg-python on `cpu_rgb`; Mitsuba from --mi-python on `llvm_ad_rgb`,
which needs Debian's libllvm19), one after the other; each times --iters iterations
after 2 warm-up ones and reports medians of: the forward pass (render + reading the
image), the backward pass (loss.backward / dr.backward), the whole iteration (render,
loss, backward, optimiser step), the first iteration, and after the last iteration the
loss and the texture's RMS error against the texture the target was rendered with (half
the sphere is unseen). A third row runs the same task through heliograph.jax: the
iteration is one jitted step (render, loss, backward, Adam) through heliograph's XLA
custom calls, with the render_fn's fixed seeds; its forward pass is a jitted render. Peak memory is the process's peak resident set size minus its size after
the libraries were imported (PyTorch alone is ~500 MiB).

With --cuda: heliograph on `cuda_rgb` with the texture, the image and the gradients as
PyTorch CUDA tensors, Mitsuba on `cuda_ad_rgb`; a phase ends when its results are on
the device (torch.cuda.synchronize / dr.sync_thread: the time a user waits for them), and
memory is the device memory in use (cuMemGetInfo, every process on the GPU: run it on an
idle GPU) at its highest phase boundary, over that after the imports. heliograph's first
iteration is given with a warm kernel cache (a one-iteration run compiles first) and cold.
"""

import argparse
import json
import math
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
cuda = sys.argv[5] == "cuda"
KEY = "ball.bsdf.reflectance.data"
if which in ("hg", "hgjax"):
    import heliograph as m
    m.set_variant("cuda_rgb" if cuda else "cpu_rgb"); m.set_progress(False)
else:
    import mitsuba as m
    m.set_variant("cuda_ad_rgb" if cuda else "llvm_ad_rgb")

def device_used_mib():
    # device memory in use (driver API, the primary context every library here shares)
    import ctypes
    cu = ctypes.CDLL("libcuda.so.1")
    cu.cuInit(0)
    ctx = ctypes.c_void_p()
    cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0)
    cu.cuCtxPushCurrent_v2(ctx)
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
    cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
    cu.cuDevicePrimaryCtxRelease_v2(0)
    return (total.value - free.value) / 2**20

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
elif which == "hgjax":
    import jax, jax.numpy as jnp, heliograph.jax as hgj
else:
    import drjit as dr
def sync():
    if cuda and which == "hg":
        torch.cuda.synchronize()
    elif cuda and which == "mi":
        dr.sync_thread()
base_mib = rss_mib()
base_dev = device_used_mib() if cuda else 0.0
peak_dev = base_dev
truth = texture(res)
start = np.full_like(truth, 0.5)
out = {"forward": [], "backward": [], "iteration": []}
def record(i, t0, t1, t2, t3, t4):
    global peak_dev
    if cuda:
        peak_dev = max(peak_dev, device_used_mib())
    if i == 0:
        out["first"] = t4 - t0
    if i >= 2:
        out["forward"].append(t1 - t0); out["backward"].append(t3 - t2); out["iteration"].append(t4 - t0)

sc = scene(truth)
if which == "hg":
    dev = "cuda" if cuda else "cpu"
    target = torch.from_dlpack(m.render(sc, spp=4 * spp, seed=1 << 20)).to(dev)
    tex = torch.tensor(start, device=dev, requires_grad=True)
    opt = torch.optim.Adam([tex], lr=0.02)
    sync()
    for i in range(iters + 2):
        t0 = time.perf_counter()
        opt.zero_grad()
        image = hgt.render(sc, {KEY: tex}, spp=spp, seed=i)
        sync()
        t1 = time.perf_counter()
        loss = ((image - target) ** 2).mean()
        sync()
        t2 = time.perf_counter()
        loss.backward()
        sync()
        t3 = time.perf_counter()
        opt.step()
        with torch.no_grad():
            tex.clamp_(0, 1)
        sync()
        record(i, t0, t1, t2, t3, time.perf_counter())
    out["loss"] = loss.item()
    out["tex_err"] = float(np.sqrt(np.mean((tex.detach().cpu().numpy() - truth) ** 2)))
elif which == "hgjax":
    # the same loop as one jitted step (render, loss, backward, Adam, clamp); the
    # render_fn's seeds are fixed (seed 0, seed_grad 1); the backward pass is not timed
    # apart (it runs inside the step)
    device = jax.devices("gpu" if cuda else "cpu")[0]
    target = jax.device_put(jnp.asarray(np.asarray(m.render(sc, spp=4 * spp, seed=1 << 20))), device)
    render = hgj.render_fn(sc, [KEY], spp=spp, seed=0)
    forward = jax.jit(render)

    @jax.jit
    def step(t, m1, m2, k):
        loss, g = jax.value_and_grad(lambda t: jnp.mean((render(t) - target) ** 2))(t)
        m1 = 0.9 * m1 + 0.1 * g
        m2 = 0.999 * m2 + 0.001 * g * g
        lr = 0.02 * jnp.sqrt(1 - 0.999 ** k) / (1 - 0.9 ** k)
        return jnp.clip(t - lr * m1 / (jnp.sqrt(m2) + 1e-8), 0.0, 1.0), m1, m2, loss

    tex = jax.device_put(jnp.asarray(start), device)
    m1 = jnp.zeros_like(tex)
    m2 = jnp.zeros_like(tex)
    for i in range(iters + 2):
        t0 = time.perf_counter()
        forward(tex).block_until_ready()
        t1 = time.perf_counter()
        tex, m1, m2, loss = step(tex, m1, m2, jnp.float32(i + 1))
        tex.block_until_ready()
        t2 = time.perf_counter()
        if i == 0:
            out["first"] = t2 - t0
        if cuda:
            peak_dev = max(peak_dev, device_used_mib())
        if i >= 2:
            out["forward"].append(t1 - t0); out["iteration"].append(t2 - t1)
    out["backward"] = [float("nan")]
    out["loss"] = float(loss)
    out["tex_err"] = float(np.sqrt(np.mean((np.asarray(tex) - truth) ** 2)))
else:
    target = m.render(sc, spp=4 * spp, seed=1 << 20)
    dr.eval(target)
    params = m.traverse(sc)
    opt = m.ad.Adam(lr=0.02)
    opt[KEY] = m.TensorXf(start)
    params.update(opt)
    for i in range(iters + 2):
        t0 = time.perf_counter()
        image = m.render(sc, params, spp=spp, seed=i)
        if cuda:  # the image evaluated on the device, as heliograph's is
            dr.eval(image); sync()
        else:
            image.numpy()  # the values on the host: Dr.Jit evaluates lazily
        t1 = time.perf_counter()
        loss = dr.mean(dr.square(image - target), axis=None)
        dr.eval(loss); sync()
        t2 = time.perf_counter()
        dr.backward(loss)
        if cuda:
            dr.eval(dr.grad(opt[KEY])); sync()
        else:
            dr.grad(opt[KEY]).numpy()
        t3 = time.perf_counter()
        opt.step()
        opt[KEY] = dr.clip(opt[KEY], 0.0, 1.0)
        params.update(opt)
        dr.eval(opt[KEY]); sync()
        record(i, t0, t1, t2, t3, time.perf_counter())
    out["loss"] = float(np.asarray(loss).ravel()[0])
    out["tex_err"] = float(np.sqrt(np.mean((np.asarray(opt[KEY]) - truth) ** 2)))
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base_mib
out["device_mib"] = peak_dev - base_dev
print("RESULT " + json.dumps(out))
"""


def run(python, which, args, env, iters=None, path=None):
    code = f"ROOT = {ROOT!r}\n" + WORKER
    if path:
        env = dict(env, PYTHONPATH=path + os.pathsep + env.get("PYTHONPATH", ""))
    argv = [which, str(args.res), str(args.spp), str(iters or args.iters), "cuda" if args.cuda else "cpu"]
    p = subprocess.run([python, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=3600,
                       check=False)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    print(f"{which} worker failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--res", type=int, default=256)
    ap.add_argument("--spp", type=int, default=16)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--cuda", action="store_true", help="cuda_rgb against cuda_ad_rgb")
    ap.add_argument("--hg-python", default=os.path.join(ROOT, "target", "pyenv", "bin", "python"))
    ap.add_argument("--hg-path", help="prepended to PYTHONPATH for heliograph")
    ap.add_argument("--mi-python", default="/work/mi-venv/bin/python")
    ap.add_argument("--mi-path", help="prepended to PYTHONPATH for Mitsuba")
    args = ap.parse_args()
    env = dict(os.environ, DRJIT_LIBLLVM_PATH=LLVM)
    load = os.getloadavg()
    cold = None
    if args.cuda:  # the first run compiles the kernels into the cache
        cold = run(args.hg_python, "hg", args, env, iters=1, path=args.hg_path)
    hg_name = "heliograph cuda_rgb (path)" if args.cuda else "heliograph cpu_rgb (path)"
    mi_name = "mitsuba cuda_ad_rgb (prb)" if args.cuda else "mitsuba llvm_ad_rgb (prb)"
    jax_name = "heliograph.jax " + ("cuda_rgb" if args.cuda else "cpu_rgb") + " (path, one jitted step)"
    rows = [(hg_name, run(args.hg_python, "hg", args, env, path=args.hg_path)),
            (jax_name, run(args.hg_python, "hgjax", args, env, path=args.hg_path)),
            (mi_name, run(args.mi_python, "mi", args, env, path=args.mi_path))]
    print(f"differentiable rendering: {args.res}² film and texture, spp {args.spp}, max_depth 3, "
          f"Adam, median of {args.iters} iterations after 2 warm-up")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs; "
          f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    if args.cuda:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False).stdout.strip()
        print(f"GPU: {gpu}")
        if cold:
            print(f"heliograph first iteration with a cold kernel cache: {cold['first']:.2f} s")
    mem = "peak device memory over imports, MiB" if args.cuda else "peak RSS over imports, MiB"
    print(f"| renderer | forward ms | backward ms | iteration ms | first iteration s | {mem} | loss after "
          f"| texture RMSE after |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        if r is None:
            print(f"| {name} | failed | | | | | | |")
            continue
        med = {k: statistics.median(r[k]) * 1000 for k in ("forward", "backward", "iteration")}
        m = r["device_mib"] if args.cuda else r["peak_mib"]
        bwd = "–" if math.isnan(med["backward"]) else f"{med['backward']:.2f}"
        print(f"| {name} | {med['forward']:.2f} | {bwd} | {med['iteration']:.2f} | "
              f"{r['first']:.2f} | {m:.0f} | {r['loss']:.5f} | {r['tex_err']:.4f} |")


if __name__ == "__main__":
    sys.exit(main())
