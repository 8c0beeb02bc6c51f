//! `principledthin`: the thin-surface variant of the Disney principled BSDF (Burley
//! 2015) as Mitsuba 3 implements it, for sheets with no inside (leaves, paper,
//! fabric): a diffuse base with retro-reflection, fake subsurface and sheen, Lambertian
//! transmission (`diff_trans`), and a GGX specular lobe that reflects and transmits
//! without bending (`spec_trans`). Symmetric: both sides look the same, and light
//! passing through keeps its direction's tangential part.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `base_color` | rgb, float or texture | 0.5 | colour of the base and of the transmitted light |
//! | `roughness` | float or texture | 0.5 | roughness of the specular lobes (α = roughness²), in [0, 1] |
//! | `anisotropic` | float or texture | 0 | anisotropy of the specular lobes, in [0, 1] |
//! | `spec_trans` | float or texture | 0 | blends the diffuse response (0) into the specular sheet (1), in [0, 1] |
//! | `eta` | float or texture | 1.5 | IOR of the sheet (> 0): its Fresnel term, and the transmitted lobe's roughness `(0.65 η − 0.35) roughness` |
//! | `spec_tint` | float or texture | 0 | tints the specular reflection towards `base_color`, in [0, 1] |
//! | `sheen` | float or texture | 0 | strength of the grazing sheen lobe, in [0, 1] |
//! | `sheen_tint` | float or texture | 0 | tints the sheen towards `base_color`, in [0, 1] |
//! | `flatness` | float or texture | 0 | blends the diffuse lobe (0) into the fake subsurface (1), in [0, 1] |
//! | `diff_trans` | float or texture | 0 | diffuse transmission: 0 none, 1 as much as reflection, 2 all, in [0, 2] |
//! | `specular_reflectance_sampling_rate` | float | 1 | relative rate of sampling the specular reflection (>= 0) |
//! | `specular_transmittance_sampling_rate` | float | 1 | relative rate of sampling the specular transmission (>= 0) |
//! | `diffuse_reflectance_sampling_rate` | float | 1 | relative rate of sampling the diffuse reflection (>= 0) |
//! | `diffuse_transmittance_sampling_rate` | float | 1 | relative rate of sampling the diffuse transmission (>= 0) |
//!
//! Out-of-range weights are errors; for a texture its mean is checked. Editable
//! parameters: the textures' values (`<key>.value`) and the sampling rates.
//!
//! ```xml
//! <bsdf type="principledthin">
//!     <rgb name="base_color" value="0.7, 0.1, 0.1"/>
//!     <float name="roughness" value="0.15"/>
//!     <float name="spec_trans" value="0.8"/>
//!     <float name="diff_trans" value="0.3"/>
//!     <float name="eta" value="1.33"/>
//! </bsdf>
//! ```
//!
//! Sampling picks the specular reflection, the specular transmission (a reflection off
//! a GGX normal mirrored through the sheet), the cosine-weighted reflection or
//! transmission with Mitsuba's probabilities (sampling rates times `spec_trans / 2`,
//! `spec_trans / 2`, `(1 − spec_trans)(1 − diff_trans / 2)` and
//! `(1 − spec_trans) diff_trans / 2`), and `pdf` is the mixture's density, so `eval` and
//! `pdf` agree with Mitsuba 3.9.1 at fixed inputs.

use super::fresnel::fresnel_dielectric;
use super::principledhelpers::{
    calc_schlick, compatible, diffuse_shape, mulsign, read_base_color, read_rate, read_weight,
    schlick_r0, schlick_weight, sheen_color, spec_distr, tint_color,
};
use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::params::Range;
use crate::desc::props::Props;
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::warp::{cosine_hemisphere_pdf, square_to_cosine_hemisphere};
use crate::math::{reflect, Color, Vec2, Vec3, INV_PI};
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};

#[cfg(test)]
mod mitsuba_values;
#[cfg(test)]
mod tests;

/// The thin principled BSDF record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct PrincipledThin {
    /// Base colour.
    pub base_color: TexRef,
    /// Roughness of the specular lobes.
    pub roughness: TexRef,
    /// Anisotropy of the specular lobes.
    pub anisotropic: TexRef,
    /// Specular weight.
    pub spec_trans: TexRef,
    /// IOR of the sheet.
    pub eta: TexRef,
    /// Tint of the specular reflection.
    pub spec_tint: TexRef,
    /// Sheen strength.
    pub sheen: TexRef,
    /// Tint of the sheen.
    pub sheen_tint: TexRef,
    /// Fake-subsurface weight.
    pub flatness: TexRef,
    /// Diffuse transmission (0 to 2).
    pub diff_trans: TexRef,
    /// Sampling rate of the specular reflection.
    pub spec_refl_rate: f32,
    /// Sampling rate of the specular transmission.
    pub spec_trans_rate: f32,
    /// Sampling rate of the diffuse reflection.
    pub diff_refl_rate: f32,
    /// Sampling rate of the diffuse transmission.
    pub diff_trans_rate: f32,
}
device_record!(PrincipledThin {
    base_color,
    roughness,
    anisotropic,
    spec_trans,
    eta,
    spec_tint,
    sheen,
    sheen_tint,
    flatness,
    diff_trans,
    spec_refl_rate,
    spec_trans_rate,
    diff_refl_rate,
    diff_trans_rate,
});

