//! Refitting: the same tree over primitives that moved (a mesh's vertex positions
//! were written). The topology, the leaf order and every array's size stay; the
//! leaves' inlined triangles and every node's box are recomputed bottom-up, and the
//! wide tree takes the new boxes and triangles lane by lane ([`super::wide::WideBvh::refit`]). Much cheaper than a
//! build (no binning or partitioning), at the price of a tree that fits the new
//! positions less tightly when they moved far.

use rayon::prelude::*;

use super::{Bvh, BvhNode, Primitives};
use crate::error::Result;
use crate::math::{Aabb, Vec3};
use crate::parallel::on_process_pool;

impl Bvh {
    /// This tree over `geom`, which has the same primitives as the geometry it was
    /// built over (same count, order and kinds) at new positions.
    ///
    /// # Panics
    /// If `geom` has a different number of primitives (a caller's bug: a changed
    /// primitive set needs a build).
    pub fn refit(&self, geom: &impl Primitives) -> Result<Bvh> {
        assert_eq!(
            geom.prim_count(),
            self.prim_indices.len(),
            "refit over a different primitive set"
        );
        let leaf_prims: Vec<_> = on_process_pool(|| {
            (self.prim_indices.par_iter())
                .map(|&p| geom.leaf_prim(p))
                .collect()
        })?;
        let mut nodes = self.nodes.clone();
        // children follow their parent in the array, so a reverse sweep sees every
        // child before its parent
        for i in (0..nodes.len()).rev() {
            let n = nodes[i];
            let b = if n.is_leaf() {
                let slots = n.left_first as usize..(n.left_first + n.count) as usize;
                leaf_prims[slots].iter().fold(Aabb::EMPTY, |b, lp| {
                    let pb = if lp.is_tri != 0 {
                        // the inlined triangle: `prim_bounds` of it, from contiguous memory
                        let [p0, p1, p2] = [lp.p0, lp.p1, lp.p2].map(Vec3::from);
                        Aabb {
                            min: p0.min(p1).min(p2),
                            max: p0.max(p1).max(p2),
                        }
                    } else {
                        geom.prim_bounds(lp.prim)
                    };
                    b.union(&pb)
                })
            } else {
                let l = n.left_first as usize;
                nodes[l].bounds().union(&nodes[l + 1].bounds())
            };
            nodes[i] = BvhNode {
                min: b.min.into(),
                max: b.max.into(),
                ..n
            };
        }
        let mut bvh = Bvh {
            nodes,
            prim_indices: self.prim_indices.clone(),
            leaf_prims,
            wide: Default::default(),
        };
        bvh.wide = self.wide.refit(&bvh);
        Ok(bvh)
    }
}
