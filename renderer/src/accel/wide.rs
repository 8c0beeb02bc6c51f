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

use std::cell::OnceCell;
use std::mem::MaybeUninit;

use super::simd::SimdLevel;
use super::{Bvh, BvhNode, LeafPrim, STACK_SIZE};
use crate::math::{Ray, Vec2, Vec3};
use crate::shapes::mesh::{intersect_tri_watertight, TriRay};
use crate::shapes::Geometry;

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

/// A node's traversal stack holds at most `WIDTH - 1` entries per level, and a wide
/// tree is never deeper than the binary tree it comes from.
const WIDE_STACK: usize = (WIDTH - 1) * STACK_SIZE + WIDTH;

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

/// Collapses `bvh`'s binary tree (which must be complete: nodes, slots and leaf prims).
pub fn collapse(bvh: &Bvh) -> WideBvh {
    let mut w = WideBvh::default();
    if bvh.nodes.first().is_none_or(BvhNode::is_leaf) {
        // nothing to collapse: one box and one leaf are walked fastest as they are
        return w;
    }
    // child words hold leaf, pack, slot and node indices below 2^29 (packs and nodes are
    // fewer than leaves, leaves than primitives): a tree of half a billion primitives or
    // more is walked as the binary tree it is
    if bvh.leaf_prims.len() >= INDEX_BITS as usize {
        return w;
    }
    w.nodes.push(WideNode::default());
    w.sources.push([EMPTY; WIDTH]);
    collapse_node(bvh, &mut w, 0, 0);
    w
}

impl WideBvh {
    /// Asks the cache for the node or triangle pack of child word `c` (the walk visits
    /// it soon; a leaf record is small and comes with its first read).
    #[inline(always)]
    fn prefetch(&self, c: u32) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let (p, lines): (*const i8, usize) = if c & LEAF_BIT == 0 {
                (self.nodes.as_ptr().wrapping_add(c as usize).cast(), 4)
            } else if c & PACK_BIT != 0 {
                let i = (c & INDEX_BITS) as usize;
                (self.packs.as_ptr().wrapping_add(i).cast(), 3)
            } else {
                return;
            };
            for l in 0..lines {
                // SAFETY: prefetching never faults, whatever the address
                unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64 * l)) };
            }
        }
    }

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

/// Half the surface area of binary node `n`'s box.
fn half_area(n: &BvhNode) -> f32 {
    let e = [0, 1, 2].map(|a| (n.max[a] - n.min[a]).max(0.0));
    e[0] * e[1] + e[1] * e[2] + e[2] * e[0]
}

/// Fills wide node `wi` from binary node `bi`'s subtree.
fn collapse_node(bvh: &Bvh, w: &mut WideBvh, wi: usize, bi: usize) {
    let nodes = &bvh.nodes;
    let mut kids = vec![bi];
    while kids.len() < WIDTH {
        let open = kids
            .iter()
            .enumerate()
            .filter(|(_, &k)| !nodes[k].is_leaf())
            .max_by(|a, b| half_area(&nodes[*a.1]).total_cmp(&half_area(&nodes[*b.1])));
        let Some((i, &k)) = open else { break };
        let l = nodes[k].left_first as usize;
        kids[i] = l;
        kids.insert(i + 1, l + 1);
    }
    for (lane, &k) in kids.iter().enumerate() {
        w.sources[wi][lane] = k as u32;
        let n = &nodes[k];
        for a in 0..3 {
            w.nodes[wi].b[0][a][lane] = n.min[a];
            w.nodes[wi].b[1][a][lane] = n.max[a];
        }
        w.nodes[wi].child[lane] = if n.is_leaf() {
            push_leaf(bvh, w, n)
        } else {
            let c = w.nodes.len();
            w.nodes.push(WideNode::default());
            w.sources.push([EMPTY; WIDTH]);
            collapse_node(bvh, w, c, k);
            c as u32
        };
    }
}

