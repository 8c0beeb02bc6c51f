"""What ``heliograph.torch`` and ``heliograph.jax`` share (argument checks: ``Options``,
``check_keys``), and ``heliograph.torch``'s two passes (``heliograph.jax`` runs them as
XLA custom calls, python/src/xla.rs, which set the values and render natively).

The forward pass writes the values into the scene (``traverse`` + ``update``, which
patches only what changed) and renders; the backward pass writes them back if another
render changed them, traces the image's samples again with ``seed_grad`` and returns the
gradient of ``Σ grad · image`` with respect to each parameter (path replay
backpropagation). Under ``cuda_rgb`` both passes run on the GPU and, given device
arrays, keep values, image and gradients there (``device=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _native


@dataclass(frozen=True)
class Options:
    """Sample counts and seeds of the two passes (``None`` spp: the scene's own)."""

    spp: int | None
    seed: int
    spp_grad: int | None
    seed_grad: int

    @staticmethod
    def of(spp, seed, spp_grad, seed_grad) -> Options:
        def count(name, v):
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"'{name}' must be a non-negative int or None, got {v!r}")
            return int(v) or None

        def seed_of(name, v):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"'{name}' must be a non-negative int, got {v!r}")
            return int(v)

        spp = count("spp", spp)
        seed = seed_of("seed", seed)
        # the backward pass's own samples: decorrelated from the image's, as Mitsuba
        return Options(
            spp=spp,
            seed=seed,
            spp_grad=count("spp_grad", spp_grad) if spp_grad is not None else spp,
            seed_grad=seed_of("seed_grad", seed_grad) if seed_grad is not None else seed + 1,
        )


def check_keys(scene, keys) -> list[tuple[int, ...]]:
    """Each key's value shape; an error naming the first key that cannot be
    differentiated, before anything renders."""
    if not isinstance(scene, _native.Scene):
        raise TypeError(f"'scene' must be a heliograph Scene, got {type(scene).__name__}")
    keys = list(keys)
    for k in keys:
        if not isinstance(k, str):
            raise TypeError(f"parameter keys must be str, got {type(k).__name__} {k!r}")
    if not keys:
        raise ValueError("no parameters to differentiate: pass at least one key")
    return [tuple(s) for s in _native._diff_params(scene, keys)]


def check_value(key: str, value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as float32 of ``shape``, or an error naming the key."""
    if value.shape != shape:
        raise ValueError(
            f"parameter {key!r}: expected shape {shape}, got {tuple(value.shape)}"
        )
    if not np.issubdtype(value.dtype, np.floating):
        raise TypeError(f"parameter {key!r}: expected floating-point values, got {value.dtype}")
    # ascontiguousarray makes a 0-d array 1-d: reshaped back (a float parameter's shape is ())
    return np.ascontiguousarray(value, dtype=np.float32).reshape(shape)


def set_values(scene, keys, values) -> None:
    """Writes ``values`` (float32 arrays of the keys' shapes) into the scene."""
    params = _native.traverse(scene)
    for k, v in zip(keys, values):
        params[k] = float(v) if v.ndim == 0 else v
    params.update()


def on_cuda() -> bool:
    """Whether renders run on the GPU (the ``cuda_rgb`` variant)."""
    return _native.variant() == "cuda_rgb"


def forward(scene, keys, values, opts: Options, device=False):
    """The image at ``values`` and a snapshot of the parameters it was rendered with:
    a NumPy array, or with ``device`` the renderer's tensor where it lies (exported
    through DLPack by the caller)."""
    set_values(scene, keys, values)
    image = _native.render(scene, spp=opts.spp or 0, seed=opts.seed)
    return (image if device else np.array(image)), _native._diff_snapshot(scene)


def backward(scene, keys, values, grad, snapshot, opts: Options, device=False, stream=None):
    """The gradients of ``Σ grad · image`` for the render of ``values`` with the other
    parameters of ``snapshot``: the values are written back first if another render
    changed them (a loss of several renders of one scene); any other parameter that
    changed since is an error naming it. NumPy arrays, or with ``device`` the
    renderer's tensors where they lie (``grad`` is then read where it lies, after the
    work queued on CUDA stream ``stream`` when given: the stream that writes it)."""
    if not snapshot.is_current(scene):
        set_values(scene, keys, values)
    if not device:
        grad = np.ascontiguousarray(grad, dtype=np.float32)
    out = _native._render_backward(scene, list(keys), grad, opts.spp_grad, opts.seed_grad, snapshot, stream)
    return out if device else [np.array(g) for g in out]
