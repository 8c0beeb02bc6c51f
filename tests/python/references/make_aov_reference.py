"""Renders the reference for tests/python/test_aov.py with Mitsuba 3 (llvm_ad_rgb: its
filter weights are exact, where scalar_rgb tabulates them coarsely, and prim_index
values in the hundreds make the difference visible at silhouettes).

The scene is ``aov_scene.xml`` (every AOV type heliograph supports, on meshes with
vertex normals and a texture, analytic shapes and several BSDFs, gaussian filter). The
reference is the mean of BATCHES independent Mitsuba renders and its per-pixel standard
error, with the channel names of Mitsuba's film. Nothing here comes from heliograph.
Run once, commit the npz:

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so \
        /work/mi-venv/bin/python tests/python/references/make_aov_reference.py
"""

import os
import time

import mitsuba as mi
import numpy as np

mi.set_variant("llvm_ad_rgb")

BATCHES, SPP = 16, 64
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "aov_reference.npz")


def main():
    t0 = time.time()
    scene = mi.load_file(os.path.join(HERE, "aov_scene.xml"))
    imgs = np.stack([np.array(mi.render(scene, spp=SPP, seed=1000 + i)) for i in range(BATCHES)])
    names = [c.name for c in scene.sensors()[0].film().bitmap().struct_()]
    imgs = imgs.astype(np.float64)
    mean = imgs.mean(0).astype(np.float32)
    se = (imgs.std(0, ddof=1) / np.sqrt(BATCHES)).astype(np.float32)
    np.savez_compressed(OUT, mean=mean, se=se, film_names=np.array(names),
                        info=np.array(f"Mitsuba {mi.__version__} llvm_ad_rgb, {BATCHES}x{SPP} spp"))
    print(f"wrote {OUT} ({mean.shape}) in {time.time() - t0:.1f} s; film channels {names}")


if __name__ == "__main__":
    main()
