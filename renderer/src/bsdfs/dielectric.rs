//! `dielectric`: a smooth interface between two dielectrics (glass, water, …):
//! Dirac delta reflection and refraction, chosen with probability given by the
//! Fresnel reflectance. Two-sided by nature (`wi.z < 0` means arriving from the
//! inside). Refracted radiance is scaled by `1/η²` (Mitsuba's radiance mode).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `int_ior` | float or string | `bk7` (1.5046) | interior IOR, a number or a name from [`super::ior::DIELECTRICS`] |
//! | `ext_ior` | float or string | `air` (1.000277) | exterior IOR |
//! | `specular_reflectance` | rgb, float or texture | 1 | factor on the reflection (not physical) |
//! | `specular_transmittance` | rgb, float or texture | 1 | factor on the transmission (not physical) |
//!
//! ```xml
//! <bsdf type="dielectric">
//!     <string name="int_ior" value="water"/>
//!     <string name="ext_ior" value="air"/>
//! </bsdf>
//! ```

use super::fresnel::{fresnel_dielectric, refract_local};
use super::ior::lookup_ior;
use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::{reflect_local, Color, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};
use crate::{device_record, editable_constant};

/// The smooth dielectric record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Dielectric {
    /// Relative IOR `int_ior / ext_ior`.
    pub eta: f32,
    /// Reflection factor.
    pub specular_reflectance: TexRef,
    /// Transmission factor.
    pub specular_transmittance: TexRef,
}
device_record!(Dielectric {
    eta,
    specular_reflectance,
    specular_transmittance
});

/// Reads `int_ior` / `ext_ior` and returns their ratio.
/// Reads `int_ior`/`ext_ior` (names or numbers) as their ratio, declared as the
/// parameter `eta` (Mitsuba's key).
pub fn read_eta(p: &Props, int_default: &str, ctx: &mut dyn BuildContext) -> Result<f32> {
    let int_ior = lookup_ior(p, "int_ior", int_default)?;
    let ext_ior = lookup_ior(p, "ext_ior", "air")?;
    let eta = int_ior / ext_ior;
    ctx.declare_eta(eta);
    Ok(eta)
}

/// Reads `specular_transmittance`; Mitsuba 3's spelling, with the brief's
/// `specular_transmission` accepted as an alias.
pub fn read_transmittance(p: &Props, ctx: &mut dyn BuildContext) -> Result<TexRef> {
    let (a, b) = ("specular_transmittance", "specular_transmission");
    if p.has(a) && p.has(b) {
        return Err(Error::param(
            &p.entry_loc(b),
            b,
            format!("give only one of {a} and {b}"),
        ));
    }
    let key = if p.has(b) { b } else { a };
    ctx.texture(p, key, Some(Color::ONE))
}

