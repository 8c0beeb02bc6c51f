"""Differentiable rendering into JAX: ``render_fn`` returns a function with a custom VJP.

::

    import heliograph as hg, heliograph.jax

    scene = hg.load_file("scenes/seed.xml")
    render = hg.jax.render_fn(scene, keys=["shape.bsdf.reflectance.data"], spp=16)
    loss = lambda tex: ((render(tex) - target) ** 2).mean()
    value, grad = jax.value_and_grad(loss)(texture)

The function takes the parameter values positionally, in the order of ``keys``, and
returns the image (float32, the film's height × width × channels). ``jax.grad``,
``jax.value_and_grad``, ``jax.vjp``, ``jax.jit`` and ``jax.vmap`` (one render per
batch element) work through it.

Both passes are XLA custom calls (``jax.ffi``): XLA hands heliograph its buffers and,
on the GPU, its own stream. Under ``cuda_rgb`` with JAX on the GPU nothing passes
through the host and the host never waits: the render waits for XLA's stream, the
values, the image and the gradients are copied device to device, and XLA's stream
waits for the render. (A float or colour parameter is the exception: its few values
are read to the host, as ``params[key] = x`` does.) On the CPU a call renders on all
cores and returns when done. JAX on the CPU with ``cuda_rgb`` (or on the GPU with
``cpu_rgb``) works too, through host copies. The backward pass sets the values it is
given before tracing, so it differentiates the render those values produce whatever
ran in between.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import _diff, _native

__all__ = ["render_fn"]

_registered = False


def _register_targets():
    """Registers heliograph's XLA custom calls with JAX (once per process)."""
    global _registered
    if _registered:
        return
    for name, platform, address in _native._xla_handlers():
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(address), platform=platform)
    _registered = True


def render_fn(scene, keys, spp=None, seed=0, spp_grad=None, seed_grad=None):
    """The differentiable render of ``scene`` as a function of the values of ``keys``.

    ``spp``/``seed`` are the image's samples, ``spp_grad``/``seed_grad`` the backward
    pass's (default ``spp`` and ``seed + 1``). A key that cannot be differentiated is an
    error naming it, raised here; a value of the wrong shape, when the function is
    called.
    """
    opts = _diff.Options.of(spp, seed, spp_grad, seed_grad)
    keys = list(keys)
    shapes = _diff.check_keys(scene, keys)
    _register_targets()
    target = _native._xla_target(
        scene, keys, opts.spp or 0, opts.seed, opts.spp_grad or 0, opts.seed_grad
    )
    film = tuple(_native._film_shape(scene))
    forward_call = jax.ffi.ffi_call(
        "heliograph_render", jax.ShapeDtypeStruct(film, jnp.float32), vmap_method="sequential"
    )
    backward_call = jax.ffi.ffi_call(
        "heliograph_backward",
        [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes],
        vmap_method="sequential",
    )

    def call(values):
        for k, v, s in zip(keys, values, shapes):
            if tuple(jnp.shape(v)) != s:
                raise ValueError(f"parameter {k!r}: expected shape {s}, got {tuple(jnp.shape(v))}")
            if not jnp.issubdtype(jnp.result_type(v), jnp.floating):
                raise TypeError(f"parameter {k!r}: expected floating-point values, got {jnp.result_type(v)}")
        values = [jnp.asarray(v, jnp.float32) for v in values]
        # the target travels as the calls' attribute (its id); the closure keeps it alive
        return values, forward_call(*values, target=np.uint64(target.id))

    @jax.custom_vjp
    def render(*values):
        return call(values)[1]

    def fwd(*values):
        image = call(values)[1]
        return image, tuple(values)

    def bwd(values, grad):
        f32 = [jnp.asarray(v, jnp.float32) for v in values]
        grads = backward_call(jnp.asarray(grad, jnp.float32), *f32, target=np.uint64(target.id))
        # each gradient in its value's dtype (float64 under jax_enable_x64)
        return tuple(g.astype(jnp.result_type(v)) for g, v in zip(grads, values))

    render.defvjp(fwd, bwd)
    return render