/// Adds the leaf of binary node `n` with its triangle packs; returns its child
/// word (see [`WideNode::child`]).
fn push_leaf(bvh: &Bvh, w: &mut WideBvh, n: &BvhNode) -> u32 {
    // (indices fit in INDEX_BITS: `collapse` checked the number of primitives)
    if n.count == 1 && bvh.leaf_prims[n.left_first as usize].is_tri == 0 {
        return LEAF_BIT | SHAPE_BIT | n.left_first;
    }
    let slots = n.left_first..n.left_first + n.count;
    let tris: Vec<u32> = slots
        .clone()
        .filter(|&s| bvh.leaf_prims[s as usize].is_tri != 0)
        .collect();
    let first_pack = w.packs.len() as u32;
    for chunk in tris.chunks(4) {
        let mut p = TriPack {
            v: [[[f32::NAN; 4]; 3]; 3],
            slot: [chunk[0]; 4],
            prim: [bvh.leaf_prims[chunk[0] as usize].prim; 4],
        };
        for (lane, &s) in chunk.iter().enumerate() {
            let lp = &bvh.leaf_prims[s as usize];
            for (vi, v) in [lp.p0, lp.p1, lp.p2].iter().enumerate() {
                for a in 0..3 {
                    p.v[vi][a][lane] = v[a];
                }
            }
            p.slot[lane] = s;
            p.prim[lane] = lp.prim;
        }
        w.packs.push(p);
    }
    let packs = w.packs.len() as u32 - first_pack;
    if packs == 1 && tris.len() == n.count as usize {
        return LEAF_BIT | PACK_BIT | first_pack;
    }
    w.leaves.push(WideLeaf {
        first: n.left_first,
        count: n.count,
        first_pack,
        packs,
        analytic: tris.len() < n.count as usize,
    });
    LEAF_BIT | (w.leaves.len() as u32 - 1)
}

/// A ray prepared for the wide box tests.
#[derive(Clone, Copy)]
pub(crate) struct WideRay {
    o: [f32; 3],
    inv: [f32; 3],
    /// Per axis, the side (0 lower, 1 upper) of the near plane.
    near: [usize; 3],
}

impl WideRay {
    #[inline(always)]
    fn new(ray: &Ray) -> Self {
        let inv = super::safe_inverse(ray.d);
        WideRay {
            o: ray.o.into(),
            inv,
            near: inv.map(|i| (i < 0.0) as usize),
        }
    }
}

