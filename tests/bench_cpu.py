"""CPU benchmark: heliograph cpu_rgb against Mitsuba 3 llvm_ad_rgb and scalar_rgb, side by side.

A program, not a test: it prints a table and asserts nothing. One command runs every row:

    python tests/bench_cpu.py                     # 256x256, 32 spp, 5 rounds
    python tests/bench_cpu.py --res 512 --spp 64 --scenes cbox seed

Each renderer runs in its own Python process (heliograph from `--hg-python`, default
target/pyenv/bin/python, and, with `--hg-pgo-python`, a second heliograph row from an
environment holding the wheel of python/build_wheel_pgo.sh, and with `--hg-base-python`
one from an environment holding another commit's wheel (before/after); Mitsuba from `--mi-python`,
default /work/mi-venv/bin/python), one scene at a time. For a scene, every renderer's
worker loads it and renders once to warm up (Mitsuba's LLVM JIT compiles its kernels
then), one worker after the other; then the workers take turns: in each of `--reps`
rounds every worker times one `render(scene, spp, seed)` followed by `np.array(image)`
(the wall time a Python user sees), in an order that rotates from round to round. The
renders compared in a round are seconds apart, so a neighbour's burst of load on a
shared machine hits both sides of a ratio alike. The table gives the median time, the
rate in Msamples/s, and the ratio to Mitsuba llvm_ad_rgb (above 1: heliograph faster):
the median of the rounds' ratios, with their range.

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
import contextlib
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
TAG = "bench_cpu"  # starts the lines a worker answers with

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
    """Runs in a renderer's own Python: loads the scene, warms up, prints a JSON line,
    then for each seed read from stdin times one render and prints a JSON line."""
    import numpy as np

    if args.worker == "hg":
        import heliograph as mi
    else:
        import mitsuba as mi
    mi.set_variant(args.variant)
    t0 = time.perf_counter()
    scene = mi.load_file(args.scene, res=args.res, spp=args.spp)
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    np.array(mi.render(scene, spp=args.spp, seed=0))
    print(TAG, json.dumps({"load": load, "warm": time.perf_counter() - t0}), flush=True)
    for line in sys.stdin:
        seed = int(line)
        t0 = time.perf_counter()
        img = np.array(mi.render(scene, spp=args.spp, seed=seed))
        t = time.perf_counter() - t0
        print(TAG, json.dumps({"time": t, "mean": float(img.mean())}), flush=True)


def worker_env(variant):
    """The environment of a worker for `variant`: Mitsuba's LLVM variant gets its libLLVM."""
    env = dict(os.environ)
    if variant == "llvm_ad_rgb" and os.path.exists(LLVM):
        env.setdefault("DRJIT_LIBLLVM_PATH", LLVM)
    return env


def run_json_worker(py, script, variant, *args):
    """Runs `py script *args` for a renderer of `variant` and returns the JSON of its last
    output line (the one-shot workers of tests/bench_refit.py)."""
    p = subprocess.run([py, script, *args], capture_output=True, text=True,
                       env=worker_env(variant), check=False)
    if p.returncode != 0:
        raise RuntimeError((p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1])
    return json.loads(p.stdout.strip().splitlines()[-1])


