"""``Bitmap``: an image in memory, from an array or a file, for dict scenes."""

from __future__ import annotations

import os
from typing import Any, Union

import numpy as np

from . import _native


class Bitmap:
    """An (H, W, C) float32 image (linear). Float arrays are taken as linear values;
    uint8 arrays and 8-bit files are decoded from sRGB, as Mitsuba does."""

    __slots__ = ("_data",)

    def __init__(self, data: Union[str, os.PathLike[str], Any]) -> None:
        if isinstance(data, (str, os.PathLike)):
            self._data = _native._read_image(os.fspath(data))
        elif isinstance(data, Bitmap):
            self._data = data._data
        else:
            self._data = _native._pixels(data)

    @property
    def __heliograph_pixels__(self) -> _native.TensorXf:
        return self._data

    @property
    def shape(self) -> tuple:
        return self._data.shape

    def width(self) -> int:
        """Width in pixels."""
        return int(self._data.shape[1])

    def height(self) -> int:
        """Height in pixels."""
        return int(self._data.shape[0])

    def channel_count(self) -> int:
        """Channels per pixel."""
        return int(self._data.shape[2])

    def write(self, path: Union[str, os.PathLike[str]]) -> None:
        """Writes the image (.exr linear float, .png sRGB 8-bit)."""
        _native._write_image(os.fspath(path), self._data)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self._data.numpy(), dtype=dtype)

    def __repr__(self) -> str:
        h, w, c = self._data.shape
        return f"Bitmap(width={w}, height={h}, channels={c})"
