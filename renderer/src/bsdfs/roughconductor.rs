//! `roughconductor`: a rough metal (microfacet reflection with the exact
//! conductor Fresnel term and Smith's separable shadowing-masking; Walter et al.
//! 2007). One-sided: black from behind.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `distribution` | string | `beckmann` | `beckmann` or `ggx` (Mitsuba 3's default is Beckmann) |
//! | `alpha` | float or texture | 0.1 | roughness (both directions) |
//! | `alpha_u`, `alpha_v` | float or texture | 0.1 | anisotropic roughness along the tangent / bitangent (instead of `alpha`) |
//! | `sample_visible` | boolean | true | sample visible normals (GGX: Heitz 2018; Beckmann: Heitz & d'Eon 2014) |
//! | `material` | string | `none` | named complex IOR preset, as in `conductor` |
//! | `eta`, `k` | rgb, float or texture | 0, 1 | complex IOR (only with `material` = `none`) |
//! | `specular_reflectance` | rgb, float or texture | 1 | factor on the reflection (not physical) |
//!
//! ```xml
//! <bsdf type="roughconductor">
//!     <string name="material" value="Al"/>
//!     <string name="distribution" value="ggx"/>
//!     <float name="alpha_u" value="0.05"/>
//!     <float name="alpha_v" value="0.3"/>
//! </bsdf>
//! ```

use super::conductor::read_complex_ior;
use super::fresnel::fresnel_conductor_rgb;
use super::microfacet::{Microfacet, MicrofacetParams};
use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::props::Props;
use crate::error::Result;
use crate::math::{reflect, Color, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};
use crate::{device_record, editable_constant};

/// The rough conductor record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct RoughConductor {
    /// Microfacet distribution and roughness.
    pub distr: MicrofacetParams,
    /// Real part of the IOR.
    pub eta: TexRef,
    /// Imaginary part (extinction).
    pub k: TexRef,
    /// Reflectance factor.
    pub specular_reflectance: TexRef,
}
device_record!(RoughConductor {
    distr: MicrofacetParams,
    eta,
    k,
    specular_reflectance
});

impl RoughConductor {
    fn fresnel(&self, ctx: &BsdfCtx, cos: f32) -> Color {
        let eta = ctx.tex.eval(self.eta, &ctx.at);
        let k = ctx.tex.eval(self.k, &ctx.at);
        fresnel_conductor_rgb(cos, eta, k) * ctx.tex.eval(self.specular_reflectance, &ctx.at)
    }
}

