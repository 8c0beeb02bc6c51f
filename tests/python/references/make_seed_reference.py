"""Renders the reference for tests/python/test_seed.py with Mitsuba 3 (scalar_rgb).

The seed scenario at a small resolution: a rectangle with a random bitmap
under a constant emitter, `direct` integrator, camera at (0, 0, 5). Two textures:
A (the first render) and B (set through traverse/update before the second render).
For each, the reference is the mean of BATCHES independent Mitsuba renders and its
per-pixel standard error. Nothing here comes from heliograph. Run once, commit the npz:

    /work/mi-venv/bin/python tests/python/references/make_seed_reference.py
"""

import os
import time

import mitsuba as mi
import numpy as np

mi.set_variant("scalar_rgb")

RES, TEX, BATCHES, SPP = 32, 8, 16, 1024
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seed_reference.npz")


def scene_dict(texture):
    return {
        "type": "scene",
        "integrator": {"type": "direct"},
        "emitter": {"type": "constant"},
        "shape": {
            "type": "rectangle",
            "bsdf": {"type": "diffuse", "reflectance": {"type": "bitmap", "bitmap": mi.Bitmap(texture)}},
        },
        "sensor": {
            "type": "perspective",
            "to_world": mi.ScalarTransform4f().look_at([0, 0, 5], [0, 0, 0], [0, 1, 0]),
            "film": {"type": "hdrfilm", "width": RES, "height": RES, "pixel_format": "rgb"},
        },
    }


def reference(texture, seed0):
    scene = mi.load_dict(scene_dict(texture))
    imgs = [np.array(mi.render(scene, spp=SPP, seed=seed0 + i)) for i in range(BATCHES)]
    imgs = np.stack(imgs).astype(np.float64)
    return imgs.mean(0).astype(np.float32), (imgs.std(0, ddof=1) / np.sqrt(BATCHES)).astype(np.float32)


def main():
    rng = np.random.default_rng(20261202)
    # a coarse texture (8x8) so that each texel covers several pixels and a changed
    # texture is visible far above the noise
    tex_a = rng.random((TEX, TEX, 3)).astype(np.float32)
    tex_b = rng.random((TEX, TEX, 3)).astype(np.float32)
    t0 = time.time()
    mean_a, se_a = reference(tex_a, 1000)
    mean_b, se_b = reference(tex_b, 2000)
    np.savez_compressed(OUT, tex_a=tex_a, tex_b=tex_b, mean_a=mean_a, se_a=se_a, mean_b=mean_b, se_b=se_b,
                        info=np.array(f"Mitsuba {mi.__version__} scalar_rgb, {BATCHES}x{SPP} spp, {RES}^2"))
    print(f"wrote {OUT} in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
