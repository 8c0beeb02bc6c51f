"""Mitsuba 3 reference values of `principled` and `principledthin` for
renderer/src/bsdfs/<plugin>/mitsuba_values.rs.

Writes the Rust module: `eval_cases` (eval and pdf at fixed directions) and
`sample_cases` (Mitsuba's `sample` at fixed random numbers: the sampled direction, its
pdf and weight), which `tests.rs` beside it checks heliograph against. References come
from Mitsuba only, never from heliograph:

    /work/mi-venv/bin/python tests/references/principled_values.py principled \\
        > renderer/src/bsdfs/principled/mitsuba_values.rs
    /work/mi-venv/bin/python tests/references/principled_values.py principledthin \\
        > renderer/src/bsdfs/principledthin/mitsuba_values.rs && cargo fmt

Mitsuba 3.9.1, variant scalar_rgb, `BSDFContext()` defaults (radiance transport, every
lobe), uv = (0.3, 0.6) (a checkerboard there gives its `color1`), shading frame = the
local frame (directions are local).
"""

import sys

import mitsuba as mi
import numpy as np

mi.set_variant("scalar_rgb")

# (name, parameter list); `("tex", a, b)`: a checkerboard of color0 a, color1 b.
CONFIGS = {
    "principled": [
        ("defaults", []),
        ("metal, anisotropic, tinted",
         [("base_color", [0.8, 0.5, 0.2]), ("metallic", 0.6), ("roughness", 0.3),
          ("anisotropic", 0.5), ("spec_tint", 0.7), ("specular", 0.7)]),
        ("rough glass",
         [("base_color", [0.9, 0.8, 0.7]), ("spec_trans", 0.8), ("roughness", 0.25),
          ("eta", 1.45)]),
        ("clearcoat, sheen, flatness",
         [("base_color", [0.2, 0.6, 0.3]), ("roughness", 0.6), ("clearcoat", 0.8),
          ("clearcoat_gloss", 0.6), ("sheen", 0.7), ("sheen_tint", 0.5), ("flatness", 0.4)]),
        ("textured, sampling rates",
         [("base_color", [0.3, 0.6, 0.8]), ("roughness", 0.15),
          ("anisotropic", ("tex", 0.2, 0.7)), ("spec_trans", ("tex", 0.7, 0.3)),
          ("metallic", ("tex", 0.1, 0.2)), ("clearcoat", ("tex", 0.6, 0.4)),
          ("sheen", ("tex", 0.2, 0.9)), ("specular", 0.4),
          ("diffuse_reflectance_sampling_rate", 0.5), ("main_specular_sampling_rate", 2.0),
          ("clearcoat_sampling_rate", 3.0)]),
        ("eta below 1",
         [("eta", 0.8), ("spec_trans", 0.5), ("metallic", 0.2), ("roughness", 0.4),
          ("spec_tint", 0.3)]),
    ],
    "principledthin": [
        ("defaults", []),
        ("specular sheet, anisotropic, tinted",
         [("base_color", [0.7, 0.1, 0.1]), ("spec_trans", 0.6), ("eta", 1.33),
          ("roughness", 0.3), ("anisotropic", 0.4), ("spec_tint", 0.5)]),
        ("diffuse transmission, sheen, flatness",
         [("base_color", [0.3, 0.5, 0.2]), ("diff_trans", 1.2), ("sheen", 0.6),
          ("sheen_tint", 0.3), ("flatness", 0.5), ("spec_trans", 0.3), ("roughness", 0.4)]),
        ("textured, sampling rates",
         [("base_color", [0.7, 0.1, 0.1]), ("eta", ("tex", 1.2, 1.6)),
          ("anisotropic", ("tex", 0.05, 0.8)), ("spec_trans", ("tex", 0.2, 0.8)),
          ("diff_trans", ("tex", 0.4, 1.4)), ("sheen", ("tex", 0.1, 0.8)),
          ("roughness", 0.2), ("specular_reflectance_sampling_rate", 0.5),
          ("specular_transmittance_sampling_rate", 2.0),
          ("diffuse_transmittance_sampling_rate", 1.5)]),
    ],
}

UV = [0.3, 0.6]


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


WIS = [unit([0.3, 0.2, 0.93]), unit([-0.8, 0.1, 0.45]), unit([0.3, 0.2, -0.93]),
       unit([-0.5, -0.4, -0.6])]


