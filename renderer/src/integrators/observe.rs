//! What a camera sample's path does, step by step, for an observer that needs more than
//! its radiance: the adjoint pass of differentiable rendering ([`crate::diff`]) replays
//! a path with the same random numbers and, at each step, differentiates what the step
//! evaluated.
//!
//! `path` and `direct` run their one loop generically over a [`PathObserver`]; a render
//! passes [`Unobserved`], whose empty methods compile away.

use super::EmitterSampleResult;
use crate::bsdfs::{AnyBsdf, BsdfCtx, BsdfSample};
use crate::math::{Color, Frame, Vec2, Vec3};
use crate::shapes::Hit;

/// A scattering vertex: the hit, its shading frame and BSDF, and the incident direction
/// (local frame).
pub struct Vertex<'a> {
    /// The surface point.
    pub hit: &'a Hit,
    /// Its shading frame.
    pub frame: Frame,
    /// Direction towards where the path came from, in `frame`.
    pub wi: Vec3,
    /// The BSDF at the hit.
    pub bsdf: &'a AnyBsdf,
    /// What the BSDF reads at the hit.
    pub bctx: &'a BsdfCtx<'a>,
}

/// Where emitted radiance was seen.
#[derive(Clone, Copy)]
pub enum Seen<'a> {
    /// On an emitting surface, by a ray with direction `d`.
    Surface {
        /// The surface point.
        hit: &'a Hit,
        /// The ray's direction.
        d: Vec3,
    },
    /// From the environment, along direction `d`.
    Environment {
        /// The escaping ray's direction.
        d: Vec3,
    },
}

/// Receives the steps of a path. Each method gets what its step evaluated and what it
/// added to the sample's radiance; the defaults ignore it.
pub trait PathObserver {
    /// Emission `le` seen with path throughput `beta` and MIS weight `w`: the sample's
    /// radiance grew by `beta · le · w`.
    #[inline(always)]
    fn emission(&mut self, _seen: Seen, _beta: Color, _w: f32, _le: Color) {}

    /// Next-event estimation at `v`: emitter sample `es` (drawn with `u`), BSDF value
    /// `f` towards it (local direction `wo`), MIS weight `w`; the radiance grew by
    /// `beta · f · es.weight · w`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn next_event(
        &mut self,
        _v: &Vertex,
        _beta: Color,
        _w: f32,
        _f: Color,
        _wo: Vec3,
        _es: &EmitterSampleResult,
        _u: Vec2,
    ) {
    }

    /// The BSDF at `v` was sampled with `(u1, u2)` and gave `bs`; the throughput is
    /// multiplied by `bs.weight`. `carried`: the radiance that came through this sample
    /// when it is already known (`direct`); `None` when it is whatever the rest of the
    /// path adds (`path`).
    #[inline(always)]
    fn scatter(
        &mut self,
        _v: &Vertex,
        _bs: &BsdfSample,
        _u1: f32,
        _u2: Vec2,
        _carried: Option<Color>,
    ) {
    }
}

/// The observer of a plain render: it observes nothing.
pub struct Unobserved;

impl PathObserver for Unobserved {}
