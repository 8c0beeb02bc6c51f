//! `constant`: uniform radiance arriving from every direction (a white sky).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `radiance` | rgb or float | 1 | emitted radiance |
//!
//! Direct-illumination sampling picks directions uniformly on the sphere, as Mitsuba.
//!
//! ```xml
//! <emitter type="constant"><rgb name="radiance" value="0.5"/></emitter>
//! ```

use super::registry::RecordCtx;
use super::{constant_color, EmitterCtx, EmitterPlugin, EmitterSample};
use crate::desc::props::Props;
use crate::error::Result;
use crate::math::warp::{square_to_uniform_sphere, UNIFORM_SPHERE_PDF};
use crate::math::{Color, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::{BuildContext, TexRef};
use crate::textures::SurfacePoint;
use crate::{device_record, editable_constant};

/// The constant environment record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct ConstantEmitter {
    /// Radiance (a constant texture).
    pub radiance: TexRef,
}
device_record!(ConstantEmitter { radiance });

impl EmitterPlugin for ConstantEmitter {
    type Record = Self;
    const ENVIRONMENT: bool = true;
    const INFINITE: bool = true;
    const EDITABLE: &'static [EditableKey] = &[editable_constant!(
        ConstantEmitter,
        "radiance.value",
        radiance
    )];

    /// Reads the plugin's parameters.
    fn build(p: &Props, _shape: u32, ctx: &mut dyn BuildContext) -> Result<Self> {
        Ok(ConstantEmitter {
            radiance: constant_color(p, "radiance", Color::ONE, ctx)?,
        })
    }

    fn record(&self, _at: &RecordCtx) -> Self {
        *self
    }

    /// A uniformly distributed direction.
    #[inline]
    fn sample_direction(&self, ctx: &EmitterCtx, _p: Vec3, u: Vec2) -> Option<EmitterSample> {
        Some(EmitterSample {
            d: square_to_uniform_sphere(u),
            dist: f32::INFINITY,
            pdf: UNIFORM_SPHERE_PDF,
            radiance: self.eval_env(ctx, Vec3::Z),
            delta: false,
            uv: Vec2::ZERO,
        })
    }

    /// The radiance, whatever the direction.
    #[inline]
    fn eval_env(&self, ctx: &EmitterCtx, _d: Vec3) -> Color {
        ctx.tex
            .eval(self.radiance, &SurfacePoint::at_uv(Vec2::ZERO))
    }

    /// The solid-angle density of [`Self::sample_direction`].
    #[inline]
    fn pdf_env(&self, _ctx: &EmitterCtx, _d: Vec3) -> f32 {
        UNIFORM_SPHERE_PDF
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{build_one, ectx};
    use crate::desc::props::Value;
    use crate::math::chi2::{chi2_test, Chi2Config};
    use crate::math::{Vec3, INV_FOUR_PI};

    #[test]
    fn uniform_sphere_passes_chi2_and_evaluates_everywhere() {
        let (e, ctx) = build_one(
            "constant",
            &[("radiance", Value::Rgb(Vec3::new(0.5, 1.0, 2.0)))],
        )
        .unwrap();
        let c = ectx(&ctx);
        let p = Vec3::new(0.3, 0.1, -2.0);
        let r = chi2_test(
            &Chi2Config::default(),
            |_, u| e.sample_direction(&c, p, u).map(|s| s.d),
            |d| e.pdf_env(&c, d),
        );
        assert!(r.is_ok(), "{r:?}");
        let s = e
            .sample_direction(&c, p, crate::math::Vec2::new(0.2, 0.9))
            .unwrap();
        assert_eq!(s.radiance, Vec3::new(0.5, 1.0, 2.0));
        assert!((s.pdf - INV_FOUR_PI).abs() < 1e-9 && s.dist.is_infinite() && !s.delta);
        assert_eq!(e.eval_env(&c, -Vec3::Z), Vec3::new(0.5, 1.0, 2.0));
        assert!(e.is_environment());
        let (d, dctx) = build_one("constant", &[]).unwrap();
        assert_eq!(d.eval_env(&ectx(&dctx), Vec3::X), Vec3::ONE);
    }
}
