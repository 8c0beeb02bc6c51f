//! Binned SAH construction (Wald 2007, "On fast construction of SAH-based
//! bounding volume hierarchies"): centroids are binned along each axis of the
//! node's centroid bounds and the cheapest bin boundary is taken.

use glam::Vec3A;

use super::{Bvh, BvhNode, Primitives};

/// SAH bins per axis.
const BINS: usize = 16;
/// A node with at most this many primitives may become a leaf.
pub const MAX_LEAF: usize = 4;
/// Below this depth SAH chooses splits; deeper nodes are split at the median,
/// which bounds the depth by `SAH_DEPTH + 32` (< the traversal stack size).
const SAH_DEPTH: u32 = 64;
/// Cost of a traversal step relative to one primitive test.
const TRAVERSAL_COST: f32 = 3.0;

/// A primitive during the build.
#[derive(Clone, Copy)]
struct Ref {
    min: Vec3A,
    max: Vec3A,
    centroid: Vec3A,
    prim: u32,
    /// Not a triangle (a sphere, rectangle, disk, cylinder): given a leaf of its own.
    analytic: bool,
}

#[derive(Clone, Copy)]
struct Bounds {
    min: Vec3A,
    max: Vec3A,
}

impl Bounds {
    const EMPTY: Bounds = Bounds {
        min: Vec3A::splat(f32::INFINITY),
        max: Vec3A::splat(f32::NEG_INFINITY),
    };

    #[inline]
    fn grow(&mut self, min: Vec3A, max: Vec3A) {
        self.min = self.min.min(min);
        self.max = self.max.max(max);
    }

    #[inline]
    fn half_area(&self) -> f32 {
        let e = (self.max - self.min).max(Vec3A::ZERO);
        e.x * e.y + e.y * e.z + e.z * e.x
    }
}

/// Builds the BVH over every primitive of `geom`.
pub fn build(geom: &impl Primitives) -> Bvh {
    let mut refs: Vec<Ref> = (0..geom.prim_count() as u32)
        .map(|i| {
            let b = geom.prim_bounds(i);
            let (min, max) = (Vec3A::from(b.min), Vec3A::from(b.max));
            Ref {
                min,
                max,
                centroid: 0.5 * (min + max),
                prim: i,
                analytic: !geom.prim_is_triangle(i),
            }
        })
        .collect();
    if refs.is_empty() {
        return Bvh::default();
    }
    let mut nodes = Vec::with_capacity(2 * refs.len() / MAX_LEAF + 1);
    nodes.push(BvhNode::default());
    let len = refs.len();
    build_node(&mut nodes, &mut refs, 0, 0, len, 0);
    let prim_indices: Vec<u32> = refs.iter().map(|r| r.prim).collect();
    let leaf_prims = prim_indices.iter().map(|&p| geom.leaf_prim(p)).collect();
    let mut bvh = Bvh {
        nodes,
        prim_indices,
        leaf_prims,
        wide: Default::default(),
    };
    bvh.wide = super::wide::collapse(&bvh);
    bvh
}

/// Fills `nodes[idx]` for `refs[start..end]`, splitting recursively.
fn build_node(
    nodes: &mut Vec<BvhNode>,
    refs: &mut [Ref],
    idx: usize,
    start: usize,
    end: usize,
    depth: u32,
) {
    let (bounds, cbounds) = node_bounds(&refs[start..end]);
    nodes[idx].min = bounds.min.into();
    nodes[idx].max = bounds.max.into();
    let n = end - start;
    let mid = if n <= 1 {
        None
    } else if depth >= SAH_DEPTH {
        Some(median_split(refs, start, end, &cbounds))
    } else {
        sah_split(refs, start, end, &bounds, &cbounds)
    };
    let mid = match mid {
        Some(m) => m,
        None if n <= MAX_LEAF => {
            nodes[idx].left_first = start as u32;
            nodes[idx].count = n as u32;
            return;
        }
        // no useful SAH split of a large node (e.g. identical centroids)
        None => median_split(refs, start, end, &cbounds),
    };
    let left = nodes.len();
    nodes.push(BvhNode::default());
    nodes.push(BvhNode::default());
    nodes[idx].left_first = left as u32;
    nodes[idx].count = 0;
    build_node(nodes, refs, left, start, mid, depth + 1);
    build_node(nodes, refs, left + 1, mid, end, depth + 1);
}

