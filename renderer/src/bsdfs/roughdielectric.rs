//! `roughdielectric`: a rough interface between two dielectrics (frosted glass,
//! etched glass): microfacet reflection and refraction (Walter et al. 2007,
//! "Microfacet Models for Refraction through Rough Surfaces") with the exact
//! dielectric Fresnel term and Smith's separable shadowing-masking. Two-sided by
//! nature (`wi.z < 0` means arriving from the inside). Refracted radiance is
//! scaled by `1/η²` (Mitsuba's radiance mode).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `distribution` | string | `beckmann` | `beckmann` or `ggx` (Mitsuba 3's default is Beckmann) |
//! | `alpha` | float or texture | 0.1 | roughness (both directions) |
//! | `alpha_u`, `alpha_v` | float or texture | 0.1 | anisotropic roughness along the tangent / bitangent (instead of `alpha`) |
//! | `sample_visible` | boolean | true | sample visible normals (GGX: Heitz 2018; Beckmann: Heitz & d'Eon 2014) |
//! | `int_ior` | float or string | `bk7` (1.5046) | interior IOR, a number or a name from [`super::ior::DIELECTRICS`] |
//! | `ext_ior` | float or string | `air` (1.000277) | exterior IOR (must differ from `int_ior`) |
//! | `specular_reflectance` | rgb, float or texture | 1 | factor on the reflection (not physical) |
//! | `specular_transmittance` | rgb, float or texture | 1 | factor on the transmission (not physical) |
//!
//! Editable parameters (as Mitsuba's `traverse`): `eta`, `alpha` (or `alpha_u` and
//! `alpha_v`), `specular_reflectance`, `specular_transmittance`.
//!
//! ```xml
//! <bsdf type="roughdielectric">
//!     <string name="distribution" value="ggx"/>
//!     <float name="alpha" value="0.2"/>
//!     <string name="int_ior" value="bk7"/>
//!     <string name="ext_ior" value="air"/>
//! </bsdf>
//! ```
//!
//! Sampling picks a microfacet normal seen from `wi` (mirrored to the upper side when
//! `wi` comes from inside), then reflection with probability F and refraction
//! otherwise. Without `sample_visible`, normals are drawn from `D(m) cos θm` with the
//! roughness widened by `1.2 − 0.2 √|cos θi|` (Walter et al.'s trick, as Mitsuba) and
//! the sample weight is exactly `eval / pdf`; Mitsuba 3.9.1's weight leaves out the
//! ratio of the true to the widened distribution there, so its renders with
//! `sample_visible = false` differ from these (and from its own `eval`) by up to a
//! few percent.

use super::dielectric::{read_eta, read_transmittance};
use super::fresnel::fresnel_dielectric;
use super::microfacet::{Microfacet, MicrofacetParams};
use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::props::Props;
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::{reflect, Color, Vec2, Vec3};
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};

#[cfg(test)]
mod mitsuba_values;
#[cfg(test)]
mod tests;

/// The rough dielectric record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct RoughDielectric {
    /// Microfacet distribution and roughness.
    pub distr: MicrofacetParams,
    /// Relative IOR `int_ior / ext_ior` (never 1).
    pub eta: f32,
    /// Reflection factor.
    pub specular_reflectance: TexRef,
    /// Transmission factor.
    pub specular_transmittance: TexRef,
}
device_record!(RoughDielectric {
    distr: MicrofacetParams,
    eta,
    specular_reflectance,
    specular_transmittance,
});

/// The microfacet normal that maps `wi` to `wo`, and what else `eval` and `pdf` share.
struct HalfVector {
    /// Whether `wo` is a reflection (same side as `wi`).
    reflect: bool,
    /// Relative IOR from `wi`'s side to the other (`eta` or `1/eta`).
    eta: f32,
    /// The generalised half vector, on the upper side.
    m: Vec3,
}

impl RoughDielectric {
    /// The distribution that normals are sampled from at incident cosine `cos_i`:
    /// without visible-normal sampling, widened to lower the weights' variance.
    fn sampling_distr(mf: Microfacet, cos_i: f32) -> Microfacet {
        if mf.visible {
            return mf;
        }
        let s = 1.2 - 0.2 * cos_i.abs().sqrt();
        Microfacet {
            au: mf.au * s,
            av: mf.av * s,
            ..mf
        }
    }

    /// The half vector of the pair (`wi + wo` for a reflection, `wi + η wo` for a
    /// refraction), flipped to the upper side; `None` at grazing incidence.
    fn half_vector(&self, wi: Vec3, wo: Vec3) -> Option<HalfVector> {
        if wi.z == 0.0 {
            return None;
        }
        let reflect = wi.z * wo.z > 0.0;
        let eta = if wi.z > 0.0 { self.eta } else { 1.0 / self.eta };
        let m = (wi + wo * if reflect { 1.0 } else { eta }).normalize();
        let m = if m.z.is_sign_negative() { -m } else { m };
        m.is_finite().then_some(HalfVector { reflect, eta, m })
    }
}

impl BsdfPlugin for RoughDielectric {
    type Record = Self;
    const TRANSMISSION: bool = true;
    const READS_TEXTURE_MEANS: bool = true;

