//! `projector`: a pinhole projector, the perspective camera run backwards: it projects
//! an image into the scene. A delta emitter (as Mitsuba 3's `projector.cpp`).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `irradiance` | texture, rgb or float | 1 | irradiance on the virtual image plane at distance 1 in front of the pinhole |
//! | `scale` | float | 1 | factor on `irradiance` (≥ 0) |
//! | `fov` | float | — | field of view in degrees along `fov_axis`, in (0, 180) |
//! | `fov_axis` | string | `x` | `x`, `y`, `diagonal`, `smaller`, `larger` (of the image) |
//! | `focal_length` | string | `50mm` | 35 mm-equivalent focal length, used when `fov` is absent |
//! | `to_world` | transform | identity | projector-to-world: it looks down local +z (as the `perspective` sensor) |
//!
//! The image covers the frustum the `perspective` sensor with the same `to_world` and
//! field of view would see on a film of the image's shape (1×1 for a constant), with
//! the same pixel-to-direction mapping. The radiance arriving at a point `p` is
//! `irradiance(uv) · scale · π / (z² cos θ)`, with `z` the depth of `p` in the
//! projector's frame and θ the angle between the view axis and the direction to `p`:
//! a constant image lights a plane facing the projector at distance 1 with irradiance
//! `π · irradiance · scale` (Mitsuba's normalisation). Nothing is lit outside the frustum.
//!
//! ```xml
//! <emitter type="projector">
//!     <texture type="bitmap" name="irradiance"><string name="filename" value="slide.png"/></texture>
//!     <float name="fov" value="45"/>
//!     <transform name="to_world"><lookat origin="1, 1, 1" target="1, 2, 1" up="0, 0, 1"/></transform>
//! </emitter>
//! ```

use super::registry::RecordCtx;
use super::{
    intensity_towards, local_direction_to_world, EmitterCtx, EmitterPlugin, EmitterRay,
    EmitterSample,
};
use crate::desc::params::Range;
use crate::desc::props::Props;
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::{Color, Mat3, Vec2, Vec3, PI};
use crate::plugin::{BuildContext, TexRef};
use crate::sensors::perspective::parse_fov;
use crate::textures::SurfacePoint;

/// The projector record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct ProjectorEmitter {
    /// World position of the pinhole.
    pub position: Vec3,
    /// World → projector frame (the inverse of `to_world`'s linear part).
    pub to_local: Mat3,
    /// `to_world · (0, 0, 1)`, not normalised (as Mitsuba).
    pub axis: Vec3,
    /// The projected irradiance.
    pub irradiance: TexRef,
    /// Factor on the irradiance.
    pub scale: f32,
    /// Camera space → image uv: `uv = ½ − uv_scale · (x, y) / z`, i.e.
    /// `(½ cot(fov_x / 2), ½ aspect · cot(fov_x / 2))`.
    pub uv_scale: Vec2,
}
device_record!(ProjectorEmitter {
    position,
    to_local,
    axis,
    irradiance,
    scale,
    uv_scale
});

impl EmitterPlugin for ProjectorEmitter {
    type Record = Self;
    const DELTA: bool = true;

    /// Reads the plugin's parameters.
    fn build(p: &Props, _shape: u32, ctx: &mut dyn BuildContext) -> Result<Self> {
        let scale = p.positive_float("scale", 1.0, true)?;
        ctx.declare_float("scale", scale);
        let to_world = p.transform("to_world")?;
        ctx.declare_transform(p, "to_world");
        let irradiance = ctx.texture_in(
            p,
            "irradiance",
            Some(Color::ONE),
            Range::NonNegative,
            SpectrumUse::Emission,
        )?;
        if let Some(c) = ctx.texture_constant(irradiance) {
            if !(c.min_element() >= 0.0) {
                return Err(Error::param(
                    &p.entry_loc("irradiance"),
                    "irradiance",
                    format!("must be non-negative, got {c}"),
                ));
            }
        }
        // the image's shape sets the aspect ratio, as a film's does for the sensor
        let (w, h) = match ctx.texture_image_size(irradiance) {
            Some((w, h)) => (w as f32, h as f32),
            None => (1.0, 1.0),
        };
        let aspect = w / h;
        let x_fov = parse_fov(p, aspect)?;
        let cot = 1.0 / (0.5 * x_fov.to_radians()).tan();
        Ok(ProjectorEmitter {
            position: to_world.point(Vec3::ZERO),
            to_local: Mat3::from_mat4(to_world.inv),
            axis: to_world.vector(Vec3::Z),
            irradiance,
            scale,
            uv_scale: Vec2::new(0.5 * cot, 0.5 * aspect * cot),
        })
    }

