//! The wide tree's walk: box tests per SIMD level, triangle packs, the entry points.

use std::cell::OnceCell;
use std::mem::MaybeUninit;

use super::{
    TriPack, WideBvh, WideLeaf, WideNode, INDEX_BITS, LEAF_BIT, PACK_BIT, SHAPE_BIT, WIDTH,
};
use crate::accel::simd::SimdLevel;
use crate::accel::{Bvh, LeafPrim, Primitives, STACK_SIZE};
use crate::math::triangle::{intersect_tri_watertight, TriRay};
use crate::math::{Ray, Vec2, Vec3};

/// A node's traversal stack holds at most `WIDTH - 1` entries per level, and a wide
/// tree is never deeper than the binary tree it comes from.
const WIDE_STACK: usize = (WIDTH - 1) * STACK_SIZE + WIDTH;

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
        let inv = crate::accel::safe_inverse(ray.d);
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
const ROBUST: f32 = crate::accel::ROBUST;

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
mod x86;

/// What a walk looks for.
struct Query<'a, G> {
    bvh: &'a Bvh,
    geom: &'a G,
    ray: &'a Ray,
    /// The ray's set-up for the watertight triangle test, made at the first triangle
    /// the walk meets (most rays of a scene of rectangles and a few meshes meet none).
    tri: OnceCell<TriRay>,
}

impl<G: Primitives> Query<'_, G> {
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
        unsafe fn $name<G: Primitives, const ANY: bool>(q: &Query<G>) -> Option<(u32, f32, Vec2)> {
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
fn walk_scalar<G: Primitives, const ANY: bool>(q: &Query<G>) -> Option<(u32, f32, Vec2)> {
    q.walk::<ScalarBoxes, false, ANY>()
}

/// The wide walk at `level` (which the CPU must support; `Scalar` is always safe).
fn walk_at<G: Primitives, const ANY: bool>(
    level: SimdLevel,
    q: &Query<G>,
) -> Option<(u32, f32, Vec2)> {
    #[cfg(target_arch = "x86_64")]
    {
        debug_assert!(level.supported());
        // SAFETY: `simd::level` only returns levels the CPU supports, and callers that
        // pass a level explicitly check `supported` first
        unsafe {
            match level {
                SimdLevel::Scalar => walk_scalar::<G, ANY>(q),
                SimdLevel::Sse => walk_sse::<G, ANY>(q),
                SimdLevel::Avx2 => walk_avx2::<G, ANY>(q),
                SimdLevel::Avx512 => walk_avx512::<G, ANY>(q),
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = level;
        walk_scalar::<G, ANY>(q)
    }
}

impl Bvh {
    /// Closest hit through the wide tree at `level` (the binary tree when there is no
    /// wide tree: a scene of one leaf); `None` for a level this CPU lacks.
    pub fn intersect_wide(
        &self,
        geom: &impl Primitives,
        ray: &Ray,
        level: SimdLevel,
    ) -> Option<(u32, f32, Vec2)> {
        if !level.supported() {
            return None;
        }
        if self.wide.nodes.is_empty() {
            return self.intersect_binary(geom, ray);
        }
        walk_at::<_, false>(level, &self.query(geom, ray))
    }

    /// Whether anything blocks `ray`, through the wide tree at `level` (as
    /// [`Self::intersect_wide`]; `false` for a level this CPU lacks).
    pub fn occluded_wide(&self, geom: &impl Primitives, ray: &Ray, level: SimdLevel) -> bool {
        if !level.supported() {
            return false;
        }
        if self.wide.nodes.is_empty() {
            return self.occluded_binary(geom, ray);
        }
        walk_at::<_, true>(level, &self.query(geom, ray)).is_some()
    }

    #[inline(always)]
    fn query<'a, G: Primitives>(&'a self, geom: &'a G, ray: &'a Ray) -> Query<'a, G> {
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
        geom: &impl Primitives,
        ray: &Ray,
    ) -> Option<(u32, f32, Vec2)> {
        walk_at::<_, false>(crate::accel::simd::active(), &self.query(geom, ray))
    }

    /// [`Bvh::occluded`] through the wide tree at the process's level.
    #[inline]
    pub(crate) fn occluded_wide_active(&self, geom: &impl Primitives, ray: &Ray) -> bool {
        walk_at::<_, true>(crate::accel::simd::active(), &self.query(geom, ray)).is_some()
    }
}
