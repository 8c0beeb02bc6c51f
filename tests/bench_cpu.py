"""CPU benchmark: heliograph cpu_rgb against Mitsuba 3 llvm_ad_rgb and scalar_rgb, side by side.

A program, not a test: it prints a table and asserts nothing. One command runs every row:

    python tests/bench_cpu.py                     # 256x256, 32 spp, median of 3
    python tests/bench_cpu.py --res 512 --spp 64 --scenes cbox seed

Each renderer runs in its own Python process (heliograph from `--hg-python`, default
target/pyenv/bin/python, and, with `--hg-pgo-python`, a second heliograph row from an
environment holding the wheel of python/build_wheel_pgo.sh; Mitsuba from `--mi-python`,
default /work/mi-venv/bin/python),
one scene at a time, in turn, so that all rows of a scene are measured back to back.
A worker loads the scene, renders once to warm up (Mitsuba's LLVM JIT compiles its
kernels then), and times `--reps` renders of `render(scene, spp, seed)` followed by
`np.array(image)`: the wall time a Python user sees. The table gives the median, the
rate in Msamples/s and the ratio to Mitsuba llvm_ad_rgb (above 1: heliograph faster).

Scenes (all at --res x --res, --spp):
  seed    scenes/seed.xml: the textured quad under a constant sky (`direct`)
  cbox    scenes/cbox.xml: the Cornell box (`path`, max_depth 8)
  mesh1m  a 1,000,000-triangle displaced sphere (binary PLY written to a temp dir),
          diffuse, under a constant sky (`path`, max_depth 4), box filter
  envmap  five spheres (diffuse, plastic, roughconductor, dielectric, conductor) on a
          diffuse floor under assets/envmaps/sky.exr (`path`, max_depth 8)

The machine and its load average (before and after) are printed with the table: on a
shared machine compare rows of one run only.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENES = ["seed", "cbox", "mesh1m", "envmap"]
RENDERERS = [
    ("heliograph cpu_rgb", "hg", "cpu_rgb"),
    ("mitsuba llvm_ad_rgb", "mi", "llvm_ad_rgb"),
    ("mitsuba scalar_rgb", "mi", "scalar_rgb"),
]
LLVM = "/usr/lib/x86_64-linux-gnu/libLLVM-19.so"

ENVMAP_XML = """<scene version="3.0.0">
    <default name="spp" value="32"/>
    <default name="res" value="256"/>
    <integrator type="path"><integer name="max_depth" value="8"/></integrator>
    <sensor type="perspective">
        <float name="fov" value="40"/>
        <transform name="to_world"><lookat origin="0, 1.5, 7" target="0, 0.3, 0" up="0, 1, 0"/></transform>
        <sampler type="independent"><integer name="sample_count" value="$spp"/></sampler>
        <film type="hdrfilm">
            <integer name="width" value="$res"/><integer name="height" value="$res"/>
            <string name="pixel_format" value="rgb"/>
        </film>
    </sensor>
    <emitter type="envmap"><string name="filename" value="{sky}"/></emitter>
    <shape type="rectangle">
        <transform name="to_world"><rotate x="1" angle="-90"/><scale value="6"/></transform>
        <bsdf type="diffuse"><rgb name="reflectance" value="0.5, 0.5, 0.5"/></bsdf>
    </shape>
    {spheres}
