//! The CPU's 8-wide BVH: the binary SAH tree collapsed into nodes of up to eight
//! children whose boxes are tested together with SIMD (the GPU keeps the binary
//! tree, see [`crate::flat::bvh`]).
//!
//! Collapse (as in Wald et al. 2008, "Getting rid of packets", and Embree's BVH8
//! builder): starting from a binary node's two children, the interior child with the
//! largest surface area is replaced by its own two children until there are eight
//! or only leaves are left. The binary leaves (at most four primitives) are kept; their
//! triangles are also stored four to a [`TriPack`] in structure-of-arrays form, so
//! that a leaf's triangles are tested in one 4-wide watertight test. A leaf that is one
//! such pack and nothing else (most leaves of a mesh) is referenced by its pack, so the
//! walk reads the triangles without first reading a leaf record. Analytic shapes
//! (rectangles, disks, spheres, cylinders) are tested one by one by their own test;
//! the build gives each a leaf of its own, which is referenced by the shape's slot.
//!
//! Node boxes are stored per axis (`b[lo/hi][axis][lane]`); an unused lane has the
//! empty box (`+∞`, `−∞`), which every box test rejects. Box tests pick the near and
//! far planes by the sign of the ray direction (Williams et al. 2005), which gives the
//! same entry distance as the binary traversal's min/max form.
//!
//! The results are those of the binary traversal: the triangle test computes, lane by
//! lane, exactly the scalar watertight test's operations (no fused multiply-adds), and
//! a lane whose edge function is exactly zero is redone with the scalar test (which
//! then falls back to `f64`). Only ties — two primitives hit at exactly the same
//! distance, e.g. on a shared edge — may resolve to the other primitive, because the
//! wide tree visits leaves in another order.

mod collapse;
mod walk;

use super::Bvh;

pub use collapse::collapse;

/// Children per node.
pub const WIDTH: usize = 8;

/// A child word's bit that marks a leaf (the rest: index into [`WideBvh::leaves`]);
/// without it the word is a node index.
const LEAF_BIT: u32 = 1 << 31;

/// With [`LEAF_BIT`], the bit of a leaf that is one triangle pack and nothing else (the
/// common leaf of a mesh): the rest of the word is the index into [`WideBvh::packs`],
/// and the walk reads the pack without going through a [`WideLeaf`].
const PACK_BIT: u32 = 1 << 30;

/// With [`LEAF_BIT`], the bit of a leaf that is one analytic shape (a rectangle, disk,
/// sphere or cylinder: the BVH gives each its own leaf): the rest of the word is its
/// slot in [`Bvh::leaf_prims`], and the walk tests it without a [`WideLeaf`].
const SHAPE_BIT: u32 = 1 << 29;

/// The index bits of a leaf's child word.
const INDEX_BITS: u32 = !(LEAF_BIT | PACK_BIT | SHAPE_BIT);

/// The child word of an unused lane.
const EMPTY: u32 = u32::MAX;

/// One wide node: eight boxes by axis and eight child words (256 bytes, four cache
/// lines).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub struct WideNode {
    /// `b[0]` lower and `b[1]` upper corners: `b[side][axis][lane]`.
    pub b: [[[f32; WIDTH]; 3]; 2],
    /// Per lane: a node index, `LEAF_BIT | leaf index`, `LEAF_BIT | PACK_BIT | pack
    /// index`, `LEAF_BIT | SHAPE_BIT | leaf slot`, or `EMPTY`.
    pub child: [u32; WIDTH],
}

impl Default for WideNode {
    fn default() -> Self {
        WideNode {
            b: [[[f32::INFINITY; WIDTH]; 3], [[f32::NEG_INFINITY; WIDTH]; 3]],
            child: [EMPTY; WIDTH],
        }
    }
}

/// Up to four triangles of one leaf, by vertex, axis and lane; unused lanes are NaN
/// (the watertight test rejects NaN).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct TriPack {
    /// `v[vertex][axis][lane]`.
    pub v: [[[f32; 4]; 3]; 3],
    /// The leaf slot (index into [`Bvh::leaf_prims`]) of each lane.
    pub slot: [u32; 4],
    /// The primitive of each lane (its leaf slot's `prim`: what a hit reports, without
    /// a read of the slot).
    pub prim: [u32; 4],
}

/// A leaf: the binary leaf's slots and their triangle packs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WideLeaf {
    /// First slot in [`Bvh::leaf_prims`].
    pub first: u32,
    /// Number of slots.
    pub count: u32,
    /// First pack in [`WideBvh::packs`].
    pub first_pack: u32,
    /// Number of packs (the leaf's triangles, four to a pack).
    pub packs: u32,
    /// Whether some slot is an analytic shape (tested one by one through `Geometry`).
    pub analytic: bool,
}

/// The wide BVH; empty when the binary tree is empty or a single leaf.
#[derive(Clone, Debug, Default)]
pub struct WideBvh {
    /// Nodes; node 0 is the root.
    pub nodes: Vec<WideNode>,
    /// Leaves referenced by child words.
    pub leaves: Vec<WideLeaf>,
    /// Triangle packs referenced by leaves.
    pub packs: Vec<TriPack>,
    /// Per node and lane, the binary node the lane's box comes from (`EMPTY` for an
    /// unused lane): what a refit reads ([`WideBvh::refit`]).
    pub sources: Vec<[u32; WIDTH]>,
}

impl WideBvh {
    /// This tree over `bvh`, a refit of the binary tree it was collapsed from (same
    /// topology and leaf order, new boxes and triangles): the lanes' boxes are copied
    /// from their binary nodes and the triangle packs re-read from the leaf slots (a
    /// refit moves mesh vertices only).
    pub fn refit(&self, bvh: &Bvh) -> WideBvh {
        let mut w = self.clone();
        for (node, src) in w.nodes.iter_mut().zip(&self.sources) {
            for (lane, &b) in src.iter().enumerate() {
                let Some(n) = bvh.nodes.get(b as usize) else {
                    continue;
                };
                for a in 0..3 {
                    node.b[0][a][lane] = n.min[a];
                    node.b[1][a][lane] = n.max[a];
                }
            }
        }
        for p in &mut w.packs {
            for lane in 0..4 {
                // unused lanes hold NaN (and a copy of the first lane's slot)
                if p.v[0][0][lane].is_nan() {
                    continue;
                }
                let lp = &bvh.leaf_prims[p.slot[lane] as usize];
                for (vi, v) in [lp.p0, lp.p1, lp.p2].iter().enumerate() {
                    for a in 0..3 {
                        p.v[vi][a][lane] = v[a];
                    }
                }
            }
        }
        w
    }
}

#[cfg(test)]
mod tests;
