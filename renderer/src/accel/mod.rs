//! The bounding volume hierarchy over every primitive of the scene
//! (binned SAH build, flat node array; the CUDA backend walks two-box nodes
//! derived from it, see [`crate::flat::bvh`]).
//!
//! Layout: one `Vec<BvhNode>`; node 0 is the root. An interior node's two
//! children are adjacent (`left_first`, `left_first + 1`); a leaf covers
//! `prim_indices[left_first .. left_first + count]` (and the same slots of
//! `leaf_prims`, which inline the triangles' vertices so that a leaf is tested
//! from contiguous memory). Traversal is a stack loop that visits the nearer
//! child first and skips nodes beyond the closest hit; triangles use the
//! watertight test of [`crate::math::triangle`], exactly as
//! the scene's geometry does, so BVH and brute force agree bit for bit. The tree is
//! built over and tests any [`Primitives`] (the scene's geometry is one).

mod build;
mod refit;
pub mod simd;
pub mod wide;

use glam::Vec3A;

use crate::math::triangle::{intersect_tri_watertight, TriRay};
use crate::math::{Aabb, Ray, Vec2, Vec3};

/// What the tree is built over and tests: primitives `0 .. prim_count()`. Triangles
/// are inlined in the leaves and tested by the tree; any other primitive gets a leaf
/// slot of its own and is tested through [`Self::intersect_prim`].
pub trait Primitives: Sync {
    /// How many primitives there are.
    fn prim_count(&self) -> usize;
    /// Bounds of primitive `prim`.
    fn prim_bounds(&self, prim: u32) -> Aabb;
    /// Whether primitive `prim` is a triangle.
    fn prim_is_triangle(&self, prim: u32) -> bool;
    /// The leaf record of primitive `prim` (a triangle's vertices inlined).
    fn leaf_prim(&self, prim: u32) -> LeafPrim;
    /// `(t, prim-specific coordinates)` of primitive `prim` for
    /// `RAY_TMIN < t < ray.tmax`.
    fn intersect_prim(&self, prim: u32, ray: &Ray) -> Option<(f32, Vec2)>;
}

/// One node: 32 bytes, `#[repr(C)]` (the CPU's; the GPU gets `flat::FlatBvhNode`s).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct BvhNode {
    /// Lower corner of the node's box.
    pub min: [f32; 3],
    /// Interior: index of the left child (the right one follows). Leaf: first prim slot.
    pub left_first: u32,
    /// Upper corner of the node's box.
    pub max: [f32; 3],
    /// Number of primitives in a leaf; 0 for interior nodes.
    pub count: u32,
}

const _: () = assert!(std::mem::size_of::<BvhNode>() == 32);
const _: () = assert!(std::mem::align_of::<BvhNode>() == 4);

impl BvhNode {
    /// Whether the node is a leaf.
    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.count > 0
    }

    /// The node's box.
    pub fn bounds(&self) -> Aabb {
        Aabb {
            min: Vec3::from(self.min),
            max: Vec3::from(self.max),
        }
    }
}

/// Traversal stack depth (CPU and GPU); the build limits the tree depth well below
/// it, and `flat::flatten_bvh` refuses deeper trees for the GPU.
pub const STACK_SIZE: usize = 128;

/// Grows the far slab distance by 2γ₃ (pbrt's conservative box test), so that
/// rounding never culls a primitive that the exact test would hit.
const ROBUST: f32 = 1.0 + 2.0 * (3.0 * f32::EPSILON * 0.5) / (1.0 - 3.0 * f32::EPSILON * 0.5);

/// A primitive in leaf order, with triangle data inlined so that the CPU
/// traversal tests a leaf from contiguous memory.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct LeafPrim {
    /// First vertex (triangles).
    pub p0: [f32; 3],
    /// The primitive (index into `Geometry::prims`).
    pub prim: u32,
    /// Second vertex (triangles).
    pub p1: [f32; 3],
    /// 1 for triangles; 0 for analytic shapes (tested through `Geometry`).
    pub is_tri: u32,
    /// Third vertex (triangles).
    pub p2: [f32; 3],
    /// The primitive's shape (`Geometry::prims[prim].shape`), so that the GPU tests an
    /// analytic shape straight from its record, without the primitive lookup.
    pub shape: u32,
}

