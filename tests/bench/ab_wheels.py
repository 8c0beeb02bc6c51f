"""Before/after of two installed heliograph wheels on one machine: the wall time a Python
user sees for `render` + `np.array` of shipped scenes, and for the seed loop (a new NumPy
texture, `update()`, render 4 spp, `np.array`), each wheel in its own process, taking
turns. A program, not a test: it prints a table and asserts nothing.

    python tests/bench/ab_wheels.py SITE_A SITE_B [--variant cuda_rgb] [--rounds 4]

SITE_A and SITE_B are folders a wheel was installed into (`pip install --target`).
Compare rows of one run only: heliograph against itself, never against Mitsuba (that is
tests/bench/seed_loop.py and tests/bench_cpu.py). A process's median can differ from the
next process's by 2x on a sub-millisecond row (the GPU's clock state at start-up), so
each side also prints the range of its per-process medians: a B/A inside the ranges'
overlap is no difference; run more rounds to narrow it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# (row, scene, resolution, spp, loop): loop rows set the seed texture and update() each rep
SCENES = [
    ("seed", "scenes/seed.xml", 512, 32, False),
    ("cbox", "scenes/cbox.xml", 512, 32, False),
    ("loop", "scenes/seed.xml", 512, 4, True),
]

WORKER = r"""
import json, sys, time
import numpy as np
import heliograph as hg
variant, path, res, spp, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
loop = sys.argv[6] == "1"
hg.set_variant(variant)
hg.set_progress(False)
scene = hg.load_file(path, res=res)
params = hg.traverse(scene)
key = "shape.bsdf.reflectance.data"
rng = np.random.default_rng(7)
textures = [rng.random(params[key].shape, dtype=np.float32) for _ in range(8)] if loop else []


def step(i):
    if loop:
        params[key] = textures[i % len(textures)]
        params.update()
    return np.array(hg.render(scene, params, spp=spp, seed=i))


for i in range(3):
    step(i)
times = []
for i in range(reps):
    t = time.perf_counter()
    img = step(i)
    times.append(time.perf_counter() - t)
print(json.dumps({"times": times, "mean": float(img.mean())}))
"""


def run(site, variant, scene, res, spp, reps, loop):
    env = dict(os.environ, PYTHONPATH=site)
    out = subprocess.run([sys.executable, "-c", WORKER, variant, os.path.join(ROOT, scene),
                          str(res), str(spp), str(reps), "1" if loop else "0"], env=env,
                         capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("site_a")
    ap.add_argument("site_b")
    ap.add_argument("--variant", default="cuda_rgb")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    print(f"{'scene':6} {'A median ms':>12} {'B median ms':>12} {'B/A':>6}  "
          f"{'A process medians':>18} {'B process medians':>18}  image means A, B")
    for name, scene, res, spp, loop in SCENES:
        a, b, means = [], [], set()
        per = {args.site_a: [], args.site_b: []}
        for r in range(args.rounds):
            order = [(args.site_a, a), (args.site_b, b)]
            for site, acc in order if r % 2 == 0 else order[::-1]:
                res_ = run(site, args.variant, scene, res, spp, args.reps, loop)
                acc.extend(res_["times"])
                per[site].append(statistics.median(res_["times"]) * 1e3)
                means.add((site, round(res_["mean"], 5)))
        ma, mb = statistics.median(a) * 1e3, statistics.median(b) * 1e3
        ms = sorted(means)
        span = lambda v: f"{min(v):8.3f}..{max(v):<8.3f}"
        print(f"{name:6} {ma:12.3f} {mb:12.3f} {mb / ma:6.3f}  {span(per[args.site_a]):>18} "
              f"{span(per[args.site_b]):>18}  {[m for _, m in ms]}")


if __name__ == "__main__":
    main()
