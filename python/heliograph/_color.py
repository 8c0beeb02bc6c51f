"""``ScalarColor3f`` (alias ``Color3f``): an RGB triple, usable as a dict value
(where Mitsuba accepts a colour in place of ``{'type': 'rgb', ...}``) and returned by
``traverse`` for colour parameters."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np


class ScalarColor3f:
    """A linear RGB colour: ``ScalarColor3f(r, g, b)``, ``ScalarColor3f(v)`` (grey) or
    ``ScalarColor3f([r, g, b])``."""

    __slots__ = ("_v",)

    def __init__(self, *args: Any) -> None:
        if len(args) == 1:
            a = np.asarray(args[0], dtype=np.float64)
            v = np.full(3, float(a)) if a.shape == () else a
        elif len(args) == 3:
            v = np.array(args, dtype=np.float64)
        else:
            raise TypeError(f"ScalarColor3f takes 1 or 3 numbers, got {len(args)} arguments")
        if v.shape != (3,) or not np.all(np.isfinite(v)):
            raise ValueError(f"ScalarColor3f: expected 3 finite numbers, got {args!r}")
        self._v = v

    @property
    def __heliograph_color__(self) -> list:
        return self._v.tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self._v, dtype=dtype)

    def __len__(self) -> int:
        return 3

    def __getitem__(self, i: int) -> float:
        return float(self._v[i])

    def __iter__(self) -> Iterator[float]:
        return iter(self._v.tolist())

    def __eq__(self, other: object) -> bool:
        try:
            return bool(np.array_equal(self._v, np.asarray(other, dtype=np.float64)))
        except (TypeError, ValueError):
            return False

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        r, g, b = self._v.tolist()
        return f"[{r:g}, {g:g}, {b:g}]"


Color3f = ScalarColor3f
