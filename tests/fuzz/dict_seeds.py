"""Seed dicts for fuzz_dict.py: valid scenes that cover every plugin, which the
fuzzer mutates (and generates fresh dicts beside)."""

import os

import numpy as np

import heliograph as hg

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ASSETS = os.path.join(ROOT, "assets")


def _sensor(res=8, **extra):
    return {
        "type": "perspective",
        "fov": 45.0,
        "to_world": hg.ScalarTransform4f.look_at([0, 0, 5], [0, 0, 0], [0, 1, 0]),
        "sampler": {"type": "independent", "sample_count": 2},
        "film": {"type": "hdrfilm", "width": res, "height": res, "pixel_format": "rgb",
                 "rfilter": {"type": "gaussian", "stddev": 0.5}},
        **extra,
    }


def seeds():
    """A fresh list of seed dicts (the fuzzer edits them in place)."""
    rng = np.random.default_rng(0)
    cbox = hg.cornell_box()
    cbox["sensor"]["film"]["width"] = cbox["sensor"]["film"]["height"] = 8
    return [
        cbox,
        {
            "type": "scene",
            "integrator": {"type": "path", "max_depth": -1, "rr_depth": 3},
            "sensor": _sensor(),
            "emitter": {"type": "constant", "radiance": {"type": "rgb", "value": [0.5, 0.6, 0.7]}},
            "checks": {"type": "checkerboard", "color0": 0.8, "color1": hg.ScalarColor3f(0.1, 0.2, 0.3),
                       "to_uv": hg.ScalarTransform4f.scale([4, 4, 1])},
            "tex": {"type": "bitmap", "bitmap": hg.Bitmap(rng.random((4, 4, 3))), "filter_type": "nearest"},
            "a": {"type": "sphere", "radius": 0.5, "center": [0, 1, 0],
                  "bsdf": {"type": "diffuse", "reflectance": {"type": "ref", "id": "checks"}}},
            "b": {"type": "cube", "to_world": hg.ScalarTransform4f.translate([2, 0, 0]),
                  "bsdf": {"type": "plastic", "diffuse_reflectance": {"type": "ref", "id": "tex"}}},
            "c": {"type": "disk", "bsdf": {"type": "conductor", "material": "Au"},
                  "emitter": {"type": "area", "radiance": 3.0}},
            "d": {"type": "rectangle", "bsdf": {"type": "twosided", "bsdf": {"type": "roughconductor",
                                                                             "alpha_u": 0.1, "alpha_v": 0.3}}},
            "e": {"type": "sphere", "bsdf": {"type": "dielectric", "int_ior": "water", "ext_ior": 1.0}},
            "f": {"type": "sphere", "bsdf": {"type": "thindielectric", "int_ior": 1.5}},
        },
        {
            "type": "scene",
            "integrator": {"type": "direct", "emitter_samples": 2, "bsdf_samples": 1},
            "sensor": _sensor(res=6, near_clip=0.01, far_clip=1e30),
            "point": {"type": "point", "position": [0, 4, 1], "intensity": {"type": "spectrum", "value": 10.0}},
            "sun": {"type": "directional", "direction": [0, -1, -1], "irradiance": 3.0},
            "sky": {"type": "envmap", "filename": os.path.join(ASSETS, "envmaps", "sky.exr"), "scale": 2.0},
            "mesh": {"type": "obj", "filename": os.path.join(ROOT, "renderer", "tests", "fixtures", "meshes",
                                                             "quad.obj")},
            "ply": {"type": "ply", "filename": os.path.join(ASSETS, "meshes", "icosphere.ply"),
                    "face_normals": True},
        },
        {
            "type": "scene",
            "integrator": {"type": "depth"},
            "sensor": _sensor(res=4),
            "shape": {"type": "rectangle",
                      "bsdf": {"type": "diffuse", "reflectance": {"type": "bitmap",
                                                                  "bitmap": rng.random((3, 5)).astype(np.float32)}}},
        },
    ]