impl BsdfPlugin for Dielectric {
    type Record = Self;
    const DELTA: bool = true;
    const TRANSMISSION: bool = true;
    const EDITABLE: &'static [EditableKey] = &[
        editable_constant!(
            Dielectric,
            "specular_reflectance.value",
            specular_reflectance
        ),
        editable_constant!(
            Dielectric,
            "specular_transmittance.value",
            specular_transmittance
        ),
    ];

    /// Reads the plugin's parameters.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        Ok(Dielectric {
            eta: read_eta(p, "bk7", ctx)?,
            specular_reflectance: ctx.texture(p, "specular_reflectance", Some(Color::ONE))?,
            specular_transmittance: read_transmittance(p, ctx)?,
        })
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// Reflects with probability F, refracts otherwise; `u1` picks the lobe.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, _u2: Vec2) -> Option<BsdfSample> {
        if wi.z == 0.0 {
            return None;
        }
        let f = fresnel_dielectric(wi.z, self.eta);
        if u1 <= f.r {
            return Some(BsdfSample {
                wo: reflect_local(wi),
                pdf: f.r,
                weight: ctx.tex.eval(self.specular_reflectance, &ctx.at),
                eta: 1.0,
                delta: true,
            });
        }
        let t = ctx.tex.eval(self.specular_transmittance, &ctx.at);
        Some(BsdfSample {
            wo: refract_local(wi, f.cos_theta_t, f.eta_ti),
            pdf: 1.0 - f.r,
            // radiance is compressed into the smaller solid angle: × (η_t/η_i)⁻²
            weight: t * (f.eta_ti * f.eta_ti),
            eta: f.eta_it,
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

    fn glass() -> Setup {
        Setup::new(
            "dielectric",
            &[
                ("int_ior", Value::Float(1.5)),
                ("ext_ior", Value::Float(1.0)),
            ],
        )
    }

    #[test]
    fn normal_incidence_reflectance_and_snell() {
        let s = glass();
        let r0 = (0.5f32 / 2.5).powi(2);
        let bs = s.sample(Vec3::Z, 0.0, Vec2::ZERO).unwrap();
        assert!((bs.pdf - r0).abs() < 1e-6 && bs.wo == Vec3::Z, "{bs:?}");
        let bs = s.sample(Vec3::Z, 0.9, Vec2::ZERO).unwrap();
        assert!((bs.pdf - (1.0 - r0)).abs() < 1e-6 && (bs.wo + Vec3::Z).length() < 1e-6);
        assert!((bs.eta - 1.5).abs() < 1e-6);
        // Snell from both sides: eta_i sin θi = eta_t sin θt, direction mirrored in x
        for (wi, ni, nt) in [
            (Vec3::new(0.6, 0.0, 0.8), 1.0f32, 1.5f32),
            (Vec3::new(0.3, 0.4, -(0.75f32).sqrt()), 1.5, 1.0),
        ] {
            let bs = s.sample(wi, 0.999, Vec2::ZERO).unwrap();
            let st = (1.0 - bs.wo.z * bs.wo.z).sqrt();
            let si = (1.0 - wi.z * wi.z).sqrt();
            assert!((ni * si - nt * st).abs() < 1e-5, "{wi}: {}", bs.wo);
            assert!(
                bs.wo.z * wi.z < 0.0 && bs.wo.x * wi.x < 0.0 && (bs.wo.length() - 1.0).abs() < 1e-5
            );
            assert!((bs.eta - nt / ni).abs() < 1e-5);
            // radiance scaling (ni/nt)²
            assert!(
                (bs.weight.x - (ni / nt).powi(2)).abs() < 1e-5,
                "{}",
                bs.weight.x
            );
        }
        // total internal reflection from inside beyond the critical angle
        let wi = Vec3::new(0.8, 0.0, -0.6);
        for u in [0.0, 0.5, 0.9999] {
            let bs = s.sample(wi, u, Vec2::ZERO).unwrap();
            assert!(bs.wo.z < 0.0 && bs.pdf == 1.0, "{bs:?}");
        }
    }

    #[test]
    fn energy_conservation_r_plus_t() {
        // lobe probabilities R and T sum to 1; without the 1/η² radiance scaling
        // each sampled weight is 1, so the furnace estimate is exactly 1
        let s = glass();
        for wi in incident_dirs()
            .into_iter()
            .chain(incident_dirs().map(|d| -d))
        {
            let (r, t) = (
                s.sample(wi, 0.0, Vec2::ZERO).unwrap(),
                s.sample(wi, 1.0, Vec2::ZERO),
            );
            let tp = t.map_or(0.0, |t| if t.wo.z * wi.z < 0.0 { t.pdf } else { 0.0 });
            assert!((r.pdf + tp - 1.0).abs() < 1e-6 || r.pdf == 1.0, "{wi}");
            let mut sum = 0.0f64;
            let n = 10_000;
            for i in 0..n {
                let bs = s
                    .sample(wi, (i as f32 + 0.5) / n as f32, Vec2::ZERO)
                    .unwrap();
                sum += (bs.weight.x * bs.eta * bs.eta) as f64;
            }
            assert!(
                (sum / n as f64 - 1.0).abs() < 1e-5,
                "{wi}: {}",
                sum / n as f64
            );
        }
        assert!(s.is_delta() && s.eval(Vec3::Z, -Vec3::Z) == Color::ZERO);
    }

    fn eta_of(s: &Setup) -> f32 {
        match s.bsdf() {
            super::super::AnyBsdf::Dielectric(d) => d.eta,
            b => panic!("not a dielectric: {b:?}"),
        }
    }

    #[test]
    fn named_iors_and_errors() {
        let s = Setup::new("dielectric", &[]);
        assert!((eta_of(&s) - 1.5046 / 1.000277).abs() < 1e-6);
        let s = Setup::new(
            "dielectric",
            &[("int_ior", Value::String("diamond".into()))],
        );
        assert!((eta_of(&s) - 2.419 / 1.000277).abs() < 1e-6);
        let e = build_err("dielectric", &[("int_ior", Value::String("glas".into()))]);
        assert!(
            e.contains("glas") && e.contains("bk7") && e.contains("t.xml:2"),
            "{e}"
        );
        let e = build_err("dielectric", &[("ext_ior", Value::Float(-1.0))]);
        assert!(e.contains("ext_ior") && e.contains("> 0"), "{e}");
    }
}
