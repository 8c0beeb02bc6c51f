"""Utilities (``mi.util``)."""

from __future__ import annotations

import os
from typing import Any, Union

from . import _native


def write_bitmap(path: Union[str, os.PathLike[str]], image: Any, write_async: bool = False) -> None:
    """Writes an (H, W, C) image to ``path``: ``.exr`` as linear float32, ``.png`` as
    sRGB 8-bit. Accepts a TensorXf (waits for its render), a Bitmap or any array."""
    del write_async  # accepted for Mitsuba compatibility; the write is synchronous
    data = getattr(image, "__heliograph_pixels__", image)
    _native._write_image(os.fspath(path), data)
