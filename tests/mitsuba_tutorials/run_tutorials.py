"""Runs Mitsuba 3's public tutorial notebooks as scripts, with ``import mitsuba as mi``
changed to ``import heliograph as mi`` and nothing else, and compares the images they
render with Mitsuba's own renders of the same cells.

    # 1. the tutorials under heliograph, then under Mitsuba 3 (its own Python)
    python run_tutorials.py run --checkout PATH/mitsuba-tutorials --module heliograph --out OUT
    /path/to/mitsuba-venv/bin/python run_tutorials.py run --checkout PATH --module mitsuba --out OUT
    # 2. the statistical comparison, as a Markdown table
    python run_tutorials.py compare --out OUT

``PATH`` is a checkout of the ``mitsuba-tutorials`` repository (not part of this
repository). Each notebook runs in a scratch copy of its folder. ``matplotlib`` is
replaced by a recorder (``imshow`` converts its argument with NumPy, as matplotlib
does, and keeps nothing), so that neither run needs it; ``drjit``, imported but not
used by one notebook, is a stub under heliograph.

Every ``render`` a notebook calls is recorded, and rendered again with ``--seeds - 1``
other seeds, so that each side has independent images to estimate its noise from. The
comparison is a Welch t-test per 8x8 block and channel of the mean images, with the
significance level Bonferroni-corrected for the number of blocks: an image matches when
no block differs significantly. Images with the same channels on both sides (e.g. an
``aov`` render's AOVs) are compared in every channel, others in R, G, B.
``run --only PART ...`` runs the notebooks whose path contains one of the parts, keeping
the other results.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
import types
from typing import Any

import numpy as np

NOTEBOOKS = [
    "quickstart/mitsuba_quickstart.ipynb",
    "rendering/editing_a_scene.ipynb",
    "rendering/multi_view_rendering.ipynb",
    "how_to_guides/image_io_and_manipulation.ipynb",
]


def cells(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def retarget(src: str, module: str) -> str:
    """The one change: the module imported as Mitsuba."""
    src = re.sub(r"^(\s*)import mitsuba as mi\b", rf"\1import {module} as mi", src, flags=re.MULTILINE)
    return re.sub(r"^(\s*)from mitsuba import\b", rf"\1from {module} import", src, flags=re.MULTILINE)


# Mitsuba 3.9.1 names a mesh's positions ``vertex_positions`` (a flat array); the tutorials
# follow a newer Mitsuba that names them ``positions`` (an (N, 3) tensor). Under Mitsuba
# 3.9.1, the one cell that writes them runs in its 3.9 form, so that the image rendered
# after the edit is compared with an image of the same edit. Nothing changes for heliograph,
# which takes both keys.
MITSUBA_39_FORMS = {
    "params['teapot.positions'] += mi.TensorXf([[0, 0, 0.5]])": (
        "_p = dr.unravel(mi.Point3f, params['teapot.vertex_positions'])\n"
        "_p.z += 0.5\n"
        "params['teapot.vertex_positions'] = dr.ravel(_p)"
    ),
}


def mitsuba_39_form(src: str) -> str:
    """``src`` with the newer Mitsuba's key for mesh positions in Mitsuba 3.9.1's form."""
    for new, old in MITSUBA_39_FORMS.items():
        src = src.replace(new, old)
    return src


def install_stubs(module: str) -> None:
    """A matplotlib recorder; a drjit stub where heliograph stands in for Mitsuba."""
    plt = types.ModuleType("matplotlib.pyplot")

    def imshow(x: Any, *a: Any, **k: Any) -> Any:
        np.asarray(x)
        return types.SimpleNamespace()

    class _Axes:
        def __getattr__(self, name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return imshow if name == "imshow" else (lambda *a, **k: None)

    def subplots(n: int = 1, m: int = 1, **k: Any) -> Any:
        axs = [_Axes() for _ in range(n * m)]
        return types.SimpleNamespace(add_subplot=lambda *a, **k: _Axes()), (axs if n * m > 1 else axs[0])

    plt.imshow = imshow
    plt.subplots = subplots
    plt.figure = lambda *a, **k: types.SimpleNamespace(
        add_subplot=lambda *a, **k: _Axes(), subplots_adjust=lambda *a, **k: None
    )
    for name in ["axis", "title", "show", "savefig", "close"]:
        setattr(plt, name, lambda *a, **k: None)
    mpl = types.ModuleType("matplotlib")
    mpl.pyplot = plt
    sys.modules["matplotlib"], sys.modules["matplotlib.pyplot"] = mpl, plt
    if module != "mitsuba":
        sys.modules.setdefault("drjit", types.ModuleType("drjit"))


class Recorder:
    """Wraps ``mi.render``: keeps each image and ``seeds - 1`` re-renders."""

    def __init__(self, mi: Any, seeds: int) -> None:
        self.mi, self.seeds, self.images = mi, seeds, []
        self.original = mi.render
        self.cell = -1

    def __call__(self, scene: Any, *args: Any, **kw: Any) -> Any:
        img = self.original(scene, *args, **kw)
        runs = [np.array(img, dtype=np.float32)]
        for s in range(1, self.seeds):
            kw2 = dict(kw, seed=1000 + s)
            runs.append(np.array(self.original(scene, *args, **kw2), dtype=np.float32))
        self.images.append((self.cell, np.stack(runs)))
        return img


def run(args: argparse.Namespace) -> None:
    install_stubs(args.module)
    out = os.path.join(args.out, args.module)
    os.makedirs(out, exist_ok=True)
    report: dict[str, Any] = {}
    for nb in NOTEBOOKS:
        if args.only and not any(o in nb for o in args.only):
            continue
        work = tempfile.mkdtemp(prefix="tutorial_")
        folder = os.path.dirname(nb)
        shutil.copytree(os.path.join(args.checkout, folder), os.path.join(work, folder))
        os.symlink(os.path.abspath(os.path.join(args.checkout, "scenes")), os.path.join(work, "scenes"))
        cwd = os.getcwd()
        os.chdir(os.path.join(work, folder))
        ns: dict[str, Any] = {"__name__": "__main__"}
        rec = None
        errors = []
        t0 = time.time()
        srcs = cells(os.path.join(args.checkout, nb))
        for i, src in enumerate(srcs):
            try:
                if args.module == "mitsuba":
                    src = mitsuba_39_form(src)
                exec(compile(retarget(src, args.module), f"{nb}[{i}]", "exec"), ns)  # noqa: S102 - running the notebook is the point
            except Exception as e:  # noqa: BLE001 - the report lists what failed and why
                errors.append({"cell": i, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-1500:]})
            if rec is None and "mi" in ns:
                rec = Recorder(ns["mi"], args.seeds)
                ns["mi"].render = rec
            if rec is not None:
                rec.cell = i + 1
        if rec is not None:
            ns["mi"].render = rec.original
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
        name = os.path.splitext(os.path.basename(nb))[0]
        images = rec.images if rec else []
        np.savez_compressed(os.path.join(out, name + ".npz"), *[im for _, im in images])
        report[name] = {
            "cells": len(srcs),
            "errors": errors,
            "renders": [c for c, _ in images],
            "seconds": round(time.time() - t0, 1),
        }
        status = "ran through" if not errors else f"{len(errors)} failing cells: " + "; ".join(
            f"[{e['cell']}] {e['error'][:200]}" for e in errors
        )
        print(f"{args.module} {name}: {status} ({report[name]['seconds']} s)", flush=True)
    path = os.path.join(out, "report.json")
    if args.only and os.path.exists(path):
        with open(path) as f:
            report = {**json.load(f), **report}
    with open(path, "w") as f:
        json.dump(report, f, indent=1)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def t_sf2(t: float, dof: float) -> float:
    """Two-sided p-value of Student's t with ``dof`` degrees of freedom."""
    x = dof / (dof + t * t)
    if x >= 1.0:
        return 1.0
    if x <= 0.0:
        return 0.0
    a, b = dof / 2.0, 0.5
    lbeta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - lbeta)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def compare_images(h: np.ndarray, m: np.ndarray, block: int = 8, alpha: float = 0.01) -> dict[str, Any]:
    """Welch t-test per block and channel between K renders each side (K, H, W, C): every
    channel when both sides have the same, else R, G, B."""
    if h.shape[-1] != m.shape[-1]:
        h, m = h[..., :3], m[..., :3]
    if h.shape[1:] != m.shape[1:]:
        return {"match": False, "why": f"shapes differ: {h.shape[1:]} vs {m.shape[1:]}"}
    channels = h.shape[-1]
    k_h, k_m = h.shape[0], m.shape[0]
    H, W = h.shape[1] // block * block, h.shape[2] // block * block

    def blocks(x: np.ndarray) -> np.ndarray:
        x = x[:, :H, :W].astype(np.float64)
        return x.reshape(x.shape[0], H // block, block, W // block, block, channels).mean(axis=(2, 4))

    bh, bm = blocks(h), blocks(m)
    mh, mm = bh.mean(0), bm.mean(0)
    vh, vm = bh.var(0, ddof=1) / k_h, bm.var(0, ddof=1) / k_m
    se2 = vh + vm
    diff = mh - mm
    n = diff.size
    worst_p, worst = 1.0, None
    fails = 0
    for idx in np.ndindex(diff.shape):
        if abs(diff[idx]) <= 1e-5 * (1 + abs(mm[idx])):
            p = 1.0  # equal up to float round-off (e.g. a normal's 6e-17 against -4e-8)
        elif se2[idx] == 0:
            p = 0.0
        else:
            dof = se2[idx] ** 2 / ((vh[idx] ** 2) / (k_h - 1) + (vm[idx] ** 2) / (k_m - 1) + 1e-300)
            p = t_sf2(float(diff[idx] / math.sqrt(se2[idx])), max(float(dof), 1.0))
        if p < alpha / n:
            fails += 1
        if p < worst_p:
            worst_p, worst = p, idx
    rel = float(np.abs(mh.mean() - mm.mean()) / max(abs(mm.mean()), 1e-12))
    return {
        "match": fails == 0,
        "blocks": n,
        "failing_blocks": fails,
        "channels": channels,
        "min_p": worst_p,
        "min_p_threshold": alpha / n,
        "worst_block": [int(i) for i in worst] if worst is not None else None,
        "mean_rel_diff": rel,
    }


def compare(args: argparse.Namespace) -> None:
    rows = []
    for nb in NOTEBOOKS:
        name = os.path.splitext(os.path.basename(nb))[0]
        rep = {}
        for mod in ("heliograph", "mitsuba"):
            with open(os.path.join(args.out, mod, "report.json")) as f:
                rep[mod] = json.load(f).get(name)
        if rep["heliograph"] is None or rep["mitsuba"] is None:
            continue
        ran = "yes" if not rep["heliograph"]["errors"] else "no: " + "; ".join(
            f"cell {e['cell']}: {e['error'].splitlines()[0][:160]}" for e in rep["heliograph"]["errors"]
        )
        h = np.load(os.path.join(args.out, "heliograph", name + ".npz"))
        m = np.load(os.path.join(args.out, "mitsuba", name + ".npz"))
        cells_h, cells_m = rep["heliograph"]["renders"], rep["mitsuba"]["renders"]
        results = []
        for j, cell in enumerate(cells_m):
            if j >= len(cells_h) or cells_h[j] != cell:
                results.append(f"cell {cell}: not rendered by heliograph")
                continue
            r = compare_images(h[f"arr_{j}"], m[f"arr_{j}"])
            if "why" in r:
                results.append(f"cell {cell}: {r['why']}")
            else:
                what = f", {r['channels']} channels" if r["channels"] != 3 else ""
                results.append(
                    f"cell {cell}: {'match' if r['match'] else 'DIFFER'} ({r['failing_blocks']}/{r['blocks']} blocks{what}, "
                    f"min p {r['min_p']:.2g} vs {r['min_p_threshold']:.2g}, mean {r['mean_rel_diff'] * 100:.2f}%)"
                )
        rows.append(
            f"| {nb} | {ran} | {'<br>'.join(results) or '-'} | "
            f"{rep['heliograph']['seconds']} / {rep['mitsuba']['seconds']} |"
        )
    print("| tutorial | runs through under heliograph | images vs Mitsuba 3 | seconds (heliograph / Mitsuba) |")
    print("|---|---|---|---|")
    print("\n".join(rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the notebooks under one module")
    r.add_argument("--checkout", required=True, help="a mitsuba-tutorials checkout")
    r.add_argument("--module", choices=["heliograph", "mitsuba"], required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--seeds", type=int, default=4, help="renders per recorded cell (noise estimate)")
    r.add_argument("--only", nargs="*", default=[], help="run only the notebooks whose path contains one of these")
    c = sub.add_parser("compare", help="compare the two runs' images")
    c.add_argument("--out", required=True)
    args = ap.parse_args()
    {"run": run, "compare": compare}[args.cmd](args)


if __name__ == "__main__":
    main()