/// The box test of one level: entry distances into `dist`, hit lanes as a bit mask.
trait Boxes {
    /// # Safety
    /// The CPU must support the level.
    unsafe fn test(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32;
}

/// Grows the far distance by 2γ₃, as the binary traversal does.
const ROBUST: f32 = super::ROBUST;

struct ScalarBoxes;

impl Boxes for ScalarBoxes {
    #[inline(always)]
    unsafe fn test(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
        let mut mask = 0;
        for lane in 0..WIDTH {
            let mut near = 0.0f32;
            let mut far = f32::INFINITY;
            for a in 0..3 {
                let tn = (n.b[r.near[a]][a][lane] - r.o[a]) * r.inv[a];
                let tf = (n.b[1 - r.near[a]][a][lane] - r.o[a]) * r.inv[a];
                near = near.max(tn);
                far = far.min(tf);
            }
            let far = (far * ROBUST).min(tmax);
            dist[lane] = near;
            mask |= ((near <= far) as u32) << lane;
        }
        mask
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The SSE4.2, AVX2 and AVX-512 box tests and the 4-wide triangle test.

    use std::arch::x86_64::*;

    use super::{Boxes, TriPack, WideNode, WideRay, ROBUST, WIDTH};
    use crate::shapes::mesh::TriRay;
    use crate::shapes::RAY_TMIN;

    pub struct SseBoxes;
    pub struct Avx2Boxes;
    pub struct Avx512Boxes;

    impl Boxes for SseBoxes {
        #[inline(always)]
        unsafe fn test(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
            // SAFETY: the caller checked SSE4.2
            unsafe { boxes_sse(n, r, tmax, dist) }
        }
    }

    impl Boxes for Avx2Boxes {
        #[inline(always)]
        unsafe fn test(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
            // SAFETY: the caller checked AVX2
            unsafe { boxes_avx2(n, r, tmax, dist) }
        }
    }

    impl Boxes for Avx512Boxes {
        #[inline(always)]
        unsafe fn test(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
            // SAFETY: the caller checked AVX-512F and VL
            unsafe { boxes_avx512(n, r, tmax, dist) }
        }
    }

    #[target_feature(enable = "sse4.2")]
    #[inline]
    unsafe fn boxes_sse(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
        let mut mask = 0;
        for half in 0..2 {
            let off = 4 * half;
            let mut near = _mm_setzero_ps();
            let mut far = _mm_set1_ps(f32::INFINITY);
            for a in 0..3 {
                let (o, inv) = (_mm_set1_ps(r.o[a]), _mm_set1_ps(r.inv[a]));
                // SAFETY: off + 4 <= WIDTH
                let (bn, bf) = unsafe {
                    (
                        _mm_loadu_ps(n.b[r.near[a]][a].as_ptr().add(off)),
                        _mm_loadu_ps(n.b[1 - r.near[a]][a].as_ptr().add(off)),
                    )
                };
                near = _mm_max_ps(near, _mm_mul_ps(_mm_sub_ps(bn, o), inv));
                far = _mm_min_ps(far, _mm_mul_ps(_mm_sub_ps(bf, o), inv));
            }
            let far = _mm_min_ps(_mm_mul_ps(far, _mm_set1_ps(ROBUST)), _mm_set1_ps(tmax));
            // SAFETY: off + 4 <= WIDTH
            unsafe { _mm_storeu_ps(dist.as_mut_ptr().add(off), near) };
            mask |= (_mm_movemask_ps(_mm_cmple_ps(near, far)) as u32) << off;
        }
        mask
    }

    /// The AVX2 test's distances: `(near, far)` for the eight lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn near_far_avx(n: &WideNode, r: &WideRay, tmax: f32) -> (__m256, __m256) {
        let mut near = _mm256_setzero_ps();
        let mut far = _mm256_set1_ps(f32::INFINITY);
        for a in 0..3 {
            let (o, inv) = (_mm256_set1_ps(r.o[a]), _mm256_set1_ps(r.inv[a]));
            // SAFETY: each row holds WIDTH = 8 floats
            let (bn, bf) = unsafe {
                (
                    _mm256_loadu_ps(n.b[r.near[a]][a].as_ptr()),
                    _mm256_loadu_ps(n.b[1 - r.near[a]][a].as_ptr()),
                )
            };
            near = _mm256_max_ps(near, _mm256_mul_ps(_mm256_sub_ps(bn, o), inv));
            far = _mm256_min_ps(far, _mm256_mul_ps(_mm256_sub_ps(bf, o), inv));
        }
        let far = _mm256_min_ps(
            _mm256_mul_ps(far, _mm256_set1_ps(ROBUST)),
            _mm256_set1_ps(tmax),
        );
        (near, far)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn boxes_avx2(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
        // SAFETY: AVX2 is enabled here; dist holds 8 floats
        unsafe {
            let (near, far) = near_far_avx(n, r, tmax);
            _mm256_storeu_ps(dist.as_mut_ptr(), near);
            _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(near, far)) as u32
        }
    }

    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    #[inline]
    unsafe fn boxes_avx512(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
        // SAFETY: AVX2 and AVX-512VL are enabled here; dist holds 8 floats
        unsafe {
            let (near, far) = near_far_avx(n, r, tmax);
            _mm256_storeu_ps(dist.as_mut_ptr(), near);
            _mm256_cmp_ps_mask::<_CMP_LE_OQ>(near, far) as u32
        }
    }

