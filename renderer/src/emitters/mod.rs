//! Emitters: `area` (attached to a shape), `point`, `spot`, `projector`,
//! `directional`, `constant`, `envmap`. One file per plugin, dispatched through
//! [`AnyEmitter`].
//!
//! Emitter sampling is "direct illumination" sampling: given a reference point,
//! pick a direction towards the emitter with a solid-angle density.
//! `sample_direction` returns `None` when the sample carries no light (zero
//! density, or the back of an area light): the contribution is zero then.
//!
//! Light tracing (`ptracer`) starts paths on the emitters instead: [`AnyEmitter::sample_ray`]
//! draws a ray leaving an emitter (infinitely distant ones from the disk of the scene's
//! bounding sphere that faces them), and
//! [`AnyEmitter::sample_position`] a point on a surface emitter.

// `!(x > 0.0)` is deliberate throughout: it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod area;
pub mod constant;
pub mod directional;
pub mod envmap;
pub mod point;
pub mod projector;
pub mod spot;

pub use area::AreaEmitter;
pub use constant::ConstantEmitter;
pub use directional::DirectionalEmitter;
pub use envmap::EnvmapEmitter;
pub use point::PointEmitter;
pub use projector::ProjectorEmitter;
pub use spot::SpotEmitter;

use crate::error::{Error, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::{Color, Distribution2D, Vec2, Vec3};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::ObjectDesc;
use crate::scene::params::Range;
use crate::scene::props::Props;
use crate::shapes::{Geometry, Hit, PositionSample};
use crate::textures::{TexRef, TextureStore};

/// What emitters read besides their own record.
#[derive(Clone, Copy)]
pub struct EmitterCtx<'a> {
    /// Scene geometry (area emitters sample their shape).
    pub geom: &'a Geometry,
    /// Textures (radiance, environment maps).
    pub tex: &'a TextureStore,
    /// 2D distributions for importance-sampled environment maps.
    pub dists: &'a [Distribution2D],
    /// Bounding sphere of the scene (centre, radius), for infinite emitters.
    pub bsphere: (Vec3, f32),
}

/// A direction sampled towards an emitter.
#[derive(Clone, Copy, Debug)]
pub struct EmitterSample {
    /// Unit world direction from the reference point towards the emitter.
    pub d: Vec3,
    /// Distance to the sampled point (`f32::INFINITY` for infinite emitters).
    pub dist: f32,
    /// Solid-angle density (1 for delta emitters).
    pub pdf: f32,
    /// Incident radiance along `-d` at the reference point (not divided by `pdf`;
    /// for point lights intensity / dist²).
    pub radiance: Color,
    /// Whether the emitter is a delta (point, directional): no MIS.
    pub delta: bool,
}

/// A ray leaving an emitter (light tracing).
#[derive(Clone, Copy, Debug)]
pub struct EmitterRay {
    /// Where the ray starts.
    pub p: Vec3,
    /// The surface normal there (its emitting side), or zero for a point-like emitter.
    pub n: Vec3,
    /// Unit world direction.
    pub d: Vec3,
    /// Emitted radiance times the cosine at the origin, over the density of the ray
    /// (position and direction): the power the ray carries, per unit estimate.
    pub weight: Color,
}

/// Samples a direction of a point-like emitter: the world direction for `local`, a unit
/// direction in the frame `to_local` maps into, and its density (solid angle, world)
/// given the local density `pdf_local`. Exact under a scaled or sheared `to_world` too:
/// directions map through `M = to_local⁻¹` with density factor `|det to_local| · |M l|³`.
#[inline]
pub(crate) fn local_direction_to_world(
    to_local: &crate::math::Mat3,
    local: Vec3,
    pdf_local: f32,
) -> Option<(Vec3, f32)> {
    let a = *to_local;
    let m = a.inverse();
    let v = m * local;
    let len = v.length();
    let pdf = pdf_local * a.determinant().abs() * len * len * len;
    (len > 0.0 && pdf > 0.0 && pdf.is_finite()).then(|| (v / len, pdf))
}

/// The radiant intensity of a point-like emitter (point, spot, projector) towards unit
/// world direction `d`: its radiance at the point at distance 1 along `d`.
#[inline]
pub(crate) fn intensity_towards(
    e: &AnyEmitter,
    ctx: &EmitterCtx,
    position: Vec3,
    d: Vec3,
) -> Color {
    e.sample_direction(ctx, position + d, Vec2::ZERO)
        .map_or(Color::ZERO, |s| s.radiance * (s.dist * s.dist))
}