</scene>
"""

SPHERE_BSDFS = [
    '<bsdf type="diffuse"><rgb name="reflectance" value="0.8, 0.3, 0.2"/></bsdf>',
    '<bsdf type="plastic"><rgb name="diffuse_reflectance" value="0.1, 0.3, 0.8"/></bsdf>',
    '<bsdf type="roughconductor"><float name="alpha" value="0.2"/></bsdf>',
    '<bsdf type="dielectric"/>',
    '<bsdf type="conductor"/>',
]

MESH1M_XML = """<scene version="3.0.0">
    <default name="spp" value="32"/>
    <default name="res" value="256"/>
    <integrator type="path"><integer name="max_depth" value="4"/></integrator>
    <sensor type="perspective">
        <float name="fov" value="45"/>
        <transform name="to_world"><lookat origin="0, 0.8, 3" target="0, 0, 0" up="0, 1, 0"/></transform>
        <sampler type="independent"><integer name="sample_count" value="$spp"/></sampler>
        <film type="hdrfilm">
            <integer name="width" value="$res"/><integer name="height" value="$res"/>
            <string name="pixel_format" value="rgb"/>
            <rfilter type="box"/>
        </film>
    </sensor>
    <shape type="ply">
        <string name="filename" value="{ply}"/>
        <bsdf type="diffuse"><rgb name="reflectance" value="0.8, 0.8, 0.8"/></bsdf>
    </shape>
    <emitter type="constant"><rgb name="radiance" value="1, 1, 1"/></emitter>
</scene>
"""


def write_bumpy_sphere(path, rings=500, segments=1000):
    """The displaced UV sphere of the GPU ray benchmark: 2 * rings * segments triangles."""
    import numpy as np

    j = np.arange(rings + 1, dtype=np.float32)
    i = np.arange(segments, dtype=np.float32)
    theta = (np.pi * (j + 0.5) / (rings + 1)).astype(np.float32)[:, None]
    phi = (2 * np.pi * i / segments).astype(np.float32)[None, :]
    r = 1.0 + 0.04 * np.sin(23.0 * theta) * np.cos(31.0 * phi)
    verts = np.stack([r * np.sin(theta) * np.cos(phi), r * np.cos(theta) * np.ones_like(phi),
                      r * np.sin(theta) * np.sin(phi)], axis=-1).reshape(-1, 3).astype("<f4")
    jj, ii = np.meshgrid(np.arange(rings), np.arange(segments), indexing="ij")
    a = (jj * segments + ii).ravel()
    b = (jj * segments + (ii + 1) % segments).ravel()
    c, d = a + segments, b + segments
    tris = np.concatenate([np.stack([a, b, c], 1), np.stack([b, d, c], 1)]).astype("<i4")
    faces = np.zeros(len(tris), dtype=[("n", "u1"), ("v", "<i4", 3)])
    faces["n"], faces["v"] = 3, tris
    head = (f"ply\nformat binary_little_endian 1.0\nelement vertex {len(verts)}\n"
            "property float x\nproperty float y\nproperty float z\n"
            f"element face {len(tris)}\nproperty list uchar int vertex_indices\nend_header\n")
    with open(path, "wb") as f:
        f.write(head.encode())
        f.write(verts.tobytes())
        f.write(faces.tobytes())


def scene_files(tmp):
    """Path of each scene's XML file (the generated ones written into `tmp`)."""
    ply = os.path.join(tmp, "mesh1m.ply")
    write_bumpy_sphere(ply)
    files = {"seed": os.path.join(ROOT, "scenes", "seed.xml"),
             "cbox": os.path.join(ROOT, "scenes", "cbox.xml"),
             "mesh1m": os.path.join(tmp, "mesh1m.xml"),
             "envmap": os.path.join(tmp, "envmap.xml")}
    with open(files["mesh1m"], "w") as f:
        f.write(MESH1M_XML.format(ply=ply))
    spheres = "\n    ".join(
        f'<shape type="sphere"><point name="center" value="{1.4 * (k - 2):g}, 0.6, 0"/>'
        f'<float name="radius" value="0.6"/>{b}</shape>'
        for k, b in enumerate(SPHERE_BSDFS))
    with open(files["envmap"], "w") as f:
        f.write(ENVMAP_XML.format(sky=os.path.join(ROOT, "assets", "envmaps", "sky.exr"),
                                  spheres=spheres))
    return files


def worker(args):
    """Runs in a renderer's own Python: prints one JSON line with the timings."""
    import numpy as np

    if args.worker == "hg":
        import heliograph as mi
    else:
        import mitsuba as mi
    mi.set_variant(args.variant)
    t0 = time.perf_counter()
    scene = mi.load_file(args.scene, res=args.res, spp=args.spp)
    load = time.perf_counter() - t0
    times = []
    for k in range(args.reps + 1):
        t0 = time.perf_counter()
        img = np.array(mi.render(scene, spp=args.spp, seed=k))
        times.append(time.perf_counter() - t0)
    print(json.dumps({"load": load, "warm": times[0], "times": times[1:],
                      "mean": float(img.mean())}))


