//! `plastic`: a smooth dielectric coating over a diffuse base (Mitsuba 3's
//! smooth plastic): delta specular reflection with the dielectric Fresnel
//! term, plus a Lambertian base seen through the interface, with the internal
//! reflections at the coating summed up through the diffuse Fresnel reflectance
//! (`ρ / (1 − F_dr)`; `nonlinear`: `ρ / (1 − ρ F_dr)`). One-sided.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `diffuse_reflectance` | rgb, float or texture | 0.5 | albedo of the base |
//! | `specular_reflectance` | rgb, float or texture | 1 | factor on the coating reflection (not physical) |
//! | `int_ior` | float or string | `polypropylene` (1.49) | coating IOR |
//! | `ext_ior` | float or string | `air` (1.000277) | exterior IOR |
//! | `nonlinear` | boolean | false | account for colour shifts from internal scattering |
//!
//! ```xml
//! <bsdf type="plastic"><rgb name="diffuse_reflectance" value="0.1, 0.27, 0.36"/></bsdf>
//! ```

use super::dielectric::read_eta;
use super::fresnel::{fresnel_dielectric, fresnel_diffuse_reflectance};
use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::props::Props;
use crate::error::Result;
use crate::math::warp::{cosine_hemisphere_pdf, square_to_cosine_hemisphere};
use crate::math::{reflect_local, Color, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};
use crate::{device_record, editable_constant};

/// The smooth plastic record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Plastic {
    /// Albedo of the base.
    pub diffuse_reflectance: TexRef,
    /// Coating reflection factor.
    pub specular_reflectance: TexRef,
    /// Relative IOR of the coating.
    pub eta: f32,
    /// `1/η²`.
    pub inv_eta2: f32,
    /// Diffuse Fresnel reflectance seen from inside the coating.
    pub fdr_int: f32,
    /// Mean specular / (mean specular + mean diffuse): steers lobe selection.
    pub specular_sampling_weight: f32,
    /// 1: nonlinear internal scattering.
    pub nonlinear: u32,
}
device_record!(Plastic {
    diffuse_reflectance,
    specular_reflectance,
    eta,
    inv_eta2,
    fdr_int,
    specular_sampling_weight,
    nonlinear,
});

/// `s / (s + d)` of the textures' means over space and channels, as Mitsuba
/// (0.5 when both are black).
/// `mean` gives a texture's mean colour.
pub fn sampling_weight(mean: &dyn Fn(TexRef) -> Color, spec: TexRef, diff: TexRef) -> f32 {
    let grey = |t| mean(t).element_sum().max(0.0) / 3.0;
    let (s, d) = (grey(spec), grey(diff));
    if s + d > 0.0 {
        s / (s + d)
    } else {
        0.5
    }
}

/// `ρ / (1 − F)` or, nonlinear, `ρ / (1 − ρ F)`: the base albedo with the
/// internal reflections under the coating summed up.
pub fn internal_scattering(diff: Color, f_int: f32, nonlinear: u32) -> Color {
    if nonlinear != 0 {
        diff / (Color::ONE - diff * f_int)
    } else {
        diff / (1.0 - f_int)
    }
}

impl Plastic {
    /// Probability of sampling the specular lobe given the Fresnel term `f_i`.
    fn prob_specular(&self, f_i: f32) -> f32 {
        coating_probability(f_i, 1.0 - f_i, self.specular_sampling_weight)
    }

    fn base(&self, ctx: &BsdfCtx) -> Color {
        let d = ctx.tex.eval(self.diffuse_reflectance, &ctx.at);
        internal_scattering(d, self.fdr_int, self.nonlinear)
    }
}

