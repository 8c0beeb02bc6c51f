//! `principled`: the Disney principled BSDF (Burley 2012, "Physically Based Shading at
//! Disney", and 2015, "Extending the Disney BRDF to a BSDF with Integrated Subsurface
//! Scattering") as Mitsuba 3 implements it: a diffuse base with retro-reflection, fake
//! subsurface (`flatness`) and sheen, a main GGX specular lobe that reflects and (with
//! `spec_trans`) refracts, and a GTR1 clearcoat lobe. The parameters are artistic
//! weights, not physical quantities. Two-sided where it transmits: from the inside
//! (`wi.z < 0`) only the dielectric reflection and refraction remain.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `base_color` | rgb, float or texture | 0.5 | colour of the diffuse base, the metal and the transmission |
//! | `roughness` | float or texture | 0.5 | roughness of the main specular lobes (α = roughness²), in [0, 1] |
//! | `anisotropic` | float or texture | 0 | anisotropy of the main specular lobes, in [0, 1] |
//! | `metallic` | float or texture | 0 | blends the dielectric model (0) into a Schlick metal tinted by `base_color` (1), in [0, 1] |
//! | `spec_trans` | float or texture | 0 | blends the opaque base (0) into rough refraction (1), in [0, 1] |
//! | `eta` | float | from `specular` | relative IOR inside / outside (> 0); not together with `specular` |
//! | `specular` | float | 0.5 | the dielectric's reflectance at normal incidence (`eta = 2 / (1 − √(0.08 specular)) − 1`), in [0, 1] |
//! | `spec_tint` | float or texture | 0 | tints the dielectric reflection towards `base_color`, in [0, 1] |
//! | `sheen` | float or texture | 0 | strength of the grazing sheen lobe, in [0, 1] |
//! | `sheen_tint` | float or texture | 0 | tints the sheen towards `base_color`, in [0, 1] |
//! | `flatness` | float or texture | 0 | blends the diffuse lobe (0) into the Hanrahan–Krueger fake subsurface (1), in [0, 1] |
//! | `clearcoat` | float or texture | 0 | strength of the clearcoat lobe, in [0, 1] |
//! | `clearcoat_gloss` | float or texture | 0 | glossiness of the clearcoat (GTR1 α from 0.1 to 0.001), in [0, 1] |
//! | `diffuse_reflectance_sampling_rate` | float | 1 | relative rate of sampling the diffuse lobe (>= 0) |
//! | `main_specular_sampling_rate` | float | 1 | relative rate of sampling the main specular lobes (>= 0) |
//! | `clearcoat_sampling_rate` | float | 1 | relative rate of sampling the clearcoat (>= 0) |
//!
//! Out-of-range weights are errors; for a texture its mean is checked. With
//! `spec_trans` given, `eta = 1` becomes 1.001 and `specular = 0` becomes 0.001 (no
//! refraction without an interface), as Mitsuba. Editable parameters: the textures'
//! values (`<key>.value`), `eta` or `specular` (whichever the scene gave), and the
//! sampling rates.
//!
//! ```xml
//! <bsdf type="principled">
//!     <rgb name="base_color" value="1.0, 0.8, 0.5"/>
//!     <float name="metallic" value="0.7"/>
//!     <float name="roughness" value="0.2"/>
//!     <float name="clearcoat" value="0.6"/>
//!     <float name="spec_trans" value="0.4"/>
//! </bsdf>
//! ```
//!
//! Sampling picks the diffuse lobe (cosine-weighted), the clearcoat (GTR1 normals), the
//! specular refraction or the specular reflection (GGX visible normals) with Mitsuba's
//! probabilities (the sampling rates times the lobes' weights; reflection and
//! refraction split by the dielectric Fresnel term), and `pdf` is the mixture's
//! density, so `eval` and `pdf` agree with Mitsuba 3.9.1 at fixed inputs. Two
//! differences, both where Mitsuba is inconsistent: from the inside without
//! `spec_trans` Mitsuba's `pdf` is nonzero although its `sample` returns nothing (here
//! 0); and with `spec_trans` or `metallic` exactly 1 (no diffuse base) Mitsuba's CPU
//! variants drop the sheen, its vectorised ones keep it (here kept).
//!
//! As in Mitsuba, `principled` is not marked as transmitting (Mitsuba decides that per
//! instance: `twosided` accepts it without `spec_trans`), so `twosided` accepts any
//! `principled`; wrapped, a refracting one loses its transmission.

