//! `spot`: a point light that shines into a cone, optionally projecting a texture.
//! A delta emitter (as Mitsuba 3's `spot.cpp`).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `intensity` | rgb or float | 1 | radiant intensity (W/sr) along the axis; must be constant |
//! | `cutoff_angle` | float | 20 | half-angle of the cone in degrees, in (0, 180]; black beyond it |
//! | `beam_width` | float | `cutoff_angle` · 3/4 | half-angle in degrees of the fully lit core, in [0, `cutoff_angle`] |
//! | `texture` | texture | — | optional spatially varying texture (e.g. `bitmap`) projected through the cone; needs `cutoff_angle` < 90 |
//! | `to_world` | transform | identity | the light sits at `to_world · 0` and shines along `to_world · (0, 0, 1)` |
//! | `position`, `target` | point | — | heliograph's shorthand instead of `to_world` (Mitsuba has none): `look_at(position, target, up)` with `up` = +y, or +z when the beam is vertical |
//!
//! Profile (Mitsuba 3): at angle θ from the axis the intensity is scaled by 1 up to
//! `beam_width`, then falls linearly in θ to 0 at `cutoff_angle`. The texture is looked
//! up at `uv = ½ + ½ · (x, y) / (z · tan cutoff_angle)` of the local direction
//! `(x, y, z)` (local +x is `to_world`'s first column), so the image spans the square
//! around the cone's base circle. The radiance arriving at distance r is
//! `intensity · texture · profile / r²`.
//!
//! ```xml
//! <emitter type="spot">
//!     <transform name="to_world"><lookat origin="1, 1, 1" target="1, 2, 1" up="0, 0, 1"/></transform>
//!     <rgb name="intensity" value="10"/>
//!     <float name="cutoff_angle" value="30"/>
//! </emitter>
//! ```

use super::registry::RecordCtx;
use super::{
    constant_color, intensity_towards, local_direction_to_world, EmitterCtx, EmitterPlugin,
    EmitterRay, EmitterSample,
};
use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::props::Props;
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::warp::{square_to_uniform_cone, uniform_cone_pdf};
use crate::math::{Color, Mat3, Transform, Vec2, Vec3};
use crate::plugin::{BuildContext, TexRef};
use crate::textures::SurfacePoint;

/// [`SpotEmitter::texture`] when no texture is projected.
pub const NO_TEXTURE: TexRef = u32::MAX;

/// The spot light record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct SpotEmitter {
    /// World position.
    pub position: Vec3,
    /// World → light frame (the inverse of `to_world`'s linear part).
    pub to_local: Mat3,
    /// Intensity (a constant texture).
    pub intensity: TexRef,
    /// The projected texture, or [`NO_TEXTURE`].
    pub texture: TexRef,
    /// Cutoff angle in radians.
    pub cutoff: f32,
    /// cos of the cutoff angle.
    pub cos_cutoff: f32,
    /// cos of the beam width.
    pub cos_beam: f32,
    /// 1 / (cutoff − beam width) in 1/radians (0 when they are equal).
    pub inv_transition: f32,
    /// tan of the cutoff angle: the texture's half-extent at unit distance.
    pub uv_factor: f32,
}
device_record!(SpotEmitter {
    position,
    to_local,
    intensity,
    texture,
    cutoff,
    cos_cutoff,
    cos_beam,
    inv_transition,
    uv_factor
});

impl EmitterPlugin for SpotEmitter {
    type Record = Self;
    const DELTA: bool = true;

    /// Reads the plugin's parameters.
    fn build(p: &Props, _shape: u32, ctx: &mut dyn BuildContext) -> Result<Self> {
        let to_world = placement(p, ctx)?;
        let cutoff_deg = angle(p, "cutoff_angle", 20.0, 180.0)?;
        let beam_deg = angle(p, "beam_width", cutoff_deg * 0.75, cutoff_deg)?;
        for (key, v) in [("cutoff_angle", cutoff_deg), ("beam_width", beam_deg)] {
            let range = Range::NonNegative;
            ctx.declare(key, ParamValue::Float(v as f64), Target::prop(key), range);
        }
        let intensity = constant_color(p, "intensity", Color::ONE, ctx)?;
        let texture = projected_texture(p, cutoff_deg, ctx)?;
        let (cutoff, beam) = (cutoff_deg.to_radians(), beam_deg.to_radians());
        let inv_transition = if cutoff > beam {
            1.0 / (cutoff - beam)
        } else {
            0.0
        };
        Ok(SpotEmitter {
            position: to_world.point(Vec3::ZERO),
            to_local: Mat3::from_mat4(to_world.inv),
            intensity,
            texture,
            cutoff,
            cos_cutoff: cutoff.cos(),
            cos_beam: beam.cos(),
            inv_transition,
            uv_factor: cutoff.tan(),
        })
    }

