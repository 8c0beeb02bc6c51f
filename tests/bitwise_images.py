"""Renders every shipped scene and every regression case on the CPU at fixed seeds and
prints one SHA-256 per image, so that a change meant to move code only can be checked to
leave every image bit for bit as it was.

    python tests/bitwise_images.py BINARY > before.txt     # with the old build's CLI
    python tests/bitwise_images.py BINARY > after.txt      # with the new one
    diff before.txt after.txt                              # empty: nothing changed

BINARY is a `heliograph` CLI (target/release/heliograph). The renders are small (a few
seconds in all on two cores); the cases come from tests/references/cases.txt and
scenes/*.xml, so a new scene or case is covered without editing this file.

The digests are of the decoded pixels, not of the files: the EXR writer compresses
blocks in parallel and may store them in another order. Decoding needs NumPy and an
installed heliograph package (any version: its EXR reader is not what is compared).
"""

import hashlib
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

import heliograph as hg

ROOT = pathlib.Path(__file__).resolve().parent.parent


def cases():
    """(name, scene, defines, spp) for each regression case and each shipped scene."""
    for line in (ROOT / "tests/references/cases.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, scene, defines, _ref_spp, hg_spp, _block = line.split()
        yield name, scene, [] if defines == "-" else defines.split(","), int(hg_spp)
    for scene in sorted((ROOT / "scenes").glob("*.xml")):
        yield "scene_" + scene.stem, str(scene.relative_to(ROOT)), ["res=40"], 4


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = pathlib.Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        for name, scene, defines, spp in cases():
            for seed in (0, 7):
                out = pathlib.Path(tmp) / f"{name}_{seed}.exr"
                args = [binary, "render", ROOT / scene, "-o", out, "--spp", str(spp)]
                args += ["--seed", str(seed), "--backend", "cpu", "-q"]
                for d in defines:
                    args += ["-D", d]
                subprocess.run(args, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
                pixels = np.ascontiguousarray(np.array(hg.Bitmap(str(out)), dtype=np.float32))
                digest = hashlib.sha256(pixels.tobytes()).hexdigest()
                print(name, seed, pixels.shape, digest, flush=True)


if __name__ == "__main__":
    main()
