"""``cornell_box()``: the Cornell box as a Mitsuba 3 scene dict (same values and ids)."""

from __future__ import annotations

from typing import Any, Dict

from ._transform import ScalarTransform4f as T


def _wall(to_world: T, material: str) -> Dict[str, Any]:
    return {"type": "rectangle", "to_world": to_world, "bsdf": {"type": "ref", "id": material}}


def cornell_box() -> Dict[str, Any]:
    """The Cornell box (path tracer, 256x256, 64 spp), as ``mitsuba.cornell_box()``."""
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 8},
        "sensor": {
            "type": "perspective",
            "fov_axis": "smaller",
            "near_clip": 0.001,
            "far_clip": 100.0,
            "focus_distance": 1000,
            "fov": 39.3077,
            "to_world": T().look_at(origin=[0, 0, 3.9], target=[0, 0, 0], up=[0, 1, 0]),
            "sampler": {"type": "independent", "sample_count": 64},
            "film": {
                "type": "hdrfilm",
                "width": 256,
                "height": 256,
                "rfilter": {"type": "gaussian"},
                "pixel_format": "rgb",
                "component_format": "float32",
            },
        },
        "white": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.885809, 0.698859, 0.666422]}},
        "green": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.105421, 0.37798, 0.076425]}},
        "red": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.570068, 0.0430135, 0.0443706]}},
        "light": {
            "type": "rectangle",
            "to_world": T().translate([0.0, 0.99, 0.01]).rotate([1, 0, 0], 90).scale([0.23, 0.19, 0.19]),
            "bsdf": {"type": "ref", "id": "white"},
            "emitter": {"type": "area", "radiance": {"type": "rgb", "value": [18.387, 13.9873, 6.75357]}},
        },
        "floor": _wall(T().translate([0.0, -1.0, 0.0]).rotate([1, 0, 0], -90), "white"),
        "ceiling": _wall(T().translate([0.0, 1.0, 0.0]).rotate([1, 0, 0], 90), "white"),
        "back": _wall(T().translate([0.0, 0.0, -1.0]), "white"),
        "green-wall": _wall(T().translate([1.0, 0.0, 0.0]).rotate([0, 1, 0], -90), "green"),
        "red-wall": _wall(T().translate([-1.0, 0.0, 0.0]).rotate([0, 1, 0], 90), "red"),
        "small-box": {
            "type": "cube",
            "to_world": T().translate([0.335, -0.7, 0.38]).rotate([0, 1, 0], -17).scale(0.3),
            "bsdf": {"type": "ref", "id": "white"},
        },
        "large-box": {
            "type": "cube",
            "to_world": T().translate([-0.33, -0.4, -0.28]).rotate([0, 1, 0], 18.25).scale([0.3, 0.61, 0.3]),
            "bsdf": {"type": "ref", "id": "white"},
        },
    }