    /// The four lanes of `p` that the watertight test hits before `tmax` (bit mask),
    /// their distances and barycentrics `(b1, b2)`, and the lanes whose edge functions
    /// have an exact zero (which the scalar test must redo in `f64`). Each lane computes
    /// exactly the operations of `intersect_tri_watertight`, so hits, distances and
    /// barycentrics are bitwise the same.
    #[inline(always)]
    pub fn tris4(p: &TriPack, r: &TriRay, tmax: f32) -> (u32, [f32; 4], [[f32; 4]; 2], u32) {
        // SAFETY: SSE and SSE2 are part of x86_64
        unsafe {
            let [kx, ky, kz] = r.k;
            let o = r.o.to_array();
            let (sx, sy) = (_mm_set1_ps(r.s.x), _mm_set1_ps(r.s.y));
            let local = |v: &[[f32; 4]; 3]| {
                let x = _mm_sub_ps(_mm_loadu_ps(v[kx].as_ptr()), _mm_set1_ps(o[kx]));
                let y = _mm_sub_ps(_mm_loadu_ps(v[ky].as_ptr()), _mm_set1_ps(o[ky]));
                let z = _mm_sub_ps(_mm_loadu_ps(v[kz].as_ptr()), _mm_set1_ps(o[kz]));
                (
                    _mm_add_ps(x, _mm_mul_ps(sx, z)),
                    _mm_add_ps(y, _mm_mul_ps(sy, z)),
                    z,
                )
            };
            let (a, b, c) = (local(&p.v[0]), local(&p.v[1]), local(&p.v[2]));
            let edge = |u: (__m128, __m128, __m128), v: (__m128, __m128, __m128)| {
                _mm_sub_ps(_mm_mul_ps(u.0, v.1), _mm_mul_ps(u.1, v.0))
            };
            let (e0, e1, e2) = (edge(b, c), edge(c, a), edge(a, b));
            let zero = _mm_setzero_ps();
            let exact_zero = _mm_or_ps(
                _mm_or_ps(_mm_cmpeq_ps(e0, zero), _mm_cmpeq_ps(e1, zero)),
                _mm_cmpeq_ps(e2, zero),
            );
            let neg = _mm_or_ps(
                _mm_or_ps(_mm_cmplt_ps(e0, zero), _mm_cmplt_ps(e1, zero)),
                _mm_cmplt_ps(e2, zero),
            );
            let pos = _mm_or_ps(
                _mm_or_ps(_mm_cmpgt_ps(e0, zero), _mm_cmpgt_ps(e1, zero)),
                _mm_cmpgt_ps(e2, zero),
            );
            let det = _mm_add_ps(_mm_add_ps(e0, e1), e2);
            let reject = _mm_or_ps(
                _mm_or_ps(_mm_and_ps(neg, pos), _mm_cmpeq_ps(det, zero)),
                _mm_cmpunord_ps(det, det),
            );
            let inv_det = _mm_div_ps(_mm_set1_ps(1.0), det);
            let sum = _mm_add_ps(
                _mm_add_ps(_mm_mul_ps(e0, a.2), _mm_mul_ps(e1, b.2)),
                _mm_mul_ps(e2, c.2),
            );
            let t = _mm_mul_ps(_mm_mul_ps(sum, _mm_set1_ps(r.s.z)), inv_det);
            let in_range = _mm_and_ps(
                _mm_cmpgt_ps(t, _mm_set1_ps(RAY_TMIN)),
                _mm_cmplt_ps(t, _mm_set1_ps(tmax)),
            );
            let hit = _mm_andnot_ps(reject, in_range);
            let (mut ts, mut b1, mut b2) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
            _mm_storeu_ps(ts.as_mut_ptr(), t);
            _mm_storeu_ps(b1.as_mut_ptr(), _mm_mul_ps(e1, inv_det));
            _mm_storeu_ps(b2.as_mut_ptr(), _mm_mul_ps(e2, inv_det));
            let redo = _mm_movemask_ps(exact_zero) as u32;
            (_mm_movemask_ps(hit) as u32 & !redo, ts, [b1, b2], redo)
        }
    }
}

/// What a walk looks for.
struct Query<'a> {
    bvh: &'a Bvh,
    geom: &'a Geometry,
    ray: &'a Ray,
    /// The ray's set-up for the watertight triangle test, made at the first triangle
    /// the walk meets (most rays of a scene of rectangles and a few meshes meet none).
    tri: OnceCell<TriRay>,
}