const _: () = assert!(std::mem::size_of::<LeafPrim>() == 48);

/// The BVH.
#[derive(Clone, Debug, Default)]
pub struct Bvh {
    /// Nodes; empty when the scene has no primitives.
    pub nodes: Vec<BvhNode>,
    /// Primitive indices in leaf order.
    pub prim_indices: Vec<u32>,
    /// The same primitives in leaf order with their triangles inlined (CPU traversal).
    pub leaf_prims: Vec<LeafPrim>,
    /// The CPU's 8-wide tree collapsed from `nodes` (empty for an empty tree, a lone
    /// leaf, or a tree assembled by hand: then the binary tree is walked).
    pub wide: wide::WideBvh,
}

/// A ray prepared for box tests.
#[derive(Clone, Copy)]
struct RayBox {
    o: Vec3A,
    inv: Vec3A,
}

/// Per-axis reciprocals of a ray direction for slab tests: zero (or tiny) components get
/// a huge finite reciprocal of the same sign, so a slab test never computes 0 · ∞. The
/// binary and the wide traversal share it, so they clip the same boxes.
#[inline(always)]
pub(crate) fn safe_inverse(d: Vec3) -> [f32; 3] {
    let safe = |d: f32| {
        if d.abs() < 1e-30 {
            1e-30f32.copysign(d)
        } else {
            d
        }
    };
    // one vector division (the same quotients as three scalar ones, which would queue
    // on one divider)
    (Vec3A::ONE / Vec3A::new(safe(d.x), safe(d.y), safe(d.z))).to_array()
}

impl RayBox {
    #[inline(always)]
    fn new(ray: &Ray) -> Self {
        RayBox {
            o: Vec3A::from(ray.o),
            inv: Vec3A::from_array(safe_inverse(ray.d)),
        }
    }

    /// Entry distance into `n`'s box, or `INFINITY` when the ray misses it before `tmax`.
    #[inline(always)]
    fn enter(&self, n: &BvhNode, tmax: f32) -> f32 {
        let t0 = (Vec3A::from(n.min) - self.o) * self.inv;
        let t1 = (Vec3A::from(n.max) - self.o) * self.inv;
        let near = t0.min(t1).max_element().max(0.0);
        let far = (t0.max(t1).min_element() * ROBUST).min(tmax);
        if near <= far {
            near
        } else {
            f32::INFINITY
        }
    }
}

impl Bvh {
    /// Builds the hierarchy over the primitives of `geom`.
    pub fn build(geom: &impl Primitives) -> Bvh {
        build::build(geom)
    }

    /// Bounds of everything (empty box for an empty scene).
    pub fn bounds(&self) -> Aabb {
        self.nodes.first().map_or(Aabb::EMPTY, BvhNode::bounds)
    }

    /// Tests leaf slot `slot` against `ray`; `tr` is the ray's triangle set-up, made at
    /// the first triangle (a tree of analytic shapes never needs it).
    #[inline(always)]
    fn test_slot(
        &self,
        geom: &impl Primitives,
        slot: usize,
        ray: &Ray,
        tr: &mut Option<TriRay>,
    ) -> Option<(u32, f32, Vec2)> {
        let lp = &self.leaf_prims[slot];
        let hit = if lp.is_tri != 0 {
            let p = [Vec3::from(lp.p0), Vec3::from(lp.p1), Vec3::from(lp.p2)];
            let tr = tr.get_or_insert_with(|| TriRay::new(ray));
            intersect_tri_watertight(p, tr, ray.tmax)
        } else {
            geom.intersect_prim(lp.prim, ray)
        };
        hit.map(|(t, c)| (lp.prim, t, c))
    }

