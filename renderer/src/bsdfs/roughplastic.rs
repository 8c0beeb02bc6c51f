//! `roughplastic`: a rough dielectric coating over a diffuse base (Mitsuba 3's
//! model): microfacet reflection off the coating plus a Lambertian base seen
//! through it. Light reaching the base is scaled by the coating's directional
//! transmittance `T(θ)` on the way in and out, and inter-reflections under the
//! coating by `ρ / (1 − R_int)` (`nonlinear`: `ρ / (1 − ρ R_int)`).
//!
//! As Mitsuba, `T(θ)` (the single-scattering transmittance of the rough
//! interface, ∫ (1 − F) G1(wt) D_wi dm) is precomputed at build time for the
//! record's α and η at [`TABLE_RES`] = 64 evenly spaced cos θ and interpolated
//! linearly; `R_int` is twice the mean of `R_inside(μ) μ` over the same grid,
//! with `R_inside` the single-scattering reflectance seen from inside. Mitsuba
//! integrates over visible normals by Gauss–Legendre quadrature; here a
//! stratified midpoint rule over the BSDF's own microfacet sampler is used
//! (`eval` agrees with Mitsuba 3.9 to ~0.5 %, see `reference_tests.rs`). One-sided.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `diffuse_reflectance` | rgb, float or texture | 0.5 | albedo of the base |
//! | `specular_reflectance` | rgb, float or texture | 1 | factor on the coating reflection (not physical) |
//! | `distribution` | string | `beckmann` | `beckmann` or `ggx` |
//! | `alpha` | float | 0.1 | roughness of the coating (isotropic only, as Mitsuba) |
//! | `sample_visible` | boolean | true | sample visible normals |
//! | `int_ior` | float or string | `polypropylene` (1.49) | coating IOR |
//! | `ext_ior` | float or string | `air` (1.000277) | exterior IOR |
//! | `nonlinear` | boolean | false | account for colour shifts from internal scattering |
//!
//! ```xml
//! <bsdf type="roughplastic">
//!     <string name="distribution" value="ggx"/>
//!     <float name="alpha" value="0.2"/>
//!     <rgb name="diffuse_reflectance" value="0.1, 0.1, 0.6"/>
//! </bsdf>
//! ```

use std::collections::VecDeque;
use std::sync::Mutex;

use rayon::prelude::*;

use super::dielectric::read_eta;
use super::fresnel::fresnel_dielectric;
use super::microfacet::{check_alpha, read_kind, Microfacet};
use super::plastic::{internal_scattering, sampling_weight};
use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::warp::{cosine_hemisphere_pdf, square_to_cosine_hemisphere};
use crate::math::{reflect, Color, Vec2, Vec3};
use crate::parallel::on_process_pool;
use crate::plugin::patch::EditableKey;
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};
use crate::{device_record, editable_constant};

/// Entries of the transmittance table (cos θ = 0 … 1), as Mitsuba.
pub const TABLE_RES: usize = 64;

/// The rough plastic record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct RoughPlastic {
    /// Albedo of the base.
    pub diffuse_reflectance: TexRef,
    /// Coating reflection factor.
    pub specular_reflectance: TexRef,
    /// Microfacet distribution kind.
    pub kind: u32,
    /// 1: sample visible normals.
    pub sample_visible: u32,
    /// Roughness.
    pub alpha: f32,
    /// Relative IOR of the coating.
    pub eta: f32,
    /// `1/η²`.
    pub inv_eta2: f32,
    /// Mean specular / (mean specular + mean diffuse).
    pub specular_sampling_weight: f32,
    /// Hemispherical reflectance of the coating seen from inside.
    pub internal_reflectance: f32,
    /// 1: nonlinear internal scattering.
    pub nonlinear: u32,
    /// Coating transmittance `T(μ)` at `μ = i / (TABLE_RES − 1)`.
    pub transmittance: [f32; TABLE_RES],
}
device_record!(RoughPlastic {
    diffuse_reflectance,
    specular_reflectance,
    kind,
    sample_visible,
    alpha,
    eta,
    inv_eta2,
    specular_sampling_weight,
    internal_reflectance,
    nonlinear,
    transmittance,
});

