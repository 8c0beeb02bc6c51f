"""Differentiable rendering into PyTorch autograd.

::

    import heliograph as hg, heliograph.torch

    scene = hg.load_file("scenes/seed.xml")
    texture = torch.full((256, 256, 3), 0.5, requires_grad=True)
    image = hg.torch.render(scene, {"shape.bsdf.reflectance.data": texture}, spp=16)
    loss = ((image - target) ** 2).mean()
    loss.backward()                      # fills texture.grad

Every value of ``params`` that is a tensor with ``requires_grad`` is differentiated
(path replay backpropagation; see ``heliograph.jax`` for JAX). The image is a float32
tensor of the film's shape (height, width, channels) on the render device: under
``cuda_rgb`` the values, the image and the gradients stay on the GPU and move between
PyTorch and heliograph through stream-ordered DLPack (no host round trip, no device-wide
synchronisation).
"""

from __future__ import annotations

import numpy as np
import torch

from . import _diff

__all__ = ["render"]


def render(scene, params, spp=None, seed=0, spp_grad=None, seed_grad=None) -> torch.Tensor:
    """Renders ``scene`` with the parameter values ``params`` (key → tensor, float or
    array) and returns the image as a tensor that backpropagates into the values.

    ``spp``/``seed`` are the image's samples; ``spp_grad``/``seed_grad`` those the
    backward pass traces (default: ``spp`` and ``seed + 1``, decorrelated from the
    image, as Mitsuba). A key that cannot be differentiated, a value of the wrong shape
    or a tensor on another device is an error naming the key, raised before anything
    renders. Each render's backward pass runs once. Several renders of one scene may
    enter one loss (their backward passes write their own values back); any other
    parameter update between a render and its backward pass is an error.
    """
    if not isinstance(params, dict):
        raise TypeError(f"'params' must be a dict of key -> value, got {type(params).__name__}")
    opts = _diff.Options.of(spp, seed, spp_grad, seed_grad)
    keys = list(params)
    shapes = _diff.check_keys(scene, keys)
    device = "cuda" if _diff.on_cuda() else "cpu"
    tensors = []
    for k, s in zip(keys, shapes):
        v = params[k]
        t = v if isinstance(v, torch.Tensor) else torch.as_tensor(np.asarray(v, dtype=np.float32), device=device)
        if t.device.type != device:
            where = "the GPU (cuda_rgb): pass a CUDA tensor" if device == "cuda" else "the CPU: pass a CPU tensor"
            raise ValueError(f"parameter {k!r}: the tensor is on {t.device}, the scene renders on {where}")
        if not t.is_floating_point():
            raise TypeError(f"parameter {k!r}: expected a floating-point tensor, got {t.dtype}")
        if tuple(t.shape) != s:
            raise ValueError(f"parameter {k!r}: expected shape {s}, got {tuple(t.shape)}")
        tensors.append(t)
    return _Render.apply(scene, keys, opts, *tensors)


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _current_stream(device: torch.device) -> int:
    """PyTorch's current CUDA stream on ``device`` as a DLPack stream number (1 for the
    legacy default stream, which DLPack does not number 0). From the raw handle where
    PyTorch has it: ``torch.cuda.current_stream`` builds a Stream object, which costs
    ~30 µs inside autograd's backward."""
    if _raw_stream is not None:
        handle = _raw_stream(device.index)
    else:
        handle = torch.cuda.current_stream(device).cuda_stream
    return handle or 1


class _Render(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scene, keys, opts, *values):
        ctx.device = values[0].device.type == "cuda" if values else False
        if ctx.device:
            arrays = [v.detach().to(torch.float32).contiguous() for v in values]
        else:
            arrays = [_diff.check_value(k, v.detach().numpy(), tuple(v.shape)) for k, v in zip(keys, values)]
        image, snapshot = _diff.forward(scene, keys, arrays, opts, device=ctx.device)
        ctx.scene, ctx.keys, ctx.opts, ctx.snapshot = scene, keys, opts, snapshot
        ctx.arrays = arrays
        ctx.dtypes = [v.dtype for v in values]
        ctx.used = False
        return torch.from_dlpack(image) if ctx.device else torch.from_numpy(image)

    @staticmethod
    def backward(ctx, grad):
        if torch.is_grad_enabled():
            raise RuntimeError(
                "heliograph: second derivatives of a render are not available "
                "(backward(create_graph=True))"
            )
        if ctx.used:
            raise RuntimeError(
                "heliograph: the backward pass of this render already ran; render again "
                "for another gradient"
            )
        ctx.used = True
        wanted = ctx.needs_input_grad[3:]
        if not any(wanted):
            return (None, None, None) + (None,) * len(wanted)
        # no detach (grad mode is off, so the gradient has no history) and no contiguous
        # copy (the import reads any strides): each call here costs about three times
        # what it costs outside autograd's backward
        if grad.dtype != torch.float32:
            grad = grad.to(torch.float32)
        if ctx.device:
            # the gradient is written by work on PyTorch's current stream (autograd's
            # stream for this node): the render stream waits for that stream (what
            # PyTorch's own export would order from, without its Python), and the
            # gradients are exported for that stream (what torch.from_dlpack would ask)
            stream = _current_stream(grad.device)
            grads = _diff.backward(
                ctx.scene, ctx.keys, ctx.arrays, grad, ctx.snapshot, ctx.opts, device=True, stream=stream
            )
            grads = [torch.from_dlpack(g.__dlpack__(stream=stream)) for g in grads]
        else:
            grads = _diff.backward(ctx.scene, ctx.keys, ctx.arrays, grad.numpy(), ctx.snapshot, ctx.opts)
            grads = [torch.from_numpy(g) for g in grads]
        out = [
            (g if g.dtype == dtype else g.to(dtype)) if w else None
            for g, dtype, w in zip(grads, ctx.dtypes, wanted)
        ]
        return (None, None, None, *out)
