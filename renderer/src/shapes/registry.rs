//! What each shape record kind implements for the dispatch of
//! [`AnyShape`](super::AnyShape): [`ShapeRecord`]; and the kernels' tags of the record
//! kinds ([`cuda_source`]).

use std::sync::OnceLock;

use super::record::FlatShape;
use super::{Geometry, Hit, PositionSample, Prim};
use crate::math::{Aabb, Ray, Vec2};
use crate::plugin::registry::cuda_tags;

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

/// The CUDA source of the record kinds (`shapes/registry.cuh`), generated once: the
/// `HG_SHAPE_*` tags and the default `HG_SHAPE_SET` (every kind).
pub fn cuda_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| generate_cuda(super::tag::NAMES))
}

/// The text of `shapes/registry.cuh` for the record kinds `names` (in tag order).
fn generate_cuda(names: &[&str]) -> String {
    let mut s = String::from(
        "// Generated from the shape records list (renderer/src/shapes/mod.rs) by\n\
         // shapes/registry.rs: the tags of the record kinds (FlatShape::kind) and the default\n\
         // shape set (bit HG_SHAPE_*: every kind). HG_SHAPE_INSTANCE is a shapegroup placed\n\
         // by an instance (geometry.cuh intersect_instance).\n\
         #pragma once\n\n",
    );
    let every = (1u64 << names.len()) - 1;
    s.push_str(&cuda_tags("SHAPE", names, every as u32));
    s
}

#[cfg(test)]
mod tests {
    use super::super::tag;

    #[test]
    fn the_kernels_shape_tags_are_the_records_list() {
        let src = super::cuda_source();
        assert_eq!(tag::NAMES.len() as u32, tag::COUNT);
        for (t, name) in tag::NAMES.iter().enumerate() {
            let define = format!("#define HG_SHAPE_{name} {t}u\n");
            assert_eq!(src.matches(&define).count(), 1, "{src}");
        }
        assert_eq!(tag::NAMES[tag::CYLINDER as usize], "CYLINDER");
        // the default set has every kind
        let every = (1u32 << tag::COUNT) - 1;
        let set = format!("#define HG_SHAPE_SET 0x{every:x}u\n");
        assert!(src.contains(&set), "{src}");
    }
}
