"""Check the regression criterion with Mitsuba standing in for heliograph (needs Mitsuba).

The criterion of renderer/tests/regression.rs is ported here (same block test, constants
and Bonferroni level), and fed Mitsuba renders made the way the Rust test renders
heliograph (32 batches of `hg_spp` samples, fresh seeds):

1. "correct": Mitsuba itself with new seeds must PASS every case (no false failures from
   heavy-tailed noise, tolerance floors or the reference's own noise);
2. "wrong": scenes altered by one convention (the kind of mistake each focused case is
   meant to catch) must FAIL — the cases have the power to see those mistakes.

    /work/mi-venv/bin/python tests/references/check_criterion.py          # everything
    /work/mi-venv/bin/python tests/references/check_criterion.py --correct-only
    /work/mi-venv/bin/python tests/references/check_criterion.py roughdielectric   # some cases
"""

import math
import os
import sys
import time

import numpy as np
import mitsuba as mi

mi.set_variant("scalar_rgb")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_references as refs  # noqa: E402

HG_BATCHES, ALPHA, REL_FLOOR, ABS_FLOOR = 32, 1e-3, 0.005, 1e-4
SEED_BASE = 50_000

# case -> list of (description, text replacements applied to the scene file, define changes)
WRONG = {
    "cbox_depth2": [("max_depth 3 instead of 2", [], {"max_depth": "3"})],
    "cbox_depth3": [("max_depth 2 instead of 3", [], {"max_depth": "2"}),
                    ("max_depth 4 instead of 3", [], {"max_depth": "4"})],
    "bitmap_uv_srgb": [("raw texture decoded as sRGB",
                        [('<boolean name="raw" value="true"/>', "")], {})],
    "default_fov": [("fov 41 deg instead of the default",
                     [('<transform name="to_world"><lookat origin="0, 0, 6"',
                       '<float name="fov" value="41"/><transform name="to_world">'
                       '<lookat origin="0, 0, 6"')], {}),
                    ("the 50 mm fov (39.6 deg) on the y axis",
                     [('<transform name="to_world"><lookat origin="0, 0, 6"',
                       '<float name="fov" value="39.5978"/><string name="fov_axis" value="y"/>'
                       '<transform name="to_world"><lookat origin="0, 0, 6"')], {}),
                    ("fov 39.5978 deg on x (= the default: must be ACCEPTED)",
                     [('<transform name="to_world"><lookat origin="0, 0, 6"',
                       '<float name="fov" value="39.5978"/>'
                       '<transform name="to_world"><lookat origin="0, 0, 6"')], {})],
    "one_sided": [("two-sided BSDF",
                   [('<bsdf type="diffuse" id="grey"><rgb name="reflectance" value="0.7, 0.6, 0.5"/></bsdf>',
                     '<bsdf type="twosided" id="grey"><bsdf type="diffuse"><rgb name="reflectance" '
                     'value="0.7, 0.6, 0.5"/></bsdf></bsdf>')], {})],
    "envmap_rotated": [("envmap rotated 70 deg instead of 75",
                        [('<rotate y="1" angle="75"/>', '<rotate y="1" angle="70"/>')], {}),
                       ("envmap without its to_world",
                        [('<rotate y="1" angle="75"/><rotate z="1" angle="15"/>', "")], {})],
    "filter_box": [("gaussian filter instead of box", [], {"filter": "gaussian"})],
    "filter_gaussian": [("box filter instead of gaussian", [], {"filter": "box"}),
                        ("tent filter instead of gaussian", [], {"filter": "tent"})],
    "checkerboard": [("u and v scales swapped",
                      [('<scale x="4" y="6"/>', '<scale x="6" y="4"/>')], {})],
    "crop": [("crop offset x 25 instead of 24",
              [('<integer name="crop_offset_x" value="24"/>',
                '<integer name="crop_offset_x" value="25"/>')], {})],
    "emitter_point": [("point intensity 5% high",
                       [('value="6, 5, 4"', 'value="6.3, 5.25, 4.2"')], {})],
    "bsdfs_constant": [("roughplastic alpha 0.3 instead of 0.25",
                        [('<float name="alpha" value="0.25"/>', '<float name="alpha" value="0.3"/>')], {}),
                       ("roughconductor beckmann instead of ggx",
                        [('<string name="distribution" value="ggx"/>',
                          '<string name="distribution" value="beckmann"/>')], {})],
    "bsdfs_envmap": [("dielectric ior 1.33 instead of 1.5",
                      [('<float name="int_ior" value="1.5"/>', '<float name="int_ior" value="1.33"/>')], {})],
    "roughdielectric": [("ggx alpha 0.13 instead of 0.1",
                         [('<float name="alpha" value="0.1"/>', '<float name="alpha" value="0.13"/>')], {}),
                        ("bk7 instead of diamond",
                         [('<string name="int_ior" value="diamond"/>', "")], {}),
                        ("isotropic alpha 0.05 instead of 0.05 x 0.3",
                         [('<float name="alpha_v" value="0.3"/>', '<float name="alpha_v" value="0.05"/>')], {}),
                        ("the roughness texture's mean 0.21 instead of the texture",
                         [('<float name="color0" value="0.02"/>', '<float name="color0" value="0.21"/>'),
                          ('<float name="color1" value="0.4"/>', '<float name="color1" value="0.21"/>')], {})],
    "principled": [("no clearcoat on the metal",
                    [('<float name="clearcoat" value="0.8"/>', "")], {}),
                   ("no sheen on the glass", [('<float name="sheen" value="1.0"/>', "")], {}),
                   ("spec_trans 0.8 instead of 0.9",
                    [('<float name="spec_trans" value="0.9"/>', '<float name="spec_trans" value="0.8"/>')], {}),
                   ("no flatness on the base", [('<float name="flatness" value="0.6"/>', "")], {}),
                   ("the diff_trans texture's mean 0.9 instead of the texture",
                    [('<float name="color0" value="0.4"/>', '<float name="color0" value="0.9"/>'),
                     ('<float name="color1" value="1.4"/>', '<float name="color1" value="0.9"/>')], {})],
}