use super::fresnel::fresnel_dielectric;
use super::principledhelpers::{
    calc_schlick, compatible, diffuse_shape, mulsign, read_base_color, read_rate, read_weight,
    schlick_r0, schlick_weight, sheen_color, spec_distr, tint_color,
};
use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::props::{Props, Value};
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::sincos::sin_cos_pi;
use crate::math::warp::{cosine_hemisphere_pdf, square_to_cosine_hemisphere};
use crate::math::{reflect, Color, Vec2, Vec3, INV_PI, PI};
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};

#[cfg(test)]
mod mitsuba_values;
#[cfg(test)]
pub(crate) mod tests;

/// The principled BSDF record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Principled {
    /// Base colour.
    pub base_color: TexRef,
    /// Roughness of the main specular lobes.
    pub roughness: TexRef,
    /// Anisotropy of the main specular lobes.
    pub anisotropic: TexRef,
    /// Metal weight.
    pub metallic: TexRef,
    /// Transmission weight.
    pub spec_trans: TexRef,
    /// Tint of the dielectric reflection.
    pub spec_tint: TexRef,
    /// Sheen strength.
    pub sheen: TexRef,
    /// Tint of the sheen.
    pub sheen_tint: TexRef,
    /// Fake-subsurface weight.
    pub flatness: TexRef,
    /// Clearcoat strength.
    pub clearcoat: TexRef,
    /// Clearcoat glossiness.
    pub clearcoat_gloss: TexRef,
    /// Relative IOR (inside / outside).
    pub eta: f32,
    /// Sampling rate of the diffuse lobe.
    pub diffuse_rate: f32,
    /// Sampling rate of the main specular lobes.
    pub specular_rate: f32,
    /// Sampling rate of the clearcoat.
    pub clearcoat_rate: f32,
}
device_record!(Principled {
    base_color,
    roughness,
    anisotropic,
    metallic,
    spec_trans,
    spec_tint,
    sheen,
    sheen_tint,
    flatness,
    clearcoat,
    clearcoat_gloss,
    eta,
    diffuse_rate,
    specular_rate,
    clearcoat_rate,
});

// ---------------------------------------------------------------------------------
// Pieces only `principled` uses (those it shares with `principledthin` are in
// `principledhelpers`): the lobe test of the build and the clearcoat's GTR1 lobe.

/// Whether Mitsuba considers a lobe present: the property is given and is not the
/// number 0 (a texture always counts).
pub(crate) fn has_lobe(p: &Props, key: &str) -> bool {
    match p.get(key).map(|e| &e.value) {
        None => false,
        Some(Value::Float(v)) => *v != 0.0,
        Some(Value::Int(v)) => *v != 0,
        Some(_) => true,
    }
}

/// GTR1 normal distribution (the clearcoat's), roughness `alpha`.
fn gtr1_d(alpha: f32, m: Vec3) -> f32 {
    let a2 = alpha * alpha;
    let c = m.z;
    let r = (a2 - 1.0) / (PI * a2.ln() * (1.0 + (a2 - 1.0) * (c * c)));
    if r * c > 1e-20 {
        r
    } else {
        0.0
    }
}

/// Density of [`gtr1_sample`] (`D(m) cos θm`).
fn gtr1_pdf(alpha: f32, m: Vec3) -> f32 {
    if m.z < 0.0 {
        0.0
    } else {
        m.z * gtr1_d(alpha, m)
    }
}

/// Samples `D(m) cos θm` of GTR1.
fn gtr1_sample(alpha: f32, u: Vec2) -> Vec3 {
    let (sin_p, cos_p) = sin_cos_pi(2.0 * u.x);
    let a2 = alpha * alpha;
    let cos2 = (1.0 - a2.powf(1.0 - u.y)) / (1.0 - a2);
    let sin_t = (1.0 - cos2).max(0.0).sqrt();
    let cos_t = cos2.max(0.0).sqrt();
    Vec3::new(cos_p * sin_t, sin_p * sin_t, cos_t)
}

/// Smith's GGX shadowing for the clearcoat (isotropic `alpha`), zero on the wrong side.
fn smith_ggx1(v: Vec3, m: Vec3, alpha: f32) -> f32 {
    if v.dot(m) * v.z <= 0.0 {
        return 0.0;
    }
    if v.z == 1.0 {
        return 1.0;
    }
    let c2 = v.z * v.z;
    let tan2 = (1.0 - c2) / c2;
    2.0 / (1.0 + (1.0 + alpha * alpha * tan2).sqrt())
}

