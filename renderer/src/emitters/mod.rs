//! Emitters: `area` (attached to a shape), `point`, `directional`, `constant`,
//! `envmap`. One file per plugin, dispatched through [`AnyEmitter`].
//!
//! Emitter sampling is "direct illumination" sampling: given a reference point,
//! pick a direction towards the emitter with a solid-angle density.

use crate::error::{Error, Result};
use crate::math::{Color, Distribution2D, Vec2, Vec3};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::ObjectDesc;
use crate::shapes::{Geometry, Hit};
use crate::textures::TextureStore;

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

/// Every emitter plugin (filled in by the emitters helper).
#[derive(Clone, Copy, Debug)]
pub enum AnyEmitter {
    /// Placeholder until the plugins land.
    None,
}

impl AnyEmitter {
    /// Samples a direction from `p` towards this emitter.
    pub fn sample_direction(&self, _ctx: &EmitterCtx, _p: Vec3, _u: Vec2) -> Option<EmitterSample> {
        None
    }

    /// Density of [`Self::sample_direction`] from `p` producing `hit` (surface emitters).
    pub fn pdf_hit(&self, _ctx: &EmitterCtx, _p: Vec3, _hit: &Hit) -> f32 {
        0.0
    }

    /// Radiance leaving surface emitter at `hit` towards `-d` (`d` = ray direction).
    pub fn eval_hit(&self, _ctx: &EmitterCtx, _hit: &Hit, _d: Vec3) -> Color {
        Color::ZERO
    }

    /// Radiance arriving along ray direction `d` from an infinite emitter.
    pub fn eval_env(&self, _ctx: &EmitterCtx, _d: Vec3) -> Color {
        Color::ZERO
    }

    /// Density of [`Self::sample_direction`] producing direction `d` (infinite emitters).
    pub fn pdf_env(&self, _ctx: &EmitterCtx, _d: Vec3) -> f32 {
        0.0
    }

    /// Whether rays that escape the scene see this emitter (`constant`, `envmap`; not `directional`).
    pub fn is_environment(&self) -> bool {
        false
    }
}

/// Names of the emitter plugins, for error messages.
pub const KNOWN: &[&str] = &[];

/// Builds an `<emitter>` object (non-area). `shape` is `Some(handle)` when the
/// emitter is nested in a shape (an `area` emitter).
pub fn build(obj: &ObjectDesc, _shape: Option<u32>, _ctx: &mut BuildCtx) -> Result<AnyEmitter> {
    Err(Error::UnknownPlugin {
        loc: obj.loc.clone(),
        category: "emitter",
        name: obj.kind.clone(),
        known: KNOWN.join(", "),
    })
}
