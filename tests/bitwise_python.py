"""Prints one SHA-256 per image and per gradient of the Python test scenes (CPU, fixed
seeds), so that a change meant to move code only can be checked to leave the Python
package's renders, texture updates and gradients bit for bit as they were.

    python tests/bitwise_python.py > before.txt    # with the old wheel installed
    python tests/bitwise_python.py > after.txt     # with the new one
    diff before.txt after.txt                      # empty: nothing changed

Needs only NumPy and the installed heliograph package. Its companion for the scene
files is tests/bitwise_images.py.
"""

import hashlib
import pathlib

import numpy as np

import heliograph as hg
from heliograph import _diff

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFS = ROOT / "tests/python/references"


def digest(name, array):
    a = np.ascontiguousarray(np.asarray(array))
    print(name, a.dtype, a.shape, hashlib.sha256(a.tobytes()).hexdigest(), flush=True)


def gradients(name, scene, keys, spp=8, seed=3):
    values = [np.array(hg.traverse(scene)[k], dtype=np.float32) for k in keys]
    opts = _diff.Options.of(spp, seed, spp, seed + 1)
    image, snapshot = _diff.forward(scene, keys, values, opts)
    adjoint = np.random.default_rng(5).uniform(-1, 1, image.shape).astype(np.float32)
    digest(name + " forward", image)
    for k, g in zip(keys, _diff.backward(scene, keys, values, adjoint, snapshot, opts)):
        digest(f"{name} d/d {k}", g)


def main():
    hg.set_variant("cpu_rgb")
    for f in ["aov_scene.xml", "diff_scene.xml"]:
        digest(f, hg.render(hg.load_file(str(REFS / f)), spp=4, seed=1))
    digest("cornell_box", hg.render(hg.load_dict(hg.cornell_box()), spp=4, seed=2))

    # the seed scenario: render, set a texture, update, render again
    scene = hg.load_file(str(ROOT / "scenes/seed.xml"), res=32)
    digest("seed before", hg.render(scene, spp=4, seed=0))
    params = hg.traverse(scene)
    for key in sorted(params.keys()):
        if key.endswith("reflectance.data"):
            shape = np.array(params[key]).shape
            params[key] = np.random.default_rng(1).random(shape).astype(np.float32)
    params.update()
    digest("seed after update", hg.render(scene, spp=4, seed=0))

    scene = hg.load_file(str(REFS / "diff_scene.xml"))
    keys = [k for k in sorted(hg.traverse(scene).keys()) if _diff_ok(scene, k)]
    gradients("diff_scene", scene, keys)


def _diff_ok(scene, key):
    try:
        _diff.check_keys(scene, [key])
        return True
    except Exception:  # a key that cannot be differentiated (geometry, integers)
        return False


if __name__ == "__main__":
    main()
