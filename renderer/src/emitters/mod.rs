//! Emitters. One file per plugin (the file stem is the scene `type`), listed once in the
//! registry at the bottom of this file; everything else about the category is derived
//! from that list.
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
//!
//! # Adding an emitter
//!
//! A plugin is three things, and nothing outside them changes:
//!
//! 1. **`src/emitters/<name>.rs`**: the module doc is the plugin's manual (a first
//!    sentence `` `<name>`: ... ``, a `| parameter | type | default | meaning |` table,
//!    an XML example; `heliograph plugins <name>` prints it). The file defines the
//!    plugin's record, a `#[repr(C)]` struct of `u32`/`f32` fields (`Vec3`, `Vec2` and
//!    `Mat3` count as 3, 2 and 9 floats, the matrix column-major; texture handles are
//!    [`TexRef`]s) declared with [`device_record!`](crate::device_record), and
//!    implements [`EmitterPlugin`]: `build` reads the properties through a
//!    [`BuildContext`] (textures, images, distributions, parameter declarations — never
//!    the scene builder itself), `record` resolves what the record refers to outside the
//!    emitter (image offsets, distributions: [`registry::RecordCtx`]), and
//!    `sample_direction` (plus `sample_ray`, and for surface and environment emitters
//!    their lookups) evaluate it on the CPU. The flags (`DELTA`, `SURFACE`,
//!    `ENVIRONMENT`, `INFINITE`) say what the integrators and the kernels must know. Its
//!    tests sit at the bottom.
//! 2. **`kernels/emitters/<name>.cuh`**: the CUDA twin. It includes `emitter.cuh`,
//!    defines the record's twin with the same name, field names and order (the layout
//!    checks compare it with the Rust record on every compile and on the GPU), and
//!    `<name>_sample` — plus `<name>_sample_ray` unless `INFINITE`, and
//!    `<name>_sample_position`, `<name>_pdf_hit`, `<name>_eval_hit` when `SURFACE`,
//!    `<name>_eval_env` when `ENVIRONMENT` — with the signatures of [`registry`]'s
//!    dispatch, repeating the Rust float operations in the same order.
//! 3. **One line** in `register_plugins!` below, `TAG = module::Plugin`,
//!    appended at the end (a line's position is its tag), next to the module's
//!    `pub mod` line.
//!
//! From the list, the registry derives: the [`AnyEmitter`] enum and its dispatch, the
//! [`tag`] constants, [`KNOWN`] (unknown types get a "did you mean"), the build match
//! ([`build`], which also checks that exactly the surface emitters are nested in
//! shapes), the flattening into device records ([`registry::flatten`]: a
//! [`RecordRef`](crate::plugin::record::RecordRef) `{kind, offset}` per emitter and the
//! records in one word blob, each in a 16-byte slot), the record layout checks, and the CUDA side — the `HG_EMITTER_<TAG>` defines,
//! the `#include` of every twin and the dispatch `switch`es compiled for the kinds in
//! `HG_EMITTER_SET`, generated as the kernel file `emitters/registry.cuh`
//! ([`registry::cuda_source`]).
//!
//! ```ignore
//! //! `beacon`: ... manual ...
//! #[derive(Clone, Copy, Debug, PartialEq)]
//! #[repr(C)]
//! pub struct Beacon {
//!     /// Where it shines from.
//!     pub position: Vec3,
//!     /// Its intensity.
//!     pub intensity: TexRef,
//! }
//! device_record!(Beacon { position, intensity });
//!
//! impl EmitterPlugin for Beacon {
//!     type Record = Self;
//!     const DELTA: bool = true;
//!     fn build(p: &Props, _shape: u32, ctx: &mut dyn BuildContext) -> Result<Self> { ... }
//!     fn record(&self, _at: &RecordCtx) -> Self { *self }
//!     fn sample_direction(..) { .. }  fn sample_ray(..) { .. }
//! }
//! ```

// `!(x > 0.0)` is deliberate throughout: it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod registry;