    fn record(&self, _at: &RecordCtx) -> Self {
        *self
    }

    /// A ray leaving the light (light tracing): a direction uniformly in the cone,
    /// weighted by the intensity (profile and texture included) over its density.
    #[inline]
    fn sample_ray(&self, ctx: &EmitterCtx, _u_pos: Vec2, u_dir: Vec2) -> Option<EmitterRay> {
        let local = square_to_uniform_cone(u_dir, self.cos_cutoff);
        let pdf_local = uniform_cone_pdf(self.cos_cutoff);
        let (d, pdf) = local_direction_to_world(&self.to_local, local, pdf_local)?;
        let i = intensity_towards(self, ctx, self.position, d);
        Some(EmitterRay {
            p: self.position,
            n: Vec3::ZERO,
            d,
            weight: i / pdf,
        })
    }

    /// The direction towards the light, with radiance `intensity · texture · profile / r²`;
    /// `None` outside the cone.
    #[inline]
    fn sample_direction(&self, ctx: &EmitterCtx, p: Vec3, _u: Vec2) -> Option<EmitterSample> {
        let v = self.position - p;
        let dist2 = v.length_squared();
        if !(dist2 > 0.0) {
            return None;
        }
        let dist = dist2.sqrt();
        let d = v / dist;
        let local = self.to_local * -d;
        let falloff = self.falloff(local);
        if !(falloff > 0.0) {
            return None;
        }
        let mut radiance = ctx
            .tex
            .eval(self.intensity, &SurfacePoint::at_uv(Vec2::ZERO));
        if self.texture != NO_TEXTURE {
            radiance *= ctx.tex.eval(
                self.texture,
                &SurfacePoint::at_uv(self.direction_to_uv(local)),
            );
        }
        let inv_dist = 1.0 / dist;
        Some(EmitterSample {
            d,
            dist,
            pdf: 1.0,
            radiance: radiance * (falloff * (inv_dist * inv_dist)),
            delta: true,
            uv: Vec2::ZERO,
        })
    }
}

impl SpotEmitter {
    /// The profile factor in [0, 1] for light-frame direction `local` (any length).
    #[inline]
    pub fn falloff(&self, local: Vec3) -> f32 {
        let cos_theta = local.normalize_or_zero().z;
        if !(cos_theta > self.cos_cutoff) {
            return 0.0;
        }
        if cos_theta >= self.cos_beam {
            1.0
        } else {
            (self.cutoff - cos_theta.acos()) * self.inv_transition
        }
    }

    /// Texture coordinates of light-frame direction `local` (any length).
    #[inline]
    pub fn direction_to_uv(&self, local: Vec3) -> Vec2 {
        let k = local.z * self.uv_factor;
        Vec2::new(0.5 + 0.5 * local.x / k, 0.5 + 0.5 * local.y / k)
    }
}

/// An angle in degrees in `(0, max]` (`beam_width` may be 0: a pure linear ramp),
/// `default` when absent.
fn angle(p: &Props, key: &str, default: f32, max: f32) -> Result<f32> {
    let v = p.float(key, default)?;
    let min_ok = if key == "beam_width" {
        v >= 0.0
    } else {
        v > 0.0
    };
    if !min_ok || !(v <= max) {
        let lo = if key == "beam_width" { "[0" } else { "(0" };
        return Err(Error::param(
            &p.entry_loc(key),
            key,
            format!("must be an angle in degrees in {lo}, {max}], got {v}"),
        ));
    }
    Ok(v)
}

