"""Renders Mitsuba 3's own test scenes with heliograph and judges them as Mitsuba does.

Usage::

    python tests/mitsuba_data/run.py PATH/TO/mitsuba-data [--backend cpu|cuda|all]
        [--timeout SECONDS] [--only NAME] [--markdown]

``PATH/TO/mitsuba-data`` is a checkout of the public ``mitsuba-renderer/mitsuba-data``
repository (nothing of it is copied here). Every scene under ``tests/scenes/*/``
(``participating_media/`` excepted: heliograph renders no media) is rendered the way
Mitsuba's ``src/render/tests/test_renders.py`` renders it:

- the integrator is the one the file name ends with (``test_spot_direct.xml`` →
  ``direct``), passed as ``$integrator``;
- spp = 2,000,000 // pixel count (48×48 → 868 spp), seed 0, the scene's resolution;
- the image and the reference ``refs/<name>_ref_rgb.exr`` with its variance
  ``refs/<name>_ref_rgb_var.exr`` are converted to CIE XYZ, and each pixel and
  channel gets a z-test: z = |image − reference| · sqrt(spp / max(variance, 1e-4)),
  p = erfc(z / √2); it passes if p > α, with α = 1 − 0.99^(1 / pixel count)
  (Šidák's correction for one test per pixel at 1% significance);
- the scene passes when at least 99.75% of the pixels pass (passing values / 3).

Each scene renders in a child process with a time limit (``--timeout``); one that
runs longer is reported as skipped. The table lists scene, plugins, backend,
result, max z, the share of values passing and the reason for each failure (the
loader's message when a scene does not load).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

SAMPLE_BUDGET = 2_000_000
SIGNIFICANCE = 0.01
PASS_FRACTION = 0.9975
EXCLUDED = {"participating_media"}

# Linear sRGB -> CIE XYZ, the matrix Mitsuba's Bitmap.convert uses.
RGB_TO_XYZ = (
    (0.412453, 0.357580, 0.180423),
    (0.212671, 0.715160, 0.072169),
    (0.019334, 0.119193, 0.950227),
)


def scenes(data: Path) -> list[Path]:
    """Every ``tests/scenes/<folder>/*.xml`` outside the excluded folders."""
    root = data / "tests" / "scenes"
    if not root.is_dir():
        sys.exit(f"{root} not found: give the path of a mitsuba-data checkout")
    return sorted(p for p in root.glob("*/*.xml") if p.parent.name not in EXCLUDED)


def integrator_of(scene: Path) -> str:
    """The integrator test_renders.py uses: the file name's last ``_`` word."""
    return scene.stem.rsplit("_", 1)[-1]


def references(scene: Path) -> tuple[Path, Path]:
    """``refs/<name without integrator>_ref_rgb.exr`` and its variance image."""
    base = scene.stem.rsplit("_", 1)[0]
    ref = scene.parent / "refs" / f"{base}_ref_rgb.exr"
    return ref, ref.with_name(f"{base}_ref_rgb_var.exr")


# Plugins every test scene uses, left out of the table's plugin column.
COMMON = {"film:hdrfilm", "sampler:independent", "integrator:moment", "rfilter:box"}


def plugins(scene: Path, integrator: str = "", seen: set | None = None) -> list[str]:
    """``category:type`` of every object in the file and the files it includes
    (``$integrator`` is the scene's integrator), the ones in ``COMMON`` left out."""
    integrator = integrator or integrator_of(scene)
    seen = set() if seen is None else seen
    if scene in seen or not scene.is_file():
        return []
    seen.add(scene)
    out = []
    try:
        root = ET.parse(scene).getroot()
    except ET.ParseError:
        return []
    for el in root.iter():
        if el.tag == "include" and "filename" in el.attrib:
            out += plugins(scene.parent / el.attrib["filename"], integrator, seen)
        elif "type" in el.attrib and el.tag != "scene":
            t = el.attrib["type"]
            out.append(f"{el.tag}:{integrator if t.startswith('$') else t}")
    return sorted(set(out) - COMMON)


def to_xyz(img):
    import numpy as np

    m = np.array(RGB_TO_XYZ, dtype=np.float64)
    return np.asarray(img, dtype=np.float64)[..., :3] @ m.T


def judge(img, ref, var, spp: int) -> dict:
    """test_renders.py's criterion on (H, W, 3) linear RGB images."""
    import numpy as np

    img, ref, var = to_xyz(img), to_xyz(ref), to_xyz(var)
    z = np.abs(img - ref) * np.sqrt(spp / np.maximum(var, 1e-4))
    p = np.vectorize(math.erfc)(z / math.sqrt(2.0))
    pixels = ref.shape[0] * ref.shape[1]
    alpha = 1.0 - (1.0 - SIGNIFICANCE) ** (1.0 / pixels)
    ok = np.count_nonzero(p > alpha) / 3.0
    return {
        "pass": bool(ok >= PASS_FRACTION * pixels),
        "max_z": float(np.max(z)),
        "passing": ok / pixels,
    }