class Worker:
    """A renderer's worker process for one scene, answering one JSON line per request."""

    def __init__(self, py, kind, variant, scene, args, err):
        # stderr to a file: a pipe nobody reads could fill up and stall the worker
        self.err = err
        self.p = subprocess.Popen(
            [py, os.path.abspath(__file__), "--worker", kind, "--variant", variant, "--scene",
             scene, "--res", str(args.res), "--spp", str(args.spp)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True,
            env=worker_env(variant))
        self.ready = self.read()

    def read(self):
        """The worker's next answer (lines without the tag, a renderer's own log, are
        skipped)."""
        while True:
            line = self.p.stdout.readline()
            if not line:
                self.p.wait()
                self.err.seek(0)
                lines = self.err.read().strip().splitlines()
                raise RuntimeError(lines[-1] if lines else f"exit {self.p.returncode}")
            if line.startswith(TAG + " "):
                return json.loads(line[len(TAG) + 1:])

    def render(self, seed):
        self.p.stdin.write(f"{seed}\n")
        self.p.stdin.flush()
        return self.read()

    def close(self):
        if self.p.stdin and not self.p.stdin.closed:
            try:
                self.p.stdin.close()
            except OSError:
                pass
        self.p.wait()


def run_scene(renderers, scene, args, notes):
    """Every renderer's timings on `scene`: {label: {"warm", "times", "mean"}}, the
    workers taking turns round by round."""
    workers = {}
    with contextlib.ExitStack() as stack:
        stack.callback(lambda: [w.close() for w in workers.values()])
        for label, kind, variant, py in renderers:
            err = stack.enter_context(tempfile.TemporaryFile(mode="w+"))
            try:
                workers[label] = Worker(py, kind, variant, scene, args, err)
            except (RuntimeError, OSError, ValueError) as e:
                notes.append(f"{label} on {os.path.basename(scene)}: {e}")
        results = {label: {"warm": w.ready["warm"], "times": [], "mean": None}
                   for label, w in workers.items()}
        order = list(workers)
        for k in range(1, args.reps + 1):
            shift = k % len(order) if order else 0
            for label in order[shift:] + order[:shift]:
                if label not in workers:
                    continue
                time.sleep(0.1)  # let the previous renderer's idle threads settle
                try:
                    r = workers[label].render(k)
                except (RuntimeError, OSError, ValueError) as e:
                    notes.append(f"{label} on {os.path.basename(scene)}: {e}")
                    workers.pop(label).close()
                    results.pop(label)
                    continue
                results[label]["times"].append(r["time"])
                results[label]["mean"] = r["mean"]
        return results


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
    ap.add_argument("--reps", type=int, default=5, help="rounds (each renderer once a round)")
    ap.add_argument("--scenes", nargs="+", default=SCENES, choices=SCENES)
    ap.add_argument("--hg-python", default=os.path.join(ROOT, "target", "pyenv", "bin", "python"))
    ap.add_argument("--hg-pgo-python", help="Python of an environment with the PGO wheel "
                    "(python/build_wheel_pgo.sh): adds its row")
    ap.add_argument("--hg-base-python", help="Python of an environment with another "
                    "heliograph wheel (an earlier commit's, for a before/after of a change): "
                    "adds its row, labelled 'heliograph base wheel'")
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
    if args.hg_base_python:
        renderers.insert(1, ("heliograph base wheel", "hg", "cpu_rgb", args.hg_base_python))
    load_before = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="bench_cpu_")
    files = scene_files(tmp)
    samples = args.res * args.res * args.spp
    rows, notes = [], []
    for name in args.scenes:
        results = run_scene(renderers, files[name], args, notes)
        ref = results.get("mitsuba llvm_ad_rgb")
        for label, _, _, _ in renderers:
            r = results.get(label)
            if r is None or not r["times"]:
                continue
            med = statistics.median(r["times"])
            # the ratio of each round's two renders, seconds apart
            ratios = [m / t for m, t in zip(ref["times"], r["times"])] if ref else []
            ratio = (statistics.median(ratios), min(ratios), max(ratios)) if ratios else None
            rows.append((name, label, med, samples / med / 1e6, ratio, r["warm"], r["mean"]))
    load_after = os.getloadavg()

    print(f"CPU benchmark: {args.res}x{args.res}, {args.spp} spp, {args.reps} rounds of warm "
          "renders (render + np.array), the renderers in turn")
    print(f"machine: {machine()}")
    before, after = (" ".join(f"{x:.2f}" for x in la) for la in (load_before, load_after))
    print(f"load average before: {before}, after: {after}")
    head = (f"{'scene':<7} {'renderer':<20} {'median s':>9} {'Msamples/s':>11} "
            f"{'vs llvm_ad':>11} {'range':>12} {'first s':>9} {'mean':>10}")
    print(head)
    print("-" * len(head))
    for name, label, med, rate, ratio, warm, mean in rows:
        vs, spread = (f"{ratio[0]:.2f}x", f"{ratio[1]:.2f}-{ratio[2]:.2f}") if ratio else ("-", "")
        print(f"{name:<7} {label:<20} {med:>9.3f} {rate:>11.2f} {vs:>11} {spread:>12} "
              f"{warm:>9.3f} {mean:>10.4f}")
    print("vs llvm_ad: the median over rounds of Mitsuba llvm_ad_rgb's time / this row's "
          "time in the same round (above 1: faster); range: the lowest and highest round")
    for n in notes:
        print("note:", n)


if __name__ == "__main__":
    sys.exit(main())