    /// Closest hit: `(prim, t, prim coordinates)`, through the wide tree with the
    /// process's SIMD level ([`simd::level`]).
    #[inline]
    pub fn intersect(&self, geom: &impl Primitives, ray: &Ray) -> Option<(u32, f32, Vec2)> {
        if self.wide.nodes.is_empty() {
            return self.intersect_binary(geom, ray);
        }
        self.intersect_wide_active(geom, ray)
    }

    /// Whether anything blocks `ray` before `ray.tmax` (wide tree, as [`Self::intersect`]).
    #[inline]
    pub fn occluded(&self, geom: &impl Primitives, ray: &Ray) -> bool {
        if self.wide.nodes.is_empty() {
            return self.occluded_binary(geom, ray);
        }
        self.occluded_wide_active(geom, ray)
    }

    /// Closest hit through the binary tree (the reference the wide tree is tested against).
    pub fn intersect_binary(&self, geom: &impl Primitives, ray: &Ray) -> Option<(u32, f32, Vec2)> {
        let mut best = None;
        let mut r = *ray;
        let mut tr = None;
        self.traverse(ray, |slot, tmax| {
            r.tmax = tmax;
            if let Some(h) = self.test_slot(geom, slot, &r, &mut tr) {
                best = Some(h);
                return Visit::Shrink(h.1);
            }
            Visit::Continue
        });
        best
    }

    /// Whether anything blocks `ray` before `ray.tmax`, through the binary tree.
    pub fn occluded_binary(&self, geom: &impl Primitives, ray: &Ray) -> bool {
        let mut hit = false;
        let mut tr = None;
        self.traverse(ray, |slot, _| {
            if self.test_slot(geom, slot, ray, &mut tr).is_some() {
                hit = true;
                return Visit::Stop;
            }
            Visit::Continue
        });
        hit
    }

    /// Visits the leaf slots whose boxes the ray enters, near to far;
    /// `visit(slot, current tmax)` may shrink `tmax` or stop the walk.
    #[inline(always)]
    fn traverse(&self, ray: &Ray, mut visit: impl FnMut(usize, f32) -> Visit) {
        let Some(root) = self.nodes.first() else {
            return;
        };
        let rb = RayBox::new(ray);
        let mut tmax = ray.tmax;
        // uninitialised: zeroing 1 KiB per ray showed in profiles as memset
        let mut stack = [std::mem::MaybeUninit::<(u32, f32)>::uninit(); STACK_SIZE];
        let mut sp = 0usize;
        let mut node = 0u32;
        if rb.enter(root, tmax) == f32::INFINITY {
            return;
        }
        loop {
            let n = &self.nodes[node as usize];
            if n.is_leaf() {
                let first = n.left_first as usize;
                for slot in first..first + n.count as usize {
                    match visit(slot, tmax) {
                        Visit::Continue => {}
                        Visit::Shrink(t) => tmax = t,
                        Visit::Stop => return,
                    }
                }
            } else {
                let (a, b) = (n.left_first, n.left_first + 1);
                let ta = rb.enter(&self.nodes[a as usize], tmax);
                let tb = rb.enter(&self.nodes[b as usize], tmax);
                let (near, t_near, far, t_far) = if ta <= tb {
                    (a, ta, b, tb)
                } else {
                    (b, tb, a, ta)
                };
                if t_near != f32::INFINITY {
                    if t_far != f32::INFINITY {
                        stack[sp] = std::mem::MaybeUninit::new((far, t_far));
                        sp += 1;
                    }
                    node = near;
                    continue;
                }
            }
            // pop the next node that may still hold something nearer than the best hit
            loop {
                if sp == 0 {
                    return;
                }
                sp -= 1;
                // SAFETY: entries below sp were written by the push above
                let (next, t_enter) = unsafe { stack[sp].assume_init() };
                if t_enter <= tmax {
                    node = next;
                    break;
                }
            }
        }
    }
}

/// What the traversal does after a primitive test.
enum Visit {
    Continue,
    Shrink(f32),
    Stop,
}

#[cfg(test)]
mod tests;
