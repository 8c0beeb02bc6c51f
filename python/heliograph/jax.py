"""Differentiable rendering into JAX: ``render_fn`` returns a function with a custom VJP.

::

    import heliograph as hg, heliograph.jax

    scene = hg.load_file("scenes/seed.xml")
    render = hg.jax.render_fn(scene, keys=["shape.bsdf.reflectance.data"], spp=16)
    loss = lambda tex: ((render(tex) - target) ** 2).mean()
    value, grad = jax.value_and_grad(loss)(texture)

The function takes the parameter values positionally, in the order of ``keys``, and
returns the image (float32, the film's height × width × channels). ``jax.grad``,
``jax.value_and_grad`` and ``jax.vjp`` work through it, and so does ``jax.jit``: both
passes run on the host through ``jax.pure_callback`` (the values and the image's
gradient come to the host, the image and the gradients go back), which XLA orders by
data dependence. On the CPU that costs nothing measurable: tests/bench_diff_jit.py gives
18.3 ms per jitted ``value_and_grad`` against 17.9 ms for the same work through
``heliograph.torch`` (64² film and texture, spp 4, 2 cores). Under ``cuda_rgb`` the
passes run on the GPU, and the values, the image and the gradients pass through the host
(``heliograph.torch`` keeps them on the GPU). The backward pass sets the
values it is given before tracing, so it differentiates the render those values produce
whatever ran in between.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import _diff, _native

__all__ = ["render_fn"]


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
    film = tuple(_native._film_shape(scene))
    image_type = jax.ShapeDtypeStruct(film, jnp.float32)
    grad_types = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]

    def host_arrays(values):
        return [_diff.check_value(k, np.asarray(v), s) for k, v, s in zip(keys, values, shapes)]

    def host_forward(*values):
        image, _ = _diff.forward(scene, keys, host_arrays(values), opts)
        return image

    def host_backward(grad, *values):
        arrays = host_arrays(values)
        _diff.set_values(scene, keys, arrays)
        return _diff.backward(scene, keys, arrays, np.asarray(grad), _native._diff_snapshot(scene), opts)

    def call(values):
        for k, v, s in zip(keys, values, shapes):
            if tuple(jnp.shape(v)) != s:
                raise ValueError(f"parameter {k!r}: expected shape {s}, got {tuple(jnp.shape(v))}")
        values = [jnp.asarray(v, jnp.float32) for v in values]
        return values, jax.pure_callback(host_forward, image_type, *values)

    @jax.custom_vjp
    def render(*values):
        return call(values)[1]

    def fwd(*values):
        image = call(values)[1]
        return image, tuple(values)

    def bwd(values, grad):
        grads = jax.pure_callback(host_backward, grad_types, grad, *values)
        # each gradient in its value's dtype (float64 under jax_enable_x64)
        return tuple(g.astype(jnp.result_type(v)) for g, v in zip(grads, values))

    render.defvjp(fwd, bwd)
    return render