/// Every emitter plugin: plain data, the same records on CPU and CUDA.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, u32)]
pub enum AnyEmitter {
    /// `area`: diffuse emission from the front side of a shape.
    Area(AreaEmitter),
    /// `point`: an isotropic point light.
    Point(PointEmitter),
    /// `directional`: parallel light from infinity.
    Directional(DirectionalEmitter),
    /// `constant`: uniform radiance from every direction.
    Constant(ConstantEmitter),
    /// `envmap`: an image-based environment.
    Envmap(EnvmapEmitter),
    /// `spot`: a point light shining into a cone.
    Spot(SpotEmitter),
    /// `projector`: a pinhole projector of an image.
    Projector(ProjectorEmitter),
}

impl AnyEmitter {
    /// Samples a direction from `p` towards this emitter.
    #[inline]
    pub fn sample_direction(&self, ctx: &EmitterCtx, p: Vec3, u: Vec2) -> Option<EmitterSample> {
        match self {
            AnyEmitter::Area(e) => e.sample_direction(ctx, p, u),
            AnyEmitter::Point(e) => e.sample_direction(ctx, p),
            AnyEmitter::Directional(e) => Some(e.sample_direction(ctx)),
            AnyEmitter::Constant(e) => Some(e.sample_direction(ctx, u)),
            AnyEmitter::Envmap(e) => e.sample_direction(ctx, u),
            AnyEmitter::Spot(e) => e.sample_direction(ctx, p),
            AnyEmitter::Projector(e) => e.sample_direction(ctx, p),
        }
    }

    /// Samples a ray leaving this emitter (light tracing): `u_pos` picks the origin (on a
    /// surface emitter, or on the disk facing an infinitely distant one), `u_dir` the
    /// direction. `None` when the sample carries no power.
    #[inline]
    pub fn sample_ray(&self, ctx: &EmitterCtx, u_pos: Vec2, u_dir: Vec2) -> Option<EmitterRay> {
        match self {
            AnyEmitter::Area(e) => e.sample_ray(ctx, u_pos, u_dir),
            AnyEmitter::Point(e) => e.sample_ray(ctx, u_dir),
            AnyEmitter::Spot(e) => e.sample_ray(ctx, u_dir),
            AnyEmitter::Projector(e) => e.sample_ray(ctx, u_dir),
            AnyEmitter::Directional(_) | AnyEmitter::Constant(_) | AnyEmitter::Envmap(_) => {
                self.sample_infinite_ray(ctx, u_pos, u_dir)
            }
        }
    }

    /// A ray of an infinitely distant emitter (`directional`, `constant`, `envmap`): a
    /// direction as direct-illumination sampling from the scene's centre picks it, and an
    /// origin uniformly on the disk of the scene's bounding sphere that faces it (radius
    /// `R`), so the ray carries `L / pdf · π R²`.
    fn sample_infinite_ray(
        &self,
        ctx: &EmitterCtx,
        u_pos: Vec2,
        u_dir: Vec2,
    ) -> Option<EmitterRay> {
        let (centre, r) = ctx.bsphere;
        let r = r.max(1e-4);
        let s = self.sample_direction(ctx, centre, u_dir)?;
        if !(s.pdf > 0.0) {
            return None;
        }
        let q = crate::math::warp::square_to_uniform_disk_concentric(u_pos) * r;
        let disk = crate::math::Frame::from_normal(s.d).to_world(Vec3::new(q.x, q.y, 0.0));
        let weight = s.radiance / s.pdf * (crate::math::PI * r * r);
        weight.is_finite().then_some(EmitterRay {
            p: centre + s.d * r + disk,
            n: Vec3::ZERO,
            d: -s.d,
            weight,
        })
    }

    /// A point on a surface emitter (light tracing of directly visible emitters), with
    /// its radiance over the area density; `None` for the others.
    #[inline]
    pub fn sample_position(&self, ctx: &EmitterCtx, u: Vec2) -> Option<(PositionSample, Color)> {
        match self {
            AnyEmitter::Area(e) => e.sample_position(ctx, u),
            _ => None,
        }
    }

    /// Density of [`Self::sample_direction`] from `p` producing `hit` (surface emitters).
    #[inline]
    pub fn pdf_hit(&self, ctx: &EmitterCtx, p: Vec3, hit: &Hit) -> f32 {
        match self {
            AnyEmitter::Area(e) => e.pdf_hit(ctx, p, hit),
            _ => 0.0,
        }
    }

