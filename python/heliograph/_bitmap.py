"""``Bitmap``: an image in memory, from an array or a file, as Mitsuba's ``Bitmap``.

A bitmap keeps its values as stored: an 8-bit file stays 8-bit sRGB-encoded
(``component_format() == Struct.Type.UInt8``, ``srgb_gamma() == True``) until
``convert`` changes that; a float array is float32 and linear. Used as a texture in a
dict scene, its values are decoded to linear first, as Mitsuba does. The core makes
every conversion (sRGB, channel layouts, resampling); this class keeps the values.
"""

from __future__ import annotations

import enum
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native


class Struct:
    """Mitsuba's ``Struct`` (only its component ``Type`` enumeration)."""

    class Type(enum.Enum):
        """Component types of a bitmap."""

        UInt8 = "uint8"
        UInt16 = "uint16"
        UInt32 = "uint32"
        Float16 = "float16"
        Float32 = "float32"
        Float64 = "float64"


_DTYPE = {
    Struct.Type.UInt8: np.uint8,
    Struct.Type.UInt16: np.uint16,
    Struct.Type.UInt32: np.uint32,
    Struct.Type.Float16: np.float16,
    Struct.Type.Float32: np.float32,
    Struct.Type.Float64: np.float64,
}


class _PixelFormat(enum.Enum):
    """Pixel formats: which channels a pixel has."""

    Y = "y"
    YA = "ya"
    RGB = "rgb"
    RGBA = "rgba"
    XYZ = "xyz"
    MultiChannel = "multichannel"


_NAMES = {
    _PixelFormat.Y: ["Y"],
    _PixelFormat.YA: ["Y", "A"],
    _PixelFormat.RGB: ["R", "G", "B"],
    _PixelFormat.RGBA: ["R", "G", "B", "A"],
}
_BY_COUNT = {1: _PixelFormat.Y, 2: _PixelFormat.YA, 3: _PixelFormat.RGB, 4: _PixelFormat.RGBA}


def _type_of(dtype: np.dtype) -> Struct.Type:
    for t, d in _DTYPE.items():
        if np.dtype(d) == dtype:
            return t
    raise TypeError(f"Bitmap: unsupported component type {dtype}")


