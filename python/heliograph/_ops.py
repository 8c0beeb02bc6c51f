"""Arithmetic, comparisons, NumPy functions and indexing for ``TensorXf``.

Tensors follow NumPy's rules (broadcasting, Python scalars, arrays, lists), and every
result is a new float32 ``TensorXf``. Comparisons give a ``TensorXf`` of 1.0 (true) and
0.0 (false), which works as a mask in indexing (``t[t > 1] = 1``).

Arithmetic and comparisons of host tensors and Python numbers never reach this module:
the native module computes them (python/src/tensor_ops.rs), with NumPy's float32 results
bit for bit. Other host operands (arrays, lists, NumPy scalars) and other NumPy functions
compute here with NumPy. CUDA tensors compute on the GPU, on heliograph's render
stream after the kernels that produce them, and never go through the host; indexing
too (``_native._cuda_getitem`` / ``_cuda_setitem``: basic indices and mask assignment,
see python/src/tensor_index.rs). An operation on a CUDA tensor and host data (another
array, a CPU tensor) is an error rather than a hidden copy: wrap the host data with
``TensorXf(...)`` under the ``cuda_rgb`` variant first.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from . import _native

TensorXf = _native.TensorXf

# NumPy ufunc aliases (the CUDA kernel names each operation once).
_ALIAS = {"divide": "true_divide"}


def _is_cuda(x: Any) -> bool:
    return isinstance(x, TensorXf) and x.device != "cpu"


def _kind(x: Any) -> str:
    return type(x).__name__


def _host(x: Any, op: str) -> Any:
    """``x`` as something NumPy computes with; NotImplemented for non-numeric values."""
    if isinstance(x, TensorXf):
        return x.numpy()
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        return x
    if isinstance(x, (str, bytes, dict, set)) or x is None:
        return NotImplemented
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        return NotImplemented
    if a.dtype.kind not in "biuf":
        return NotImplemented
    return a


def _check_shapes(op: str, arrays: Tuple[Any, ...]) -> None:
    shapes = [np.shape(a) for a in arrays]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        given = " and ".join(str(tuple(s)) for s in shapes)
        raise ValueError(
            f"TensorXf {op}: the operands' shapes {given} do not broadcast "
            "(each dimension must match, or be 1 in one of them)"
        ) from None


def _wrap(r: Any) -> Any:
    if isinstance(r, tuple):
        return tuple(_wrap(x) for x in r)
    a = np.asarray(r)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"TensorXf: a result of dtype {a.dtype} cannot be a TensorXf")
    return TensorXf(np.ascontiguousarray(a, dtype=np.float32))


def _check_devices(op: str, args: Tuple[Any, ...]) -> None:
    """CUDA tensors combine only with CUDA tensors of the same device and Python numbers."""
    devices = {a.device for a in args if isinstance(a, TensorXf)}
    cuda = [d for d in devices if d != "cpu"]
    if not cuda:
        return
    if len(devices) > 1:
        raise ValueError(
            f"TensorXf {op}: the operands live on different devices ({', '.join(sorted(devices))}); "
            "move one first (TensorXf(x) under the same variant), heliograph does not copy silently"
        )
    for a in args:
        if not isinstance(a, (TensorXf, bool, int, float, np.number)):
            raise ValueError(
                f"TensorXf {op}: a CUDA tensor ({cuda[0]}) and host data ({_kind(a)}) cannot be combined "
                "without a copy; wrap the host data with TensorXf(...) under the cuda_rgb variant first"
            )


def _cuda(op: str, args: Tuple[Any, ...]) -> Any:
    """The device kernel; an error listing the operations it has for any other."""
    return _native._elementwise(_ALIAS.get(op, op), list(args))


def _numeric(x: Any, op: str) -> bool:
    """Whether ``x`` is an operand at all (a tensor is, unread: a CUDA tensor's check
    must not copy it to the host)."""
    return isinstance(x, TensorXf) or _host(x, op) is not NotImplemented


def binary(op: str, a: Any, b: Any) -> Any:
    """``a <op> b`` where one of them is a TensorXf (op: a NumPy ufunc name)."""
    if _is_cuda(a) or _is_cuda(b):
        if not (_numeric(a, op) and _numeric(b, op)):
            return NotImplemented
        _check_devices(op, (a, b))
        return _cuda(op, (a, b))
    x, y = _host(a, op), _host(b, op)
    if x is NotImplemented or y is NotImplemented:
        return NotImplemented
    _check_shapes(op, (x, y))
    with np.errstate(all="ignore"):
        return _wrap(getattr(np, op)(_f32(x), _f32(y)))


def _f32(x: Any) -> Any:
    """Array operands in float32, as the tensors are (Python numbers stay weak)."""
    if isinstance(x, np.ndarray) and x.dtype != np.float32:
        return x.astype(np.float32)
    return x


def unary(op: str, a: Any) -> Any:
    """``<op>(a)`` for a TensorXf ``a``."""
    if _is_cuda(a):
        return _cuda(op, (a,))
    with np.errstate(all="ignore"):
        return _wrap(getattr(np, op)(a.numpy()))


def array_ufunc(ufunc: Any, method: str, inputs: Tuple[Any, ...], kwargs: dict) -> Any:
    """``TensorXf.__array_ufunc__``: NumPy functions applied to tensors."""
    name = getattr(ufunc, "__name__", str(ufunc))
    if method != "__call__":
        raise TypeError(f"TensorXf: numpy.{name}.{method} is not supported (only elementwise calls)")
    if kwargs:
        raise TypeError(f"TensorXf: numpy.{name} keyword arguments ({', '.join(kwargs)}) are not supported")
    if any(_is_cuda(x) for x in inputs):
        _check_devices(name, inputs)
        return _cuda(name, inputs)
    args = [_host(x, name) for x in inputs]
    if any(a is NotImplemented for a in args):
        return NotImplemented
    _check_shapes(name, tuple(args))
    with np.errstate(all="ignore"):
        return _wrap(ufunc(*[_f32(a) for a in args]))


def _index(index: Any) -> Any:
    """TensorXf parts of an index become NumPy: a mask (non-zero is true)."""
    if isinstance(index, tuple):
        return tuple(_index(i) for i in index)
    if isinstance(index, TensorXf):
        if _is_cuda(index):
            raise TypeError("TensorXf indexing: a CUDA tensor cannot index a host tensor")
        return index.numpy() != 0
    return index


def getitem(t: Any, index: Any) -> Any:
    """``t[index]``: a float for one element, a new TensorXf otherwise. A CUDA tensor's
    elements are gathered on the device into a new CUDA tensor (basic indexing: ints,
    slices, ``...``, ``None``); one element is read on the host, as a float."""
    if _is_cuda(t):
        return _native._cuda_getitem(t, index)
    r = t.numpy()[_index(index)]
    if np.ndim(r) == 0:
        return float(r)
    return TensorXf(r)


def setitem(t: Any, index: Any, value: Any) -> Any:
    """The data of ``t`` with ``t[index] = value`` applied: a new array, or for a CUDA
    tensor a new CUDA tensor computed on the device (``value`` a number or a CUDA
    tensor). ``TensorXf.__setitem__`` makes it the tensor's data."""
    if not _numeric(value, "assignment"):
        raise TypeError(f"TensorXf assignment: 'value' must be a number or an array, got {_kind(value)}")
    if _is_cuda(t):
        _check_devices("assignment", (t, value))
        return _native._cuda_setitem(t, index, value)
    if _is_cuda(value):
        raise ValueError("TensorXf assignment: the value is a CUDA tensor and the target a host tensor")
    v = _host(value, "assignment")
    a = np.array(t.numpy(), dtype=np.float32)
    a[_index(index)] = v
    return a