def wos(wi, eta):
    """Near the mirror, the refracted and the straight-through directions, and others."""
    s = np.sign(wi[2])
    mirror = np.array([-wi[0], -wi[1], wi[2]])
    out = [unit(mirror + [0.05, -0.03, 0.0]), unit([0.6, -0.3, s * 0.5]),
           unit(-wi + [0.05, 0.04, 0.0]), unit([0.1, 0.9, -s * 0.4]), unit([0.0, 0.0, s])]
    e = eta if wi[2] > 0 else 1.0 / eta
    sin2_t = (1.0 - wi[2] ** 2) / e ** 2
    if sin2_t < 1.0:
        t = np.array([-wi[0] / e, -wi[1] / e, -s * np.sqrt(1.0 - sin2_t)])
        out.append(unit(t + [0.04, 0.05, 0.0]))
    return out


def mi_value(v):
    if isinstance(v, tuple) and v[0] == "tex":
        return {"type": "checkerboard", "color0": v[1], "color1": v[2]}
    if isinstance(v, list):
        return {"type": "rgb", "value": v}
    return v


def rust_value(v):
    if isinstance(v, tuple):
        return f"checker({v[1]}, {v[2]})"
    if isinstance(v, list):
        return f"Value::Rgb(Color::new({v[0]}, {v[1]}, {v[2]}))"
    return f"Value::Float({v})"


def f32(x):
    """A Rust f32 literal of `x` (7 significant digits)."""
    s = f"{float(x):.7g}"
    return s if any(c in s for c in ".en") else s + ".0"


def arr(v):
    return "[" + ", ".join(f32(x) for x in v) + "]"


def arr64(v):
    return "[" + ", ".join(repr(float(x)) for x in v) + "]"


def si_at(wi):
    si = mi.SurfaceInteraction3f()
    si.uv = mi.Point2f(*UV)
    si.n = mi.Normal3f(0, 0, 1)
    si.sh_frame = mi.Frame3f(mi.Vector3f(0, 0, 1))
    si.wi = mi.Vector3f(*wi)
    return si


def header(plugin, name, params):
    print(f"        {plugin} {{\n            name: {name!r},".replace("'", '"'))
    print("            params: vec![" + ", ".join(
        f'("{k}", {rust_value(v)})' for k, v in params) + "],")
    print("            rows: vec![")


def main():
    plugin = sys.argv[1]
    ctx = mi.BSDFContext()
    print(f"//! Mitsuba 3.9.1 (`scalar_rgb`) values of `{plugin}`, generated by")
    print(f"//! `tests/references/principled_values.py {plugin}` (run it, then `cargo fmt`);")
    print("//! not edited by hand. `BSDFContext()` defaults (radiance transport), uv = (0.3, 0.6).")
    print()
    print("// Mitsuba's values, some of them 1/π (a Lambertian density) to 7 digits")
    print("#![allow(clippy::approx_constant)]")
    print()
    print("use super::tests::{checker, EvalCase, SampleCase, SampleRow};")
    print("use crate::math::Color;")
    print("use crate::desc::props::Value;")
    print()
    print("/// eval and pdf at fixed directions: (wi, wo, eval, pdf).")
    print("pub fn eval_cases() -> Vec<EvalCase> {\n    vec![")
    bsdfs = []
    for name, params in CONFIGS[plugin]:
        d = {"type": plugin}
        d.update({k: mi_value(v) for k, v in params})
        bsdf = mi.load_dict(d)
        bsdfs.append(bsdf)
        p = dict(params)
        eta = p.get("eta", 1.5)
        eta = eta[2] if isinstance(eta, tuple) else eta
        header("EvalCase", name, params)
        for wi in WIS:
            si = si_at(wi)
            for wo in wos(wi, eta):
                f = bsdf.eval(ctx, si, mi.Vector3f(*wo))
                pdf = bsdf.pdf(ctx, si, mi.Vector3f(*wo))
                print(f"                ({arr64(wi)}, {arr64(wo)}, {arr(f)}, {f32(pdf)}),")
        print("            ],\n        },")
    print("    ]\n}\n")

    print("/// `sample` at fixed random numbers: Mitsuba's outputs.")
    print("pub fn sample_cases() -> Vec<SampleCase> {\n    vec![")
    us = [(0.02, (0.3, 0.7)), (0.2, (0.8, 0.1)), (0.45, (0.6, 0.35)), (0.6, (0.45, 0.55)),
          (0.8, (0.25, 0.15)), (0.97, (0.1, 0.9))]
    for (name, params), bsdf in zip(CONFIGS[plugin], bsdfs):
        header("SampleCase", name, params)
        for wi in WIS:
            si = si_at(wi)
            for u1, u2 in us:
                bs, w = bsdf.sample(ctx, si, u1, mi.Point2f(*u2))
                if not bs.pdf > 0 or max(w) <= 0:
                    continue
                print(f"                SampleRow {{ wi: {arr64(wi)}, wo: {arr(bs.wo)}, "
                      f"pdf: {f32(bs.pdf)}, weight: {arr(w)}, eta: {f32(bs.eta)} }},")
        print("            ],\n        },")
    print("    ]\n}")


if __name__ == "__main__":
    main()