    fn record(&self, _at: &RecordCtx) -> Self {
        *self
    }

    /// A ray leaving the projector (light tracing): a direction through a uniform point
    /// of the image (on the plane at depth 1), weighted by the intensity over its density.
    #[inline]
    fn sample_ray(&self, ctx: &EmitterCtx, _u_pos: Vec2, u_dir: Vec2) -> Option<EmitterRay> {
        // uv = ½ − uv_scale · (x, y) at depth 1; the image spans 1 / (uv_scale.x uv_scale.y)
        let xy = (Vec2::splat(0.5) - u_dir) / self.uv_scale;
        let v = Vec3::new(xy.x, xy.y, 1.0);
        let len = v.length();
        // area density on the plane → solid angle: r² / cos θ = |v|³
        let pdf_local = self.uv_scale.x * self.uv_scale.y * len * len * len;
        let (d, pdf) = local_direction_to_world(&self.to_local, v / len, pdf_local)?;
        let i = intensity_towards(self, ctx, self.position, d);
        Some(EmitterRay {
            p: self.position,
            n: Vec3::ZERO,
            d,
            weight: i / pdf,
        })
    }

    /// The direction towards the pinhole, with the radiance the projector sends to `p`;
    /// `None` outside the frustum.
    #[inline]
    fn sample_direction(&self, ctx: &EmitterCtx, p: Vec3, _u: Vec2) -> Option<EmitterSample> {
        let local = self.to_local * (p - self.position);
        if !(local.z > 0.0) {
            return None;
        }
        let uv = Vec2::splat(0.5) - self.uv_scale * Vec2::new(local.x, local.y) / local.z;
        if !(uv.x >= 0.0 && uv.x <= 1.0 && uv.y >= 0.0 && uv.y <= 1.0) {
            return None;
        }
        let v = self.position - p;
        let dist = v.length();
        let d = v / dist;
        // Mitsuba's normalisation: irradiance at depth 1 (dist² cos³θ = z² cos θ)
        let cos_theta = -self.axis.dot(d);
        if !(cos_theta > 0.0) {
            return None; // only under a sheared to_world: the axis points away from p
        }
        let k = PI * self.scale / (local.z * local.z * cos_theta);
        Some(EmitterSample {
            d,
            dist,
            pdf: 1.0,
            radiance: ctx.tex.eval(self.irradiance, &SurfacePoint::at_uv(uv)) * k,
            delta: true,
            uv: Vec2::ZERO,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::spot::tests::{bitmap_4x3, check_rows};
    use super::super::test_util::{build_err, build_one, ectx};
    use crate::desc::props::Value;
    use crate::math::{Transform, Vec2, Vec3, PI};

    fn look_at(o: [f32; 3], t: [f32; 3], up: [f32; 3]) -> Value {
        let t = Transform::look_at(o.into(), t.into(), up.into()).unwrap();
        Value::Transform(t)
    }

    // Mitsuba 3.9.1 values: tests/references/spot_projector_values.py.
    #[test]
    fn constant_projector_matches_mitsuba() {
        let (e, ctx) = build_one(
            "projector",
            &[
                ("irradiance", Value::Rgb(Vec3::new(1.0, 2.0, 0.5))),
                ("fov", Value::Float(60.0)),
                ("scale", Value::Float(3.0)),
                (
                    "to_world",
                    look_at([0., 0., 2.], [0., 0., 0.], [0., 1., 0.]),
                ),
            ],
        )
        .unwrap();
        assert!(e.is_delta() && !e.is_environment());
        #[rustfmt::skip]
        check_rows(&e, &ctx, &[
            ([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], 2.0, 1.0, [2.3561945, 4.71238899, 1.17809725]),
            ([0.5, -0.3, 0.0], [-0.240007669, 0.144004613, 0.960030675], 2.08326674, 1.0, [2.45429087, 4.90858173, 1.22714543]),
            ([0.9, 0.9, -1.0], [-0.2761724, -0.2761724, 0.920574725], 3.25883389, 1.0, [1.13754761, 2.27509522, 0.568773806]),
            ([3.0, 0.0, 0.0], [-0.832050323, 0.0, 0.554700196], 3.60555124, 0.0, [0.0, 0.0, 0.0]),
            ([0.0, 0.0, 3.0], [0.0, 0.0, -1.0], 1.0, 0.0, [0.0, 0.0, 0.0]),
        ]);
    }

    #[test]
    fn textured_projector_with_fov_axis_y_matches_mitsuba() {
        let (e, ctx) = build_one(
            "projector",
            &[
                ("irradiance", bitmap_4x3()),
                ("fov", Value::Float(40.0)),
                ("fov_axis", Value::String("y".into())),
                (
                    "to_world",
                    look_at([1., 1., 1.], [0., 0., -1.], [0., 0., 1.]),
                ),
            ],
        )
        .unwrap();
        #[rustfmt::skip]
        check_rows(&e, &ctx, &[
            ([0.0, 0.0, -1.0], [0.408248276, 0.408248276, 0.816496551], 2.44948983, 1.0, [0.209439501, 0.183259547, 0.287979305]),
            ([0.2, -0.1, -0.8], [0.354593784, 0.487566441, 0.797836006], 2.2561028, 1.0, [0.201686874, 0.199232653, 0.382005155]),
            ([-0.3, 0.4, -1.2], [0.495260507, 0.228581801, 0.838133216], 2.62488103, 1.0, [0.270760655, 0.209997654, 0.201233715]),
            ([0.5, 0.5, -0.2], [0.358979076, 0.358979076, 0.861549795], 1.39283884, 1.0, [0.654486716, 0.740963995, 0.787727118]),
            ([2.0, 2.0, 2.0], [-0.577350259, -0.577350259, -0.577350259], 1.73205078, 0.0, [0.0, 0.0, 0.0]),
        ]);
    }

    #[test]
    fn a_plane_at_unit_depth_receives_uniform_irradiance() {
        // irradiance E at a point of the plane z = 1 facing the projector is
        // radiance · cos θ (the incident angle equals the off-axis angle): π · 0.5
        let (e, ctx) = build_one(
            "projector",
            &[
                ("irradiance", Value::Float(0.5)),
                ("fov", Value::Float(90.0)),
            ],
        )
        .unwrap();
        let c = ectx(&ctx);
        for (x, y) in [(0.0, 0.0), (0.5, -0.3), (-0.9, 0.9), (0.99, 0.99)] {
            let s = e
                .sample_direction(&c, Vec3::new(x, y, 1.0), Vec2::ZERO)
                .unwrap();
            let irr = s.radiance.x * -s.d.z;
            assert!((irr - 0.5 * PI).abs() < 1e-5, "({x}, {y}): {irr}");
        }
        // fov 90: the frustum's edge at depth 1 is x = ±1
        assert!(e
            .sample_direction(&c, Vec3::new(1.01, 0.0, 1.0), Vec2::ZERO)
            .is_none());
    }

    #[test]
    fn bad_parameters_name_the_key_and_the_line() {
        for (props, key, what) in [
            (vec![("fov", Value::Float(180.0))], "fov", "(0, 180)"),
            (vec![("fov", Value::Float(-10.0))], "fov", "(0, 180)"),
            (
                vec![
                    ("fov", Value::Float(40.0)),
                    ("fov_axis", Value::String("z".into())),
                ],
                "fov_axis",
                "diagonal",
            ),
            (vec![("scale", Value::Float(-1.0))], "scale", "scale"),
            (
                vec![("irradiance", Value::Float(-2.0))],
                "irradiance",
                "non-negative",
            ),
            (
                vec![("irradiance", Value::String("slide.png".into()))],
                "irradiance",
                "irradiance",
            ),
            (
                vec![("intensity", Value::Float(1.0))],
                "intensity",
                "projector",
            ),
        ] {
            let err = build_err("projector", &props);
            assert!(
                err.contains(key) && err.contains(what) && err.contains("e.xml:"),
                "{props:?}: {err}"
            );
        }
    }
}
