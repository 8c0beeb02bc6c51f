//! `point`: an isotropic point light.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `position` | point | (0, 0, 0) | where the light is |
//! | `to_world` | transform | — | alternative to `position`: the light sits at `to_world · 0` |
//! | `intensity` | rgb or float | 1 | radiant intensity (W/sr); the radiance arriving at distance r is `intensity / r²` |
//!
//! ```xml
//! <emitter type="point">
//!     <point name="position" x="0" y="4" z="1"/>
//!     <rgb name="intensity" value="10"/>
//! </emitter>
//! ```

use super::registry::RecordCtx;
use super::{constant_color, exclusive, EmitterCtx, EmitterPlugin, EmitterRay, EmitterSample};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::warp::{square_to_uniform_sphere, UNIFORM_SPHERE_PDF};
use crate::math::{Color, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::{BuildContext, TexRef};
use crate::textures::SurfacePoint;
use crate::{device_record, editable_constant};

/// The point light record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct PointEmitter {
    /// World position.
    pub position: Vec3,
    /// Intensity (a constant texture).
    pub intensity: TexRef,
}
device_record!(PointEmitter {
    position,
    intensity
});

impl EmitterPlugin for PointEmitter {
    type Record = Self;
    const DELTA: bool = true;
    const EDITABLE: &'static [EditableKey] = &[editable_constant!(
        PointEmitter,
        "intensity.value",
        intensity
    )];

    /// Reads the plugin's parameters.
    fn build(p: &Props, _shape: u32, ctx: &mut dyn BuildContext) -> Result<Self> {
        exclusive(p, "position", "to_world")?;
        let position = match p.vec3_opt("position")? {
            Some(v) => v,
            None => p.transform("to_world")?.point(Vec3::ZERO),
        };
        if !position.is_finite() {
            let key = if p.has("position") {
                "position"
            } else {
                "to_world"
            };
            return Err(Error::param(&p.entry_loc(key), key, "must be finite"));
        }
        ctx.declare_vector("position", position, &["to_world"]);
        Ok(PointEmitter {
            position,
            intensity: constant_color(p, "intensity", Color::ONE, ctx)?,
        })
    }

    fn record(&self, _at: &RecordCtx) -> Self {
        *self
    }

    /// A ray leaving the light (light tracing): a uniform direction.
    #[inline]
    fn sample_ray(&self, ctx: &EmitterCtx, _u_pos: Vec2, u_dir: Vec2) -> Option<EmitterRay> {
        Some(EmitterRay {
            p: self.position,
            n: Vec3::ZERO,
            d: square_to_uniform_sphere(u_dir),
            weight: ctx
                .tex
                .eval(self.intensity, &SurfacePoint::at_uv(Vec2::ZERO))
                / UNIFORM_SPHERE_PDF,
        })
    }

    /// The direction towards the light, with radiance `intensity / r²`.
    #[inline]
    fn sample_direction(&self, ctx: &EmitterCtx, p: Vec3, _u: Vec2) -> Option<EmitterSample> {
        let v = self.position - p;
        let dist2 = v.length_squared();
        if !(dist2 > 0.0) {
            return None;
        }
        let dist = dist2.sqrt();
        Some(EmitterSample {
            d: v / dist,
            dist,
            pdf: 1.0,
            radiance: ctx
                .tex
                .eval(self.intensity, &SurfacePoint::at_uv(Vec2::ZERO))
                / dist2,
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
    fn inverse_square_falloff() {
        let pos = Vec3::new(1.0, 2.0, 3.0);
        let (e, ctx) = build_one(
            "point",
            &[
                ("position", Value::Point(pos)),
                ("intensity", Value::Rgb(Vec3::new(8.0, 4.0, 2.0))),
            ],
        )
        .unwrap();
        let c = ectx(&ctx);
        for (p, r) in [
            (Vec3::new(1.0, 2.0, 1.0), 2.0f32),
            (Vec3::new(1.0, -2.0, 3.0), 4.0),
        ] {
            let s = e.sample_direction(&c, p, Vec2::new(0.3, 0.7)).unwrap();
            assert!((s.d - (pos - p) / r).length() < 1e-6);
            assert!((s.dist - r).abs() < 1e-6 && s.pdf == 1.0 && s.delta);
            let want = Vec3::new(8.0, 4.0, 2.0) / (r * r);
            assert!(
                (s.radiance - want).length() < 1e-6,
                "{} vs {want}",
                s.radiance
            );
        }
        assert!(e.sample_direction(&c, pos, Vec2::ZERO).is_none());
        assert!(!e.is_environment() && e.is_delta());
    }

    #[test]
    fn to_world_places_the_light_and_conflicts_with_position() {
        let t = Transform::translate(Vec3::new(0.0, 5.0, 0.0));
        let (e, ctx) = build_one("point", &[("to_world", Value::Transform(t))]).unwrap();
        let s = e
            .sample_direction(&ectx(&ctx), Vec3::ZERO, Vec2::ZERO)
            .unwrap();
        assert!((s.d - Vec3::Y).length() < 1e-6 && (s.radiance.x - 1.0 / 25.0).abs() < 1e-7);
        let err = build_err(
            "point",
            &[
                ("position", Value::Point(Vec3::ZERO)),
                ("to_world", Value::Transform(t)),
            ],
        );
        assert!(err.contains("e.xml:3") && err.contains("not both"), "{err}");
        let err = build_err("point", &[("intensity", Value::Float(-1.0))]);
        assert!(err.contains("non-negative"), "{err}");
        let err = build_err("point", &[("power", Value::Float(1.0))]);
        assert!(err.contains("power") && err.contains("e.xml:2"), "{err}");
    }
}