/// Single-scattering reflectance (`transmit` false) or transmittance (true) of a
/// rough dielectric interface with relative IOR `eta`, seen from `wi`:
/// ∫ F(wi·m) G1(wo, m) D_wi(m) dm, resp. ∫ (1 − F) G1(wt, m) D_wi(m) dm, by an
/// `n × n` midpoint rule over the distribution's sampler (weights `D_wi / pdf`).
pub fn rough_albedo(mf: &Microfacet, wi: Vec3, eta: f32, transmit: bool, n: usize) -> f32 {
    let mut sum = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            let u = Vec2::new((i as f32 + 0.5) / n as f32, (j as f32 + 0.5) / n as f32);
            let m = mf.sample(wi, u);
            let pdf = mf.pdf(wi, m);
            let wi_m = wi.dot(m);
            if pdf <= 0.0 || wi_m <= 0.0 {
                continue;
            }
            let f = fresnel_dielectric(wi_m, eta);
            let (wo, w) = if transmit {
                // refraction about m (Walter et al. 2007, eq. 40)
                let wt = m * (wi_m * f.eta_ti + f.cos_theta_t) - wi * f.eta_ti;
                (wt, 1.0 - f.r)
            } else {
                (reflect(wi, m), f.r)
            };
            if (wo.z < 0.0) != transmit || wo.z == 0.0 {
                continue;
            }
            let d_wi = mf.g1(wi, m) * wi_m * mf.d(m) / wi.z;
            sum += (w * mf.g1(wo, m) * d_wi / pdf) as f64;
        }
    }
    (sum / (n * n) as f64) as f32
}

fn dir(mu: f32) -> Vec3 {
    let mu = mu.max(1e-6);
    Vec3::new((1.0 - mu * mu).max(0.0).sqrt(), 0.0, mu)
}

/// The transmittance table and internal reflectance for one microfacet distribution
/// and η.
///
/// The integrals cost ~10⁶ microfacet samples (~0.4 s on one core), so the table's
/// entries are computed on the process's render threads (each entry's sum runs in a
/// fixed order: the result does not depend on the thread count), and the last few
/// results are kept: rebuilding a scene, another object with the same coating, or an
/// update back to an earlier value costs nothing.
fn precompute(kind: u32, alpha: f32, visible: bool, eta: f32) -> Result<([f32; TABLE_RES], f32)> {
    type Entry = ((u32, u32, bool, u32), [f32; TABLE_RES], f32);
    const KEEP: usize = 32;
    static RECENT: Mutex<VecDeque<Entry>> = Mutex::new(VecDeque::new());
    let key = (kind, alpha.to_bits(), visible, eta.to_bits());
    let recent = || RECENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, t, r)) = recent().iter().find(|e| e.0 == key) {
        return Ok((*t, *r));
    }
    let (t, r_int) = on_process_pool(|| table(&Microfacet::new(kind, alpha, alpha, visible), eta))?;
    let mut recent = recent();
    if recent.len() == KEEP {
        recent.pop_front();
    }
    recent.push_back((key, t, r_int));
    Ok((t, r_int))
}

