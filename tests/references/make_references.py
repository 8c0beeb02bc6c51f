"""Render the regression references with Mitsuba 3 (the independent reference renderer).

References are made with Mitsuba only, never from heliograph. CI has no Mitsuba: the outputs
are small committed files. Exact commands (from the repository root):

    /work/mi-venv/bin/python assets/make_assets.py                # textures, envmap, meshes
    /work/mi-venv/bin/python tests/references/make_references.py  # all cases (a few minutes)
    /work/mi-venv/bin/python tests/references/make_references.py cbox seed   # some cases
    /work/mi-venv/bin/python tests/references/make_references.py --preview   # + PNG previews

Cases come from tests/references/cases.txt (shared with renderer/tests/regression.rs).
Mitsuba 3.9.1, variant scalar_rgb, every scene setting unchanged (sampler `independent`,
the film's default gaussian filter unless the scene names another).

Variance: each case is rendered as REF_BATCHES = 8 independent batches (seeds 1000..1007),
each with `ref_spp` samples per pixel. Stored, as float32 RGB OpenEXR:
    <name>.exr     per-pixel mean of the batches (the reference image)
    <name>_se.exr  per-pixel standard error of that mean: std(batch images, ddof=1)/sqrt(8)
The reference is several times more converged than heliograph's test render, and the test
adds the reference's standard error to heliograph's, so reference noise cannot cause a
failure. A pixel standard error understates the error of a block mean only through
correlations between pixels (the filter spreads a sample over neighbours), so the test
bounds a block's reference error by the mean of its pixels' standard errors (an upper
bound: the standard deviation of a mean is at most the mean of standard deviations).
"""

import os
import sys
import time

import numpy as np
import mitsuba as mi

mi.set_variant("scalar_rgb")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REF_BATCHES = 8
SEED_BASE = 1000


def read_cases(path=os.path.join(HERE, "cases.txt")):
    """Parse cases.txt into a list of dicts."""
    cases = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, scene, defines, ref_spp, hg_spp, block = line.split()
            defs = {} if defines == "-" else dict(kv.split("=", 1) for kv in defines.split(","))
            cases.append(dict(name=name, scene=scene, defines=defs, ref_spp=int(ref_spp),
                              hg_spp=int(hg_spp), block=int(block)))
    return cases


def render_case(case):
    """Render one case in REF_BATCHES batches; return (mean, standard error) arrays."""
    scene = mi.load_file(os.path.join(ROOT, case["scene"]), **case["defines"])
    batches = []
    for k in range(REF_BATCHES):
        img = np.array(mi.render(scene, spp=case["ref_spp"], seed=SEED_BASE + k), dtype=np.float64)
        batches.append(img[..., :3])
    b = np.stack(batches)
    mean = b.mean(axis=0)
    se = b.std(axis=0, ddof=1) / np.sqrt(REF_BATCHES)
    return mean.astype(np.float32), se.astype(np.float32)


def main(argv):
    preview = "--preview" in argv
    names = [a for a in argv if not a.startswith("--")]
    cases = [c for c in read_cases() if not names or c["name"] in names]
    total = 0.0
    for c in cases:
        t0 = time.time()
        mean, se = render_case(c)
        dt = time.time() - t0
        total += dt
        mi.Bitmap(mean).write(os.path.join(HERE, c["name"] + ".exr"))
        mi.Bitmap(se).write(os.path.join(HERE, c["name"] + "_se.exr"))
        if preview:
            mi.util.write_bitmap(os.path.join("/tmp", "ref_" + c["name"] + ".png"), mean)
        rel = float(np.mean(se) / max(np.mean(mean), 1e-8))
        print("%-20s %4dx%-4d spp %5d x %d  %6.1f s  mean %.4f  rel.se %.2e"
              % (c["name"], mean.shape[1], mean.shape[0], c["ref_spp"], REF_BATCHES, dt,
                 float(mean.mean()), rel), flush=True)
    print("total %.1f s" % total)


if __name__ == "__main__":
    main(sys.argv[1:])
