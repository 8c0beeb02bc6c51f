"""The seed scenario with ``import heliograph as mi``: render a textured
rectangle, replace its texture through traverse()/update(), render again, export.

    python python/examples/seed.py [--res 512] [--out DIR]

Prints the time each step took; writes seed_1.png and seed_2.png to --out.
"""

import argparse
import os
import time

import numpy as np

import heliograph as mi


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--res", type=int, default=512)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    rng = np.random.default_rng(0)

    mi.set_variant("scalar_rgb")  # an alias of heliograph's cpu_rgb
    t0 = time.perf_counter()
    scene = mi.load_dict({
        "type": "scene",
        "integrator": {"type": "direct"},
        "emitter": {"type": "constant"},
        "shape": {"type": "rectangle", "bsdf": {"type": "diffuse", "reflectance": {
            "type": "bitmap", "bitmap": mi.Bitmap(rng.random((args.res, args.res, 3)))}}},
        "sensor": {
            "type": "perspective",
            "to_world": mi.ScalarTransform4f.look_at([0, 0, 5], [0, 0, 0], [0, 1, 0]),
            "film": {"type": "hdrfilm", "width": args.res, "height": args.res, "pixel_format": "rgb"},
        },
    })
    t1 = time.perf_counter()
    params = mi.traverse(scene)
    image = mi.render(scene, params, spp=128)
    t2 = time.perf_counter()
    first = np.array(image)  # waits for the render
    t3 = time.perf_counter()
    params["shape.bsdf.reflectance.data"] = mi.TensorXf(rng.random((args.res, args.res, 3)))
    params.update()
    image = mi.render(scene, params, spp=32, seed=1)
    second = np.array(image)
    t4 = time.perf_counter()
    try:
        exported = image.jax()
        what = f"JAX {type(exported).__name__}"
    except ImportError:
        exported = np.from_dlpack(image)
        what = "NumPy (JAX not installed)"
    assert np.array_equal(np.asarray(exported), second)
    os.makedirs(args.out, exist_ok=True)
    mi.util.write_bitmap(os.path.join(args.out, "seed_1.png"), first)
    mi.util.write_bitmap(os.path.join(args.out, "seed_2.png"), second)
    print(f"load_dict {t1 - t0:.3f} s | render() returned in {t2 - t1:.4f} s | "
          f"render 1 (128 spp) ready after {t3 - t1:.3f} s | update + render 2 (32 spp) {t4 - t3:.3f} s")
    print(f"exported to {what}; mean before/after the texture update: {first.mean():.4f} / {second.mean():.4f}")


if __name__ == "__main__":
    main()