impl BsdfPlugin for RoughConductor {
    type Record = Self;
    const READS_TEXTURE_MEANS: bool = true;
    const EDITABLE: &'static [EditableKey] = &[
        editable_constant!(RoughConductor, "eta.value", eta),
        editable_constant!(RoughConductor, "k.value", k),
        editable_constant!(
            RoughConductor,
            "specular_reflectance.value",
            specular_reflectance
        ),
    ];

    /// Reads the plugin's parameters.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let distr = MicrofacetParams::build(p, ctx)?;
        let (eta, k) = read_complex_ior(p, ctx)?;
        Ok(RoughConductor {
            distr,
            eta,
            k,
            specular_reflectance: ctx.texture(p, "specular_reflectance", Some(Color::ONE))?,
        })
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// `eval` is the microfacet lobe times Fresnel times the specular reflectance.
    fn linear_in(&self) -> Vec<TexRef> {
        vec![self.specular_reflectance]
    }

    /// Samples a microfacet normal and reflects `wi` about it.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, _u1: f32, u2: Vec2) -> Option<BsdfSample> {
        if wi.z <= 0.0 {
            return None;
        }
        let mf = self.distr.at(ctx.tex, &ctx.at);
        let m = mf.sample(wi, u2);
        let wo = reflect(wi, m);
        let wo_m = wo.dot(m);
        if wo.z <= 0.0 || wo_m <= 0.0 {
            return None;
        }
        let pdf = mf.pdf(wi, m) / (4.0 * wo_m);
        if !(pdf > 0.0 && pdf.is_finite()) {
            return None;
        }
        let f = self.fresnel(ctx, wi.dot(m));
        // eval / pdf in closed form
        let g = if mf.visible {
            mf.g1(wo, m)
        } else {
            mf.g(wi, wo, m) * wo_m / (wi.z * m.z)
        };
        Some(BsdfSample {
            wo,
            pdf,
            weight: f * g,
            eta: 1.0,
            delta: false,
        })
    }

    /// `F D G / (4 cos θi)` (that is f · cos θo).
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        if wi.z <= 0.0 || wo.z <= 0.0 {
            return Color::ZERO;
        }
        let mf = self.distr.at(ctx.tex, &ctx.at);
        let h = (wi + wo).normalize();
        let v = mf.d(h) * mf.g(wi, wo, h) / (4.0 * wi.z);
        self.fresnel(ctx, wi.dot(h)) * v
    }

    /// Density of the sampled normal times the reflection Jacobian `1 / (4 wo·h)`.
    fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        if wi.z <= 0.0 || wo.z <= 0.0 {
            return 0.0;
        }
        let mf: Microfacet = self.distr.at(ctx.tex, &ctx.at);
        let h = (wi + wo).normalize();
        let wo_h = wo.dot(h);
        if wo_h <= 0.0 {
            return 0.0;
        }
        mf.pdf(wi, h) / (4.0 * wo_h)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::desc::props::Value;

    /// GGX and Beckmann, isotropic at three roughnesses and anisotropic, with
    /// and without visible-normal sampling.
    fn variants() -> Vec<Setup> {
        variants_with(&[(0.1, 0.1), (0.3, 0.3), (0.8, 0.8), (0.1, 0.5)])
    }

    fn variants_with(alphas: &[(f64, f64)]) -> Vec<Setup> {
        let mut v = Vec::new();
        for d in ["ggx", "beckmann"] {
            for &(au, av) in alphas {
                for vis in [true, false] {
                    v.push(Setup::new(
                        "roughconductor",
                        &[
                            ("distribution", Value::String(d.into())),
                            ("alpha_u", Value::Float(au)),
                            ("alpha_v", Value::Float(av)),
                            ("sample_visible", Value::Bool(vis)),
                        ],
                    ));
                }
            }
        }
        v
    }

    #[test]
    fn chi2_sampling_matches_pdf() {
        let v = variants();
        let wis = [incident_dirs()[0], incident_dirs()[1], incident_dirs()[2]];
        for s in &v {
            for wi in wis {
                let r = s.chi2(wi, v.len() * wis.len());
                assert!(r.is_ok(), "{} wi {wi}: {r:?}", s.desc);
            }
        }
    }

    #[test]
    fn weight_is_eval_over_pdf() {
        for s in variants() {
            for wi in incident_dirs() {
                assert!(s.check_consistency(wi, 2000) > 100, "{}", s.desc);
            }
        }
    }

    #[test]
    fn furnace_never_creates_energy() {
        // perfect mirror material (F = 1): the albedo is 1 minus what single-scattering
        // Smith loses to shadowing-masking, so never above 1, and for a nearly smooth
        // surface seen from above (almost nothing masked) within 1 % of 1
        for s in variants_with(&[(0.02, 0.02), (0.1, 0.1), (0.3, 0.3), (0.8, 0.8), (0.1, 0.5)]) {
            for wi in incident_dirs() {
                let (a, err) = s.albedo(wi, 50_000);
                assert!(
                    a.max_element() <= 1.0 + 4.0 * err + 1e-3,
                    "{} wi {wi}: {a}",
                    s.desc
                );
            }
        }
        for s in variants_with(&[(0.02, 0.02)]) {
            let (a, _) = s.albedo(Vec3::Z, 50_000);
            assert!(a.min_element() > 0.99, "{}: {a}", s.desc);
        }
    }

    #[test]
    fn albedo_matches_quadrature_of_eval() {
        // independent estimate of ∫ eval dωo by a midpoint rule over the hemisphere
        for s in variants_with(&[(0.3, 0.3), (0.8, 0.8), (0.2, 0.6)]) {
            let wi = incident_dirs()[1];
            let n = 400;
            let mut q = 0.0f64;
            for i in 0..n {
                let z = (i as f32 + 0.5) / n as f32;
                let r = (1.0 - z * z).sqrt();
                for j in 0..n {
                    let phi = 2.0 * std::f32::consts::PI * (j as f32 + 0.5) / n as f32;
                    let wo = Vec3::new(r * phi.cos(), r * phi.sin(), z);
                    q += s.eval(wi, wo).x as f64;
                }
            }
            let q = q * 2.0 * std::f64::consts::PI / (n * n) as f64;
            let (a, err) = s.albedo(wi, 50_000);
            assert!(
                (a.x as f64 - q).abs() < 4.0 * err as f64 + 2e-3,
                "{}: MC {a} vs {q}",
                s.desc
            );
        }
    }

    #[test]
    fn reciprocity_and_one_sided() {
        let gold = Setup::new(
            "roughconductor",
            &[
                ("material", Value::String("Au".into())),
                ("alpha", Value::Float(0.3)),
            ],
        );
        for s in variants().iter().chain([&gold]) {
            s.check_reciprocity(500);
        }
        let back = Vec3::new(0.2, 0.1, -0.9).normalize();
        assert!(gold.sample(back, 0.5, Vec2::splat(0.5)).is_none());
        assert_eq!(gold.eval(back, Vec3::Z), Color::ZERO);
        assert_eq!(gold.eval(Vec3::Z, back), Color::ZERO);
        assert_eq!(gold.pdf(back, Vec3::Z), 0.0);
    }

    #[test]
    fn parameter_errors() {
        let e = build_err("roughconductor", &[("alpha", Value::Float(-0.1))]);
        assert!(
            e.contains("alpha") && e.contains(">= 0") && e.contains("t.xml:2"),
            "{e}"
        );
        let e = build_err(
            "roughconductor",
            &[("distribution", Value::String("phong".into()))],
        );
        assert!(e.contains("ggx") && e.contains("beckmann"), "{e}");
        let e = build_err(
            "roughconductor",
            &[("alpha", Value::Float(0.1)), ("alpha_u", Value::Float(0.2))],
        );
        assert!(e.contains("not both"), "{e}");
        let e = build_err("roughconductor", &[("alpha_u", Value::Float(0.2))]);
        assert!(e.contains("alpha_v"), "{e}");
    }
}
