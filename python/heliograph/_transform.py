"""``ScalarTransform4f``: 4x4 affine transforms built as Mitsuba 3 builds them.

Both call styles work: the instance form ``T().translate(v).rotate(axis, angle)``
(each call multiplies on the right, so the last one acts first) and the older
static form ``T.look_at(origin=..., target=..., up=...)``.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Sequence

import numpy as np


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
            return owner(obj.matrix @ m)

        bound.__doc__ = fn.__doc__
        bound.__name__ = self.name
        bound.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        return bound


def _translate(v: Sequence[float]) -> np.ndarray:
    """Translation by ``v``."""
    m = np.eye(4)
    m[:3, 3] = _vec3(v, "v")
    return m


def _scale(v: Any) -> np.ndarray:
    """Scale by ``v`` (3 factors or one)."""
    s = _vec3(v, "v")
    if np.any(s == 0):
        raise ValueError("ScalarTransform4f.scale: a scale factor is zero (singular transform)")
    return np.diag([s[0], s[1], s[2], 1.0])


def _rotate(axis: Sequence[float], angle: float) -> np.ndarray:
    """Right-handed rotation by ``angle`` degrees about ``axis``."""
    a = _vec3(axis, "axis")
    n = np.linalg.norm(a)
    if n == 0 or not math.isfinite(angle):
        raise ValueError("ScalarTransform4f.rotate: the axis must be non-zero and the angle finite")
    x, y, z = a / n
    t = math.radians(angle)
    c, s = math.cos(t), math.sin(t)
    m = np.eye(4)
    m[:3, :3] = [
        [c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
        [y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s],
        [z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c)],
    ]
    return m


def _look_at(origin: Sequence[float], target: Sequence[float], up: Sequence[float]) -> np.ndarray:
    """Camera-to-world: looks from ``origin`` at ``target``; +z forward, +x left (Mitsuba)."""
    o, t, u = _vec3(origin, "origin"), _vec3(target, "target"), _vec3(up, "up")
    d = t - o
    if np.linalg.norm(d) == 0:
        raise ValueError("ScalarTransform4f.look_at: origin and target coincide")
    d = d / np.linalg.norm(d)
    left = np.cross(u, d)
    if np.linalg.norm(left) < 1e-12:
        raise ValueError("ScalarTransform4f.look_at: 'up' is parallel to the viewing direction")
    left = left / np.linalg.norm(left)
    new_up = np.cross(d, left)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = left, new_up, d, o
    return m


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
        return type(self)(np.linalg.inv(self.matrix))

    def __matmul__(self, other: Any) -> Any:
        """Composition with a transform; applied to a point (``ScalarPoint3f``, or any
        3 numbers: translated), a vector (``ScalarVector3f``: not translated) or a normal
        (``ScalarNormal3f``: the inverse transpose), also to (3, N) arrays of them."""
        from . import _types

        if isinstance(other, ScalarTransform4f):
            return type(self)(self.matrix @ other.matrix)
        p = np.asarray(other, dtype=np.float64)
        if p.shape[:1] != (3,) or p.ndim > 2:
            raise ValueError(
                f"{type(self).__name__} @ x: 'x' must be a transform or 3 coordinates (shape (3,) or (3, N)), "
                f"got shape {p.shape}"
            )
        m = self.matrix
        if isinstance(other, _types.ScalarNormal3f):
            r = np.linalg.inv(m[:3, :3]).T @ p
        elif isinstance(other, _types._Vector3) and not isinstance(other, _types._PointBase):
            r = m[:3, :3] @ p
        else:
            h = m @ np.concatenate([p, np.ones((1,) + p.shape[1:])])
            r = h[:3] / h[3]
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