def inc_beta(a, b, x):
    """Regularised incomplete beta (continued fraction, modified Lentz), as in the Rust test."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - inc_beta(b, a, 1.0 - x)
    ln_front = a * math.log(x) + b * math.log1p(-x) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    tiny, f, c, d = 1e-300, 1.0, 1.0, 0.0
    for j in range(1, 2000):
        m = j // 2
        if j % 2:
            dj = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        else:
            dj = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 + dj * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + dj / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(ln_front) / (a * f)


def block_means(img, block):
    """(H/b, W/b, 3) block means, partial blocks at the edges included."""
    h, w, _ = img.shape
    out = np.zeros(((h + block - 1) // block, (w + block - 1) // block, 3))
    for by in range(out.shape[0]):
        for bx in range(out.shape[1]):
            out[by, bx] = img[by * block:(by + 1) * block, bx * block:(bx + 1) * block].mean(axis=(0, 1))
    return out


def criterion(batches, ref_mean, ref_se, block):
    """(passed, worst p, threshold, failing tests) of the Rust test's block criterion."""
    bm = np.stack([block_means(b, block) for b in batches])
    n = bm.shape[0]
    hg = bm.mean(axis=0)
    var_hg = bm.var(axis=0, ddof=1) / n
    r = block_means(ref_mean, block)
    var_ref = block_means(ref_se, block) ** 2
    floor = REL_FLOOR * np.abs(r) + ABS_FLOOR
    var = var_hg + var_ref + floor ** 2
    t = (hg - r) / np.sqrt(var)
    denom = var_hg ** 2 / (n - 1) + var_ref ** 2 / (refs.REF_BATCHES - 1)
    dof = np.where(denom > 0, np.clip(var ** 2 / np.maximum(denom, 1e-300), 1, 1e6), 1e6)
    p = np.array([inc_beta(d / 2, 0.5, d / (d + tt * tt)) for d, tt in zip(dof.ravel(), t.ravel())])
    thr = ALPHA / p.size
    return p.min() >= thr, p.min(), thr, int((p < thr).sum())


def load(case, replace, defines):
    path = os.path.join(refs.ROOT, case["scene"])
    text = open(path).read()
    for old, new in replace:
        assert old in text, "%s: %r not in scene" % (case["name"], old)
        text = text.replace(old, new)
    defs = dict(case["defines"], **defines)
    fr = mi.file_resolver()
    saved = [fr[i] for i in range(len(fr))]
    fr.prepend(os.path.dirname(path))  # relative asset paths resolve as for the file
    try:
        return mi.load_string(text, **defs)
    finally:
        fr.clear()
        for p in saved:
            fr.append(p)


def run(case, scene):
    ref_mean = np.array(mi.Bitmap(os.path.join(refs.HERE, case["name"] + ".exr")), dtype=np.float64)
    ref_se = np.array(mi.Bitmap(os.path.join(refs.HERE, case["name"] + "_se.exr")), dtype=np.float64)
    batches = [np.array(mi.render(scene, spp=case["hg_spp"], seed=SEED_BASE + k), dtype=np.float64)[..., :3]
               for k in range(HG_BATCHES)]
    if batches[0].shape != ref_mean.shape:
        return False, 0.0, 0.0, -1
    return criterion(batches, ref_mean, ref_se, case["block"])


def main(argv):
    correct_only = "--correct-only" in argv
    names = [a for a in argv if not a.startswith("--")]
    bad = 0
    for case in [c for c in refs.read_cases() if not names or c["name"] in names]:
        t0 = time.time()
        ok, pmin, thr, nfail = run(case, load(case, [], {}))
        bad += not ok
        print("%-20s correct %-4s  min p %.1e (threshold %.1e)  %.1f s"
              % (case["name"], "PASS" if ok else "FAIL", pmin, thr, time.time() - t0), flush=True)
        for what, replace, defines in [] if correct_only else WRONG.get(case["name"], []):
            ok, pmin, thr, nfail = run(case, load(case, replace, defines))
            expect_pass = "must be ACCEPTED" in what
            bad += ok != expect_pass
            verdict = "rejected" if not ok else "accepted" if expect_pass else "ACCEPTED (no power!)"
            print("%-20s   wrong: %-40s %s (%d failing blocks, min p %.1e)"
                  % ("", what, verdict, nfail, pmin), flush=True)
    print("unexpected outcomes: %d" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