/// [`precompute`]'s integrals, on the current rayon pool.
fn table(mf: &Microfacet, eta: f32) -> ([f32; TABLE_RES], f32) {
    let entries: Vec<(f32, f32)> = (0..TABLE_RES)
        .into_par_iter()
        .map(|i| {
            let mu = i as f32 / (TABLE_RES - 1) as f32;
            // the integrands jump where refraction / reflection leaves the hemisphere,
            // so the midpoint rule converges as O(1/n): 128² points give ~3e-4
            let t = rough_albedo(mf, dir(mu), eta, true, 128).clamp(0.0, 1.0);
            let r = rough_albedo(mf, dir(mu), 1.0 / eta, false, 48);
            (t, r)
        })
        .collect();
    let mut t = [0.0; TABLE_RES];
    let mut r_int = 0.0;
    for (i, (ti, ri)) in entries.into_iter().enumerate() {
        let mu = i as f32 / (TABLE_RES - 1) as f32;
        t[i] = ti;
        // Mitsuba's estimate of 2∫ R_inside(μ) μ dμ: twice the grid mean
        r_int += 2.0 * mu * ri / TABLE_RES as f32;
    }
    (t, r_int.clamp(0.0, 1.0))
}

impl RoughPlastic {
    fn distr(&self) -> Microfacet {
        Microfacet::new(self.kind, self.alpha, self.alpha, self.sample_visible != 0)
    }

    /// Coating transmittance at cos θ = `mu` (linear interpolation in the table).
    pub fn transmittance_at(&self, mu: f32) -> f32 {
        let x = mu.clamp(0.0, 1.0) * (TABLE_RES - 1) as f32;
        let i = (x as usize).min(TABLE_RES - 2);
        let w = x - i as f32;
        (1.0 - w) * self.transmittance[i] + w * self.transmittance[i + 1]
    }

    fn prob_specular(&self, cos_i: f32) -> f32 {
        let t_i = self.transmittance_at(cos_i);
        super::plastic::coating_probability(1.0 - t_i, t_i, self.specular_sampling_weight)
    }
}

