//! What each shape record kind implements for the dispatch of
//! [`AnyShape`](super::AnyShape): [`ShapeRecord`].

use super::record::FlatShape;
use super::{Geometry, Hit, PositionSample, Prim};
use crate::math::{Aabb, Ray, Vec2};

/// What a shape record does for the scene's BVH and the integrators. `g` is the
/// geometry the record belongs to, `pr` the primitive (a mesh triangle, or the whole
/// analytic shape).
pub trait ShapeRecord {
    /// Bounds of primitive `pr`.
    fn bounds(&self, g: &Geometry, pr: Prim) -> Aabb;

    /// `(t, prim-specific coordinates)` for `RAY_TMIN < t < ray.tmax` (triangles:
    /// barycentrics `(b1, b2)`; rectangles and disks: local `(x, y)`; others unused).
    fn intersect(&self, g: &Geometry, pr: Prim, ray: &Ray) -> Option<(f32, Vec2)>;

    /// Completes a hit found by [`Self::intersect`].
    fn interaction(&self, g: &Geometry, pr: Prim, ray: &Ray, t: f32, coords: Vec2) -> Hit;

    /// A point uniformly by area on shape `shape` (`pdf = 0` for a shape without area).
    fn sample_position(&self, g: &Geometry, shape: u32, u: Vec2) -> PositionSample;

    /// Total surface area.
    fn surface_area(&self) -> f32;

    /// Writes the record's own fields of the kernels' record `f` (the caller sets
    /// `kind`, `bsdf` and `emitter`).
    fn flatten(&self, f: &mut FlatShape);

    /// Whether a scene holding this record walks its BVH on the GPU even when it has few
    /// primitives: the record is no affine image of a unit planar shape or sphere
    /// ([`crate::flat::unit_prims`]).
    fn walks_bvh(&self) -> bool {
        false
    }
}