/// The clearcoat's GTR1 roughness.
fn clearcoat_alpha(gloss: f32) -> f32 {
    0.1 * (1.0 - gloss) + 0.001 * gloss
}

// ---------------------------------------------------------------------------------

/// The weights at one shading point.
struct At {
    base: Color,
    roughness: f32,
    anisotropic: f32,
    metallic: f32,
    spec_trans: f32,
    clearcoat: f32,
}

/// Lobe selection probabilities (normalised): diffuse, clearcoat, refraction,
/// reflection.
struct Probs {
    diffuse: f32,
    clearcoat: f32,
    trans: f32,
    reflect: f32,
}

impl Principled {
    fn at(&self, ctx: &BsdfCtx) -> At {
        let t = |r| ctx.tex.eval_1(r, &ctx.at);
        At {
            base: ctx.tex.eval(self.base_color, &ctx.at),
            roughness: t(self.roughness),
            anisotropic: t(self.anisotropic),
            metallic: t(self.metallic),
            spec_trans: t(self.spec_trans),
            clearcoat: t(self.clearcoat),
        }
    }

    /// Mitsuba's lobe probabilities for dielectric reflectance `f`; `None` when no lobe
    /// can be sampled.
    fn probs(&self, a: &At, front: bool, f: f32) -> Option<Probs> {
        let brdf = (1.0 - a.metallic) * (1.0 - a.spec_trans);
        let bsdf = (1.0 - a.metallic) * a.spec_trans;
        let (reflect, trans, clearcoat, diffuse) = if front {
            (
                self.specular_rate * (1.0 - bsdf * (1.0 - f)),
                self.specular_rate * bsdf * (1.0 - f),
                0.25 * a.clearcoat * self.clearcoat_rate,
                brdf * self.diffuse_rate,
            )
        } else if bsdf > 0.0 {
            (f, 1.0 - f, 0.0, 0.0)
        } else {
            // from the inside only the refracting part scatters
            return None;
        };
        let total = reflect + trans + clearcoat + diffuse;
        if !(total > 0.0 && total.is_finite()) {
            return None;
        }
        let r = 1.0 / total;
        Some(Probs {
            diffuse: diffuse * r,
            clearcoat: clearcoat * r,
            trans: trans * r,
            reflect: reflect * r,
        })
    }
}

impl BsdfPlugin for Principled {
    type Record = Self;
    const READS_TEXTURE_MEANS: bool = true;