def run_json_worker(py, script, variant, *args):
    """Runs `py script *args` for a renderer of `variant` (Mitsuba's LLVM variant gets
    its libLLVM) and returns the JSON of its last output line."""
    env = dict(os.environ)
    if variant == "llvm_ad_rgb" and os.path.exists(LLVM):
        env.setdefault("DRJIT_LIBLLVM_PATH", LLVM)
    p = subprocess.run([py, script, *args], capture_output=True, text=True, env=env, check=False)
    if p.returncode != 0:
        raise RuntimeError((p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1])
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_worker(py, kind, variant, scene, args):
    return run_json_worker(py, os.path.abspath(__file__), variant, "--worker", kind, "--variant", variant,
                           "--scene", scene, "--res", str(args.res), "--spp", str(args.spp),
                           "--reps", str(args.reps))


def machine():
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count() or 0} logical CPUs, {platform.platform()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--res", type=int, default=256)
    ap.add_argument("--spp", type=int, default=32)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scenes", nargs="+", default=SCENES, choices=SCENES)
    ap.add_argument("--hg-python", default=os.path.join(ROOT, "target", "pyenv", "bin", "python"))
    ap.add_argument("--hg-pgo-python", help="Python of an environment with the PGO wheel "
                    "(python/build_wheel_pgo.sh): adds its row")
    ap.add_argument("--mi-python", default="/work/mi-venv/bin/python")
    ap.add_argument("--worker", choices=["hg", "mi"], help=argparse.SUPPRESS)
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    ap.add_argument("--scene", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    # (label, worker kind, variant, the Python that runs it)
    pythons = {"hg": args.hg_python, "mi": args.mi_python}
    renderers = [(label, kind, variant, pythons[kind]) for label, kind, variant in RENDERERS]
    if args.hg_pgo_python:
        renderers.insert(1, ("heliograph PGO wheel", "hg", "cpu_rgb", args.hg_pgo_python))
    load_before = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="bench_cpu_")
    files = scene_files(tmp)
    samples = args.res * args.res * args.spp
    rows, notes = [], []
    for name in args.scenes:
        results = {}
        for label, kind, variant, py in renderers:
            try:
                results[label] = run_worker(py, kind, variant, files[name], args)
            except (RuntimeError, OSError, ValueError) as e:
                notes.append(f"{label} on {name}: {e}")
        ref = results.get("mitsuba llvm_ad_rgb")
        for label, _, _, _ in renderers:
            r = results.get(label)
            if r is None:
                continue
            med = statistics.median(r["times"])
            ratio = statistics.median(ref["times"]) / med if ref else None
            rows.append((name, label, med, samples / med / 1e6, ratio, r["warm"], r["mean"]))
    load_after = os.getloadavg()

    print(f"CPU benchmark: {args.res}x{args.res}, {args.spp} spp, median of {args.reps} warm "
          "renders (render + np.array)")
    print(f"machine: {machine()}")
    before, after = (" ".join(f"{x:.2f}" for x in la) for la in (load_before, load_after))
    print(f"load average before: {before}, after: {after}")
    head = (f"{'scene':<7} {'renderer':<20} {'median s':>9} {'Msamples/s':>11} "
            f"{'vs llvm_ad':>12} {'first s':>9} {'mean':>10}")
    print(head)
    print("-" * len(head))
    for name, label, med, rate, ratio, warm, mean in rows:
        vs = f"{ratio:.2f}x" if ratio else "-"
        print(f"{name:<7} {label:<20} {med:>9.3f} {rate:>11.2f} {vs:>12} {warm:>9.3f} {mean:>10.4f}")
    for n in notes:
        print("note:", n)


if __name__ == "__main__":
    sys.exit(main())
