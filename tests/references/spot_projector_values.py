"""Mitsuba 3 reference values of the `spot` and `projector` emitters, for the tests at
the bottom of renderer/src/emitters/spot.rs and projector.rs. References come from
Mitsuba only, never from heliograph:

    /work/mi-venv/bin/python tests/references/spot_projector_values.py

prints, per configuration, rows `(p, d, dist, radiance)` of `sample_direction` from the
reference point `p` (the direction sample is unused by delta emitters), with
`pdf_direction` (0) and `eval_direction` (the sample's value inside a projector's frustum)
checked here. The tests hold
the printed numbers. Mitsuba 3.9.1, variant scalar_rgb.
"""

import mitsuba as mi
import numpy as np

mi.set_variant("scalar_rgb")

# A 4x3 RGB image (rows top to bottom = v from 0 to 1), the same as `image_4x3` in the
# Rust tests: texel (x, y) = (0.1 + 0.2 x, 0.05 + 0.3 y, 0.9 - 0.1 x - 0.2 y).
IMG = np.array([[[0.1 + 0.2 * x, 0.05 + 0.3 * y, 0.9 - 0.1 * x - 0.2 * y] for x in range(4)]
                for y in range(3)], dtype=np.float32)


def bitmap():
    return {"type": "bitmap", "bitmap": mi.Bitmap(IMG), "raw": True}


T = mi.ScalarTransform4f
CONFIGS = {
    "spot default": {"type": "spot"},
    "spot rotated textured": {
        "type": "spot", "intensity": {"type": "rgb", "value": [5.0, 3.0, 2.0]},
        "cutoff_angle": 30.0, "beam_width": 10.0, "texture": bitmap(),
        "to_world": T().look_at(origin=[1, 2, 3], target=[1.5, 2, 0], up=[0, 1, 0]),
    },
    "spot scaled": {
        "type": "spot", "intensity": {"type": "rgb", "value": 2.0}, "cutoff_angle": 45.0,
        "to_world": T().translate([0, 0, 1]) @ T().scale([2, 1, 0.5]),
    },
    "projector constant": {
        "type": "projector", "irradiance": {"type": "rgb", "value": [1.0, 2.0, 0.5]},
        "fov": 60.0, "scale": 3.0,
        "to_world": T().look_at(origin=[0, 0, 2], target=[0, 0, 0], up=[0, 1, 0]),
    },
    "projector textured fov_axis y": {
        "type": "projector", "irradiance": bitmap(), "fov": 40.0, "fov_axis": "y",
        "to_world": T().look_at(origin=[1, 1, 1], target=[0, 0, -1], up=[0, 0, 1]),
    },
}

POINTS = {
    "spot default": [[0, 0, 2], [0.3, -0.2, 2], [0.5, 0.1, 1.5], [0, 0, -1], [1, 0, 1]],
    "spot rotated textured": [[1.5, 2, 0], [1.9, 2.3, 0.5], [0.8, 1.6, 1.0], [2.6, 2.1, 1.0],
                              [1, 2, 5]],
    "spot scaled": [[0, 0, 3], [1.5, 0.2, 2], [0.2, 1.1, 2.5], [3, 0, 1.5]],
    "projector constant": [[0, 0, 0], [0.5, -0.3, 0], [0.9, 0.9, -1], [3, 0, 0], [0, 0, 3]],
    "projector textured fov_axis y": [[0, 0, -1], [0.2, -0.1, -0.8], [-0.3, 0.4, -1.2],
                                      [0.5, 0.5, -0.2], [2, 2, 2]],
}

for name, d in CONFIGS.items():
    e = mi.load_dict(d)
    print(f"// {name}")
    for p in POINTS[name]:
        it = mi.Interaction3f()
        it.p = mi.ScalarPoint3f(p)
        it.wavelengths = []
        ds, w = e.sample_direction(it, mi.Point2f(0.3, 0.7))
        spec = e.eval_direction(it, ds)
        assert float(e.pdf_direction(it, ds)) == 0.0
        # (outside a projector's frustum, Mitsuba's eval_direction does not check the
        # frustum; sample_direction, which the integrators use, returns zero there)
        if float(ds.pdf) > 0:
            assert np.allclose(np.array(spec), np.array(w), rtol=1e-6, atol=0), (spec, w)
        w = [float(x) for x in w]
        print(f"    ({list(map(float, p))}, [{ds.d[0]:.9g}, {ds.d[1]:.9g}, {ds.d[2]:.9g}], "
              f"{float(ds.dist):.9g}, {float(ds.pdf):.9g}, [{w[0]:.9g}, {w[1]:.9g}, {w[2]:.9g}]),")
