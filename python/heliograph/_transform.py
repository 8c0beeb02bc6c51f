"""``ScalarTransform4f``: 4x4 affine transforms built as Mitsuba 3 builds them.

Both call styles work: the instance form ``T().translate(v).rotate(axis, angle)``
(each call multiplies on the right, so the last one acts first) and the older
static form ``T.look_at(origin=..., target=..., up=...)``. The matrices are kept in
double precision; the core's transforms build, compose, invert and apply them.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _native


def _vec3(v: Any, name: str) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    if a.shape == ():
        a = np.full(3, float(a))
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"ScalarTransform4f: '{name}' must be 3 finite numbers, got {v!r}")
    return a


class _dual:
    """A method callable on the class (static form) or on an instance (composes)."""

    def __init__(self, fn: Callable[..., np.ndarray]) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type) -> Callable[..., ScalarTransform4f]:
        fn = self.fn

        def bound(*args: Any, **kwargs: Any) -> ScalarTransform4f:
            m = fn(*args, **kwargs)
            if obj is None:
                return owner(m)
            return owner(_native._transform_compose(obj.matrix.tolist(), m.tolist()))

        bound.__doc__ = fn.__doc__
        bound.__name__ = self.name
        bound.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        return bound


def _matrix(rows: Optional[list], refused: str) -> np.ndarray:
    """The core's matrix, or ``refused`` as a ``ValueError`` when it gave none."""
    if rows is None:
        raise ValueError(refused)
    return np.array(rows, dtype=np.float64)


def _translate(v: Sequence[float]) -> np.ndarray:
    """Translation by ``v``."""
    return _matrix(_native._transform_translate(_vec3(v, "v").tolist()), "")


def _scale(v: Any) -> np.ndarray:
    """Scale by ``v`` (3 factors or one)."""
    rows = _native._transform_scale(_vec3(v, "v").tolist())
    return _matrix(rows, "ScalarTransform4f.scale: a scale factor is zero (singular transform)")


def _rotate(axis: Sequence[float], angle: float) -> np.ndarray:
    """Right-handed rotation by ``angle`` degrees about ``axis``."""
    rows = _native._transform_rotate(_vec3(axis, "axis").tolist(), float(angle))
    return _matrix(rows, "ScalarTransform4f.rotate: the axis must be non-zero and the angle finite")


def _look_at(origin: Sequence[float], target: Sequence[float], up: Sequence[float]) -> np.ndarray:
    """Camera-to-world: looks from ``origin`` at ``target``; +z forward, +x left (Mitsuba)."""
    o, t, u = _vec3(origin, "origin"), _vec3(target, "target"), _vec3(up, "up")
    if np.array_equal(o, t):
        raise ValueError("ScalarTransform4f.look_at: origin and target coincide")
    with np.errstate(over="ignore"):
        apart = np.all(np.isfinite(t - o))
    if not apart:
        raise ValueError("ScalarTransform4f.look_at: origin and target are too far apart (target - origin overflows)")
    rows = _native._transform_look_at(o.tolist(), t.tolist(), u.tolist())
    return _matrix(rows, "ScalarTransform4f.look_at: 'up' is parallel to the viewing direction")


class ScalarTransform4f:
    """A 4x4 transform (float64 matrix acting on column vectors)."""

    __slots__ = ("matrix",)

    def __init__(self, matrix: Any = None) -> None:
        if matrix is None:
            m = np.eye(4)
        elif isinstance(matrix, ScalarTransform4f):
            m = matrix.matrix.copy()
        else:
            m = np.array(matrix, dtype=np.float64)
            if m.shape != (4, 4):
                raise ValueError(f"ScalarTransform4f: expected a 4x4 matrix, got shape {m.shape}")
        if not np.all(np.isfinite(m)):
            raise ValueError("ScalarTransform4f: the matrix has NaN or infinite entries")
        self.matrix: np.ndarray = m

    translate = _dual(_translate)
    scale = _dual(_scale)
    rotate = _dual(_rotate)
    look_at = _dual(_look_at)

    @property
    def __heliograph_matrix__(self) -> list:
        return self.matrix.tolist()

    def inverse(self) -> ScalarTransform4f:
        """The inverse transform."""
        rows = _native._transform_inverse(self.matrix.tolist())
        return type(self)(_matrix(rows, "ScalarTransform4f.inverse: the matrix is singular"))

    def __matmul__(self, other: Any) -> Any:
        """Composition with a transform; applied to a point (``ScalarPoint3f``, or any
        3 numbers: translated), a vector (``ScalarVector3f``: not translated) or a normal
        (``ScalarNormal3f``: the inverse transpose), also to (3, N) arrays of them."""
        from . import _types

        if isinstance(other, ScalarTransform4f):
            return type(self)(_native._transform_compose(self.matrix.tolist(), other.matrix.tolist()))
        p = np.asarray(other, dtype=np.float64)
        if p.shape[:1] != (3,) or p.ndim > 2:
            raise ValueError(
                f"{type(self).__name__} @ x: 'x' must be a transform or 3 coordinates (shape (3,) or (3, N)), "
                f"got shape {p.shape}"
            )
        if isinstance(other, _types.ScalarNormal3f):
            kind = "normal"
        elif isinstance(other, _types._Vector3) and not isinstance(other, _types._PointBase):
            kind = "vector"
        else:
            kind = "point"
        mapped = _native._transform_apply(self.matrix.tolist(), kind, p.reshape(3, -1).T.tolist())
        r = _matrix(mapped, f"{type(self).__name__} @ normal: the matrix is singular").T.reshape(p.shape)
        cls = type(other) if isinstance(other, _types._Vector3) else _types.ScalarPoint3f
        if r.ndim == 2 and cls.__name__.startswith("Scalar"):
            cls = _types.Point3f
        return cls(r)

    def translation(self) -> Any:
        """The translation part, as a vector."""
        from . import _types

        return _types.ScalarVector3f(self.matrix[:3, 3])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScalarTransform4f) and bool(np.array_equal(self.matrix, other.matrix))

    __hash__ = None  # type: ignore[assignment]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self.matrix, dtype=dtype)

    def __repr__(self) -> str:
        body = np.array2string(self.matrix, precision=6, suppress_small=True, prefix="ScalarTransform4f(")
        return f"{type(self).__name__}({body})"


class Transform4f(ScalarTransform4f):
    """Mitsuba's ``Transform4f``: the same 4x4 transform (heliograph's transforms are
    never differentiated, so there is no vectorised form)."""

    __slots__ = ()
