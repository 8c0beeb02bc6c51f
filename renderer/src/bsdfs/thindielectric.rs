//! `thindielectric`: a thin dielectric sheet (window pane, soap film): delta
//! reflection with the inter-reflections inside the sheet summed up
//! (`R' = R + T²R/(1 − R²) = 2R/(1 + R)`), and straight-through transmission
//! (no refraction, `eta` = 1). Two-sided by nature.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `int_ior` | float or string | `bk7` (1.5046) | sheet IOR, a number or a name from [`super::ior::DIELECTRICS`] |
//! | `ext_ior` | float or string | `air` (1.000277) | surrounding IOR |
//! | `specular_reflectance` | rgb, float or texture | 1 | factor on the reflection (not physical) |
//! | `specular_transmittance` | rgb, float or texture | 1 | factor on the transmission (not physical) |
//!
//! ```xml
//! <bsdf type="thindielectric"><string name="int_ior" value="bk7"/></bsdf>
//! ```

use super::dielectric::{read_eta, read_transmittance};
use super::fresnel::fresnel_dielectric;
use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::props::Props;
use crate::device_record;
use crate::error::Result;
use crate::math::{reflect_local, Color, Vec2, Vec3};
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};

/// The thin dielectric record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct ThinDielectric {
    /// Relative IOR `int_ior / ext_ior`.
    pub eta: f32,
    /// Reflection factor.
    pub specular_reflectance: TexRef,
    /// Transmission factor.
    pub specular_transmittance: TexRef,
}
device_record!(ThinDielectric {
    eta,
    specular_reflectance,
    specular_transmittance
});

impl ThinDielectric {
    /// Reflectance of the sheet including internal inter-reflections.
    pub fn reflectance(&self, cos_i: f32) -> f32 {
        let r = fresnel_dielectric(cos_i.abs(), self.eta).r;
        2.0 * r / (1.0 + r)
    }
}

impl BsdfPlugin for ThinDielectric {
    type Record = Self;
    const DELTA: bool = true;
    const TRANSMISSION: bool = true;

    /// Reads the plugin's parameters.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        Ok(ThinDielectric {
            eta: read_eta(p, "bk7", ctx)?,
            specular_reflectance: ctx.texture(p, "specular_reflectance", Some(Color::ONE))?,
            specular_transmittance: read_transmittance(p, ctx)?,
        })
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// Reflects with probability R', passes straight through otherwise.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, _u2: Vec2) -> Option<BsdfSample> {
        if wi.z == 0.0 {
            return None;
        }
        let r = self.reflectance(wi.z);
        let (wo, pdf, weight) = if u1 <= r {
            (
                reflect_local(wi),
                r,
                ctx.tex.eval(self.specular_reflectance, &ctx.at),
            )
        } else {
            (
                -wi,
                1.0 - r,
                ctx.tex.eval(self.specular_transmittance, &ctx.at),
            )
        };
        Some(BsdfSample {
            wo,
            pdf,
            weight,
            eta: 1.0,
            delta: true,
        })
    }

    /// Zero: both lobes are deltas.
    fn eval(&self, _ctx: &BsdfCtx, _wi: Vec3, _wo: Vec3) -> Color {
        Color::ZERO
    }

    /// Zero: both lobes are deltas.
    fn pdf(&self, _ctx: &BsdfCtx, _wi: Vec3, _wo: Vec3) -> f32 {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::desc::props::Value;

    #[test]
    fn reflectance_sums_the_internal_bounces() {
        let s = Setup::new("thindielectric", &[("int_ior", Value::Float(1.5))]);
        let b = match s.bsdf() {
            super::super::AnyBsdf::ThinDielectric(b) => *b,
            b => panic!("{b:?}"),
        };
        for cos in [1.0f32, 0.7, 0.2, -0.5] {
            let r = fresnel_dielectric(cos.abs(), b.eta).r;
            let t = 1.0 - r;
            // geometric series r + t r t + t r³ t + ...
            let series: f32 = r + (0..200).map(|n| t * t * r.powi(2 * n + 1)).sum::<f32>();
            assert!((b.reflectance(cos) - series).abs() < 1e-6, "{cos}");
        }
        // normal incidence, single interface ((n-1)/(n+1))² with n = 1.5/1.000277
        let n = 1.5f32 / 1.000277;
        let r0 = ((n - 1.0) / (n + 1.0)).powi(2);
        assert!((b.reflectance(1.0) - 2.0 * r0 / (1.0 + r0)).abs() < 1e-6);
    }

    #[test]
    fn r_plus_t_is_one_and_transmission_goes_straight() {
        let s = Setup::new("thindielectric", &[]);
        for wi in incident_dirs()
            .into_iter()
            .chain(incident_dirs().map(|d| -d))
        {
            let n = 10_000;
            let mut sum = 0.0f64;
            for i in 0..n {
                let bs = s
                    .sample(wi, (i as f32 + 0.5) / n as f32, Vec2::ZERO)
                    .unwrap();
                assert!(bs.delta && bs.eta == 1.0);
                if bs.wo.z * wi.z < 0.0 {
                    assert!((bs.wo + wi).length() < 1e-6);
                } else {
                    assert!((bs.wo - Vec3::new(-wi.x, -wi.y, wi.z)).length() < 1e-6);
                }
                sum += bs.weight.x as f64;
            }
            assert!((sum / n as f64 - 1.0).abs() < 1e-6, "{wi}");
        }
        assert!(s.is_delta() && s.pdf(Vec3::Z, -Vec3::Z) == 0.0);
    }

    #[test]
    fn errors() {
        let e = build_err("thindielectric", &[("int_ior", Value::Float(0.0))]);
        assert!(e.contains("int_ior") && e.contains("> 0"), "{e}");
    }
}