impl BsdfPlugin for Plastic {
    type Record = Self;
    const READS_TEXTURE_MEANS: bool = true;
    const MEANS_IN_HOOK: bool = true;
    const EDITABLE: &'static [EditableKey] = &[
        editable_constant!(Plastic, "diffuse_reflectance.value", diffuse_reflectance),
        editable_constant!(Plastic, "specular_reflectance.value", specular_reflectance),
    ];

    /// Reads the plugin's parameters.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let eta = read_eta(p, "polypropylene", ctx)?;
        let diffuse_reflectance = ctx.texture(p, "diffuse_reflectance", Some(Color::splat(0.5)))?;
        let specular_reflectance = ctx.texture(p, "specular_reflectance", Some(Color::ONE))?;
        Ok(Plastic {
            diffuse_reflectance,
            specular_reflectance,
            eta,
            inv_eta2: 1.0 / (eta * eta),
            fdr_int: fresnel_diffuse_reflectance(1.0 / eta),
            specular_sampling_weight: sampling_weight(
                &|t| ctx.texture_mean(t),
                specular_reflectance,
                diffuse_reflectance,
            ),
            nonlinear: p.bool("nonlinear", false)? as u32,
        })
    }

    /// The specular sampling weight follows the reflectances' means.
    fn parameters_changed(&mut self, mean: &dyn Fn(TexRef) -> Color) {
        self.specular_sampling_weight =
            sampling_weight(mean, self.specular_reflectance, self.diffuse_reflectance);
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// `eval` (the base's lobe) is the base albedo times a factor of the directions,
    /// and the base albedo is `ρ / (1 − F_dr)` unless `nonlinear`; the specular
    /// reflectance enters only the (Dirac) coating lobe.
    fn linear_in(&self) -> Vec<TexRef> {
        let mut v = vec![self.specular_reflectance];
        if self.nonlinear == 0 {
            v.push(self.diffuse_reflectance);
        }
        v
    }

    /// Picks the specular lobe or the diffuse base with `u1`.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        if wi.z <= 0.0 {
            return None;
        }
        let f_i = fresnel_dielectric(wi.z, self.eta).r;
        let ps = self.prob_specular(f_i);
        if u1 < ps {
            let spec = ctx.tex.eval(self.specular_reflectance, &ctx.at);
            return Some(BsdfSample {
                wo: reflect_local(wi),
                pdf: ps,
                weight: spec * (f_i / ps),
                eta: 1.0,
                delta: true,
            });
        }
        let wo = square_to_cosine_hemisphere(u2);
        let pdf = (1.0 - ps) * cosine_hemisphere_pdf(wo);
        if pdf.is_nan() || pdf <= 0.0 {
            return None;
        }
        let f_o = fresnel_dielectric(wo.z, self.eta).r;
        let diff = self.base(ctx) * (self.inv_eta2 * (1.0 - f_i) * (1.0 - f_o) / (1.0 - ps));
        Some(BsdfSample {
            wo,
            pdf,
            weight: diff,
            eta: 1.0,
            delta: false,
        })
    }

    /// The diffuse base only (the specular lobe is a delta).
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        if wi.z <= 0.0 || wo.z <= 0.0 {
            return Color::ZERO;
        }
        let f_i = fresnel_dielectric(wi.z, self.eta).r;
        let f_o = fresnel_dielectric(wo.z, self.eta).r;
        self.base(ctx) * (cosine_hemisphere_pdf(wo) * self.inv_eta2 * (1.0 - f_i) * (1.0 - f_o))
    }

    /// Density of the diffuse lobe (times its selection probability).
    fn pdf(&self, _ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        if wi.z <= 0.0 || wo.z <= 0.0 {
            return 0.0;
        }
        let f_i = fresnel_dielectric(wi.z, self.eta).r;
        (1.0 - self.prob_specular(f_i)) * cosine_hemisphere_pdf(wo)
    }

    /// The base's albedo (the `albedo` AOV).
    fn diffuse_reflectance(&self, ctx: &BsdfCtx, _wi: Vec3) -> Color {
        ctx.tex.eval(self.diffuse_reflectance, &ctx.at)
    }
}

/// The probability of sampling the coating of a plastic rather than its base: the
/// coating's share `coat` (its reflectance) against the base's `base` (what the coating
/// lets through), weighted by `specular_sampling_weight`; 0.5 when both vanish.
pub(super) fn coating_probability(coat: f32, base: f32, weight: f32) -> f32 {
    let (ps, pd) = (coat * weight, base * (1.0 - weight));
    if ps + pd > 0.0 {
        ps / (ps + pd)
    } else {
        0.5
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::desc::props::Value;

    fn white(nonlinear: bool) -> Setup {
        Setup::new(
            "plastic",
            &[
                ("diffuse_reflectance", Value::Float(1.0)),
                ("nonlinear", Value::Bool(nonlinear)),
            ],
        )
    }

    #[test]
    fn chi2_and_consistency() {
        let s = Setup::new("plastic", &[]);
        for wi in incident_dirs() {
            assert!(s.chi2(wi, 4).is_ok(), "wi {wi}: {:?}", s.chi2(wi, 4));
            assert!(s.check_consistency(wi, 5000) > 1000);
        }
    }

    #[test]
    fn white_furnace_conserves_energy() {
        // a white base under a lossless coating reflects everything; the diffuse
        // Fresnel fit makes this exact only to ~1 %
        for nl in [false, true] {
            let s = white(nl);
            for wi in incident_dirs() {
                let (a, err) = s.albedo(wi, 200_000);
                assert!((a.x - 1.0).abs() < 0.015 + 4.0 * err, "wi {wi}: {a}");
            }
        }
    }

    #[test]
    fn specular_lobe_is_fresnel_weighted_and_reciprocal() {
        let s = Setup::new(
            "plastic",
            &[
                ("int_ior", Value::Float(1.5)),
                ("ext_ior", Value::Float(1.0)),
            ],
        );
        // the delta lobe's expected contribution is F(θi) · specular_reflectance
        let wi = incident_dirs()[1];
        let (mut spec, n) = (0.0f64, 100_000);
        for i in 0..n {
            let u = (i as f32 + 0.5) / n as f32;
            if let Some(bs) = s.sample(wi, u, Vec2::splat(0.5)) {
                if bs.delta {
                    assert!((bs.wo - Vec3::new(-wi.x, -wi.y, wi.z)).length() < 1e-6);
                    spec += bs.weight.x as f64 / n as f64;
                }
            }
        }
        let f = fresnel_dielectric(wi.z, 1.5).r as f64;
        assert!((spec - f).abs() < 1e-3, "{spec} vs {f}");
        s.check_reciprocity(500);
        let back = Vec3::new(0.1, 0.2, -0.9).normalize();
        assert!(s.sample(back, 0.5, Vec2::splat(0.5)).is_none());
        assert_eq!(s.eval(back, Vec3::Z), Color::ZERO);
        assert!(!s.is_delta());
    }

    #[test]
    fn errors() {
        let e = build_err("plastic", &[("int_ior", Value::String("plexi".into()))]);
        assert!(e.contains("plexi") && e.contains("polypropylene"), "{e}");
        let e = build_err("plastic", &[("roughness", Value::Float(0.1))]);
        assert!(e.contains("roughness"), "{e}");
    }
}