    /// Radiance leaving surface emitter at `hit` towards `-d` (`d` = ray direction).
    #[inline]
    pub fn eval_hit(&self, ctx: &EmitterCtx, hit: &Hit, d: Vec3) -> Color {
        match self {
            AnyEmitter::Area(e) => e.eval_hit(ctx, hit, d),
            _ => Color::ZERO,
        }
    }

    /// Radiance arriving along ray direction `d` from an infinite emitter.
    #[inline]
    pub fn eval_env(&self, ctx: &EmitterCtx, d: Vec3) -> Color {
        match self {
            AnyEmitter::Constant(e) => e.eval(ctx),
            AnyEmitter::Envmap(e) => e.eval(ctx, d),
            _ => Color::ZERO,
        }
    }

    /// Density of [`Self::sample_direction`] producing direction `d` (infinite emitters).
    #[inline]
    pub fn pdf_env(&self, ctx: &EmitterCtx, d: Vec3) -> f32 {
        match self {
            AnyEmitter::Constant(_) => ConstantEmitter::pdf(),
            AnyEmitter::Envmap(e) => e.pdf(ctx, d),
            _ => 0.0,
        }
    }

    /// Whether rays that escape the scene see this emitter (`constant`, `envmap`; not `directional`).
    pub fn is_environment(&self) -> bool {
        matches!(self, AnyEmitter::Constant(_) | AnyEmitter::Envmap(_))
    }

    /// Whether the emitter is a delta light (`point`, `spot`, `projector`, `directional`).
    pub fn is_delta(&self) -> bool {
        matches!(
            self,
            AnyEmitter::Point(_)
                | AnyEmitter::Spot(_)
                | AnyEmitter::Projector(_)
                | AnyEmitter::Directional(_)
        )
    }
}

// Record layouts shared with the CUDA twins (Vec3/Mat3 are plain f32 arrays).
const _: () = assert!(std::mem::size_of::<AreaEmitter>() == 8);
const _: () = assert!(std::mem::size_of::<PointEmitter>() == 16);
const _: () = assert!(std::mem::size_of::<DirectionalEmitter>() == 16);
const _: () = assert!(std::mem::size_of::<ConstantEmitter>() == 4);
const _: () = assert!(std::mem::size_of::<EnvmapEmitter>() == 92);
const _: () = assert!(std::mem::size_of::<SpotEmitter>() == 76);
const _: () = assert!(std::mem::size_of::<ProjectorEmitter>() == 76);
const _: () = assert!(std::mem::size_of::<AnyEmitter>() == 96);

/// Names of the emitter plugins, for error messages.
pub const KNOWN: &[&str] = &[
    "area",
    "point",
    "directional",
    "constant",
    "envmap",
    "spot",
    "projector",
];

/// Builds an `<emitter>` object. `shape` is `Some(handle)` when the emitter is
/// nested in a shape, which only an `area` emitter may be (and must be).
pub fn build(obj: &ObjectDesc, shape: Option<u32>, ctx: &mut BuildCtx) -> Result<AnyEmitter> {
    let p = &obj.props;
    let nested_err =
        |what: &str| Error::parse(&obj.loc, format!("emitter \"{}\" {what}", obj.kind));
    let e = match (obj.kind.as_str(), shape) {
        ("area", Some(s)) => AnyEmitter::Area(AreaEmitter::build(p, s, ctx)?),
        ("area", None) => return Err(nested_err("must be nested in a <shape>")),
        (k, Some(_)) if KNOWN.contains(&k) => {
            return Err(nested_err(
                "cannot be nested in a <shape> (only \"area\" can)",
            ))
        }
        ("point", None) => AnyEmitter::Point(PointEmitter::build(p, ctx)?),
        ("directional", None) => AnyEmitter::Directional(DirectionalEmitter::build(p, ctx)?),
        ("constant", None) => AnyEmitter::Constant(ConstantEmitter::build(p, ctx)?),
        ("envmap", None) => AnyEmitter::Envmap(EnvmapEmitter::build(p, ctx)?),
        ("spot", None) => AnyEmitter::Spot(SpotEmitter::build(p, ctx)?),
        ("projector", None) => AnyEmitter::Projector(ProjectorEmitter::build(p, ctx)?),
        _ => {
            return Err(Error::UnknownPlugin {
                loc: obj.loc.clone(),
                category: "emitter",
                name: obj.kind.clone(),
                known: KNOWN.join(", "),
            })
        }
    };
    p.check_unused(&obj.kind)?;
    Ok(e)
}

