"""Mesh-edit benchmark: writing a mesh's vertex positions, `update()`, then a render read
back with `np.array`, heliograph against Mitsuba 3, side by side. A program, not a test:
it prints a table and asserts nothing.

    python tests/bench_refit.py                                 # CPU: cpu_rgb vs llvm_ad_rgb
    python tests/bench_refit.py --hg-variant cuda_rgb --mi-variant cuda_ad_rgb

Each renderer runs in its own Python process. A worker loads the scene (a mesh under a
constant sky, `direct`, 256x256), renders once, then times `--reps` cycles of: set the
positions (alternately moved up by 1 % of the mesh size and back, so that every cycle is
a real change), `update()`, and `render(spp=1)` + `np.array`. heliograph takes the
positions as an (N, 3) array under `positions` and refits its BVH; Mitsuba 3.9.1 takes
them flat under `vertex_positions` (as `mi.Float`) and rebuilds its acceleration
structure. The table gives the median of the update alone and of the whole cycle.

Meshes: the torus of assets/meshes (2,400 triangles) and a 1,000,000-triangle displaced
sphere (tests/bench_cpu.py writes it into a temp dir).
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cpu import ROOT, machine, run_json_worker, write_bumpy_sphere

XML = """<scene version="3.0.0">
    <integrator type="direct"/>
    <sensor type="perspective">
        <float name="fov" value="40"/>
        <transform name="to_world"><lookat origin="0, 2.5, 3.5" target="0, 0, 0" up="0, 1, 0"/></transform>
        <film type="hdrfilm"><integer name="width" value="256"/><integer name="height" value="256"/></film>
    </sensor>
    <shape type="{kind}" id="mesh"><string name="filename" value="{path}"/></shape>
    <emitter type="constant"/>
</scene>
"""


def worker(args):
    """Runs in a renderer's own Python: prints one JSON line with the timings."""
    import numpy as np

    if args.worker == "hg":
        import heliograph as mi
    else:
        import mitsuba as mi
    mi.set_variant(args.variant)
    scene = mi.load_file(args.scene)
    params = mi.traverse(scene)
    np.array(mi.render(scene, spp=1))
    if args.worker == "hg":
        key = "mesh.positions"
        base = np.array(params[key], dtype=np.float32)
    else:
        key = "mesh.vertex_positions"
        base = np.array(params[key], dtype=np.float32).reshape(-1, 3)
    lift = 0.01 * float(np.ptp(base, axis=0).max())
    up = base + np.array([0, lift, 0], dtype=np.float32)
    versions = [up, base]
    if args.worker == "mi":
        versions = [mi.Float(v.ravel()) for v in versions]
    updates, cycles = [], []
    for k in range(args.reps + 1):
        t0 = time.perf_counter()
        params[key] = versions[k % 2]
        params.update()
        t1 = time.perf_counter()
        img = np.array(mi.render(scene, spp=1, seed=k))
        t2 = time.perf_counter()
        if k > 0:  # the first cycle warms up (Mitsuba compiles its kernels)
            updates.append(t1 - t0)
            cycles.append(t2 - t0)
    print(json.dumps({"vertices": len(base), "update": updates, "cycle": cycles, "mean": float(img[..., :3].mean())}))


def run_worker(py, kind, variant, scene, reps):
    return run_json_worker(py, os.path.abspath(__file__), variant, "--worker", kind, "--variant", variant,
                           "--scene", scene, "--reps", str(reps))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--hg-variant", default="cpu_rgb")
    ap.add_argument("--mi-variant", default="llvm_ad_rgb")
    ap.add_argument("--hg-python", default=os.path.join(ROOT, "target", "pyenv", "bin", "python"))
    ap.add_argument("--mi-python", default="/work/mi-venv/bin/python")
    ap.add_argument("--worker", choices=["hg", "mi"], help=argparse.SUPPRESS)
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    ap.add_argument("--scene", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    tmp = tempfile.mkdtemp(prefix="bench_refit_")
    ply = os.path.join(tmp, "mesh1m.ply")
    write_bumpy_sphere(ply)
    meshes = {"torus": ("obj", os.path.join(ROOT, "assets", "meshes", "torus.obj")), "mesh1m": ("ply", ply)}
    load_before = os.getloadavg()
    rows, notes = [], []
    for name, (kind, path) in meshes.items():
        scene = os.path.join(tmp, f"{name}.xml")
        with open(scene, "w") as f:
            f.write(XML.format(kind=kind, path=path))
        for label, py, w, variant in [
            (f"heliograph {args.hg_variant}", args.hg_python, "hg", args.hg_variant),
            (f"mitsuba {args.mi_variant}", args.mi_python, "mi", args.mi_variant),
        ]:
            try:
                r = run_worker(py, w, variant, scene, args.reps)
            except (RuntimeError, OSError, ValueError) as e:
                notes.append(f"{label} on {name}: {e}")
                continue
            rows.append((name, r["vertices"], label, statistics.median(r["update"]), statistics.median(r["cycle"]), r["mean"]))
    load_after = os.getloadavg()
    print(f"mesh-edit benchmark: positions write + update(), then render(spp=1) + np.array at 256x256; median of {args.reps}")
    print(f"machine: {machine()}")
    before, after = (" ".join(f"{x:.2f}" for x in la) for la in (load_before, load_after))
    print(f"load average before: {before}, after: {after}")
    head = f"{'mesh':<7} {'vertices':>9} {'renderer':<26} {'update ms':>10} {'cycle ms':>10} {'mean':>8}"
    print(head)
    print("-" * len(head))
    for name, nv, label, upd, cyc, mean in rows:
        print(f"{name:<7} {nv:>9} {label:<26} {upd * 1e3:>10.2f} {cyc * 1e3:>10.2f} {mean:>8.4f}")
    for n in notes:
        print("note:", n)


if __name__ == "__main__":
    sys.exit(main())
