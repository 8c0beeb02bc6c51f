"""Scene objects as Mitsuba's Python API shows them: ``load_dict`` of a single plugin
(a sensor, integrator, shape, BSDF, emitter, texture, filter, ...), ``render`` with
another sensor or integrator, and ``Scene.sensors()``/``emitters()``/``shapes()``/
``integrator()``/``bbox()``.

A lone plugin is checked by building it in a small scene of its own (so it gets the
same errors as inside a scene), and keeps its dict: it can be placed into a later
``load_dict`` as a value.
"""

from __future__ import annotations

import weakref
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _native
from ._transform import ScalarTransform4f

_CATEGORY = {name: cat for cat, names in _native._plugins() for name in names}
_CLASS = {
    "sensor": "Sensor",
    "integrator": "Integrator",
    "shape": "Shape",
    "bsdf": "BSDF",
    "emitter": "Emitter",
    "texture": "Texture",
    "rfilter": "ReconstructionFilter",
    "film": "Film",
    "sampler": "Sampler",
}

# The last render per scene, for ``sensor.film().bitmap()``: its tensor, held weakly
# (dropping it still cancels the render), and its film (``_native.RenderedFilm``, None on
# CUDA), which develops the same render again when the tensor is gone. An entry lives
# as long as its scene.
_LAST: weakref.WeakKeyDictionary[Any, Tuple[weakref.ref, Any]] = weakref.WeakKeyDictionary()


def _host_scene(category: str, d: dict) -> dict:
    """A scene in which plugin ``d`` of ``category`` is built (and checked)."""
    if category == "sensor":
        return {"type": "scene", "sensor": d}
    if category == "integrator":
        return {"type": "scene", "integrator": d}
    if category in ("shape", "emitter"):
        return {"type": "scene", "object": d}
    if category == "bsdf":
        return {"type": "scene", "object": {"type": "sphere", "bsdf": d}}
    if category == "texture":
        return {"type": "scene", "object": {"type": "sphere", "bsdf": {"type": "diffuse", "reflectance": d}}}
    if category == "film":
        return {"type": "scene", "sensor": {"type": "perspective", "film": d}}
    if category == "rfilter":
        return {"type": "scene", "sensor": {"type": "perspective", "film": {"type": "hdrfilm", "rfilter": d}}}
    return {"type": "scene", "sensor": {"type": "perspective", "sampler": d}}


def _plain(d: dict) -> dict:
    """``d`` with plugin objects replaced by their dicts, in place of copies of the dicts
    that hold them; ``d`` itself when it holds none (cycles and depth are left for the
    loader to report)."""
    holders, seen, todo = [], set(), [d]
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        for v in x.values():
            if isinstance(v, Plugin):
                holders.append(x)
            elif isinstance(v, dict):
                todo.append(v)
    if not holders:
        return d
    copies: Dict[int, dict] = {}

    def copy(x: dict) -> dict:
        if id(x) in copies:
            return copies[id(x)]
        out: dict = {}
        copies[id(x)] = out
        for k, v in x.items():
            out[k] = v._dict if isinstance(v, Plugin) else copy(v) if isinstance(v, dict) else v
        return out

    return copy(d)


def load_dict(d: Any, parallel: bool = True, optimize: bool = True) -> Any:
    """``load_dict(dict)``: a scene (``'type': 'scene'``) or a single plugin object."""
    del parallel, optimize  # accepted for Mitsuba compatibility
    if not isinstance(d, dict):
        raise TypeError(f"load_dict() takes a dict, got {type(d).__name__}")
    d = _plain(d)
    kind = d.get("type")
    if kind == "scene" or kind is None:
        return _native.load_dict(d)
    if not isinstance(kind, str):
        raise TypeError(f"load_dict(): 'type' must be a plugin name (str), got {type(kind).__name__}")
    category = _CATEGORY.get(kind)
    if category is None:
        known = ", ".join(sorted(["scene", *_CATEGORY]))
        raise _native.SceneError(f"<dict>: unknown plugin type \"{kind}\" (known: {known})")
    cls = globals()[_CLASS[category]]
    return cls(d, _native.load_dict(_host_scene(category, d)))


class Plugin:
    """A plugin built on its own by ``load_dict``."""

    __slots__ = ("_dict", "_scene")

    def __init__(self, d: dict, scene: Any) -> None:
        self._dict = d
        self._scene = scene

    def id(self) -> str:
        """The plugin's id (empty: lone plugins have none)."""
        return str(self._dict.get("id", ""))

    def __repr__(self) -> str:
        return f"{type(self).__name__}[type={self._dict['type']!r}]"


