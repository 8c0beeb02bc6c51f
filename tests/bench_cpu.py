"""CPU benchmark: heliograph's CLI against Mitsuba 3 on the same scene files.

A program, not a test: it prints a table and asserts nothing.

    cargo build --release -p heliograph
    python tests/bench_cpu.py                      # Mitsuba rows only where it is installed
    /work/mi-venv/bin/python tests/bench_cpu.py    # with Mitsuba 3 (scalar_rgb, llvm_ad_rgb)
    python tests/bench_cpu.py --spp 64 --res 256 --scenes cbox

Scenes: scenes/cbox.xml (path, max_depth 8) and scenes/seed.xml (direct), both at
--res x --res (default 512) and --spp (default 32), rendered on all cores.

Every configuration runs twice and the second (warm) run is timed: for heliograph, the
wall time of `heliograph render SCENE --spp N -D res=R -o OUT.exr` (process start, parse,
BVH build, render and EXR write), next to the render time the CLI reports in its summary
line when it prints one; for Mitsuba, in-process, `total` = load_file + render + write EXR
and `render` = mi.render alone (Python import and variant setup excluded; for llvm_ad_rgb
the warm run reuses the JIT kernel cache). Msamples/s = res * res * spp / render time.
ratio = heliograph wall time / Mitsuba total time (below 1: heliograph is faster).

Mitsuba rows are skipped, with a note, when `import mitsuba` fails or a variant is missing.
llvm_ad_rgb needs the LLVM shared library: on Debian 12, `apt-get install -y libllvm19`
(installed and working on the development machine, 2026-12-02).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENES = {"cbox": "scenes/cbox.xml", "seed": "scenes/seed.xml"}


def time_heliograph(exe, scene, spp, res, out):
    """Warm wall time of the CLI and the render time it reports (None if not parsed)."""
    cmd = [exe, "render", os.path.join(ROOT, scene), "--spp", str(spp), "-D", "res=%d" % res,
           "-o", out]
    wall, reported = None, None
    for _ in range(2):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError("heliograph failed (%d): %s" % (p.returncode, p.stderr.strip()))
    m = re.search(r"\bin (\d+(?:\.\d+)?) ?(ms|s)\b", p.stdout + p.stderr)
    if m:
        reported = float(m.group(1)) / (1000.0 if m.group(2) == "ms" else 1.0)
    return wall, reported


def time_mitsuba(mi, variant, scene, spp, res, out):
    """Warm (total, render) seconds of Mitsuba for one variant."""
    mi.set_variant(variant)
    import drjit as dr

    total = render = None
    for _ in range(2):
        t0 = time.perf_counter()
        s = mi.load_file(os.path.join(ROOT, scene), res=res)
        t1 = time.perf_counter()
        img = mi.render(s, spp=spp, seed=0)
        dr.eval(img)
        dr.sync_thread()
        t2 = time.perf_counter()
        mi.Bitmap(img).write(out)
        t3 = time.perf_counter()
        total, render = t3 - t0, t2 - t1
    return total, render


def import_mitsuba():
    try:
        import mitsuba as mi
        return mi, None
    except Exception as e:  # noqa: BLE001 -- any import failure means "skip Mitsuba"
        return None, "%s: %s" % (type(e).__name__, e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spp", type=int, default=32)
    ap.add_argument("--res", type=int, default=512)
    ap.add_argument("--scenes", nargs="+", default=list(SCENES), choices=list(SCENES))
    ap.add_argument("--heliograph", default=os.path.join(ROOT, "target", "release", "heliograph"))
    ap.add_argument("--variants", nargs="+", default=["scalar_rgb", "llvm_ad_rgb"])
    args = ap.parse_args()

    mi, why = import_mitsuba()
    notes = [] if mi else ["Mitsuba rows skipped (%s)" % why]
    have_hg = os.access(args.heliograph, os.X_OK)
    if not have_hg:
        notes.append("heliograph rows skipped: no executable %s (cargo build --release)"
                     % args.heliograph)
    rows = []
    tmp = tempfile.mkdtemp(prefix="bench_cpu_")
    samples = args.res * args.res * args.spp
    for name in args.scenes:
        scene = SCENES[name]
        hg_wall = None
        if have_hg:
            try:
                hg_wall, hg_rep = time_heliograph(args.heliograph, scene, args.spp, args.res,
                                                  os.path.join(tmp, "hg_%s.exr" % name))
                rows.append((name, "heliograph (CLI)", hg_wall, hg_rep, hg_rep or hg_wall))
            except (RuntimeError, OSError) as e:
                notes.append("heliograph %s: %s" % (name, e))
        for variant in args.variants if mi else []:
            if variant not in mi.variants():
                notes.append("Mitsuba variant %s not available" % variant)
                continue
            try:
                total, render = time_mitsuba(mi, variant, scene, args.spp, args.res,
                                             os.path.join(tmp, "mi_%s_%s.exr" % (variant, name)))
            except Exception as e:  # noqa: BLE001 -- e.g. libLLVM missing for llvm_ad_rgb
                notes.append("Mitsuba %s on %s failed: %s" % (variant, name, e))
                continue
            ratio = hg_wall / total if hg_wall else None
            rows.append((name, "mitsuba " + variant, total, render, render, ratio))
    print_table(rows, args, samples)
    for n in notes:
        print("note:", n)


def print_table(rows, args, samples):
    print("CPU benchmark: %dx%d, %d spp, %d cores (warm runs)"
          % (args.res, args.res, args.spp, os.cpu_count() or 0))
    head = "%-6s %-22s %10s %10s %10s %12s" % ("scene", "renderer", "total s", "render s",
                                                "Msamples/s", "hg/mitsuba")
    print(head)
    print("-" * len(head))
    def fmt(v, f):
        return (f % v) if v is not None else "-"

    for r in rows:
        name, who, total, render, rate_t = r[:5]
        ratio = r[5] if len(r) > 5 else None
        print("%-6s %-22s %10s %10s %10s %12s" % (
            name, who, fmt(total, "%.3f"), fmt(render, "%.3f"),
            fmt(samples / rate_t / 1e6 if rate_t else None, "%.2f"), fmt(ratio, "%.2f")))


if __name__ == "__main__":
    sys.exit(main())