class Bitmap:
    """``Bitmap(path)``, ``Bitmap(array, channel_names=None)`` or ``Bitmap(tensor)``."""

    PixelFormat = _PixelFormat

    __slots__ = ("_data", "_format", "_names", "_srgb", "_metadata")

    def __init__(
        self,
        data: Union[str, os.PathLike[str], Any],
        channel_names: Optional[Sequence[str]] = None,
    ) -> None:
        self._metadata: Dict[str, Any] = {}
        if isinstance(data, (str, os.PathLike)):
            path = os.fspath(data)
            if path.lower().endswith(".exr"):
                t, names = _native._read_exr_channels(path)
                self._set(np.array(t.numpy()), names, srgb=False)
                return
            raw = _native._read_image(path, raw=True).numpy()
            self._set(np.rint(raw * 255.0).astype(np.uint8), None, srgb=True)
            return
        if isinstance(data, Bitmap):
            self._set(data._data.copy(), data._names, data._srgb, data._format)
            self._metadata = dict(data._metadata)
            return
        given = np.asarray(data) if isinstance(data, np.ndarray) else None
        if given is not None and given.ndim == 3 and given.shape[2] not in (1, 2, 3, 4):
            # any number of channels (AOVs): no texture use to check for
            linear = _native.TensorXf(given).numpy()
            if not np.all(np.isfinite(linear)):
                raise ValueError("Bitmap: the data has NaN or infinite values")
            self._set(np.array(linear), channel_names, srgb=False)
            return
        # checked (rank, element type, finite values) as bitmap data in a scene dict is
        linear = _native._pixels(data).numpy()
        if given is not None and given.dtype == np.uint8:
            # 8-bit data stays as stored, sRGB-encoded (as Mitsuba's)
            self._set(np.array(given), channel_names, srgb=True)
        else:
            self._set(np.array(linear), channel_names, srgb=False)

    def _set(self, a: np.ndarray, names: Optional[Sequence[str]], srgb: bool, fmt: Any = None) -> None:
        if a.ndim == 2:
            a = a[:, :, None]
        if a.ndim != 3 or a.shape[2] < 1:
            raise ValueError(f"Bitmap: 'data' must have shape (H, W) or (H, W, C), got shape {a.shape}")
        c = a.shape[2]
        if names is not None:
            names = [str(n) for n in names]
            if len(names) != c:
                raise ValueError(f"Bitmap: 'channel_names' has {len(names)} names, but the data has {c} channels")
            fmt = fmt or next((f for f, n in _NAMES.items() if n == names), _PixelFormat.MultiChannel)
        else:
            fmt = fmt or _BY_COUNT.get(c, _PixelFormat.MultiChannel)
            names = _NAMES.get(fmt) or [f"ch{i}" for i in range(c)]
        self._data, self._format, self._names, self._srgb = np.ascontiguousarray(a), fmt, list(names), bool(srgb)

    # --- what Mitsuba's Bitmap reports
    def width(self) -> int:
        """Width in pixels."""
        return int(self._data.shape[1])

    def height(self) -> int:
        """Height in pixels."""
        return int(self._data.shape[0])

    def size(self) -> np.ndarray:
        """(width, height)."""
        return np.array([self.width(), self.height()], dtype=np.uint32)

    def channel_count(self) -> int:
        """Channels per pixel."""
        return int(self._data.shape[2])

    def channel_names(self) -> List[str]:
        """The channels' names (``R``, ``G``, ``B``, or those given)."""
        return list(self._names)

    def pixel_format(self) -> _PixelFormat:
        """``Bitmap.PixelFormat``."""
        return self._format

    def component_format(self) -> Struct.Type:
        """``Struct.Type`` of the stored values."""
        return _type_of(self._data.dtype)

    def srgb_gamma(self) -> bool:
        """Whether the values are sRGB-encoded."""
        return self._srgb

    def set_srgb_gamma(self, value: bool) -> None:
        """Declares the values sRGB-encoded (or not) without changing them."""
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"Bitmap.set_srgb_gamma: 'value' must be a bool, got {type(value).__name__}")
        self._srgb = bool(value)

    def metadata(self) -> Dict[str, Any]:
        """The metadata, a dict that can be edited in place."""
        return self._metadata

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self._data.shape)

    # --- conversions
    def _floats(self) -> np.ndarray:
        """The stored values as float32, integer codes scaled to 0..1."""
        if self._data.dtype.kind == "u":
            return (self._data / np.iinfo(self._data.dtype).max).astype(np.float32)
        return self._data.astype(np.float32)

    def _converted(self, fmt: _PixelFormat, srgb: bool) -> Tuple[np.ndarray, List[str]]:
        """float32 values in layout ``fmt``, sRGB-encoded when ``srgb``, and their names."""
        t, names = _native._bitmap_convert(self._floats(), self._names, self._format.name, self._srgb, fmt.name, srgb)
        return np.array(t.numpy()), names

    def _linear(self) -> np.ndarray:
        """float32 linear values (alpha and non-colour channels are never sRGB)."""
        return self._converted(self._format, False)[0]

    def convert(
        self,
        pixel_format: Optional[_PixelFormat] = None,
        component_format: Optional[Struct.Type] = None,
        srgb_gamma: Optional[bool] = None,
    ) -> Bitmap:
        """A copy with other channels (``PixelFormat``), component type (``Struct.Type``)
        or encoding (``srgb_gamma``); None keeps the bitmap's."""
        if pixel_format is not None and not isinstance(pixel_format, _PixelFormat):
            raise TypeError(f"Bitmap.convert: 'pixel_format' must be a Bitmap.PixelFormat, got {pixel_format!r}")
        if component_format is not None and not isinstance(component_format, Struct.Type):
            raise TypeError(f"Bitmap.convert: 'component_format' must be a Struct.Type, got {component_format!r}")
        if srgb_gamma is not None and not isinstance(srgb_gamma, (bool, np.bool_)):
            raise TypeError(f"Bitmap.convert: 'srgb_gamma' must be a bool, got {type(srgb_gamma).__name__}")
        fmt = self._format if pixel_format is None else pixel_format
        ctype = self.component_format() if component_format is None else component_format
        srgb = self._srgb if srgb_gamma is None else bool(srgb_gamma)
        values, names = self._converted(fmt, srgb)
        a = values.astype(np.float64)
        dtype = np.dtype(_DTYPE[ctype])
        if dtype.kind == "u":
            top = np.iinfo(dtype.type).max  # type: ignore[type-var]
            a = np.clip(np.rint(a * top), 0, top)
        out = Bitmap.__new__(Bitmap)
        out._metadata = dict(self._metadata)
        out._set(a.astype(dtype), names, srgb, fmt)
        return out

    def split(self) -> List[Tuple[str, Bitmap]]:
        """The channels grouped by the prefix of their names (``'image.R'`` goes to
        ``'image'``; names without a prefix to ``'<root>'``), as (name, Bitmap) pairs
        sorted by name, as Mitsuba's; a group of X, Y, Z channels is an ``XYZ`` bitmap."""
        groups: Dict[str, List[int]] = {}
        for i, n in enumerate(self._names):
            prefix = n.rsplit(".", 1)[0] if "." in n else "<root>"
            groups.setdefault(prefix, []).append(i)
        out = []
        for prefix, idx in sorted(groups.items()):
            names = [self._names[i].rsplit(".", 1)[-1] for i in idx]
            b = Bitmap.__new__(Bitmap)
            b._metadata = {}
            fmt = _PixelFormat.XYZ if names == ["X", "Y", "Z"] else None
            b._set(self._data[..., idx].copy(), names, self._srgb, fmt)
            out.append((prefix, b))
        return out

    def resample(self, res: Sequence[int], rfilter: Any = None) -> Bitmap:
        """The image at ``res`` = (width, height), filtered with ``rfilter`` (a filter
        from ``load_dict``; box by default) scaled to the pixel footprint."""
        w, h = (int(x) for x in res)
        if w < 1 or h < 1:
            raise ValueError(f"Bitmap.resample: 'res' must be 2 positive sizes, got {list(res)!r}")
        spec = getattr(rfilter, "_dict", None)
        if rfilter is not None and not isinstance(spec, dict):
            raise TypeError(
                "Bitmap.resample: 'rfilter' must be a filter made by "
                f"load_dict({{'type': 'box' | 'tent' | 'gaussian', ...}}), got {type(rfilter).__name__}"
            )
        a = np.array(_native._bitmap_resample(self._data.astype(np.float32), [w, h], spec).numpy())
        if self._data.dtype.kind == "u":
            top = np.iinfo(self._data.dtype).max
            a = np.clip(np.rint(a), 0, top)
        out = Bitmap.__new__(Bitmap)
        out._metadata = dict(self._metadata)
        out._set(a.astype(self._data.dtype), self._names, self._srgb, self._format)
        return out

    # --- use and output
    @property
    def __heliograph_pixels__(self) -> Any:
        return _native._pixels(self._linear())

    def write(self, path: Union[str, os.PathLike[str]], write_async: bool = False) -> None:
        """Writes the image: ``.exr`` linear float, ``.png``/``.jpg`` sRGB 8-bit."""
        del write_async  # accepted for Mitsuba compatibility; the write is synchronous
        path = os.fspath(path)
        c = self.channel_count()
        if path.lower().endswith(".exr"):
            _native._write_exr_channels(path, self._linear(), self._names)
            return
        if self._format == _PixelFormat.MultiChannel or c not in (1, 2, 3, 4):
            raise ValueError(
                f"Bitmap.write: a bitmap of {c} channels ({', '.join(self._names)}) can only be written as .exr; "
                "split() it first for PNG or JPEG"
            )
        _native._write_image(path, self._linear())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self._data, dtype=dtype)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Bitmap)
            and self._format == other._format
            and self._srgb == other._srgb
            and self._data.dtype == other._data.dtype
            and np.array_equal(self._data, other._data)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        ctype = self.component_format().value
        size = self._data.itemsize
        lines = [
            "Bitmap[",
            f"  pixel_format = {self._format.value},",
            f"  component_format = {ctype},",
            f"  size = [{self.width()}, {self.height()}],",
            f"  srgb_gamma = {int(self._srgb)},",
            "  struct = Struct[",
        ]
        for i, n in enumerate(self._names):
            flags = ", normalized" if self._data.dtype.kind == "u" else ""
            flags += ", gamma" if self._srgb and n != "A" else ""
            lines.append(f"    {ctype} {n}; // @{i * size}{flags}")
        lines.append("  ],")
        if self._metadata:
            items = [f"    {k} => {_meta(v)}" for k, v in self._metadata.items()]
            lines += ["  metadata = {", ",\n".join(items), "  },"]
        lines += [f"  data = [ {_mem(self._data.nbytes)} of image data ]", "]"]
        return "\n".join(lines)


def _meta(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _mem(n: int) -> str:
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    x, i = float(n), 0
    while x >= 1024 and i < len(units) - 1:
        x, i = x / 1024, i + 1
    return f"{x:.3g} {units[i]}" if i else f"{n} B"
