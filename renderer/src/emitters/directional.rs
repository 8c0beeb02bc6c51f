//! `directional`: parallel light arriving from infinity (the sun, idealised).
//! A delta emitter; escaping rays do not see it.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `direction` | vector | — | the direction the light travels in |
//! | `to_world` | transform | identity | alternative to `direction`: light travels along `to_world · (0, 0, 1)` |
//! | `irradiance` | rgb or float | 1 | irradiance on a surface facing the light (W/m²) |
//!
//! ```xml
//! <emitter type="directional">
//!     <vector name="direction" x="0" y="-1" z="-1"/>
//!     <rgb name="irradiance" value="3"/>
//! </emitter>
//! ```

use super::registry::RecordCtx;
use super::{constant_color, exclusive, EmitterCtx, EmitterPlugin, EmitterSample};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::{Color, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::{BuildContext, TexRef};
use crate::textures::SurfacePoint;
use crate::{device_record, editable_constant};

/// The directional light record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct DirectionalEmitter {
    /// Unit direction of travel of the light (world space).
    pub direction: Vec3,
    /// Irradiance (a constant texture).
    pub irradiance: TexRef,
}
device_record!(DirectionalEmitter {
    direction,
    irradiance
});

impl EmitterPlugin for DirectionalEmitter {
    type Record = Self;
    const DELTA: bool = true;
    const INFINITE: bool = true;
    const EDITABLE: &'static [EditableKey] = &[editable_constant!(
        DirectionalEmitter,
        "irradiance.value",
        irradiance
    )];

    /// Reads the plugin's parameters.
    fn build(p: &Props, _shape: u32, ctx: &mut dyn BuildContext) -> Result<Self> {
        exclusive(p, "direction", "to_world")?;
        let (key, d) = match p.vec3_opt("direction")? {
            Some(v) => ("direction", v),
            None => ("to_world", p.transform("to_world")?.vector(Vec3::Z)),
        };
        let direction = d.normalize_or_zero();
        if direction == Vec3::ZERO || !direction.is_finite() {
            return Err(Error::param(
                &p.entry_loc(key),
                key,
                format!("must give a non-zero finite direction, got {d}"),
            ));
        }
        ctx.declare_vector("direction", d, &["to_world"]);
        Ok(DirectionalEmitter {
            direction,
            irradiance: constant_color(p, "irradiance", Color::ONE, ctx)?,
        })
    }

    fn record(&self, _at: &RecordCtx) -> Self {
        *self
    }

    /// The direction towards the light (at infinity).
    #[inline]
    fn sample_direction(&self, ctx: &EmitterCtx, _p: Vec3, _u: Vec2) -> Option<EmitterSample> {
        Some(EmitterSample {
            d: -self.direction,
            dist: f32::INFINITY,
            pdf: 1.0,
            radiance: ctx
                .tex
                .eval(self.irradiance, &SurfacePoint::at_uv(Vec2::ZERO)),
            delta: true,
            uv: Vec2::ZERO,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{build_err, build_one, ectx};
    use crate::desc::props::Value;
    use crate::math::{Transform, Vec2, Vec3};

    #[test]
    fn comes_from_infinity_against_its_direction() {
        let (e, ctx) = build_one(
            "directional",
            &[
                ("direction", Value::Vector(Vec3::new(0.0, -2.0, 0.0))),
                ("irradiance", Value::Float(3.0)),
            ],
        )
        .unwrap();
        let s = e
            .sample_direction(&ectx(&ctx), Vec3::new(4.0, 1.0, 2.0), Vec2::ZERO)
            .unwrap();
        assert!((s.d - Vec3::Y).length() < 1e-6 && s.dist == f32::INFINITY);
        assert_eq!((s.pdf, s.delta, s.radiance), (1.0, true, Vec3::splat(3.0)));
        assert!(!e.is_environment());
        assert_eq!(e.eval_env(&ectx(&ctx), -Vec3::Y), Vec3::ZERO);
    }

    #[test]
    fn to_world_rotates_plus_z() {
        let t = Transform::rotate(Vec3::X, 90.0).unwrap(); // +z -> -y
        let (e, ctx) = build_one("directional", &[("to_world", Value::Transform(t))]).unwrap();
        let s = e
            .sample_direction(&ectx(&ctx), Vec3::ZERO, Vec2::ZERO)
            .unwrap();
        assert!((s.d - Vec3::Y).length() < 1e-6, "{}", s.d);
        assert_eq!(s.radiance, Vec3::ONE);
        let err = build_err("directional", &[("direction", Value::Vector(Vec3::ZERO))]);
        assert!(
            err.contains("e.xml:2") && err.contains("direction"),
            "{err}"
        );
    }
}