class Film(Plugin):
    """A film: its size and, after a render, its image."""

    __slots__ = ("_info",)

    def __init__(self, d: dict, scene: Any, info: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(d, scene)
        self._info = info if info is not None else scene._info()

    def size(self) -> np.ndarray:
        """(width, height) in pixels."""
        return np.array(self._info["film_size"], dtype=np.uint32)

    def crop_size(self) -> np.ndarray:
        """(width, height) of the crop window that is rendered."""
        return np.array(self._info["crop_size"], dtype=np.uint32)

    def crop_offset(self) -> np.ndarray:
        """(x, y) of the crop window's corner."""
        return np.array(self._info["crop_offset"], dtype=np.uint32)

    def bitmap(self) -> Any:
        """The last render with this film, as a ``Bitmap`` with every film channel
        (Mitsuba's names: ``R, G, B, A``, then an ``aov`` integrator's, e.g.
        ``albedo.R``; ``split()`` groups them)."""
        from ._bitmap import Bitmap

        ref, film = _LAST.get(self._scene, (None, None))
        img = ref() if ref is not None else None
        if film is None:  # nothing rendered yet, or a CUDA render
            if img is None:
                raise RuntimeError(
                    "Film.bitmap(): no image of this film is alive; render first, and on cuda_rgb keep the "
                    "TensorXf that render() returned"
                )
            return Bitmap(img)
        if img is None:
            # the render's tensor was dropped (and the render cancelled): the same render again
            data = film.render()
        else:
            whole = img._film()  # an aov render's tensor holds some of the film's channels
            data = img if whole is None else whole
        return Bitmap(np.array(data), channel_names=film.channel_names())


class Sensor(Plugin):
    """A camera: ``film()``, ``world_transform()``."""

    __slots__ = ()

    def film(self) -> Film:
        """The sensor's film."""
        return Film(self._dict.get("film", {"type": "hdrfilm"}), self._scene)

    def world_transform(self) -> ScalarTransform4f:
        """Camera to world."""
        return ScalarTransform4f(self._scene._info()["sensor_to_world"])

    def x_fov(self) -> float:
        """The horizontal field of view in degrees."""
        return float(self._scene._info()["x_fov"])


class Integrator(Plugin):
    """An integrator, for ``render(scene, integrator=...)``."""

    __slots__ = ()


class Shape(Plugin):
    """A shape."""

    __slots__ = ()


class BSDF(Plugin):
    """A BSDF."""

    __slots__ = ()


class Emitter(Plugin):
    """A light source."""

    __slots__ = ()


class Texture(Plugin):
    """A texture."""

    __slots__ = ()


class ReconstructionFilter(Plugin):
    """A reconstruction filter (``box``, ``tent``, ``gaussian``)."""

    __slots__ = ()


class Sampler(Plugin):
    """A sampler."""

    __slots__ = ()


class BoundingBox3f:
    """An axis-aligned box: ``min`` and ``max`` corners."""

    __slots__ = ("min", "max")

    def __init__(self, lo: Any, hi: Any) -> None:
        from ._types import ScalarPoint3f

        self.min, self.max = ScalarPoint3f(lo), ScalarPoint3f(hi)

    def center(self) -> Any:
        """The centre point."""
        return (self.min + self.max) * 0.5

    def extents(self) -> Any:
        """max - min."""
        return self.max - self.min

    def __repr__(self) -> str:
        return f"BoundingBox3f[\n  min = {self.min!r},\n  max = {self.max!r}\n]"


def render(
    scene: Any,
    params: Any = None,
    spp: Any = None,
    seed: Any = None,
    sensor: Any = None,
    integrator: Any = None,
) -> Any:
    """``render(scene, params=None, spp=None, seed=0, sensor=0, integrator=None)``: starts
    the render and returns its ``TensorXf`` at once (reading it waits). ``spp=0`` or None
    takes the scene's sample count; ``sensor`` is 0 or a sensor from ``load_dict``, and
    ``integrator`` an integrator from ``load_dict`` (both on the CPU variants)."""
    img, film = _native._render(scene, params, spp, seed, sensor, integrator)
    film_owner = sensor._scene if isinstance(sensor, Sensor) else scene
    _LAST[film_owner] = (weakref.ref(img), film)
    return img


class _SceneSensor(Sensor):
    """The sensor of a loaded scene."""

    __slots__ = ()


def scene_sensors(scene: Any) -> List[Sensor]:
    """``Scene.sensors()``."""
    return [_SceneSensor({"type": "perspective"}, scene)]


def scene_emitters(scene: Any) -> List[Emitter]:
    """``Scene.emitters()``: one object per light (area lights included)."""
    return [Emitter({"type": kind.split("(")[0].lower()}, scene) for kind in scene._info()["emitters"]]


def scene_shapes(scene: Any) -> List[Shape]:
    """``Scene.shapes()``."""
    return [Shape({"type": "shape"}, scene) for _ in range(scene._info()["shapes"])]


def scene_integrator(scene: Any) -> Integrator:
    """``Scene.integrator()``."""
    return Integrator({"type": scene._info()["integrator"].split("(")[0].lower()}, scene)


def scene_bbox(scene: Any) -> BoundingBox3f:
    """``Scene.bbox()``: the box around all geometry."""
    lo, hi = scene._info()["bbox"]
    return BoundingBox3f(lo, hi)
