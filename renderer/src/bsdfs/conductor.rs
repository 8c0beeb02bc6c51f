//! `conductor`: a perfectly smooth metal (Dirac delta reflection with the exact
//! conductor Fresnel term). One-sided: black from behind.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `material` | string | `none` | named complex IOR preset (`Au`, `Ag`, `Al`, `Cu`, `Cr`, … see [`super::ior::CONDUCTORS`]); `none` is a perfect mirror (η = 0, k = 1) |
//! | `eta`, `k` | rgb, float or texture | 0, 1 | real and imaginary parts of the IOR (only with `material` = `none`) |
//! | `specular_reflectance` | rgb, float or texture | 1 | factor on the reflection (not physical) |
//!
//! ```xml
//! <bsdf type="conductor"><string name="material" value="Au"/></bsdf>
//! ```

use super::fresnel::fresnel_conductor_rgb;
use super::{ior, BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::params::Range;
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::{reflect_local, Color, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};
use crate::{device_record, editable_constant};

/// The smooth conductor record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Conductor {
    /// Real part of the IOR.
    pub eta: TexRef,
    /// Imaginary part (extinction).
    pub k: TexRef,
    /// Reflectance factor.
    pub specular_reflectance: TexRef,
}
device_record!(Conductor {
    eta,
    k,
    specular_reflectance
});

/// Reads `material` or `eta`/`k` (Mitsuba: the two forms are exclusive).
pub fn read_complex_ior(p: &Props, ctx: &mut dyn BuildContext) -> Result<(TexRef, TexRef)> {
    let material = p.string("material", "none")?;
    let explicit = p.has("eta") || p.has("k");
    if material != "none" {
        if explicit {
            return Err(Error::param(
                &p.entry_loc("material"),
                "material",
                "give either a material preset or eta/k, not both",
            ));
        }
        let (eta, k) = ior::conductor(&material).ok_or_else(|| {
            Error::param(
                &p.entry_loc("material"),
                "material",
                format!(
                    "unknown conductor \"{material}\" (known: {})",
                    ior::conductor_names()
                ),
            )
        })?;
        return Ok((ctx.add_constant(eta)?, ctx.add_constant(k)?));
    }
    // indices of refraction are not bounded by 1 (Mitsuba's unbounded textures)
    let eta = ctx.texture_in(
        p,
        "eta",
        Some(Color::ZERO),
        Range::Any,
        SpectrumUse::Unbounded,
    )?;
    let k = ctx.texture_in(p, "k", Some(Color::ONE), Range::Any, SpectrumUse::Unbounded)?;
    for (key, t) in [("eta", eta), ("k", k)] {
        let m = ctx.texture_mean(t);
        if m.min_element() < 0.0 {
            return Err(Error::param(
                &p.entry_loc(key),
                key,
                format!("must be >= 0, got {m}"),
            ));
        }
    }
    Ok((eta, k))
}

impl Conductor {
    /// Fresnel reflectance times `specular_reflectance` at incident cosine `cos_i`.
    pub fn reflectance(&self, ctx: &BsdfCtx, cos_i: f32) -> Color {
        let eta = ctx.tex.eval(self.eta, &ctx.at);
        let k = ctx.tex.eval(self.k, &ctx.at);
        fresnel_conductor_rgb(cos_i, eta, k) * ctx.tex.eval(self.specular_reflectance, &ctx.at)
    }
}

impl BsdfPlugin for Conductor {
    type Record = Self;
    const DELTA: bool = true;
    const READS_TEXTURE_MEANS: bool = true;
    const EDITABLE: &'static [EditableKey] = &[
        editable_constant!(Conductor, "eta.value", eta),
        editable_constant!(Conductor, "k.value", k),
        editable_constant!(
            Conductor,
            "specular_reflectance.value",
            specular_reflectance
        ),
    ];

    /// Reads the plugin's parameters.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let (eta, k) = read_complex_ior(p, ctx)?;
        Ok(Conductor {
            eta,
            k,
            specular_reflectance: ctx.texture(p, "specular_reflectance", Some(Color::ONE))?,
        })
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// Mirror reflection; the weight is the Fresnel reflectance.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, _u1: f32, _u2: Vec2) -> Option<BsdfSample> {
        if wi.z <= 0.0 {
            return None;
        }
        Some(BsdfSample {
            wo: reflect_local(wi),
            pdf: 1.0,
            weight: self.reflectance(ctx, wi.z),
            eta: 1.0,
            delta: true,
        })
    }

    /// Zero: the only lobe is a delta.
    fn eval(&self, _ctx: &BsdfCtx, _wi: Vec3, _wo: Vec3) -> Color {
        Color::ZERO
    }

    /// Zero: the only lobe is a delta.
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
    fn none_is_a_perfect_mirror_and_gold_matches_normal_incidence() {
        let s = Setup::new("conductor", &[]);
        for wi in incident_dirs() {
            let bs = s
                .sample(wi, 0.3, Vec2::new(0.2, 0.9))
                .expect("front side reflects");
            assert!(bs.delta && bs.pdf == 1.0);
            assert!((bs.wo - Vec3::new(-wi.x, -wi.y, wi.z)).length() < 1e-6);
            assert!(
                (bs.weight - Color::ONE).abs().max_element() < 1e-5,
                "{}",
                bs.weight
            );
        }
        let s = Setup::new("conductor", &[("material", Value::String("Au".into()))]);
        let bs = s.sample(Vec3::Z, 0.5, Vec2::splat(0.5)).unwrap();
        let (n, k) = (
            Color::new(0.143119, 0.374957, 1.44248),
            Color::new(3.98316, 2.38572, 1.60322),
        );
        let want = ((n - 1.0) * (n - 1.0) + k * k) / ((n + 1.0) * (n + 1.0) + k * k);
        assert!(
            (bs.weight - want).abs().max_element() < 2e-3,
            "{} vs {want}",
            bs.weight
        );
        // gold is yellow: red reflects more than blue
        assert!(bs.weight.x > 0.9 && bs.weight.z < 0.45, "{}", bs.weight);
    }

    #[test]
    fn one_sided_and_delta_eval() {
        let s = Setup::new("conductor", &[("material", Value::String("Cu".into()))]);
        assert!(s
            .sample(Vec3::new(0.3, 0.0, -0.9).normalize(), 0.5, Vec2::splat(0.5))
            .is_none());
        assert_eq!(s.eval(Vec3::Z, Vec3::Z), Color::ZERO);
        assert!(s.is_delta());
    }

    #[test]
    fn parameter_errors() {
        let e = build_err("conductor", &[("material", Value::String("Gold".into()))]);
        assert!(
            e.contains("Gold") && e.contains("Au") && e.contains("t.xml:2"),
            "{e}"
        );
        let e = build_err(
            "conductor",
            &[
                ("material", Value::String("Au".into())),
                ("eta", Value::Float(1.0)),
            ],
        );
        assert!(e.contains("not both"), "{e}");
        let e = build_err("conductor", &[("k", Value::Float(-1.0))]);
        assert!(e.contains(">= 0"), "{e}");
        let e = build_err("conductor", &[("eta", Value::Float(f64::NAN))]);
        assert!(e.contains("finite"), "{e}");
    }
}