/// Lobe probabilities (normalised): specular reflection and transmission, diffuse
/// reflection and transmission.
struct Probs {
    spec_refl: f32,
    spec_trans: f32,
    diff_refl: f32,
    diff_trans: f32,
}

/// The weights at one shading point.
struct At {
    roughness: f32,
    anisotropic: f32,
    spec_trans: f32,
    eta: f32,
    /// `diff_trans / 2`.
    diff_trans: f32,
}

impl PrincipledThin {
    fn at(&self, ctx: &BsdfCtx) -> At {
        let t = |r| ctx.tex.eval_1(r, &ctx.at);
        At {
            roughness: t(self.roughness),
            anisotropic: t(self.anisotropic),
            spec_trans: t(self.spec_trans),
            eta: t(self.eta),
            diff_trans: t(self.diff_trans) / 2.0,
        }
    }

    fn probs(&self, a: &At) -> Option<Probs> {
        let sr = a.spec_trans * self.spec_refl_rate / 2.0;
        let st = a.spec_trans * self.spec_trans_rate / 2.0;
        let dr = self.diff_refl_rate * (1.0 - a.spec_trans) * (1.0 - a.diff_trans);
        let dt = self.diff_trans_rate * (1.0 - a.spec_trans) * a.diff_trans;
        let total = sr + st + dr + dt;
        if !(total > 0.0 && total.is_finite()) {
            return None;
        }
        let r = 1.0 / total;
        Some(Probs {
            spec_refl: sr * r,
            spec_trans: st * r,
            diff_refl: dr * r,
            diff_trans: dt * r,
        })
    }

    /// The transmitted lobe's distribution: roughness scaled by `0.65 η − 0.35`
    /// (Burley 2015, fig. 15).
    fn trans_distr(a: &At) -> super::microfacet::Microfacet {
        spec_distr(a.anisotropic, (0.65 * a.eta - 0.35) * a.roughness)
    }
}

impl BsdfPlugin for PrincipledThin {
    type Record = Self;
    const TRANSMISSION: bool = true;
    const READS_TEXTURE_MEANS: bool = true;

