//! The pieces of the Disney principled BSDF that `principled` and `principledthin`
//! share, as Mitsuba 3 keeps them in `principledhelpers.h`: reading the weight
//! textures, the base colour and the sampling rates, Schlick's Fresnel and the tint
//! colour, the main GGX distribution and the microfacet-side test, and the diffuse and
//! sheen shapes. Their CUDA twins are in `kernels/bsdfs/principledhelpers.cuh`.

use super::microfacet::{Microfacet, GGX};
use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::props::{Props, Value};
use crate::error::{Error, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::{luminance, safe_sqrt, Color, Vec3};
use crate::plugin::{BuildContext, TexRef};

/// Reads a weight texture whose values belong in `[0, hi]`: a constant is checked, a
/// texture through its mean.
pub(crate) fn read_weight(
    p: &Props,
    ctx: &mut dyn BuildContext,
    key: &str,
    default: f32,
    hi: f32,
) -> Result<TexRef> {
    let t = ctx.texture_in(
        p,
        key,
        Some(Color::splat(default)),
        Range::Any,
        SpectrumUse::Reflectance,
    )?;
    let m = ctx.texture_mean(t);
    if !(m.min_element() >= 0.0 && m.max_element() <= hi) {
        let v = if m.x == m.y && m.y == m.z {
            format!("{}", m.x)
        } else {
            format!("{m}")
        };
        let what = if p
            .get(key)
            .is_some_and(|e| matches!(e.value, Value::Object(_) | Value::Ref(_)))
        {
            format!("the texture's mean is {v}")
        } else {
            format!("got {v}")
        };
        return Err(Error::param(
            &p.entry_loc(key),
            key,
            format!("must be in [0, {hi}], {what}"),
        ));
    }
    Ok(t)
}

/// Reads `base_color`: non-negative (a texture: its mean).
pub(crate) fn read_base_color(p: &Props, ctx: &mut dyn BuildContext) -> Result<TexRef> {
    let t = ctx.texture_in(
        p,
        "base_color",
        Some(Color::splat(0.5)),
        Range::NonNegative,
        SpectrumUse::Reflectance,
    )?;
    let m = ctx.texture_mean(t);
    if !(m.min_element() >= 0.0) {
        return Err(Error::param(
            &p.entry_loc("base_color"),
            "base_color",
            format!("must be non-negative, got {m}"),
        ));
    }
    Ok(t)
}

/// Reads a sampling rate: a finite value >= 0, declared for editing.
pub(crate) fn read_rate(p: &Props, ctx: &mut dyn BuildContext, key: &str) -> Result<f32> {
    let v = p.positive_float(key, 1.0, true)?;
    ctx.declare(
        key,
        ParamValue::Float(v as f64),
        Target::prop(key),
        Range::AtLeast(0.0),
    );
    Ok(v)
}

/// `v` with the sign of `s` applied (Mitsuba's `mulsign`, by the sign bit).
pub(crate) fn mulsign(v: Vec3, s: f32) -> Vec3 {
    if s.is_sign_negative() {
        -v
    } else {
        v
    }
}

/// Schlick's weight `(1 − cos)⁵` (`cos` clamped to [0, 1]).
pub(crate) fn schlick_weight(cos: f32) -> f32 {
    let m = (1.0 - cos).clamp(0.0, 1.0);
    let m2 = m * m;
    m2 * m2 * m
}

/// Schlick's Fresnel `R0 + (1 − R0)(1 − cos)⁵`, with the refracted cosine when `wi`
/// is on the optically denser side (Mitsuba's `calc_schlick`).
pub(crate) fn calc_schlick(r0: Color, cos_i: f32, eta: f32) -> Color {
    let outside = cos_i >= 0.0;
    let (eta_it, eta_ti) = if outside {
        (eta, 1.0 / eta)
    } else {
        (1.0 / eta, eta)
    };
    let cos_t = safe_sqrt(1.0 - (1.0 - cos_i * cos_i) * (eta_ti * eta_ti));
    let w = if eta_it > 1.0 {
        schlick_weight(cos_i.abs())
    } else {
        schlick_weight(cos_t)
    };
    r0 + (Color::ONE - r0) * w
}

/// Reflectance at normal incidence for relative IOR `eta`.
pub(crate) fn schlick_r0(eta: f32) -> f32 {
    let r = (eta - 1.0) / (eta + 1.0);
    r * r
}

/// `base / luminance(base)` (1 for a black base): the hue that the tints blend towards.
pub(crate) fn tint_color(base: Color) -> Color {
    let lum = luminance(base);
    if lum > 0.0 {
        base / lum
    } else {
        Color::ONE
    }
}

/// GGX roughness along x and y from `roughness` and `anisotropic` (Burley 2012).
pub(crate) fn dist_params(anisotropic: f32, roughness: f32) -> (f32, f32) {
    let r2 = roughness * roughness;
    let aspect = (1.0 - 0.9 * anisotropic).sqrt();
    ((r2 / aspect).max(0.001), (r2 * aspect).max(0.001))
}

/// The main specular distribution (GGX, visible normals).
pub(crate) fn spec_distr(anisotropic: f32, roughness: f32) -> Microfacet {
    let (ax, ay) = dist_params(anisotropic, roughness);
    Microfacet::new(GGX, ax, ay, true)
}

/// Whether microfacet normal `m` is seen from `wi` and `wo` on the sides a reflection
/// (both in front of `m`, as oriented by `cos_i`'s sign) or a refraction (`wo` behind)
/// needs (Mitsuba's `mac_mic_compatibility`).
pub(crate) fn compatible(m: Vec3, wi: Vec3, wo: Vec3, cos_i: f32, reflection: bool) -> bool {
    let ms = mulsign(m, cos_i);
    let mo = if reflection { ms } else { -ms };
    wi.dot(ms) > 0.0 && wo.dot(mo) > 0.0
}

/// Diffuse base with retro-reflection, blended with the fake subsurface by `flatness`
/// (per unit `base_color / π` and weight): Burley 2015, eq. 4 and the HK term.
pub(crate) fn diffuse_shape(
    roughness: f32,
    flatness: f32,
    cos_i: f32,
    cos_o: f32,
    cos_d: f32,
) -> f32 {
    let (fo, fi) = (schlick_weight(cos_o), schlick_weight(cos_i));
    let f_diff = (1.0 - 0.5 * fi) * (1.0 - 0.5 * fo);
    let rr = 2.0 * roughness * (cos_d * cos_d);
    let f_retro = rr * (fo + fi + fo * fi * (rr - 1.0));
    let fss90 = rr / 2.0;
    let fss = (1.0 - fo + fss90 * fo) * (1.0 - fi + fss90 * fi);
    let f_ss = 1.25 * (fss * (1.0 / (cos_o + cos_i) - 0.5) + 0.5);
    let a = f_diff + f_retro;
    a * (1.0 - flatness) + f_ss * flatness
}

/// The sheen colour: white blended towards the base's hue by `sheen_tint`.
pub(crate) fn sheen_color(base: Color, sheen_tint: f32) -> Color {
    Color::ONE * (1.0 - sheen_tint) + tint_color(base) * sheen_tint
}
