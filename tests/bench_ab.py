"""A/B of two heliograph command-line binaries on one scene: the diagnostic behind the
per-change percentages in tests/bench_cpu_results.md. A program, not a test: it prints
a line and asserts nothing, and it compares heliograph with itself only (comparisons
with Mitsuba are tests/bench_cpu.py's).

    cargo build --release && cp target/release/heliograph /tmp/hg_base
    # ... change the code ...
    cargo build --release
    python tests/bench_ab.py /tmp/hg_base target/release/heliograph scenes/cbox.xml \
        --runs 40 --spp 8

The two binaries render one after the other, alternating which goes first, on one thread
pinned to one core (`taskset`, where there is one), and the time is the one the program
prints for the render itself (scene loading left out). On a machine shared with other
jobs a neighbour only adds time, so the minimum and the first quartile of each side say
more than the mean; all three of min, first quartile and median are printed, new / old.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile


def render_seconds(binary, scene, spp, res, out, env):
    """The render time `binary` reports for one render of `scene`."""
    cmd = [binary, "render", scene, "--spp", str(spp), "-o", out]
    if res:
        cmd += ["-D", f"res={res}"]
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", "0"] + cmd
    run = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env)
    found = re.search(r"rendered .* in ([0-9.]+) s", run.stdout + run.stderr)
    if run.returncode != 0 or not found:
        sys.exit(f"bench_ab.py: {' '.join(cmd)} failed (exit {run.returncode}):\n"
                 f"{run.stderr.strip()[-2000:]}")
    return float(found.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="the baseline binary")
    ap.add_argument("new", help="the changed binary")
    ap.add_argument("scene", help="a scene file")
    ap.add_argument("--runs", type=int, default=20, help="renders of each binary")
    ap.add_argument("--spp", type=int, default=16)
    ap.add_argument("--res", type=int, default=256,
                    help="the scene's `res` parameter (0: the scene has none)")
    args = ap.parse_args()
    if args.runs < 1 or args.spp < 1 or args.res < 0:
        ap.error("--runs and --spp must be at least 1, --res at least 0")
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    times = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ab.exr")
        for i in range(args.runs):
            order = ("old", "new") if i % 2 == 0 else ("new", "old")
            for side in order:
                binary = args.old if side == "old" else args.new
                times[side].append(render_seconds(binary, args.scene, args.spp, args.res, out, env))
    stats = {}
    for side, ts in times.items():
        ts.sort()
        stats[side] = (ts[0], ts[len(ts) // 4], statistics.median(ts))
    fmt = " / ".join
    print(f"{args.scene}, {args.runs} runs each, one thread: "
          f"old min/q1/median {fmt(f'{v:.4f}' for v in stats['old'])} s, "
          f"new {fmt(f'{v:.4f}' for v in stats['new'])} s, "
          f"new/old {fmt(f'{n / o:.3f}' for n, o in zip(stats['new'], stats['old']))}")


if __name__ == "__main__":
    main()
