//! `diffuse`: the ideal Lambertian reflector.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `reflectance` | rgb, float or texture | 0.5 | albedo |
//!
//! ```xml
//! <bsdf type="diffuse"><rgb name="reflectance" value="0.2, 0.25, 0.7"/></bsdf>
//! ```

use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::props::Props;
use crate::error::Result;
use crate::math::warp::{cosine_hemisphere_pdf, square_to_cosine_hemisphere};
use crate::math::{Color, Vec2, Vec3, INV_PI};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};
use crate::{device_record, editable_constant};

/// The Lambertian BSDF record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Diffuse {
    /// Albedo texture.
    pub reflectance: TexRef,
}
device_record!(Diffuse { reflectance });

impl BsdfPlugin for Diffuse {
    type Record = Self;
    const EDITABLE: &'static [EditableKey] = &[editable_constant!(
        Diffuse,
        "reflectance.value",
        reflectance
    )];

    /// Reads the plugin's parameters.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        Ok(Diffuse {
            reflectance: ctx.texture(p, "reflectance", Some(Color::splat(0.5)))?,
        })
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// `eval` is the albedo times `cos θo / π`.
    fn linear_in(&self) -> Vec<TexRef> {
        vec![self.reflectance]
    }

    /// Cosine-weighted sampling; the weight is the albedo.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, _u1: f32, u2: Vec2) -> Option<BsdfSample> {
        if wi.z <= 0.0 {
            return None;
        }
        let wo = square_to_cosine_hemisphere(u2);
        let pdf = cosine_hemisphere_pdf(wo);
        if pdf <= 0.0 {
            return None;
        }
        let weight = ctx.tex.eval(self.reflectance, &ctx.at);
        Some(BsdfSample {
            wo,
            pdf,
            weight,
            eta: 1.0,
            delta: false,
        })
    }

    /// `albedo / π · cos θo` on the upper hemisphere.
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        if wi.z <= 0.0 || wo.z <= 0.0 {
            return Color::ZERO;
        }
        ctx.tex.eval(self.reflectance, &ctx.at) * (INV_PI * wo.z)
    }

    /// Cosine density on the upper hemisphere.
    fn pdf(&self, _ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        if wi.z <= 0.0 || wo.z <= 0.0 {
            return 0.0;
        }
        cosine_hemisphere_pdf(wo)
    }

    /// The albedo (the `albedo` AOV).
    fn diffuse_reflectance(&self, ctx: &BsdfCtx, _wi: Vec3) -> Color {
        ctx.tex.eval(self.reflectance, &ctx.at)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::desc::props::Value;

    #[test]
    fn chi2_consistency_and_furnace() {
        let s = Setup::new("diffuse", &[("reflectance", Value::Float(1.0))]);
        for wi in incident_dirs() {
            assert!(s.chi2(wi, 4).is_ok(), "wi {wi}: {:?}", s.chi2(wi, 4));
            assert!(s.check_consistency(wi, 2000) == 2000);
            // albedo 1 exactly: every sample carries weight 1
            let (a, _) = s.albedo(wi, 10_000);
            assert!((a - Color::ONE).abs().max_element() < 1e-4, "{a}");
        }
        s.check_reciprocity(200);
    }

    #[test]
    fn black_from_behind() {
        let s = Setup::new("diffuse", &[]);
        let back = Vec3::new(0.3, 0.0, -0.9).normalize();
        assert!(s.sample(back, 0.5, Vec2::splat(0.5)).is_none());
        assert_eq!(s.eval(back, Vec3::Z), Color::ZERO);
        assert_eq!(s.eval(Vec3::Z, back), Color::ZERO);
        assert_eq!(s.pdf(Vec3::Z, back), 0.0);
        // eval is ρ/π cos θo
        let wo = Vec3::new(0.6, 0.0, 0.8);
        assert!((s.eval(Vec3::Z, wo).x - 0.5 * 0.8 / std::f32::consts::PI).abs() < 1e-6);
    }
}