    /// Reads the plugin's parameters.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let base_color = read_base_color(p, ctx)?;
        let eta = ctx.texture_in(
            p,
            "eta",
            Some(Color::splat(1.5)),
            Range::Open(0.0, f64::INFINITY),
            SpectrumUse::Unbounded,
        )?;
        let m = ctx.texture_mean(eta).min_element();
        if !(m > 0.0 && m.is_finite()) {
            return Err(Error::param(
                &p.entry_loc("eta"),
                "eta",
                format!("must be a finite value > 0, got {m}"),
            ));
        }
        let mut w = |key: &str, default: f32, hi: f32| read_weight(p, ctx, key, default, hi);
        let roughness = w("roughness", 0.5, 1.0)?;
        let anisotropic = w("anisotropic", 0.0, 1.0)?;
        let spec_trans = w("spec_trans", 0.0, 1.0)?;
        let spec_tint = w("spec_tint", 0.0, 1.0)?;
        let sheen = w("sheen", 0.0, 1.0)?;
        let sheen_tint = w("sheen_tint", 0.0, 1.0)?;
        let flatness = w("flatness", 0.0, 1.0)?;
        let diff_trans = w("diff_trans", 0.0, 2.0)?;
        Ok(PrincipledThin {
            base_color,
            roughness,
            anisotropic,
            spec_trans,
            eta,
            spec_tint,
            sheen,
            sheen_tint,
            flatness,
            diff_trans,
            spec_refl_rate: read_rate(p, ctx, "specular_reflectance_sampling_rate")?,
            spec_trans_rate: read_rate(p, ctx, "specular_transmittance_sampling_rate")?,
            diff_refl_rate: read_rate(p, ctx, "diffuse_reflectance_sampling_rate")?,
            diff_trans_rate: read_rate(p, ctx, "diffuse_transmittance_sampling_rate")?,
        })
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// Picks a lobe with `u1` (specular reflection, specular transmission, diffuse
    /// reflection, diffuse transmission) and samples it with `u2`, on the side of `wi`.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        let cos_i = wi.z;
        if cos_i == 0.0 {
            return None;
        }
        let a = self.at(ctx);
        let pr = self.probs(&a)?;
        let wf = mulsign(wi, cos_i);
        let wo = if u1 < pr.spec_refl {
            let m = spec_distr(a.anisotropic, a.roughness).sample(wf, u2);
            let wo = reflect(wf, m);
            if !(wo.z > 0.0 && compatible(m, wf, wo, wf.z, true)) {
                return None;
            }
            wo
        } else if u1 < pr.spec_refl + pr.spec_trans {
            let m = Self::trans_distr(&a).sample(wf, u2);
            let r = reflect(wf, m);
            let wo = Vec3::new(r.x, r.y, -r.z);
            if !(wo.z < 0.0 && compatible(m, wf, wo, wf.z, false)) {
                return None;
            }
            wo
        } else if u1 < pr.spec_refl + pr.spec_trans + pr.diff_refl {
            square_to_cosine_hemisphere(u2)
        } else {
            -square_to_cosine_hemisphere(u2)
        };
        let wo = mulsign(wo, cos_i);
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
            eta: 1.0,
            delta: false,
        })
    }

    /// The sum of the lobes, evaluated with `wi` turned to the upper side (Mitsuba's
    /// `principledthin.cpp`).
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        if wi.z == 0.0 {
            return Color::ZERO;
        }
        let a = self.at(ctx);
        let t = |r| ctx.tex.eval_1(r, &ctx.at);
        let base = ctx.tex.eval(self.base_color, &ctx.at);
        let wf = mulsign(wi, wi.z);
        let wo_t = mulsign(wo, wi.z);
        let cos_i = wf.z;
        let cos_o = wo_t.z;
        let reflect = cos_o > 0.0;
        let refract = cos_o < 0.0;
        let wo_r = Vec3::new(wo_t.x, wo_t.y, wo_t.z.abs());
        let wh = (wf + wo_r).normalize();
        let st = a.spec_trans;
        let mut value = Color::ZERO;
        if st > 0.0 && (reflect || refract) {
            let f = fresnel_dielectric(wf.dot(wh), a.eta).r;
            if reflect && compatible(wh, wf, wo_t, cos_i, true) {
                let spec = spec_distr(a.anisotropic, a.roughness);
                let spec_tint = t(self.spec_tint);
                let f0 = tint_color(base) * schlick_r0(a.eta);
                let schlick = calc_schlick(f0, wf.dot(wh), a.eta);
                let f_thin = Color::splat(f * (1.0 - spec_tint)) + schlick * spec_tint;
                let dg = spec.d(wh) * spec.g(wf, wo_t, wh);
                value += f_thin * (st * dg / (4.0 * cos_i));
            }
            if refract && compatible(wh, wf, wo_t, cos_i, false) {
                let spec = Self::trans_distr(&a);
                let dg = spec.d(wh) * spec.g(wf, wo_t, wh);
                value += base * (st * (1.0 - f) * dg / (4.0 * cos_i));
            }
        }
        if reflect && st < 1.0 && a.diff_trans < 1.0 {
            let cos_d = wh.dot(wo_t);
            let shape = diffuse_shape(a.roughness, t(self.flatness), cos_i, cos_o, cos_d);
            let k = (1.0 - st) * (1.0 - a.diff_trans);
            value += base * (k * cos_o * INV_PI * shape);
            let sheen = t(self.sheen);
            if sheen > 0.0 {
                let c = sheen_color(base, t(self.sheen_tint));
                let fd = schlick_weight(cos_d.abs());
                value += c * (sheen * k * fd * cos_o);
            }
        }
        if refract && st < 1.0 && a.diff_trans > 0.0 {
            value += base * ((1.0 - st) * a.diff_trans * INV_PI * cos_o.abs());
        }
        if value.is_finite() {
            value
        } else {
            Color::ZERO
        }
    }

    /// The mixture of the lobes' densities with the selection probabilities.
    fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        if wi.z == 0.0 {
            return 0.0;
        }
        let a = self.at(ctx);
        let Some(pr) = self.probs(&a) else {
            return 0.0;
        };
        let wf = mulsign(wi, wi.z);
        let wo_t = mulsign(wo, wi.z);
        let reflect = wo_t.z > 0.0;
        let refract = wo_t.z < 0.0;
        let mut pdf = 0.0;
        if pr.spec_refl > 0.0 || pr.spec_trans > 0.0 {
            let wo_r = Vec3::new(wo_t.x, wo_t.y, wo_t.z.abs());
            let wh = (wf + wo_r).normalize();
            let jacobian = (1.0 / (4.0 * wo_r.dot(wh))).abs();
            if reflect && compatible(wh, wf, wo_t, wf.z, true) {
                let spec = spec_distr(a.anisotropic, a.roughness);
                pdf += pr.spec_refl * spec.pdf(wf, wh) * jacobian;
            }
            if refract && compatible(wh, wf, wo_t, wf.z, false) {
                pdf += pr.spec_trans * Self::trans_distr(&a).pdf(wf, wh) * jacobian;
            }
        }
        if reflect {
            pdf += pr.diff_refl * cosine_hemisphere_pdf(wo_t);
        }
        if refract {
            pdf += pr.diff_trans * cosine_hemisphere_pdf(-wo_t);
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
