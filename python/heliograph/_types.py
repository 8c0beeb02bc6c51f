"""Mitsuba's small value types: 3-vectors (points, vectors, colours), ``Float`` and
``Frame3f``.

Each is a thin wrapper of a float64 NumPy array: ``np.array(p)`` gives it, and any
array-like of the right shape builds one. The ``Scalar`` types hold one value (shape
``(3,)``); ``Point3f``/``Vector3f``/``Color3f`` also hold several, one per column (shape
``(3, N)``), as Mitsuba's vectorised types do. Arithmetic is NumPy's, elementwise with
broadcasting; a point minus a point is a vector, as in Mitsuba.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from . import _native


def _components(cls: type, args: tuple) -> np.ndarray:
    """The (3,) or (3, N) array of ``cls(*args)``: one array-like, one number (all three
    components), or three components."""
    name = cls.__name__
    if len(args) == 0:
        v = np.zeros(3)
    elif len(args) == 1:
        v = np.array(np.asarray(args[0], dtype=np.float64))
        if v.shape == ():
            v = np.full(3, float(v))
    elif len(args) == 3:
        parts = [np.asarray(a, dtype=np.float64) for a in args]
        try:
            v = np.stack(np.broadcast_arrays(*parts))
        except ValueError:
            shapes = [p.shape for p in parts]
            raise ValueError(f"{name}: the three components have different lengths: {shapes}") from None
    else:
        raise TypeError(f"{name}() takes one array-like or 3 components, got {len(args)} arguments")
    scalar = name.startswith("Scalar")
    ok = v.shape == (3,) or (not scalar and v.ndim == 2 and v.shape[0] == 3)
    if not ok:
        want = "(3,)" if scalar else "(3,) or (3, N)"
        raise ValueError(f"{name}: expected shape {want}, got shape {v.shape}")
    return v


class _Vector3:
    """Three components (x, y, z) or (r, g, b), or three rows of N values."""

    __slots__ = ("_v",)
    __array_priority__ = 20
    _v: np.ndarray

    def __init__(self, *args: Any) -> None:
        if len(args) == 1 and isinstance(args[0], _Vector3):
            args = (args[0]._v,)
        elif len(args) == 1 and isinstance(args[0], _native.TensorXf):
            args = (args[0].numpy(),)
        self._v = _components(type(self), args)

    @classmethod
    def _of(cls, v: np.ndarray) -> Any:
        out = cls.__new__(cls)
        out._v = v
        return out

    # --- components
    @property
    def x(self) -> Any:
        """First component."""
        return self._v[0]

    @property
    def y(self) -> Any:
        """Second component."""
        return self._v[1]

    @property
    def z(self) -> Any:
        """Third component."""
        return self._v[2]

    @property
    def shape(self) -> tuple:
        return self._v.shape

    def numpy(self) -> np.ndarray:
        """A copy as a NumPy array."""
        return self._v.copy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self._v, dtype=dtype)

    def __len__(self) -> int:
        return 3

    def __getitem__(self, i: Any) -> Any:
        r = self._v[i]
        return float(r) if np.ndim(r) == 0 else r

    def __setitem__(self, i: Any, value: Any) -> None:
        self._v[i] = value

    def __iter__(self) -> Iterator[Any]:
        return iter(self._v.tolist())

    # --- arithmetic (NumPy's, keeping the type)
    def _result_type(self, other: Any, op: str) -> type[_Vector3]:
        if op == "subtract" and isinstance(self, _PointBase) and isinstance(other, _PointBase):
            return ScalarVector3f if isinstance(self, ScalarPoint3f) and isinstance(other, ScalarPoint3f) else Vector3f
        return type(self)

    def _binary(self, op: str, other: Any, reflected: bool = False) -> Any:
        if isinstance(other, (_native.TensorXf, str, dict)) or other is None:
            return NotImplemented
        o = other._v if isinstance(other, _Vector3) else np.asarray(other, dtype=np.float64)
        if o.dtype.kind not in "biuf":
            return NotImplemented
        if o.ndim == 1 and o.shape[0] == 3 and self._v.ndim == 2:
            o = o[:, None]
        a, b = (o, self._v) if reflected else (self._v, o)
        try:
            r = getattr(np, op)(a, b)
        except ValueError:
            raise ValueError(
                f"{type(self).__name__} {op}: shapes {np.shape(a)} and {np.shape(b)} do not broadcast"
            ) from None
        cls = self._result_type(other, op)
        try:
            return cls._of(_components(cls, (r,)))
        except ValueError:
            return r

    def __add__(self, o: Any) -> Any:
        return self._binary("add", o)

    def __radd__(self, o: Any) -> Any:
        return self._binary("add", o, True)

    def __sub__(self, o: Any) -> Any:
        return self._binary("subtract", o)

    def __rsub__(self, o: Any) -> Any:
        return self._binary("subtract", o, True)

    def __mul__(self, o: Any) -> Any:
        return self._binary("multiply", o)

    def __rmul__(self, o: Any) -> Any:
        return self._binary("multiply", o, True)

    def __truediv__(self, o: Any) -> Any:
        return self._binary("true_divide", o)

    def __rtruediv__(self, o: Any) -> Any:
        return self._binary("true_divide", o, True)

    def __pow__(self, o: Any) -> Any:
        return self._binary("power", o)

    def __neg__(self) -> Any:
        return type(self)._of(-self._v)

    def __abs__(self) -> Any:
        return type(self)._of(np.abs(self._v))

    def __eq__(self, other: object) -> bool:
        try:
            o = other._v if isinstance(other, _Vector3) else np.asarray(other, dtype=np.float64)
            return bool(np.array_equal(self._v, o))
        except (TypeError, ValueError):
            return False

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if self._v.ndim == 1:
            return "[" + ", ".join(f"{c:g}" for c in self._v.tolist()) + "]"
        return f"{type(self).__name__}({np.array2string(self._v, precision=6)})"


class _PointBase(_Vector3):
    __slots__ = ()


class ScalarPoint3f(_PointBase):
    """A point (x, y, z)."""

    __slots__ = ()


class Point3f(_PointBase):
    """A point, or N points as a (3, N) array."""

    __slots__ = ()


class ScalarVector3f(_Vector3):
    """A direction or offset (x, y, z); a transform applies no translation to it."""

    __slots__ = ()


class Vector3f(_Vector3):
    """A vector, or N vectors as a (3, N) array."""

    __slots__ = ()


class ScalarNormal3f(ScalarVector3f):
    """A surface normal (a transform applies its inverse transpose)."""

    __slots__ = ()


class ScalarColor3f(_Vector3):
    """A linear RGB colour: ``ScalarColor3f(r, g, b)``, ``ScalarColor3f(v)`` (grey) or
    ``ScalarColor3f([r, g, b])``; usable as a dict value wherever Mitsuba takes a colour."""

    __slots__ = ()

    @property
    def r(self) -> Any:
        """Red."""
        return self._v[0]

    @property
    def g(self) -> Any:
        """Green."""
        return self._v[1]

    @property
    def b(self) -> Any:
        """Blue."""
        return self._v[2]

    @property
    def __heliograph_color__(self) -> list:
        return self._v.tolist()


class Color3f(ScalarColor3f):
    """A colour, or N colours as a (3, N) array."""

    __slots__ = ()


class Float:
    """Mitsuba's dynamic float array: ``Float(1.0, 2.0)`` or ``Float(array)`` gives a
    1-D float32 ``TensorXf``."""

    def __new__(cls, *values: Any) -> Any:  # type: ignore[misc]
        data = values[0] if len(values) == 1 else list(values)
        a = np.asarray(data, dtype=np.float32)
        if a.ndim > 1:
            raise ValueError(f"Float: expected a number or a 1-D array, got shape {a.shape}")
        return _native.TensorXf(np.atleast_1d(a))


def _normalize(v: np.ndarray, name: str) -> np.ndarray:
    n = np.linalg.norm(v, axis=0)
    if np.any(n == 0) or not np.all(np.isfinite(n)):
        raise ValueError(f"Frame3f: '{name}' must be a non-zero finite vector")
    return v / n


class Frame3f:
    """An orthonormal frame (s, t, n): ``Frame3f(n)`` builds s and t around the normal
    ``n`` (Duff et al. 2017, as Mitsuba); ``Frame3f(s, t, n)`` takes all three."""

    __slots__ = ("s", "t", "n")

    def __init__(self, *args: Any) -> None:
        if len(args) == 1:
            n = _normalize(np.asarray(args[0], dtype=np.float64), "n")
            if n.shape != (3,):
                raise ValueError(f"Frame3f: 'n' must have shape (3,), got {n.shape}")
            sign = 1.0 if n[2] >= 0 else -1.0
            a = -1.0 / (sign + n[2])
            b = n[0] * n[1] * a
            s = np.array([1.0 + sign * n[0] * n[0] * a, sign * b, -sign * n[0]])
            t = np.array([b, sign + n[1] * n[1] * a, -n[1]])
        elif len(args) == 3:
            s, t, n = (np.asarray(a, dtype=np.float64) for a in args)
            for name, v in (("s", s), ("t", t), ("n", n)):
                if v.shape != (3,):
                    raise ValueError(f"Frame3f: '{name}' must have shape (3,), got {v.shape}")
        else:
            raise TypeError(f"Frame3f() takes n, or s, t and n; got {len(args)} arguments")
        self.s, self.t, self.n = ScalarVector3f(s), ScalarVector3f(t), ScalarNormal3f(n)

    def _m(self) -> np.ndarray:
        return np.stack([self.s._v, self.t._v, self.n._v])

    def to_local(self, v: Any) -> ScalarVector3f:
        """World coordinates to the frame's (dot products with s, t, n)."""
        return ScalarVector3f(self._m() @ np.asarray(v, dtype=np.float64))

    def to_world(self, v: Any) -> ScalarVector3f:
        """The frame's coordinates to world coordinates."""
        return ScalarVector3f(self._m().T @ np.asarray(v, dtype=np.float64))

    def __repr__(self) -> str:
        return f"Frame3f[\n  s = {self.s!r},\n  t = {self.t!r},\n  n = {self.n!r}\n]"