/// The optional projected texture: it must vary (Mitsuba refuses a constant), and the
/// cone must be narrower than a hemisphere for the planar projection.
fn projected_texture(p: &Props, cutoff_deg: f32, ctx: &mut dyn BuildContext) -> Result<TexRef> {
    if !p.has("texture") {
        return Ok(NO_TEXTURE);
    }
    let t = ctx.texture(p, "texture", None)?;
    if ctx.texture_constant(t).is_some() {
        return Err(Error::param(
            &p.entry_loc("texture"),
            "texture",
            "must be a spatially varying texture (e.g. a bitmap); for a uniform colour \
             scale \"intensity\" instead",
        ));
    }
    if !(cutoff_deg < 90.0) {
        return Err(Error::param(
            &p.entry_loc("cutoff_angle"),
            "cutoff_angle",
            format!(
                "must be below 90 degrees when a texture is projected (the image lies \
                 on a plane in front of the light), got {cutoff_deg}"
            ),
        ));
    }
    Ok(t)
}

/// The light's frame: `to_world`, or `look_at(position, target)` from heliograph's
/// shorthand; declares the parameters that place it.
fn placement(p: &Props, ctx: &mut dyn BuildContext) -> Result<Transform> {
    let shorthand = p.has("position") || p.has("target");
    if !shorthand {
        ctx.declare_transform(p, "to_world");
        return p.transform("to_world");
    }
    super::exclusive(p, "position", "to_world")?;
    super::exclusive(p, "target", "to_world")?;
    let key = if p.has("position") {
        "position"
    } else {
        "target"
    };
    let need = |k: &str| {
        p.vec3_opt(k)?.ok_or_else(|| {
            Error::param(
                &p.entry_loc(key),
                k,
                format!("is required with \"{key}\" (or give \"to_world\" instead)"),
            )
        })
    };
    let (position, target) = (need("position")?, need("target")?);
    let dir = target - position;
    let up = if dir.x.abs() + dir.z.abs() > 1e-6 * dir.y.abs() {
        Vec3::Y
    } else {
        Vec3::Z
    };
    let t = Transform::look_at(position, target, up)
        .filter(|_| position.is_finite() && target.is_finite())
        .ok_or_else(|| {
            Error::param(
                &p.entry_loc("target"),
                "target",
                format!("must be finite and differ from position {position}, got {target}"),
            )
        })?;
    ctx.declare_vector("position", position, &[]);
    ctx.declare_vector("target", target, &[]);
    Ok(t)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::test_util::{build_err, build_one, ectx};
    use super::super::AnyEmitter;
    use crate::desc::props::{PixelArray, Value};
    use crate::math::{Mat4, Transform, Vec2, Vec3};
    use std::sync::Arc;

    /// The 4×3 RGB image of tests/references/spot_projector_values.py:
    /// texel (x, y) = (0.1 + 0.2 x, 0.05 + 0.3 y, 0.9 − 0.1 x − 0.2 y).
    pub fn image_4x3() -> Value {
        let data = (0..3)
            .flat_map(|y| {
                (0..4).flat_map(move |x| {
                    let (x, y) = (x as f32, y as f32);
                    [0.1 + 0.2 * x, 0.05 + 0.3 * y, 0.9 - 0.1 * x - 0.2 * y]
                })
            })
            .collect();
        Value::Pixels(Arc::new(PixelArray {
            width: 4,
            height: 3,
            channels: 3,
            data,
        }))
    }

    /// A `bitmap` texture object holding [`image_4x3`] (linear, bilinear, repeat).
    pub fn bitmap_4x3() -> Value {
        let mut d = super::super::test_util::desc("bitmap", &[("data", image_4x3())]);
        d.category = crate::desc::Category::Texture;
        Value::Object(Arc::new(d))
    }

    /// Rows `(p, d, dist, pdf, radiance)` of Mitsuba's `sample_direction` (as printed, in
    /// f64 literals).
    pub type Row = ([f64; 3], [f64; 3], f64, f64, [f64; 3]);

    /// Compares `sample_direction` with Mitsuba's rows (pdf 0 or zero radiance: `None`).
    pub fn check_rows(e: &AnyEmitter, ctx: &crate::scene::builder::BuildCtx, rows: &[Row]) {
        let c = ectx(ctx);
        let v = |a: &[f64; 3]| Vec3::new(a[0] as f32, a[1] as f32, a[2] as f32);
        for (p, d, dist, pdf, l) in rows {
            let (p, l, d, dist) = (v(p), v(l), v(d), *dist as f32);
            let s = e.sample_direction(&c, p, Vec2::new(0.3, 0.7));
            if *pdf == 0.0 || l == Vec3::ZERO {
                assert!(s.is_none(), "at {p}: {s:?}, Mitsuba none");
                continue;
            }
            let s = s.unwrap_or_else(|| panic!("at {p}: none, Mitsuba {l}"));
            assert!((s.d - d).length() < 2e-6, "at {p}: d {}", s.d);
            assert!((s.dist - dist).abs() < 2e-6 * dist && s.pdf == 1.0 && s.delta);
            let err = (s.radiance - l).abs().max_element() / l.max_element();
            assert!(err < 2e-5, "at {p}: {} vs Mitsuba {l}", s.radiance);
        }
    }

    fn look_at(o: [f32; 3], t: [f32; 3], up: [f32; 3]) -> Value {
        let t = Transform::look_at(o.into(), t.into(), up.into()).unwrap();
        Value::Transform(t)
    }

    // Mitsuba 3.9.1 values: tests/references/spot_projector_values.py.
    #[test]
    fn defaults_match_mitsuba() {
        let (e, ctx) = build_one("spot", &[]).unwrap();
        assert!(e.is_delta() && !e.is_environment());
        #[rustfmt::skip]
        check_rows(&e, &ctx, &[
            ([0.0, 0.0, 2.0], [0.0, 0.0, -1.0], 2.0, 1.0, [0.25, 0.25, 0.25]),
            ([0.3, -0.2, 2.0], [-0.147620365, 0.0984135717, -0.984135687], 2.03224015, 1.0, [0.242130756, 0.242130756, 0.242130756]),
            ([0.5, 0.1, 1.5], [-0.315597206, -0.0631194413, -0.946791649], 1.5842979, 1.0, [0.0976359397, 0.0976359397, 0.0976359397]),
            ([0.0, 0.0, -1.0], [0.0, 0.0, 1.0], 1.0, 1.0, [0.0, 0.0, 0.0]),
            ([1.0, 0.0, 1.0], [-0.707106769, 0.0, -0.707106769], 1.41421354, 1.0, [0.0, 0.0, 0.0]),
        ]);
    }

    #[test]
    fn rotated_textured_spot_matches_mitsuba() {
        let (e, ctx) = build_one(
            "spot",
            &[
                ("intensity", Value::Rgb(Vec3::new(5.0, 3.0, 2.0))),
                ("cutoff_angle", Value::Float(30.0)),
                ("beam_width", Value::Float(10.0)),
                ("texture", bitmap_4x3()),
                (
                    "to_world",
                    look_at([1., 2., 3.], [1.5, 2., 0.], [0., 1., 0.]),
                ),
            ],
        )
        .unwrap();
        #[rustfmt::skip]
        check_rows(&e, &ctx, &[
            ([1.5, 2.0, 0.0], [-0.164398983, 0.0, 0.986393929], 3.04138136, 1.0, [0.216216207, 0.113513507, 0.118918918]),
            ([1.9, 2.3, 0.5], [-0.336580873, -0.112193614, 0.934946895], 2.67394853, 1.0, [0.17067866, 0.164463475, 0.138107985]),
            ([0.8, 1.6, 1.0], [0.0975900069, 0.195180014, 0.975900114], 2.04939008, 1.0, [0.391480833, 0.0756293684, 0.150017634]),
            ([2.6, 2.1, 1.0], [-0.624219477, -0.0390136838, 0.780274391], 2.56320095, 1.0, [0.0099665001, 0.00636645406, 0.00602152012]),
            ([1.0, 2.0, 5.0], [0.0, 0.0, -1.0], 2.0, 1.0, [0.0, 0.0, 0.0]),
        ]);
    }

    #[test]
    fn scaled_frame_matches_mitsuba() {
        let m = Mat4::from_translation(Vec3::Z) * Mat4::from_scale(Vec3::new(2.0, 1.0, 0.5));
        let (e, ctx) = build_one(
            "spot",
            &[
                ("intensity", Value::Float(2.0)),
                ("cutoff_angle", Value::Float(45.0)),
                (
                    "to_world",
                    Value::Transform(Transform::from_matrix(m).unwrap()),
                ),
            ],
        )
        .unwrap();
        #[rustfmt::skip]
        check_rows(&e, &ctx, &[
            ([0.0, 0.0, 3.0], [0.0, 0.0, -1.0], 2.0, 1.0, [0.5, 0.5, 0.5]),
            ([1.5, 0.2, 2.0], [-0.826976717, -0.110263564, -0.551317811], 1.81383574, 1.0, [0.607902646, 0.607902646, 0.607902646]),
            ([0.2, 1.1, 2.5], [-0.106904499, -0.587974727, -0.801783681], 1.87082875, 1.0, [0.571428537, 0.571428537, 0.571428537]),
            ([3.0, 0.0, 1.5], [-0.986393929, 0.0, -0.164398983], 3.04138136, 1.0, [0.0, 0.0, 0.0]),
        ]);
    }

    #[test]
    fn profile_is_linear_in_angle_between_beam_and_cutoff() {
        let (e, ctx) = build_one(
            "spot",
            &[
                ("cutoff_angle", Value::Float(40.0)),
                ("beam_width", Value::Float(20.0)),
            ],
        )
        .unwrap();
        let c = ectx(&ctx);
        // a point at angle θ from the axis, at distance 1
        let at = |deg: f32| {
            let t = deg.to_radians();
            let p = Vec3::new(t.sin(), 0.0, t.cos());
            e.sample_direction(&c, p, Vec2::ZERO)
                .map_or(0.0, |s| s.radiance.x)
        };
        for (deg, want) in [
            (0.0, 1.0),
            (19.9, 1.0),
            (25.0, 0.75),
            (30.0, 0.5),
            (39.0, 0.05),
        ] {
            assert!(
                (at(deg) - want).abs() < 1e-4,
                "{deg}: {} vs {want}",
                at(deg)
            );
        }
        assert_eq!(at(40.5), 0.0);
        assert_eq!(at(120.0), 0.0);
    }

    #[test]
    fn position_and_target_aim_the_beam() {
        let (e, ctx) = build_one(
            "spot",
            &[
                ("position", Value::Point(Vec3::new(0.0, 4.0, 0.0))),
                ("target", Value::Point(Vec3::ZERO)),
                ("intensity", Value::Float(16.0)),
            ],
        )
        .unwrap();
        let c = ectx(&ctx);
        let s = e.sample_direction(&c, Vec3::ZERO, Vec2::ZERO).unwrap();
        assert!((s.d - Vec3::Y).length() < 1e-6 && (s.radiance.x - 1.0).abs() < 1e-6);
        // 4 units off-axis at the target plane: 45 degrees, outside the 20 degree cone
        assert!(e.sample_direction(&c, Vec3::X * 4.0, Vec2::ZERO).is_none());
    }

    #[test]
    fn bad_parameters_name_the_key_and_the_line() {
        let f = Value::Float;
        for (props, key, what) in [
            (vec![("cutoff_angle", f(-5.0))], "cutoff_angle", "(0, 180]"),
            (vec![("cutoff_angle", f(200.0))], "cutoff_angle", "(0, 180]"),
            (vec![("beam_width", f(-1.0))], "beam_width", "[0, 20]"),
            (
                vec![("cutoff_angle", f(20.0)), ("beam_width", f(30.0))],
                "beam_width",
                "[0, 20]",
            ),
            (vec![("intensity", f(-1.0))], "intensity", "non-negative"),
            (vec![("texture", f(0.5))], "texture", "spatially varying"),
            (
                vec![("cutoff_angle", f(95.0)), ("texture", bitmap_4x3())],
                "cutoff_angle",
                "below 90",
            ),
            (
                vec![("position", Value::Point(Vec3::ZERO))],
                "target",
                "is required",
            ),
            (
                vec![
                    ("position", Value::Point(Vec3::ZERO)),
                    ("target", Value::Point(Vec3::ZERO)),
                ],
                "target",
                "differ from position",
            ),
            (
                vec![
                    ("target", Value::Point(Vec3::ZERO)),
                    ("to_world", Value::Transform(Transform::IDENTITY)),
                ],
                "to_world",
                "not both",
            ),
            (
                vec![("cutoff_angle", Value::String("wide".into()))],
                "cutoff_angle",
                "float",
            ),
            (vec![("radius", f(1.0))], "radius", "spot"),
        ] {
            let err = build_err("spot", &props);
            assert!(
                err.contains(key) && err.contains(what) && err.contains("e.xml:"),
                "{props:?}: {err}"
            );
        }
    }
}
