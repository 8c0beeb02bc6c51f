"""Recover a sphere's texture from a photograph of it: differentiable rendering with
``heliograph.torch`` (Adam) or ``heliograph.jax`` (optax's Adam).

    python python/examples/fit_texture.py                      # torch, 256² texture
    python python/examples/fit_texture.py --framework jax      # needs optax
    python python/examples/fit_texture.py --res 64 --tex 32 --iters 60   # quick
    python python/examples/fit_texture.py --variant cuda_rgb   # torch on the GPU

A textured sphere on a grey floor under the sky environment map, rendered by ``path``
with max_depth 3. The target image is rendered from the shipped texture
(assets/textures/seed_texture.png); the fit starts from a grey texture and minimises
the mean squared error to the target. Writes to --out: target.png, before.png,
after.png, texture_before.png, texture_after.png and loss.csv (iteration, loss, seconds),
and prints the loss every 10 iterations.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import heliograph as hg

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "ball.bsdf.reflectance.data"


def load_scene(res: int, texture: np.ndarray):
    return hg.load_dict({
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 3},
        "sensor": {
            "type": "perspective",
            "fov": 35,
            "to_world": hg.ScalarTransform4f.look_at([0, 1.2, 4.5], [0, 0.6, 0], [0, 1, 0]),
            "film": {"type": "hdrfilm", "width": res, "height": res, "pixel_format": "rgb"},
        },
        "sky": {"type": "envmap", "filename": os.path.join(ROOT, "assets", "envmaps", "sky.exr")},
        "ball": {
            "type": "sphere",
            "center": [0, 0.8, 0],
            "radius": 0.8,
            "bsdf": {"type": "diffuse", "reflectance": {"type": "bitmap", "bitmap": hg.Bitmap(texture)}},
        },
        "floor": {
            "type": "rectangle",
            "to_world": hg.ScalarTransform4f.rotate([1, 0, 0], -90).scale(4),
            "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.4, 0.4, 0.4]}},
        },
    })


def target_texture(size: int) -> np.ndarray:
    """The shipped texture, resampled to size × size (nearest) and linearised."""
    png = hg.Bitmap(os.path.join(ROOT, "assets", "textures", "seed_texture.png"))
    linear = png.convert(component_format=hg.Struct.Type.Float32, srgb_gamma=False)
    tex = np.asarray(linear, dtype=np.float32)[..., :3]
    rows = (np.arange(size) * tex.shape[0] // size)[:, None]
    cols = (np.arange(size) * tex.shape[1] // size)[None, :]
    return np.ascontiguousarray(tex[rows, cols])


def fit_torch(scene, target, start, iters, spp, lr, log):
    import torch

    import heliograph.torch as hgt

    # under cuda_rgb the texture, the images and the gradients stay on the GPU
    device = "cuda" if hg.variant() == "cuda_rgb" else "cpu"
    target = torch.from_numpy(target).to(device)
    tex = torch.tensor(start, device=device, requires_grad=True)
    opt = torch.optim.Adam([tex], lr=lr)
    for i in range(iters):
        opt.zero_grad()
        image = hgt.render(scene, {KEY: tex}, spp=spp, seed=i)
        loss = ((image - target) ** 2).mean()
        loss.backward()
        opt.step()
        with torch.no_grad():
            tex.clamp_(0.0, 1.0)
        log(i, loss.item())
    return tex.detach().cpu().numpy()


def fit_jax(scene, target, start, iters, spp, lr, log):
    import jax
    import jax.numpy as jnp

    try:
        import optax
    except ImportError:
        raise SystemExit("the JAX version needs optax: pip install optax") from None
    import heliograph.jax as hgj

    opt = optax.adam(lr)
    tex = jnp.asarray(start)
    state = opt.init(tex)
    for i in range(iters):
        render = hgj.render_fn(scene, keys=[KEY], spp=spp, seed=i)

        def loss_of(t, render=render):
            return ((render(t) - target) ** 2).mean()

        loss, grad = jax.value_and_grad(loss_of)(tex)
        updates, state = opt.update(grad, state)
        tex = jnp.clip(optax.apply_updates(tex, updates), 0.0, 1.0)
        log(i, float(loss))
    return np.asarray(tex)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framework", choices=["torch", "jax"], default="torch")
    ap.add_argument("--res", type=int, default=256, help="film width and height")
    ap.add_argument("--tex", type=int, default=256, help="texture width and height")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--spp", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--out", default=".")
    ap.add_argument("--variant", choices=["cpu_rgb", "cuda_rgb"], default="cpu_rgb")
    args = ap.parse_args(argv)
    hg.set_variant(args.variant)
    hg.set_progress(False)
    os.makedirs(args.out, exist_ok=True)

    truth = target_texture(args.tex)
    start = np.full_like(truth, 0.5)
    scene = load_scene(args.res, start)
    params = hg.traverse(scene)
    params[KEY] = truth
    params.update()
    target = np.array(hg.render(scene, spp=4 * args.spp, seed=1 << 20))
    params[KEY] = start
    params.update()
    before = np.array(hg.render(scene, spp=args.spp, seed=1 << 21))

    __import__(args.framework)  # imported before the clock starts
    rows = []
    t0 = time.perf_counter()

    def log(i, loss):
        rows.append((i, loss, time.perf_counter() - t0))
        if i % 10 == 0 or i == args.iters - 1:
            print(f"iteration {i:4d}  loss {loss:.6f}  {rows[-1][2]:.1f} s", flush=True)

    fit = fit_torch if args.framework == "torch" else fit_jax
    result = fit(scene, target, start, args.iters, args.spp, args.lr, log)
    params[KEY] = result
    params.update()
    after = np.array(hg.render(scene, spp=args.spp, seed=1 << 21))

    for name, img in [("target", target), ("before", before), ("after", after),
                      ("texture_before", start), ("texture_after", result)]:
        hg.util.write_bitmap(os.path.join(args.out, f"{name}.png"), img)
    with open(os.path.join(args.out, "loss.csv"), "w") as f:
        f.write("iteration,loss,seconds\n")
        f.writelines(f"{i},{loss:.8g},{s:.3f}\n" for i, loss, s in rows)
    error_before = float(np.abs(start - truth).mean())
    error_after = float(np.abs(result - truth).mean())
    print(f"texture error (mean |fit - truth|): {error_before:.4f} -> {error_after:.4f}; "
          f"{rows[-1][2] / len(rows) * 1000:.0f} ms per iteration")
    return {"losses": [r[1] for r in rows], "error_before": error_before, "error_after": error_after}


if __name__ == "__main__":
    main()