use crate::desc::params::Range;
use crate::desc::props::Props;
use crate::desc::ObjectDesc;
use crate::error::{Error, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::{Color, Distribution2D, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::DeviceRecord;
use crate::plugin::registry::register_plugins;
use crate::plugin::{BuildContext, TexRef};
use crate::shapes::{Geometry, Hit, PositionSample};
use crate::textures::TextureStore;
use registry::{surface_names, EmitterEntry, RecordCtx};

/// The shape handle a non-surface emitter's `build` gets (it is nested in none).
pub const NO_SHAPE: u32 = u32::MAX;

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
    /// Texture coordinates of the sampled point on an area light (where its radiance
    /// texture was read); zero for other emitters.
    pub uv: Vec2,
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
pub(crate) fn intensity_towards<E: EmitterPlugin>(
    e: &E,
    ctx: &EmitterCtx,
    position: Vec3,
    d: Vec3,
) -> Color {
    e.sample_direction(ctx, position + d, Vec2::ZERO)
        .map_or(Color::ZERO, |s| s.radiance * (s.dist * s.dist))
}

/// An emitter plugin: how it is built, what the kernels read, and how it emits on the
/// CPU (its CUDA twin repeats it; see the module docs).
pub trait EmitterPlugin: Copy + std::fmt::Debug + PartialEq {
    /// The record the kernels read: `Self` unless it refers to data outside the emitter
    /// by a handle the kernels cannot use (an image: its offset in the texels instead).
    type Record: DeviceRecord;

    /// A delta light (a point or a direction): no MIS, never seen by a ray.
    const DELTA: bool = false;
    /// Sits on a shape (nested in it): sampled by position, seen where rays hit it
    /// ([`Self::sample_position`], [`Self::pdf_hit`], [`Self::eval_hit`]).
    const SURFACE: bool = false;
    /// Seen by rays that escape the scene ([`Self::eval_env`], [`Self::pdf_env`]).
    const ENVIRONMENT: bool = false;
    /// Infinitely distant: light tracing starts its rays on the disk of the scene's
    /// bounding sphere that faces the sampled direction (no [`Self::sample_ray`]).
    const INFINITE: bool = false;
    /// The parameters an update writes in place, with where each lives; the others
    /// rebuild the plugin from its edited description.
    const EDITABLE: &'static [EditableKey] = &[];

    /// Reads the plugin's properties (every one must be read: the registry checks);
    /// `shape` is the shape a surface emitter is nested in ([`NO_SHAPE`] otherwise).
    fn build(p: &Props, shape: u32, ctx: &mut dyn BuildContext) -> Result<Self>;

    /// The record the kernels read; `at` locates the images and distributions.
    fn record(&self, at: &RecordCtx) -> Self::Record;

    /// Samples a direction from `p` towards this emitter.
    fn sample_direction(&self, ctx: &EmitterCtx, p: Vec3, u: Vec2) -> Option<EmitterSample>;

    /// A ray leaving the emitter (light tracing; not called for `INFINITE` ones).
    fn sample_ray(&self, _ctx: &EmitterCtx, _u_pos: Vec2, _u_dir: Vec2) -> Option<EmitterRay> {
        None
    }

    /// A point on a surface emitter with its radiance over the area density.
    fn sample_position(&self, _ctx: &EmitterCtx, _u: Vec2) -> Option<(PositionSample, Color)> {
        None
    }

    /// Density of [`Self::sample_direction`] from `p` producing `hit` (surface emitters).
    fn pdf_hit(&self, _ctx: &EmitterCtx, _p: Vec3, _hit: &Hit) -> f32 {
        0.0
    }

    /// Radiance leaving `hit` against ray direction `d` (surface emitters).
    fn eval_hit(&self, _ctx: &EmitterCtx, _hit: &Hit, _d: Vec3) -> Color {
        Color::ZERO
    }

    /// Radiance arriving along ray direction `d` (environment emitters).
    fn eval_env(&self, _ctx: &EmitterCtx, _d: Vec3) -> Color {
        Color::ZERO
    }

    /// Density of [`Self::sample_direction`] producing direction `d` (environment emitters).
    fn pdf_env(&self, _ctx: &EmitterCtx, _d: Vec3) -> f32 {
        0.0
    }

    /// [`Self::eval_env`] and [`Self::pdf_env`] together, for an escaping ray's MIS
    /// (an emitter whose two share work, such as turning `d` into map coordinates,
    /// does it once here; the values are the same).
    fn eval_pdf_env(&self, ctx: &EmitterCtx, d: Vec3) -> (Color, f32) {
        (self.eval_env(ctx, d), self.pdf_env(ctx, d))
    }
}

impl AnyEmitter {
    /// The plugin's registry entry.
    pub fn entry(&self) -> &'static EmitterEntry {
        &REGISTRY[self.tag() as usize]
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

    /// Whether rays that escape the scene see this emitter (`constant`, `envmap`; not `directional`).
    pub fn is_environment(&self) -> bool {
        self.entry().environment
    }

    /// Whether the emitter is a delta light (`point`, `spot`, `projector`, `directional`).
    pub fn is_delta(&self) -> bool {
        self.entry().delta
    }
}

/// A colour parameter that must be a constant (an `<rgb>` or `<float>`, or a
/// reference to one), non-negative and finite; returned as a texture handle.
pub(crate) fn constant_color(
    p: &Props,
    key: &str,
    default: Color,
    ctx: &mut dyn BuildContext,
) -> Result<TexRef> {
    let t = ctx.texture_in(
        p,
        key,
        Some(default),
        Range::NonNegative,
        SpectrumUse::Emission,
    )?;
    let c = ctx.texture_constant(t).ok_or_else(|| {
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

// The registry: one line per plugin, `TAG = module::Plugin`. Append new plugins at the
// end: a line's position is its tag, which the kernel caches and tests rely on.
register_plugins! {
    category "emitter" in "emitters";
    /// Every emitter plugin, one variant per registry line.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum AnyEmitter: EmitterPlugin, entry EmitterEntry, dispatch any_emitter;
    fn build_kind(props, shape: u32, ctx: &mut dyn BuildContext);
    AREA = area::AreaEmitter,
    POINT = point::PointEmitter,
    DIRECTIONAL = directional::DirectionalEmitter,
    CONSTANT = constant::ConstantEmitter,
    ENVMAP = envmap::EnvmapEmitter,
    SPOT = spot::SpotEmitter,
    PROJECTOR = projector::ProjectorEmitter,
}

impl AnyEmitter {
    /// Samples a direction from `p` towards this emitter.
    #[inline]
    pub fn sample_direction(&self, ctx: &EmitterCtx, p: Vec3, u: Vec2) -> Option<EmitterSample> {
        any_emitter!(self, e => e.sample_direction(ctx, p, u))
    }

    /// Samples a ray leaving this emitter (light tracing): `u_pos` picks the origin (on
    /// a surface emitter, or on the disk facing an infinitely distant one), `u_dir` the
    /// direction. `None` when the sample carries no power.
    #[inline]
    pub fn sample_ray(&self, ctx: &EmitterCtx, u_pos: Vec2, u_dir: Vec2) -> Option<EmitterRay> {
        any_emitter!(self, e => if is_infinite(e) {
            self.sample_infinite_ray(ctx, u_pos, u_dir)
        } else {
            e.sample_ray(ctx, u_pos, u_dir)
        })
    }

    /// A point on a surface emitter (light tracing of directly visible emitters), with
    /// its radiance over the area density; `None` for the others.
    #[inline]
    pub fn sample_position(&self, ctx: &EmitterCtx, u: Vec2) -> Option<(PositionSample, Color)> {
        any_emitter!(self, e => e.sample_position(ctx, u))
    }

    /// Density of [`Self::sample_direction`] from `p` producing `hit` (surface emitters).
    #[inline]
    pub fn pdf_hit(&self, ctx: &EmitterCtx, p: Vec3, hit: &Hit) -> f32 {
        any_emitter!(self, e => e.pdf_hit(ctx, p, hit))
    }

    /// Radiance leaving surface emitter at `hit` towards `-d` (`d` = ray direction).
    #[inline]
    pub fn eval_hit(&self, ctx: &EmitterCtx, hit: &Hit, d: Vec3) -> Color {
        any_emitter!(self, e => e.eval_hit(ctx, hit, d))
    }

    /// Radiance arriving along ray direction `d` from an environment emitter.
    #[inline]
    pub fn eval_env(&self, ctx: &EmitterCtx, d: Vec3) -> Color {
        any_emitter!(self, e => e.eval_env(ctx, d))
    }

    /// Density of [`Self::sample_direction`] producing direction `d` (environment
    /// emitters).
    #[inline]
    pub fn pdf_env(&self, ctx: &EmitterCtx, d: Vec3) -> f32 {
        any_emitter!(self, e => e.pdf_env(ctx, d))
    }

    /// [`Self::eval_env`] and [`Self::pdf_env`] of direction `d` at once.
    #[inline]
    pub fn eval_pdf_env(&self, ctx: &EmitterCtx, d: Vec3) -> (Color, f32) {
        any_emitter!(self, e => e.eval_pdf_env(ctx, d))
    }

    /// The words of the record the kernels read (its slot in the blob).
    pub fn record_words(&self, at: &RecordCtx) -> Vec<u32> {
        use crate::plugin::record::record_words;
        any_emitter!(self, e => record_words(&e.record(at)))
    }
}

/// [`EmitterPlugin::INFINITE`] of `T`.
#[inline(always)]
fn is_infinite<T: EmitterPlugin>(_: &T) -> bool {
    T::INFINITE
}

/// Builds an `<emitter>` object into an [`AnyEmitter`]; `shape` is the shape it is
/// nested in (surface emitters must be, the others must not); every property must be
/// read.
pub fn build(
    obj: &ObjectDesc,
    shape: Option<u32>,
    ctx: &mut dyn BuildContext,
) -> Result<AnyEmitter> {
    let nested_err =
        |what: &str| Error::parse(&obj.loc, format!("emitter \"{}\" {what}", obj.kind));
    match (registry::entry(&obj.kind).map(|e| e.surface), shape) {
        (Some(true), None) => return Err(nested_err("must be nested in a <shape>")),
        (Some(false), Some(_)) => {
            return Err(nested_err(&format!(
                "cannot be nested in a <shape> (only {} can)",
                surface_names()
            )))
        }
        _ => {}
    }
    let e = build_kind(obj, shape.unwrap_or(NO_SHAPE), ctx)?;
    obj.props.check_unused(&obj.kind)?;
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::test_util::{build_err, desc};
    use super::*;
    use crate::desc::props::Value;
    use crate::scene::builder::BuildCtx;

    #[test]
    fn registry_checks_nesting_and_names() {
        let mut ctx = BuildCtx::default();
        let area = desc("area", &[("radiance", Value::Float(5.0))]);
        let e = build(&area, Some(3), &mut ctx).unwrap();
        let AnyEmitter::AreaEmitter(a) = e else {
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
        let err = build_err("pont", &[]);
        assert!(err.contains("did you mean \"point\""), "{err}");
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
    use crate::desc::props::Value;
    use crate::desc::Category;
    use crate::error::Loc;
    use crate::scene::builder::BuildCtx;

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