/// A colour parameter that must be a constant (an `<rgb>` or `<float>`, or a
/// reference to one), non-negative and finite; returned as a texture handle.
pub(crate) fn constant_color(
    p: &Props,
    key: &str,
    default: Color,
    ctx: &mut BuildCtx,
) -> Result<TexRef> {
    let t = ctx.texture_in(
        p,
        key,
        Some(default),
        Range::NonNegative,
        SpectrumUse::Emission,
    )?;
    let c = ctx.textures.constant(t).ok_or_else(|| {
        Error::param(
            &p.entry_loc(key),
            key,
            "must be a constant rgb or float here, not a spatially varying texture",
        )
    })?;
    if !(c.min_element() >= 0.0) {
        return Err(Error::param(
            &p.entry_loc(key),
            key,
            format!("must be non-negative, got {c}"),
        ));
    }
    Ok(t)
}

/// Rejects a plugin that was given both `a` and `b` (e.g. `position` and `to_world`).
pub(crate) fn exclusive(p: &Props, a: &str, b: &str) -> Result<()> {
    if p.has(a) && p.has(b) {
        p.mark_used(b);
        return Err(Error::param(
            &p.entry_loc(b),
            b,
            format!("give either \"{a}\" or \"{b}\", not both"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::test_util::{build_err, desc};
    use super::*;
    use crate::scene::props::Value;

    #[test]
    fn registry_checks_nesting_and_names() {
        let mut ctx = BuildCtx::default();
        let area = desc("area", &[("radiance", Value::Float(5.0))]);
        let e = build(&area, Some(3), &mut ctx).unwrap();
        let AnyEmitter::Area(a) = e else {
            panic!("{e:?}")
        };
        assert_eq!(a.shape, 3);
        assert_eq!(ctx.textures.constant(a.radiance), Some(Color::splat(5.0)));
        assert!(!e.is_environment() && !e.is_delta());
        let err = build(&area, None, &mut ctx).unwrap_err().to_string();
        assert!(
            err.contains("e.xml:1") && err.contains("nested in a <shape>"),
            "{err}"
        );
        let err = build(&desc("point", &[]), Some(0), &mut ctx)
            .unwrap_err()
            .to_string();
        assert!(err.contains("only \"area\""), "{err}");
        let err = build_err("spotlight", &[]);
        assert!(
            err.contains("unknown emitter") && err.contains("envmap"),
            "{err}"
        );
        let tw = Value::Transform(crate::math::Transform::IDENTITY);
        let err = build(&desc("area", &[("to_world", tw)]), Some(0), &mut ctx)
            .unwrap_err()
            .to_string();
        assert!(err.contains("e.xml:2") && err.contains("to_world"), "{err}");
        let err = build(
            &desc("area", &[("radiance", Value::Float(-2.0))]),
            Some(0),
            &mut ctx,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("non-negative"), "{err}");
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;
    use crate::error::Loc;
    use crate::scene::desc::Category;
    use crate::scene::props::Value;

    /// An emitter description with the given properties (lines 2, 3, ... of `e.xml`).
    pub fn desc(kind: &str, props: &[(&str, Value)]) -> ObjectDesc {
        let mut p = Props::new(Loc::new("e.xml", 1, 1));
        for (i, (k, v)) in props.iter().enumerate() {
            p.insert(k, v.clone(), Loc::new("e.xml", 2 + i as u32, 1))
                .expect("distinct keys");
        }
        ObjectDesc {
            category: Category::Emitter,
            kind: kind.into(),
            id: None,
            props: p,
            loc: Loc::new("e.xml", 1, 1),
        }
    }

    /// Builds an emitter in a fresh context; returns it with the context.
    pub fn build_one(kind: &str, props: &[(&str, Value)]) -> Result<(AnyEmitter, BuildCtx)> {
        let mut ctx = BuildCtx::default();
        let e = build(&desc(kind, props), None, &mut ctx)?;
        Ok((e, ctx))
    }

    /// The error message of a build that must fail.
    pub fn build_err(kind: &str, props: &[(&str, Value)]) -> String {
        match build_one(kind, props) {
            Ok((e, _)) => format!("unexpectedly built {e:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// The emitter context over a build context's data.
    pub fn ectx(ctx: &BuildCtx) -> EmitterCtx<'_> {
        EmitterCtx {
            geom: &ctx.geom,
            tex: &ctx.textures,
            dists: &ctx.dists2d,
            bsphere: (Vec3::ZERO, 1.0),
        }
    }
}
