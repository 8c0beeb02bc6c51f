"""Utilities (``mi.util``)."""

from __future__ import annotations

import os
from typing import Any, Union

import numpy as np

from . import _native
from ._bitmap import Bitmap, Struct


def write_bitmap(path: Union[str, os.PathLike[str]], image: Any, write_async: bool = False) -> None:
    """Writes an (H, W, C) image to ``path``: ``.exr`` as linear float32, ``.png`` and
    ``.jpg`` as sRGB 8-bit. Accepts a TensorXf (waits for its render), a Bitmap or any
    array (taken as linear values)."""
    del write_async  # accepted for Mitsuba compatibility; the write is synchronous
    if isinstance(image, Bitmap):
        image.write(path)
        return
    _native._write_image(os.fspath(path), image)


def convert_to_bitmap(data: Any, uint8_srgb: bool = True) -> Bitmap:
    """A ``Bitmap`` of an (H, W, C) image (linear values): 8-bit sRGB-encoded when
    ``uint8_srgb`` (for display), else float32 linear."""
    if not isinstance(uint8_srgb, (bool, np.bool_)):
        raise TypeError(f"convert_to_bitmap: 'uint8_srgb' must be a bool, got {type(uint8_srgb).__name__}")
    b = data if isinstance(data, Bitmap) else Bitmap(np.asarray(data, dtype=np.float32))
    if uint8_srgb:
        return b.convert(component_format=Struct.Type.UInt8, srgb_gamma=True)
    return b.convert(component_format=Struct.Type.Float32, srgb_gamma=False)