impl Query<'_> {
    /// The ray's triangle set-up.
    #[inline(always)]
    fn tri(&self) -> &TriRay {
        self.tri.get_or_init(|| TriRay::new(self.ray))
    }

    /// The triangle of `slot` against the ray, by the scalar watertight test.
    #[inline(always)]
    fn tri_slot(&self, slot: u32, tmax: f32) -> Option<(u32, f32, Vec2)> {
        let lp: &LeafPrim = &self.bvh.leaf_prims[slot as usize];
        let p = [Vec3::from(lp.p0), Vec3::from(lp.p1), Vec3::from(lp.p2)];
        intersect_tri_watertight(p, self.tri(), tmax).map(|(t, c)| (lp.prim, t, c))
    }

    /// The nearest hit among the triangles of pack `p` before `tmax`, `SIMD_TRI`: four
    /// at a time.
    #[inline(always)]
    fn pack<const SIMD_TRI: bool>(&self, p: &TriPack, tmax: f32) -> Option<(u32, f32, Vec2)> {
        if SIMD_TRI {
            #[cfg(target_arch = "x86_64")]
            {
                let (mut hits, mut ts, [mut b1, mut b2], redo) = x86::tris4(p, self.tri(), tmax);
                // lanes with an exact zero edge function (rare): the scalar test's verdict
                let mut redo = redo;
                while redo != 0 {
                    let lane = redo.trailing_zeros() as usize;
                    redo &= redo - 1;
                    if let Some((_, t, c)) = self.tri_slot(p.slot[lane], tmax) {
                        (ts[lane], b1[lane], b2[lane]) = (t, c.x, c.y);
                        hits |= 1 << lane;
                    }
                }
                if hits == 0 {
                    return None;
                }
                // the nearest lane, the first on ties (leaf order, as the scalar loop);
                // its distance and barycentrics are the scalar test's
                let lane = nearest_lane(hits, &ts);
                let h = (p.prim[lane], ts[lane], Vec2::new(b1[lane], b2[lane]));
                #[cfg(debug_assertions)]
                {
                    let bits = |(i, t, c): (u32, f32, Vec2)| (i, [t, c.x, c.y].map(f32::to_bits));
                    debug_assert_eq!(
                        self.tri_slot(p.slot[lane], tmax).map(bits),
                        Some(bits(h)),
                        "SIMD and scalar triangle tests disagree"
                    );
                }
                return Some(h);
            }
        }
        let (mut best, mut tmax) = (None, tmax);
        for lane in 0..4 {
            let s = p.slot[lane];
            if lane > 0 && s == p.slot[0] {
                break; // unused lanes repeat the first slot
            }
            if let Some(h) = self.tri_slot(s, tmax) {
                best = Some(h);
                tmax = h.1;
            }
        }
        best
    }

    /// The hit of the analytic shape in leaf slot `slot` before `tmax`.
    #[inline(always)]
    fn shape(&self, slot: u32, tmax: f32) -> Option<(u32, f32, Vec2)> {
        let prim = self.bvh.leaf_prims[slot as usize].prim;
        let mut r = *self.ray;
        r.tmax = tmax;
        self.geom
            .intersect_prim(prim, &r)
            .map(|(t, c)| (prim, t, c))
    }

    /// The nearest hit in `leaf` before `tmax`, triangles `SIMD_TRI`: four at a time.
    /// `ANY`: the first hit found.
    #[inline(always)]
    fn leaf<const SIMD_TRI: bool, const ANY: bool>(
        &self,
        leaf: &WideLeaf,
        mut tmax: f32,
    ) -> Option<(u32, f32, Vec2)> {
        let mut best = None;
        let packs = leaf.first_pack as usize..(leaf.first_pack + leaf.packs) as usize;
        for p in &self.bvh.wide.packs[packs] {
            if let Some(h) = self.pack::<SIMD_TRI>(p, tmax) {
                best = Some(h);
                tmax = h.1;
                if ANY {
                    return best;
                }
            }
        }
        if leaf.analytic {
            for slot in leaf.first..leaf.first + leaf.count {
                let lp = &self.bvh.leaf_prims[slot as usize];
                if lp.is_tri != 0 {
                    continue;
                }
                if let Some(h) = self.shape(slot, tmax) {
                    best = Some(h);
                    tmax = h.1;
                    if ANY {
                        return best;
                    }
                }
            }
        }
        best
    }

    /// Walks the wide tree with box test `B`: the closest hit (`ANY`: any hit).
    #[inline(always)]
    fn walk<B: Boxes, const SIMD_TRI: bool, const ANY: bool>(&self) -> Option<(u32, f32, Vec2)> {
        let w = &self.bvh.wide;
        let wr = WideRay::new(self.ray);
        let mut tmax = self.ray.tmax;
        let mut best = None;
        let mut stack = [MaybeUninit::<(u32, f32)>::uninit(); WIDE_STACK];
        let mut sp = 0usize;
        let mut item = 0u32;
        let mut dist = [0.0f32; WIDTH];
        loop {
            if item & LEAF_BIT == 0 {
                let n = &w.nodes[item as usize];
                // SAFETY: the walk runs only at a level the CPU supports
                let mut mask = unsafe { B::test(n, &wr, tmax, &mut dist) };
                if mask != 0 {
                    let first = mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    if mask == 0 {
                        item = n.child[first];
                        continue;
                    }
                    // two or more: push all, farthest deepest, and take the nearest
                    let base = sp;
                    let mut lane = first;
                    loop {
                        let e = (n.child[lane], dist[lane]);
                        w.prefetch(e.0);
                        // insertion into [base, sp) kept sorted by decreasing distance
                        let mut j = sp;
                        // SAFETY: entries base..sp were written in this loop
                        while j > base && unsafe { stack[j - 1].assume_init() }.1 < e.1 {
                            stack[j] = stack[j - 1];
                            j -= 1;
                        }
                        stack[j] = MaybeUninit::new(e);
                        sp += 1;
                        if mask == 0 {
                            break;
                        }
                        lane = mask.trailing_zeros() as usize;
                        mask &= mask - 1;
                    }
                    sp -= 1;
                    // SAFETY: written above
                    item = unsafe { stack[sp].assume_init() }.0;
                    continue;
                }
            } else {
                let hit = if item & PACK_BIT != 0 {
                    self.pack::<SIMD_TRI>(&w.packs[(item & INDEX_BITS) as usize], tmax)
                } else if item & SHAPE_BIT != 0 {
                    self.shape(item & INDEX_BITS, tmax)
                } else {
                    self.leaf::<SIMD_TRI, ANY>(&w.leaves[(item & INDEX_BITS) as usize], tmax)
                };
                if let Some(h) = hit {
                    best = Some(h);
                    tmax = h.1;
                    if ANY {
                        return best;
                    }
                }
            }
            // pop the next entry that may still hold something nearer than the best hit
            loop {
                if sp == 0 {
                    return best;
                }
                sp -= 1;
                // SAFETY: entries below sp are initialised
                let (next, t_enter) = unsafe { stack[sp].assume_init() };
                if t_enter <= tmax {
                    item = next;
                    break;
                }
            }
        }
    }
}