/// Bounds of the primitives and of their centroids.
fn node_bounds(refs: &[Ref]) -> (Bounds, Bounds) {
    let mut b = Bounds::EMPTY;
    let mut c = Bounds::EMPTY;
    for r in refs {
        b.grow(r.min, r.max);
        c.grow(r.centroid, r.centroid);
    }
    (b, c)
}

/// Splits at the median centroid along the widest centroid axis (or by index
/// when all centroids coincide); returns the split position.
fn median_split(refs: &mut [Ref], start: usize, end: usize, cb: &Bounds) -> usize {
    let axis = (cb.max - cb.min).max_position();
    let mid = start + (end - start) / 2;
    refs[start..end].select_nth_unstable_by(mid - start, |a, b| {
        a.centroid[axis].total_cmp(&b.centroid[axis])
    });
    mid
}

/// The best binned SAH split when it beats making a leaf (always for nodes larger
/// than [`MAX_LEAF`] and nodes holding an analytic shape, when they can be split);
/// returns the split position.
fn sah_split(refs: &mut [Ref], start: usize, end: usize, b: &Bounds, cb: &Bounds) -> Option<usize> {
    let extent = cb.max - cb.min;
    let mut best: Option<(f32, usize, usize)> = None; // (cost, axis, last bin of the left side)
    for axis in 0..3 {
        if extent[axis].is_nan() || extent[axis] <= 0.0 {
            continue;
        }
        let costs = bin_costs(&refs[start..end], axis, cb.min[axis], extent[axis]);
        for (i, &c) in costs.iter().enumerate() {
            if best.is_none_or(|(bc, _, _)| c < bc) {
                best = Some((c, axis, i));
            }
        }
    }
    let (cost, axis, split_bin) = best?;
    let n = end - start;
    let split_cost = TRAVERSAL_COST + cost / b.half_area().max(f32::MIN_POSITIVE);
    // A leaf of analytic shapes is split whenever it can be. SAH prices a leaf by its
    // box's area, as if rays came from outside; but rays start inside rooms, and walls
    // that share a leaf share a box that every ray inside enters, while alone each wall's
    // thin box is entered only by the rays that reach it (first hit ends the walk). On the
    // Cornell box this is 9% fewer instructions a sample; meshes keep SAH's leaves (their
    // triangles are tested four at a time).
    if n <= MAX_LEAF && n as f32 <= split_cost && !refs[start..end].iter().any(|r| r.analytic) {
        return None;
    }
    let scale = BINS as f32 / extent[axis];
    let (lo, ext_min) = (start, cb.min[axis]);
    let mut i = lo;
    for j in lo..end {
        if bin_of(refs[j].centroid[axis], ext_min, scale) <= split_bin {
            refs.swap(i, j);
            i += 1;
        }
    }
    (i > start && i < end).then_some(i)
}

#[inline]
fn bin_of(c: f32, min: f32, scale: f32) -> usize {
    (((c - min) * scale) as usize).min(BINS - 1)
}

/// SAH cost (half areas × counts) of splitting after each of the first `BINS - 1` bins.
fn bin_costs(refs: &[Ref], axis: usize, min: f32, extent: f32) -> [f32; BINS - 1] {
    let scale = BINS as f32 / extent;
    let mut bins = [Bounds::EMPTY; BINS];
    let mut counts = [0u32; BINS];
    for r in refs {
        let k = bin_of(r.centroid[axis], min, scale);
        bins[k].grow(r.min, r.max);
        counts[k] += 1;
    }
    let mut costs = [0.0f32; BINS - 1];
    let (mut acc, mut cnt) = (Bounds::EMPTY, 0u32);
    for i in 0..BINS - 1 {
        acc.grow(bins[i].min, bins[i].max);
        cnt += counts[i];
        costs[i] = if cnt > 0 {
            acc.half_area() * cnt as f32
        } else {
            f32::INFINITY
        };
    }
    let (mut acc, mut cnt) = (Bounds::EMPTY, 0u32);
    for i in (1..BINS).rev() {
        acc.grow(bins[i].min, bins[i].max);
        cnt += counts[i];
        let right = if cnt > 0 {
            acc.half_area() * cnt as f32
        } else {
            f32::INFINITY
        };
        costs[i - 1] += right;
    }
    costs
}