    /// Reads the plugin's parameters.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let eta = read_eta(p, "bk7", ctx)?;
        if eta == 1.0 {
            let key = if p.has("int_ior") {
                "int_ior"
            } else {
                "ext_ior"
            };
            return Err(Error::param(
                &p.entry_loc(key),
                key,
                "the interior and exterior indices of refraction must differ",
            ));
        }
        let distr = MicrofacetParams::build(p, ctx)?;
        Ok(RoughDielectric {
            distr,
            eta,
            specular_reflectance: ctx.texture(p, "specular_reflectance", Some(Color::ONE))?,
            specular_transmittance: read_transmittance(p, ctx)?,
        })
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// Samples a microfacet normal, then reflects (probability F) or refracts `wi`.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        if wi.z == 0.0 {
            return None;
        }
        let mf = self.distr.at(ctx.tex, &ctx.at);
        let smf = Self::sampling_distr(mf, wi.z);
        let wi_up = if wi.z < 0.0 { -wi } else { wi };
        let m = smf.sample(wi_up, u2);
        let pdf_m = smf.pdf(wi_up, m);
        if !(pdf_m > 0.0) {
            return None;
        }
        let wi_m = wi.dot(m);
        let f = fresnel_dielectric(wi_m, self.eta);
        let (wo, lobe, factor, eta, jacobian) = if u1 <= f.r {
            let wo = reflect(wi, m);
            let refl = ctx.tex.eval(self.specular_reflectance, &ctx.at);
            (wo, f.r, refl, 1.0, 1.0 / (4.0 * wo.dot(m)))
        } else {
            // Snell at the microfacet (Mitsuba's `refract(wi, m, cos_t, eta_ti)`)
            let wo = m * (wi_m * f.eta_ti + f.cos_theta_t) - wi * f.eta_ti;
            let wo_m = wo.dot(m);
            let denom = wi_m + f.eta_it * wo_m;
            let trans = ctx.tex.eval(self.specular_transmittance, &ctx.at);
            // radiance is compressed into the smaller solid angle: × (η_t/η_i)⁻²
            let factor = trans * (f.eta_ti * f.eta_ti);
            let jacobian = f.eta_it * f.eta_it * wo_m / (denom * denom);
            (wo, 1.0 - f.r, factor, f.eta_it, jacobian)
        };
        // eval / pdf in closed form
        let g = if mf.visible {
            mf.g1(wo, m)
        } else {
            mf.d(m) / smf.d(m) * mf.g(wi, wo, m) * (wi_m / (wi.z * m.z)).abs()
        };
        let pdf = pdf_m * lobe * jacobian.abs();
        if !(g > 0.0 && g.is_finite() && pdf > 0.0 && pdf.is_finite()) {
            return None;
        }
        Some(BsdfSample {
            wo,
            pdf,
            weight: factor * g,
            eta,
            delta: false,
        })
    }

    /// Reflection `F D G / (4 |cos θi|)`; refraction
    /// `(1 − F) D G |wi·m| |wo·m| / (|cos θi| (wi·m + η wo·m)²)` (Walter et al. eq. 21
    /// times `|cos θo|`, its `η²` cancelled by the radiance scaling `1/η²`).
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        let Some(h) = self.half_vector(wi, wo) else {
            return Color::ZERO;
        };
        let mf = self.distr.at(ctx.tex, &ctx.at);
        let m = h.m;
        let dg = mf.d(m) * mf.g(wi, wo, m);
        if dg == 0.0 {
            return Color::ZERO;
        }
        let (wi_m, wo_m) = (wi.dot(m), wo.dot(m));
        let f = fresnel_dielectric(wi_m, self.eta).r;
        if h.reflect {
            let r = ctx.tex.eval(self.specular_reflectance, &ctx.at);
            return r * (f * dg / (4.0 * wi.z.abs()));
        }
        let denom = wi_m + h.eta * wo_m;
        let v = ((1.0 - f) * dg * wi_m * wo_m / (wi.z * denom * denom)).abs();
        ctx.tex.eval(self.specular_transmittance, &ctx.at) * v
    }

    /// Density of the sampled normal, times F or 1 − F for the lobe, times the
    /// Jacobian of the half-vector map (`1/(4 wo·m)` or `η² wo·m / (wi·m + η wo·m)²`).
    fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        let Some(h) = self.half_vector(wi, wo) else {
            return 0.0;
        };
        let (m, eta) = (h.m, h.eta);
        let (wi_m, wo_m) = (wi.dot(m), wo.dot(m));
        // the side tests that G1 makes in eval and sample
        if wi_m * wi.z <= 0.0 || wo_m * wo.z <= 0.0 {
            return 0.0;
        }
        let jacobian = if h.reflect {
            1.0 / (4.0 * wo_m)
        } else {
            let denom = wi_m + eta * wo_m;
            eta * eta * wo_m / (denom * denom)
        };
        let smf = Self::sampling_distr(self.distr.at(ctx.tex, &ctx.at), wi.z);
        let wi_up = if wi.z < 0.0 { -wi } else { wi };
        let f = fresnel_dielectric(wi_m, self.eta).r;
        let lobe = if h.reflect { f } else { 1.0 - f };
        let p = smf.pdf(wi_up, m) * lobe * jacobian.abs();
        if p.is_finite() {
            p
        } else {
            0.0
        }
    }
}
