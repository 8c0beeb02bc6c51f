"""Makes the reference for test_diff.py's comparison with Mitsuba's gradients: Mitsuba
3 (llvm_ad_rgb) `prb` gradients of ``Σ adjoint · image`` for ``diff_scene.xml`` with
respect to the floor's texels, the wall's colour and the lamp's radiance, as the mean
and standard error over BATCHES seeds. Also writes the scene's 8×8 texture
(diff_texture.exr) and the fixed adjoint image. Nothing here comes from heliograph.
Run once, commit the outputs:

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so \\
        /work/mi-venv/bin/python tests/python/references/make_diff_reference.py
"""

import os
import time

import drjit as dr
import mitsuba as mi
import numpy as np

mi.set_variant("llvm_ad_rgb")

BATCHES, SPP = 16, 64
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "diff_reference.npz")
KEYS = ["floor.bsdf.reflectance.data", "wall.bsdf.reflectance.value", "lamp.emitter.radiance.value"]


def main():
    t0 = time.time()
    rng = np.random.default_rng(2026)
    texture = (0.15 + 0.7 * rng.random((8, 8, 3))).astype(np.float32)
    mi.Bitmap(texture).write(os.path.join(HERE, "diff_texture.exr"))
    scene = mi.load_file(os.path.join(HERE, "diff_scene.xml"))
    adjoint = rng.uniform(-1, 1, (20, 24, 3)).astype(np.float32)
    params = mi.traverse(scene)
    grads = {k: [] for k in KEYS}
    for b in range(BATCHES):
        for k in KEYS:
            dr.enable_grad(params[k])
        params.update()
        image = mi.render(scene, params, spp=SPP, seed=1000 + b, seed_grad=5000 + b)
        dr.backward(dr.sum(image * mi.TensorXf(adjoint), axis=None))
        for k in KEYS:
            grads[k].append(np.array(dr.grad(params[k]), dtype=np.float64).reshape(-1))
            dr.set_grad(params[k], 0)
    out = {"adjoint": adjoint, "texture": texture,
           "info": np.array(f"Mitsuba {mi.__version__} llvm_ad_rgb prb, {BATCHES} seeds x {SPP} spp")}
    for i, k in enumerate(KEYS):
        g = np.stack(grads[k])
        out[f"mean{i}"] = g.mean(0)
        out[f"se{i}"] = g.std(0, ddof=1) / np.sqrt(BATCHES)
    np.savez_compressed(OUT, keys=np.array(KEYS), **out)
    print(f"wrote {OUT} in {time.time() - t0:.1f} s")
    for i, k in enumerate(KEYS):
        print(k, out[f"mean{i}"][:6], "+-", out[f"se{i}"][:6])


if __name__ == "__main__":
    main()