/// The lane of `mask` (non-empty) with the smallest distance, the first on ties.
#[inline(always)]
fn nearest_lane(mask: u32, ts: &[f32; 4]) -> usize {
    let mut best = mask.trailing_zeros() as usize;
    for l in best + 1..4 {
        if mask >> l & 1 != 0 && ts[l] < ts[best] {
            best = l;
        }
    }
    best
}

/// Entry points per level: each compiles the walk with that level's instructions.
macro_rules! entry {
    ($name:ident, $boxes:ty, $simd_tri:expr, $feat:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        unsafe fn $name<const ANY: bool>(q: &Query) -> Option<(u32, f32, Vec2)> {
            q.walk::<$boxes, $simd_tri, ANY>()
        }
    };
}

entry!(walk_sse, x86::SseBoxes, true, "sse4.2");
entry!(walk_avx2, x86::Avx2Boxes, true, "avx2");
entry!(walk_avx512, x86::Avx512Boxes, true, "avx2,avx512f,avx512vl");

/// The walk without SIMD, out of line like the others: inlined into [`walk_at`] it gave
/// the dispatch its large stack frame, paid on every walk at every level.
#[inline(never)]
fn walk_scalar<const ANY: bool>(q: &Query) -> Option<(u32, f32, Vec2)> {
    q.walk::<ScalarBoxes, false, ANY>()
}