def render_one(scene: Path, backend: str) -> dict:
    """Loads, renders and judges one scene (run in a child process)."""
    import heliograph as hg
    import numpy as np

    ref_path, var_path = references(scene)
    if not (ref_path.is_file() and var_path.is_file()):
        return {
            "status": "no reference",
            "reason": f"no {ref_path.name} and variance in refs/",
        }
    ref = np.asarray(hg.Bitmap(ref_path))[..., :3]
    var = np.asarray(hg.Bitmap(var_path))[..., :3]
    pixels = ref.shape[0] * ref.shape[1]
    spp = SAMPLE_BUDGET // pixels
    hg.set_variant("cuda_rgb" if backend == "cuda" else "cpu_rgb")
    try:
        s = hg.load_file(str(scene), spp=str(spp), integrator=integrator_of(scene))
    except Exception as e:  # noqa: BLE001 - the message is the result
        where = str(scene.parent.parent) + os.sep
        return {
            "status": "load error",
            "reason": str(e).splitlines()[0].replace(where, ""),
        }
    t0 = time.perf_counter()
    try:
        img = np.asarray(hg.render(s, spp=spp, seed=0))
    except Exception as e:  # noqa: BLE001
        return {"status": "render error", "reason": str(e).splitlines()[0]}
    seconds = time.perf_counter() - t0
    if img.shape[:2] != ref.shape[:2]:
        return {
            "status": "fail",
            "reason": f"image is {img.shape[1]}x{img.shape[0]}, reference {ref.shape[1]}x{ref.shape[0]}",
        }
    r = judge(img, ref, var, spp)
    r.update(status="pass" if r["pass"] else "fail", spp=spp, seconds=seconds)
    if not r["pass"]:
        r["reason"] = (
            f"{100 * r['passing']:.2f}% of values pass (needs {100 * PASS_FRACTION}%)"
        )
    return r


def run_child(scene: Path, backend: str, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--child", str(scene), "--backend", backend]
    try:
        out = subprocess.run(
            cmd, check=False, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"status": "skipped", "reason": f"over the {timeout:.0f} s time limit"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": "crash", "reason": f"exit {out.returncode}: {tail}"}
    return json.loads(lines[-1])


def cuda_available() -> bool:
    import heliograph as hg

    try:
        hg.set_variant("cuda_rgb")
        return True
    except Exception:  # noqa: BLE001
        return False


def table(rows: list[dict], markdown: bool) -> str:
    head = [
        "scene",
        "plugins",
        "backend",
        "result",
        "max z",
        "passing",
        "render s",
        "reason",
    ]
    body = []
    for r in rows:
        z = f"{r['max_z']:.1f}" if "max_z" in r else ""
        share = f"{100 * r['passing']:.2f}%" if "passing" in r else ""
        secs = f"{r['seconds']:.1f}" if "seconds" in r else ""
        plug = " ".join(r["plugins"])
        body.append(
            [
                r["scene"],
                plug,
                r["backend"],
                r["status"],
                z,
                share,
                secs,
                r.get("reason", ""),
            ]
        )
    if markdown:
        esc = [[c.replace("|", "\\|") for c in row] for row in body]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in esc]
        return "\n".join(lines)
    widths = [
        max(len(h), *(len(row[i]) for row in body)) if body else len(h)
        for i, h in enumerate(head)
    ]
    widths[1] = min(widths[1], 60)
    fmt = "  ".join(
        f"{{:{w}.{w}}}" if i == 1 else f"{{:{w}}}" for i, w in enumerate(widths)
    )
    return "\n".join([fmt.format(*head)] + [fmt.format(*row) for row in body])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path, nargs="?", help="a mitsuba-data checkout")
    ap.add_argument("--backend", default="all", choices=["cpu", "cuda", "all"])
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per scene")
    ap.add_argument("--only", default=None, help="only scenes whose path contains this")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(render_one(args.child, args.backend)))
        return
    if args.data is None:
        ap.error("give the path of a mitsuba-data checkout")
    backends = ["cpu", "cuda"] if args.backend == "all" else [args.backend]
    if "cuda" in backends and not cuda_available():
        print("CUDA is not available here: CPU only", file=sys.stderr)
        backends.remove("cuda")
    rows = []
    for scene in scenes(args.data):
        name = f"{scene.parent.name}/{scene.name}"
        if args.only and args.only not in name:
            continue
        for b in backends:
            r = run_child(scene, b, args.timeout)
            r.update(scene=name, plugins=plugins(scene), backend=b)
            print(f"{name} [{b}]: {r['status']} {r.get('reason', '')}", file=sys.stderr)
            rows.append(r)
    print(table(rows, args.markdown))
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("\n" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