impl BsdfPlugin for RoughPlastic {
    type Record = Self;
    const READS_TEXTURE_MEANS: bool = true;
    const MEANS_IN_HOOK: bool = true;
    const EDITABLE: &'static [EditableKey] = &[
        editable_constant!(
            RoughPlastic,
            "diffuse_reflectance.value",
            diffuse_reflectance
        ),
        editable_constant!(
            RoughPlastic,
            "specular_reflectance.value",
            specular_reflectance
        ),
    ];

    /// Reads the plugin's parameters and precomputes the coating's transmittance.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let (kind, visible) = read_kind(p)?;
        for key in ["alpha_u", "alpha_v"] {
            if p.has(key) {
                return Err(Error::param(
                    &p.entry_loc(key),
                    key,
                    "roughplastic does not support anisotropic roughness (use alpha)",
                ));
            }
        }
        let alpha = p.float("alpha", 0.1)?;
        check_alpha(p, "alpha", alpha)?;
        ctx.declare(
            "alpha",
            ParamValue::Float(alpha as f64),
            Target::prop("alpha"),
            Range::AtLeast(0.0),
        );
        let eta = read_eta(p, "polypropylene", ctx)?;
        if eta == 1.0 {
            return Err(Error::param(
                &p.entry_loc("int_ior"),
                "int_ior",
                "the interior and exterior IORs must differ",
            ));
        }
        let diffuse_reflectance = ctx.texture(p, "diffuse_reflectance", Some(Color::splat(0.5)))?;
        let specular_reflectance = ctx.texture(p, "specular_reflectance", Some(Color::ONE))?;
        let mut b = RoughPlastic {
            diffuse_reflectance,
            specular_reflectance,
            kind,
            sample_visible: visible as u32,
            alpha,
            eta,
            inv_eta2: 1.0 / (eta * eta),
            specular_sampling_weight: sampling_weight(
                &|t| ctx.texture_mean(t),
                specular_reflectance,
                diffuse_reflectance,
            ),
            internal_reflectance: 0.0,
            nonlinear: p.bool("nonlinear", false)? as u32,
            transmittance: [0.0; TABLE_RES],
        };
        (b.transmittance, b.internal_reflectance) =
            precompute(b.kind, b.alpha, b.sample_visible != 0, eta)?;
        Ok(b)
    }

    /// The specular sampling weight follows the reflectances' means.
    fn parameters_changed(&mut self, mean: &dyn Fn(TexRef) -> Color) {
        self.specular_sampling_weight =
            sampling_weight(mean, self.specular_reflectance, self.diffuse_reflectance);
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// `eval` is the coating's lobe times the specular reflectance plus the base's lobe
    /// times `ρ / (1 − F_dr)` (unless `nonlinear`).
    fn linear_in(&self) -> Vec<TexRef> {
        let mut v = vec![self.specular_reflectance];
        if self.nonlinear == 0 {
            v.push(self.diffuse_reflectance);
        }
        v
    }

    /// Picks the coating (microfacet reflection) or the base (cosine) with `u1`.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        if wi.z <= 0.0 {
            return None;
        }
        let wo = if u1 < self.prob_specular(wi.z) {
            reflect(wi, self.distr().sample(wi, u2))
        } else {
            square_to_cosine_hemisphere(u2)
        };
        let pdf = self.pdf(ctx, wi, wo);
        if !(pdf > 0.0 && pdf.is_finite()) {
            return None;
        }
        Some(BsdfSample {
            wo,
            pdf,
            weight: self.eval(ctx, wi, wo) / pdf,
            eta: 1.0,
            delta: false,
        })
    }

    /// Coating reflection `F D G / (4 cos θi)` plus the base seen through the coating.
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        if wi.z <= 0.0 || wo.z <= 0.0 {
            return Color::ZERO;
        }
        let mf = self.distr();
        let h = (wi + wo).normalize();
        let f = fresnel_dielectric(wi.dot(h), self.eta).r;
        let spec = ctx.tex.eval(self.specular_reflectance, &ctx.at)
            * (f * mf.d(h) * mf.g(wi, wo, h) / (4.0 * wi.z));
        let d = ctx.tex.eval(self.diffuse_reflectance, &ctx.at);
        let base = internal_scattering(d, self.internal_reflectance, self.nonlinear);
        let t = self.transmittance_at(wi.z) * self.transmittance_at(wo.z);
        spec + base * (cosine_hemisphere_pdf(wo) * self.inv_eta2 * t)
    }

    /// Mixture of the microfacet and cosine densities.
    fn pdf(&self, _ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        if wi.z <= 0.0 || wo.z <= 0.0 {
            return 0.0;
        }
        let ps = self.prob_specular(wi.z);
        let h = (wi + wo).normalize();
        let wo_h = wo.dot(h);
        let spec = if wo_h > 0.0 {
            self.distr().pdf(wi, h) / (4.0 * wo_h)
        } else {
            0.0
        };
        ps * spec + (1.0 - ps) * cosine_hemisphere_pdf(wo)
    }

    /// The base's albedo (the `albedo` AOV).
    fn diffuse_reflectance(&self, ctx: &BsdfCtx, _wi: Vec3) -> Color {
        ctx.tex.eval(self.diffuse_reflectance, &ctx.at)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::desc::props::Value;

    fn variants(diffuse: f64) -> Vec<Setup> {
        variants_with(diffuse, &[0.1, 0.3, 0.7])
    }

    #[test]
    fn the_table_does_not_depend_on_the_thread_count() {
        let mf = Microfacet::new(0, 0.3, 0.3, true);
        let pool = |n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        };
        let (t1, r1) = pool(1).install(|| table(&mf, 1.5));
        let (t3, r3) = pool(3).install(|| table(&mf, 1.5));
        assert_eq!(t1.map(f32::to_bits), t3.map(f32::to_bits));
        assert_eq!(r1.to_bits(), r3.to_bits());
        // and a kept result is the one computed
        assert_eq!(precompute(0, 0.3, true, 1.5).unwrap(), (t1, r1));
        assert_eq!(precompute(0, 0.3, true, 1.5).unwrap(), (t1, r1));
    }

    fn variants_with(diffuse: f64, alphas: &[f64]) -> Vec<Setup> {
        let mut v = Vec::new();
        for d in ["ggx", "beckmann"] {
            for &a in alphas {
                v.push(Setup::new(
                    "roughplastic",
                    &[
                        ("distribution", Value::String(d.into())),
                        ("alpha", Value::Float(a)),
                        ("diffuse_reflectance", Value::Float(diffuse)),
                    ],
                ));
            }
        }
        v
    }

    #[test]
    fn chi2_and_consistency() {
        let v = variants(0.5);
        let wis = incident_dirs();
        for s in &v {
            for wi in wis {
                let r = s.chi2(wi, v.len() * wis.len());
                assert!(r.is_ok(), "{} wi {wi}: {r:?}", s.desc);
                assert!(s.check_consistency(wi, 2000) > 500);
            }
        }
    }

    #[test]
    fn furnace_and_reciprocity() {
        // white base: never above 1 (the model loses the energy that the rough
        // coating's single scattering masks, so it is below 1 for rough coatings)
        for s in variants_with(1.0, &[0.01, 0.3, 0.7]) {
            for wi in incident_dirs() {
                let (a, err) = s.albedo(wi, 50_000);
                assert!(a.x <= 1.0 + 4.0 * err + 2e-3, "{} wi {wi}: {a}", s.desc);
            }
            s.check_reciprocity(300);
        }
        // a nearly smooth coating reflects what the smooth `plastic` reflects (≈ 1),
        // up to Mitsuba's coarse estimate of R_int (a grid mean, ~2 % low: see below)
        let smooth = Setup::new("plastic", &[("diffuse_reflectance", Value::Float(1.0))]);
        for s in variants_with(1.0, &[0.005]) {
            for wi in &incident_dirs()[..3] {
                let ((a, e1), (b, e2)) = (s.albedo(*wi, 50_000), smooth.albedo(*wi, 50_000));
                assert!(
                    (a.x - b.x).abs() < 0.03 + 4.0 * (e1 + e2),
                    "{} wi {wi}: {a} vs {b}",
                    s.desc
                );
            }
        }
    }

    #[test]
    fn transmittance_table_against_smooth_limit() {
        // nearly smooth coating: T(μ) → 1 − F(μ) away from grazing, and R_int →
        // the diffuse Fresnel reflectance from inside
        let s = Setup::new(
            "roughplastic",
            &[
                ("alpha", Value::Float(0.001)),
                ("distribution", Value::String("ggx".into())),
            ],
        );
        let b = match s.bsdf() {
            super::super::AnyBsdf::RoughPlastic(b) => *b,
            b => panic!("{b:?}"),
        };
        for mu in [0.3f32, 0.6, 1.0] {
            let want = 1.0 - fresnel_dielectric(mu, b.eta).r;
            assert!(
                (b.transmittance_at(mu) - want).abs() < 2e-3,
                "{mu}: {} vs {want}",
                b.transmittance_at(mu)
            );
        }
        let (n, mut fdr) = (4000, 0.0);
        for i in 0..n {
            let mu = (i as f32 + 0.5) / n as f32;
            fdr += 2.0 * mu * fresnel_dielectric(mu, 1.0 / b.eta).r / n as f32;
        }
        assert!(
            (b.internal_reflectance - fdr).abs() < 0.015,
            "{} vs {fdr}",
            b.internal_reflectance
        );
    }

    #[test]
    fn one_sided_and_errors() {
        let s = &variants_with(0.5, &[0.1])[0];
        let back = Vec3::new(0.1, 0.2, -0.9).normalize();
        assert!(s.sample(back, 0.5, Vec2::splat(0.5)).is_none());
        assert_eq!(s.eval(back, Vec3::Z), Color::ZERO);
        assert_eq!(s.pdf(Vec3::Z, back), 0.0);
        let e = build_err("roughplastic", &[("alpha_u", Value::Float(0.1))]);
        assert!(e.contains("anisotropic"), "{e}");
        let e = build_err("roughplastic", &[("alpha", Value::Float(f64::NAN))]);
        assert!(e.contains("alpha") && e.contains("finite"), "{e}");
    }
}