/// The wide walk at `level` (which the CPU must support; `Scalar` is always safe).
fn walk_at<const ANY: bool>(level: SimdLevel, q: &Query) -> Option<(u32, f32, Vec2)> {
    #[cfg(target_arch = "x86_64")]
    {
        debug_assert!(level.supported());
        // SAFETY: `simd::level` only returns levels the CPU supports, and callers that
        // pass a level explicitly check `supported` first
        unsafe {
            match level {
                SimdLevel::Scalar => walk_scalar::<ANY>(q),
                SimdLevel::Sse => walk_sse::<ANY>(q),
                SimdLevel::Avx2 => walk_avx2::<ANY>(q),
                SimdLevel::Avx512 => walk_avx512::<ANY>(q),
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = level;
        walk_scalar::<ANY>(q)
    }
}

impl Bvh {
    /// Closest hit through the wide tree at `level` (the binary tree when there is no
    /// wide tree: a scene of one leaf); `None` for a level this CPU lacks.
    pub fn intersect_wide(
        &self,
        geom: &Geometry,
        ray: &Ray,
        level: SimdLevel,
    ) -> Option<(u32, f32, Vec2)> {
        if !level.supported() {
            return None;
        }
        if self.wide.nodes.is_empty() {
            return self.intersect_binary(geom, ray);
        }
        walk_at::<false>(level, &self.query(geom, ray))
    }

    /// Whether anything blocks `ray`, through the wide tree at `level` (as
    /// [`Self::intersect_wide`]; `false` for a level this CPU lacks).
    pub fn occluded_wide(&self, geom: &Geometry, ray: &Ray, level: SimdLevel) -> bool {
        if !level.supported() {
            return false;
        }
        if self.wide.nodes.is_empty() {
            return self.occluded_binary(geom, ray);
        }
        walk_at::<true>(level, &self.query(geom, ray)).is_some()
    }

    #[inline(always)]
    fn query<'a>(&'a self, geom: &'a Geometry, ray: &'a Ray) -> Query<'a> {
        Query {
            bvh: self,
            geom,
            ray,
            tri: OnceCell::new(),
        }
    }

    /// [`Bvh::intersect`] through the wide tree at the process's level.
    #[inline]
    pub(crate) fn intersect_wide_active(
        &self,
        geom: &Geometry,
        ray: &Ray,
    ) -> Option<(u32, f32, Vec2)> {
        walk_at::<false>(super::simd::active(), &self.query(geom, ray))
    }

    /// [`Bvh::occluded`] through the wide tree at the process's level.
    #[inline]
    pub(crate) fn occluded_wide_active(&self, geom: &Geometry, ray: &Ray) -> bool {
        walk_at::<true>(super::simd::active(), &self.query(geom, ray)).is_some()
    }
}

#[cfg(test)]
#[path = "wide_tests.rs"]
mod tests;
