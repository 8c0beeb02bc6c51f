//! What the adapters that tilt the shading normal (`normalmap`, `bumpmap`) share: the
//! nested BSDF queried in a tilted frame, as Mitsuba 3.9 does it. A direction on the
//! other side of the unperturbed surface than in the tilted frame is black, and Estevez
//! et al.'s shadowing term (Ray Tracing Gems, 2019) softens the terminator.

use super::{BsdfCtx, BsdfSample};
use crate::math::{Color, Frame, Vec2, Vec3};
use crate::shapes::normalize_or;

/// The tilted frame of normal `n` (in the shading frame, unit): its tangent follows the
/// shading frame's x axis (the surface's dp/du) projected onto the tilted plane.
pub fn frame(n: Vec3) -> Frame {
    let s = normalize_or(Vec3::X - n * n.x, Frame::from_normal(n).s);
    Frame {
        s,
        t: n.cross(s),
        n,
    }
}

/// Samples BSDF `nested` in frame `f` (`shadowing`: apply the shadowing term).
pub fn sample(
    ctx: &BsdfCtx,
    nested: u32,
    f: &Frame,
    shadowing: bool,
    wi: Vec3,
    u1: f32,
    u2: Vec2,
) -> Option<BsdfSample> {
    let mut s = ctx.bsdfs[nested as usize].sample(ctx, f.to_local(wi), u1, u2)?;
    if s.weight == Color::ZERO {
        return None;
    }
    let wo = f.to_world(s.wo);
    if !(s.wo.z * wo.z > 0.0) {
        return None;
    }
    s.wo = wo;
    if shadowing {
        s.weight *= shadow_terminator(f.n, wo);
    }
    Some(s)
}

/// Evaluates BSDF `nested` in frame `f`, times the shadowing term.
pub fn eval(ctx: &BsdfCtx, nested: u32, f: &Frame, shadowing: bool, wi: Vec3, wo: Vec3) -> Color {
    let wo_p = f.to_local(wo);
    if !(wo.z * wo_p.z > 0.0) {
        return Color::ZERO;
    }
    let v = ctx.bsdfs[nested as usize].eval(ctx, f.to_local(wi), wo_p);
    if shadowing {
        v * shadow_terminator(f.n, wo)
    } else {
        v
    }
}

/// BSDF `nested`'s density in frame `f`.
pub fn pdf(ctx: &BsdfCtx, nested: u32, f: &Frame, wi: Vec3, wo: Vec3) -> f32 {
    let wo_p = f.to_local(wo);
    if !(wo.z * wo_p.z > 0.0) {
        return 0.0;
    }
    ctx.bsdfs[nested as usize].pdf(ctx, f.to_local(wi), wo_p)
}

/// Estevez et al.'s shadowing term for a normal tilted to `n` (in the unperturbed
/// frame), seen along `wo`: 1 for an untilted normal, falling towards grazing `wo`.
pub fn shadow_terminator(n: Vec3, wo: Vec3) -> f32 {
    let alpha2 = (0.125 * tan2_theta(n)).min(1.0);
    2.0 / (1.0 + (1.0 + alpha2 * tan2_theta(wo)).sqrt())
}

/// tan² of the angle between `v` and +z.
fn tan2_theta(v: Vec3) -> f32 {
    (1.0 - v.z * v.z).max(0.0) / (v.z * v.z)
}