    /// Reads the plugin's parameters.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let base_color = read_base_color(p, ctx)?;
        let mut w = |key: &str, default: f32| read_weight(p, ctx, key, default, 1.0);
        let roughness = w("roughness", 0.5)?;
        let anisotropic = w("anisotropic", 0.0)?;
        let metallic = w("metallic", 0.0)?;
        let spec_trans = w("spec_trans", 0.0)?;
        let spec_tint = w("spec_tint", 0.0)?;
        let sheen = w("sheen", 0.0)?;
        let sheen_tint = w("sheen_tint", 0.0)?;
        let flatness = w("flatness", 0.0)?;
        let clearcoat = w("clearcoat", 0.0)?;
        let clearcoat_gloss = w("clearcoat_gloss", 0.0)?;
        let transmits = has_lobe(p, "spec_trans");
        let eta = if p.has("eta") {
            if p.has("specular") {
                return Err(Error::param(
                    &p.entry_loc("specular"),
                    "specular",
                    "give either eta or specular, not both",
                ));
            }
            let eta = p.positive_float("eta", 1.5, false)?;
            ctx.declare(
                "eta",
                ParamValue::Float(eta as f64),
                Target::prop("eta"),
                Range::Open(0.0, f64::INFINITY),
            );
            if transmits && eta == 1.0 {
                1.001
            } else {
                eta
            }
        } else {
            let s = p.float("specular", 0.5)?;
            if !(0.0..=1.0).contains(&s) {
                return Err(Error::param(
                    &p.entry_loc("specular"),
                    "specular",
                    format!("must be in [0, 1], got {s}"),
                ));
            }
            ctx.declare(
                "specular",
                ParamValue::Float(s as f64),
                Target::prop("specular"),
                Range::Any,
            );
            let s = if transmits && s == 0.0 { 1e-3 } else { s };
            2.0 / (1.0 - (0.08 * s).sqrt()) - 1.0
        };
        Ok(Principled {
            base_color,
            roughness,
            anisotropic,
            metallic,
            spec_trans,
            spec_tint,
            sheen,
            sheen_tint,
            flatness,
            clearcoat,
            clearcoat_gloss,
            eta,
            diffuse_rate: read_rate(p, ctx, "diffuse_reflectance_sampling_rate")?,
            specular_rate: read_rate(p, ctx, "main_specular_sampling_rate")?,
            clearcoat_rate: read_rate(p, ctx, "clearcoat_sampling_rate")?,
        })
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// Picks a lobe with `u1` (Mitsuba's order: diffuse, clearcoat, refraction,
    /// reflection) and samples it with `u2`.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        let cos_i = wi.z;
        if cos_i == 0.0 {
            return None;
        }
        let a = self.at(ctx);
        let front = cos_i > 0.0;
        let m = spec_distr(a.anisotropic, a.roughness).sample(mulsign(wi, cos_i), u2);
        let f = fresnel_dielectric(wi.dot(m), self.eta);
        let pr = self.probs(&a, front, f.r)?;
        let (wo, eta) = if u1 < pr.diffuse {
            (square_to_cosine_hemisphere(u2), 1.0)
        } else if u1 < pr.diffuse + pr.clearcoat {
            let gloss = ctx.tex.eval_1(self.clearcoat_gloss, &ctx.at);
            let mc = gtr1_sample(clearcoat_alpha(gloss), u2);
            let wo = reflect(wi, mc);
            if !(cos_i * wo.z > 0.0 && compatible(mc, wi, wo, cos_i, true)) {
                return None;
            }
            (wo, 1.0)
        } else if u1 < pr.diffuse + pr.clearcoat + pr.trans {
            let wo = m * (wi.dot(m) * f.eta_ti + f.cos_theta_t) - wi * f.eta_ti;
            if !(cos_i * wo.z < 0.0 && compatible(m, wi, wo, cos_i, false)) {
                return None;
            }
            (wo, f.eta_it)
        } else {
            let wo = reflect(wi, m);
            if !(cos_i * wo.z > 0.0 && compatible(m, wi, wo, cos_i, true)) {
                return None;
            }
            (wo, 1.0)
        };
        if cos_i * wo.z == 0.0 {
            return None;
        }
        let pdf = self.pdf(ctx, wi, wo);
        if !(pdf > 0.0 && pdf.is_finite()) {
            return None;
        }
        let weight = self.eval(ctx, wi, wo) / pdf;
        if !weight.is_finite() {
            return None;
        }
        Some(BsdfSample {
            wo,
            pdf,
            weight,
            eta,
            delta: false,
        })
    }

    /// The sum of the lobes (Mitsuba's `principled.cpp`, operation for operation).
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        let cos_i = wi.z;
        if cos_i == 0.0 {
            return Color::ZERO;
        }
        let a = self.at(ctx);
        let t = |r| ctx.tex.eval_1(r, &ctx.at);
        let brdf = (1.0 - a.metallic) * (1.0 - a.spec_trans);
        let bsdf = (1.0 - a.metallic) * a.spec_trans;
        let cos_o = wo.z;
        let reflect = cos_i * cos_o > 0.0;
        let refract = cos_i * cos_o < 0.0;
        let front = cos_i > 0.0;
        let eta_path = if front { self.eta } else { 1.0 / self.eta };
        let inv_eta_path = if front { 1.0 / self.eta } else { self.eta };
        let spec = spec_distr(a.anisotropic, a.roughness);
        let wh = (wi + wo * if reflect { 1.0 } else { eta_path }).normalize();
        let wh = mulsign(wh, wh.z);
        let (wi_h, wo_h) = (wi.dot(wh), wo.dot(wh));
        let f = fresnel_dielectric(wi_h, self.eta).r;
        let refl_ok = compatible(wh, wi, wo, cos_i, true);
        let refr_ok = compatible(wh, wi, wo, cos_i, false);
        let d = spec.d(wh);
        let g = spec.g(wi, wo, wh);
        let mut value = Color::ZERO;
        if reflect && refl_ok && f > 0.0 {
            let fp = if front {
                let spec_tint = t(self.spec_tint);
                let mut schlick = a.metallic * calc_schlick(a.base, wi_h, self.eta);
                let eta_it = if wi_h >= 0.0 {
                    self.eta
                } else {
                    1.0 / self.eta
                };
                let f0 = tint_color(a.base) * schlick_r0(eta_it);
                schlick += (1.0 - a.metallic) * spec_tint * calc_schlick(f0, wi_h, self.eta);
                Color::splat((1.0 - a.metallic) * (1.0 - spec_tint) * f) + schlick
            } else {
                Color::splat(bsdf * f)
            };
            value += fp * (d * g / (4.0 * cos_i.abs()));
        }
        if bsdf > 0.0 && refract && refr_ok && f < 1.0 {
            let scale = inv_eta_path * inv_eta_path;
            let denom = wi_h + eta_path * wo_h;
            let v = (scale * (1.0 - f) * d * g * eta_path * eta_path * wi_h * wo_h
                / (cos_i * (denom * denom)))
                .abs();
            let sqrt_base = Color::new(a.base.x.sqrt(), a.base.y.sqrt(), a.base.z.sqrt());
            value += sqrt_base * (bsdf * v);
        }
        if a.clearcoat > 0.0 && reflect && refl_ok && front {
            let gloss = t(self.clearcoat_gloss);
            let fcc = calc_schlick(Color::splat(0.04), wi_h, self.eta).x;
            let dcc = gtr1_d(clearcoat_alpha(gloss), wh);
            let gcc = smith_ggx1(wi, wh, 0.25) * smith_ggx1(wo, wh, 0.25);
            value += Color::splat(a.clearcoat * 0.25 * fcc * dcc * gcc * cos_o.abs());
        }
        if reflect && front {
            let cos_d = wh.dot(wo);
            if brdf > 0.0 {
                let flatness = t(self.flatness);
                let shape = diffuse_shape(a.roughness, flatness, cos_i.abs(), cos_o.abs(), cos_d);
                value += a.base * (brdf * cos_o.abs() * INV_PI * shape);
            }
            let sheen = t(self.sheen);
            if sheen > 0.0 && 1.0 - a.metallic > 0.0 {
                let c = sheen_color(a.base, t(self.sheen_tint));
                let fd = schlick_weight(cos_d.abs());
                value += c * (sheen * (1.0 - a.metallic) * fd * cos_o.abs());
            }
        }
        if value.is_finite() {
            value
        } else {
            Color::ZERO
        }
    }

    /// The mixture of the lobes' densities with the selection probabilities.
    fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        let cos_i = wi.z;
        if cos_i == 0.0 {
            return 0.0;
        }
        let a = self.at(ctx);
        let front = cos_i > 0.0;
        let eta_path = if front { self.eta } else { 1.0 / self.eta };
        let cos_o = wo.z;
        let reflect = cos_i * cos_o > 0.0;
        let refract = cos_i * cos_o < 0.0;
        let wh = (wi + wo * if reflect { 1.0 } else { eta_path }).normalize();
        let wh = mulsign(wh, wh.z);
        let f = fresnel_dielectric(wi.dot(wh), self.eta).r;
        let Some(pr) = self.probs(&a, front, f) else {
            return 0.0;
        };
        let (wi_h, wo_h) = (wi.dot(wh), wo.dot(wh));
        let jacobian = if reflect {
            1.0 / (4.0 * wo_h)
        } else {
            let denom = wi_h + eta_path * wo_h;
            eta_path * eta_path * wo_h / (denom * denom)
        }
        .abs();
        let spec = spec_distr(a.anisotropic, a.roughness);
        let wi_up = mulsign(wi, cos_i);
        let mut pdf = 0.0;
        if reflect && compatible(wh, wi, wo, cos_i, true) {
            pdf += pr.reflect * spec.pdf(wi_up, wh) * jacobian;
            if pr.clearcoat > 0.0 {
                let gloss = ctx.tex.eval_1(self.clearcoat_gloss, &ctx.at);
                pdf += pr.clearcoat * gtr1_pdf(clearcoat_alpha(gloss), wh) * jacobian;
            }
        }
        if reflect {
            pdf += pr.diffuse * cosine_hemisphere_pdf(wo);
        }
        if refract && compatible(wh, wi, wo, cos_i, false) {
            pdf += pr.trans * spec.pdf(wi_up, wh) * jacobian;
        }
        if pdf.is_finite() {
            pdf
        } else {
            0.0
        }
    }

    /// The base colour (the `albedo` AOV, as Mitsuba's `eval_diffuse_reflectance`).
    fn diffuse_reflectance(&self, ctx: &BsdfCtx, _wi: Vec3) -> Color {
        ctx.tex.eval(self.base_color, &ctx.at)
    }
}
