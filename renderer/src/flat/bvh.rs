//! The GPU's BVH: two-box nodes derived from the CPU's [`Bvh`].
//!
//! The CPU walks flat 32-byte [`crate::accel::BvhNode`]s, testing both children's
//! boxes at each interior node, which on the GPU meant two or three dependent node
//! fetches per visited node. A [`FlatBvhNode`] holds both children's boxes, so the
//! kernel (`intersect_scene` in `renderer/kernels/geometry.cuh`) fetches one 64-byte
//! node (four 16-byte loads) per interior node, and a leaf child's primitives are
//! tested straight from its parent's entry (Aila & Laine 2009, "Understanding the
//! efficiency of ray traversal on GPUs").
//!
//! Layout of the array: node 0 is a header whose `a` half holds the root's box and
//! child word, and whose `b_child` holds the number of leaf slots (the kernels' brute
//! force test of small scenes loops over them; the rest of the `b` half is zero); the
//! CPU's interior nodes follow in
//! the CPU's order (the root, when interior, is node 1). The children keep the CPU's
//! order (`a` = left, `b` = right), so the GPU visits leaves in the CPU's order and
//! finds the same closest hit. A child word packs either an interior node index or a
//! leaf's (first slot, count): see [`child_word`].
//!
//! The traversal stack holds at most one entry per level above the current node, so a
//! tree whose leaves are at most [`STACK_SIZE`] levels deep can never overflow it;
//! [`flatten_bvh`] refuses deeper trees (the binned SAH build stays below ~96 levels).

use crate::accel::{Bvh, BvhNode, STACK_SIZE};
use crate::error::{Error, Result};

/// Bits of a child word that hold the node index or first leaf slot; the bits above
/// hold a leaf's primitive count (0 for an interior child). CUDA: `HG_CHILD_INDEX_BITS`.
pub const CHILD_INDEX_BITS: u32 = 29;

/// The largest node index or leaf slot a child word can hold.
pub const CHILD_INDEX_MAX: u32 = (1 << CHILD_INDEX_BITS) - 1;

/// The largest leaf a child word can describe.
pub const CHILD_COUNT_MAX: u32 = u32::MAX >> CHILD_INDEX_BITS;

/// One GPU BVH node: both children's boxes and child words, 64 bytes (four 16-byte
/// loads). CUDA twin: `FlatBvhNode` in `flat.cuh`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatBvhNode {
    /// Lower corner of child `a`'s box.
    pub a_min: [f32; 3],
    /// Child `a` (the CPU's left child): see [`child_word`].
    pub a_child: u32,
    /// Upper corner of child `a`'s box.
    pub a_max: [f32; 3],
    /// Padding (zero) to 32 bytes per child.
    pub a_pad: u32,
    /// Lower corner of child `b`'s box.
    pub b_min: [f32; 3],
    /// Child `b` (the CPU's right child): see [`child_word`].
    pub b_child: u32,
    /// Upper corner of child `b`'s box.
    pub b_max: [f32; 3],
    /// Padding (zero) to 64 bytes.
    pub b_pad: u32,
}

/// The child word of an interior node (`count == 0`: its index in the GPU array) or of
/// a leaf (`count` primitives from slot `index`), or `None` when it does not fit.
pub fn child_word(index: u32, count: u32) -> Option<u32> {
    (index <= CHILD_INDEX_MAX && count <= CHILD_COUNT_MAX)
        .then_some(count << CHILD_INDEX_BITS | index)
}

/// The levels below the root of `nodes`' deepest leaf (0 for a lone root leaf), after
/// checking that every interior node's children lie after it and inside the array
/// (which the build guarantees and which makes the tree acyclic).
pub fn bvh_depth(nodes: &[BvhNode]) -> Result<u32> {
    let mut depth = vec![0u32; nodes.len()];
    let mut deepest = 0;
    for (i, n) in nodes.iter().enumerate() {
        if n.is_leaf() {
            deepest = deepest.max(depth[i]);
            continue;
        }
        let left = n.left_first as usize;
        if left <= i || left + 1 >= nodes.len() {
            return Err(Error::Render(format!(
                "corrupt BVH: node {i} of {} has children at {left} and {}",
                nodes.len(),
                left + 1
            )));
        }
        depth[left] = depth[i] + 1;
        depth[left + 1] = depth[i] + 1;
    }
    Ok(deepest)
}

/// The GPU nodes of `bvh` (empty for an empty scene); an error when the tree is deeper
/// than the kernels' traversal stack ([`STACK_SIZE`] entries) or when an index or leaf
/// does not fit a child word.
pub fn flatten_bvh(bvh: &Bvh) -> Result<Vec<FlatBvhNode>> {
    flatten_bvh_at(bvh, 0, 0)
}

/// [`flatten_bvh`] for nodes that will lie from index `node_base` of the GPU array and
/// leaf slots from `slot_base` (a shapegroup's tree after the scene's, see
/// [`super::instances`]): child words hold those absolute indices.
pub fn flatten_bvh_at(bvh: &Bvh, node_base: u32, slot_base: u32) -> Result<Vec<FlatBvhNode>> {
    let nodes = &bvh.nodes;
    let Some(root) = nodes.first() else {
        return Ok(Vec::new());
    };
    let depth = bvh_depth(nodes)?;
    if depth as usize > STACK_SIZE {
        return Err(Error::Render(format!(
            "the BVH is {depth} levels deep but the CUDA traversal stack holds \
             {STACK_SIZE} entries (accel::STACK_SIZE): the GPU cannot render this scene"
        )));
    }
    // the GPU index of each interior node: 1, 2, ... in CPU order (0 is the header)
    let mut gpu_index = vec![0u32; nodes.len()];
    let mut interior = 0u32;
    for (i, n) in nodes.iter().enumerate() {
        if !n.is_leaf() {
            interior += 1;
            gpu_index[i] = interior.saturating_add(node_base);
        }
    }
    let word = |i: usize| -> Result<u32> {
        let n = &nodes[i];
        let (index, count) = if n.is_leaf() {
            (n.left_first.saturating_add(slot_base), n.count)
        } else {
            (gpu_index[i], 0)
        };
        child_word(index, count).ok_or_else(|| {
            Error::Render(format!(
                "BVH node {i} (index {index}, {count} primitives) does not fit the GPU's \
                 child word (at most {CHILD_INDEX_MAX} and {CHILD_COUNT_MAX})"
            ))
        })
    };
    let mut out = Vec::with_capacity(interior as usize + 1);
    let slots = u32::try_from(bvh.leaf_prims.len()).map_err(|_| {
        Error::Render(format!(
            "{} BVH primitives are more than the GPU indexes",
            bvh.leaf_prims.len()
        ))
    })?;
    out.push(FlatBvhNode {
        a_min: root.min,
        a_child: word(0)?,
        a_max: root.max,
        b_child: slots,
        ..FlatBvhNode::default()
    });
    for n in nodes.iter().filter(|n| !n.is_leaf()) {
        let (l, r) = (n.left_first as usize, n.left_first as usize + 1);
        out.push(FlatBvhNode {
            a_min: nodes[l].min,
            a_child: word(l)?,
            a_max: nodes[l].max,
            a_pad: 0,
            b_min: nodes[r].min,
            b_child: word(r)?,
            b_max: nodes[r].max,
            b_pad: 0,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accel::LeafPrim;
    use crate::math::triangle::{intersect_tri_watertight, TriRay};
    use crate::math::{Pcg32, Ray, Vec3};
    use crate::shapes::{Geometry, TriMesh};

    /// A BVH over `n` random small triangles in the unit cube.
    fn soup_bvh(n: usize) -> Bvh {
        soup(n).1
    }

    /// [`soup_bvh`] with its geometry.
    fn soup(n: usize) -> (Geometry, Bvh) {
        let mut rng = Pcg32::new(11, 3);
        let mut m = TriMesh::default();
        for _ in 0..n {
            let c = Vec3::new(rng.next_f32(), rng.next_f32(), rng.next_f32());
            let base = m.positions.len() as u32;
            for _ in 0..3 {
                let d = Vec3::new(rng.next_f32(), rng.next_f32(), rng.next_f32());
                m.positions.push(c + 0.05 * (d - Vec3::splat(0.5)));
            }
            m.tris.push([base, base + 1, base + 2]);
        }
        let mut g = Geometry::default();
        m.add_to(&mut g, false, 0);
        let bvh = Bvh::build(&g);
        (g, bvh)
    }

    /// Checks that GPU child (`min`, `word`, `max`) describes CPU node `i`, recursing into
    /// interior nodes; counts the GPU nodes reached in `seen`.
    fn check(
        cpu: &[BvhNode],
        gpu: &[FlatBvhNode],
        i: usize,
        c: ([f32; 3], u32, [f32; 3]),
        seen: &mut [u32],
    ) {
        let n = &cpu[i];
        assert_eq!((c.0, c.2), (n.min, n.max), "box of CPU node {i}");
        let (index, count) = (c.1 & CHILD_INDEX_MAX, c.1 >> CHILD_INDEX_BITS);
        if n.is_leaf() {
            assert_eq!((index, count), (n.left_first, n.count), "leaf {i}");
            return;
        }
        assert_eq!(count, 0, "interior node {i} encoded as a leaf");
        let g = &gpu[index as usize];
        seen[index as usize] += 1;
        let l = n.left_first as usize;
        check(cpu, gpu, l, (g.a_min, g.a_child, g.a_max), seen);
        check(cpu, gpu, l + 1, (g.b_min, g.b_child, g.b_max), seen);
    }

    #[test]
    fn gpu_nodes_hold_the_cpu_tree() {
        let bvh = soup_bvh(3000);
        let gpu = flatten_bvh(&bvh).unwrap();
        let interior = bvh.nodes.iter().filter(|n| !n.is_leaf()).count();
        assert!(interior > 100);
        assert_eq!(gpu.len(), interior + 1);
        assert_eq!(gpu[0].a_child, 1, "an interior root is node 1");
        // the header's b half: the leaf slot count (brute force), else zero
        assert_eq!(
            (gpu[0].b_child, gpu[0].b_min, gpu[0].b_max),
            (bvh.leaf_prims.len() as u32, [0.0; 3], [0.0; 3])
        );
        let mut seen = vec![0u32; gpu.len()];
        check(
            &bvh.nodes,
            &gpu,
            0,
            (gpu[0].a_min, gpu[0].a_child, gpu[0].a_max),
            &mut seen,
        );
        assert_eq!(seen[0], 0);
        assert!(seen[1..].iter().all(|&s| s == 1), "every node reached once");
        assert!(gpu.iter().all(|g| g.a_pad == 0 && g.b_pad == 0));
    }

    #[test]
    fn a_lone_leaf_root_and_an_empty_scene() {
        let bvh = soup_bvh(1);
        assert_eq!(bvh.nodes.len(), 1);
        let gpu = flatten_bvh(&bvh).unwrap();
        assert_eq!(gpu.len(), 1);
        assert_eq!(
            gpu[0].a_child,
            1 << CHILD_INDEX_BITS,
            "one primitive from slot 0"
        );
        assert_eq!(
            (gpu[0].a_min, gpu[0].a_max),
            (bvh.nodes[0].min, bvh.nodes[0].max)
        );
        assert!(flatten_bvh(&Bvh::default()).unwrap().is_empty());
    }

    /// A comb: interior node `2i` has a leaf at `2i + 1` and the rest of the tree at
    /// `2i + 2`, so the deepest leaf (`2 depth`) is `depth` levels below the root.
    fn comb(depth: usize) -> Bvh {
        let node = |left_first: usize, count: u32| BvhNode {
            left_first: left_first as u32,
            count,
            ..BvhNode::default()
        };
        let mut nodes = vec![node(depth, 1); 2 * depth + 1];
        for i in 0..depth {
            nodes[2 * i] = node(2 * i + 1, 0);
            nodes[2 * i + 1] = node(i, 1);
        }
        Bvh {
            nodes,
            ..Bvh::default()
        }
    }

    #[test]
    fn trees_deeper_than_the_stack_are_refused() {
        assert_eq!(bvh_depth(&comb(7).nodes).unwrap(), 7);
        let ok = flatten_bvh(&comb(STACK_SIZE)).unwrap();
        assert_eq!(ok.len(), STACK_SIZE + 1);
        let err = flatten_bvh(&comb(STACK_SIZE + 1)).unwrap_err().to_string();
        assert!(
            err.contains("129 levels deep") && err.contains("128 entries"),
            "{err}"
        );
        // the real build stays far below the limit
        let depth = bvh_depth(&soup_bvh(3000).nodes).unwrap();
        assert!((10..64).contains(&depth), "{depth}");
    }

    #[test]
    fn corrupt_trees_and_oversized_leaves_are_refused() {
        let mut cyclic = comb(3);
        cyclic.nodes[2].left_first = 0;
        assert!(bvh_depth(&cyclic.nodes)
            .unwrap_err()
            .to_string()
            .contains("corrupt BVH"));
        let mut short = comb(3);
        short.nodes.pop();
        assert!(flatten_bvh(&short).is_err());
        let mut big = comb(2);
        big.nodes[1].count = CHILD_COUNT_MAX + 1;
        assert!(flatten_bvh(&big)
            .unwrap_err()
            .to_string()
            .contains("child word"));
        assert_eq!(child_word(CHILD_INDEX_MAX, 7), Some(u32::MAX));
        assert_eq!(child_word(CHILD_INDEX_MAX + 1, 1), None);
    }

    /// The kernel's `box_enter` (geometry.cuh): entry distance into (min, max) or ∞.
    fn box_enter(r: &Ray, inv: Vec3, min: [f32; 3], max: [f32; 3], tmax: f32) -> f32 {
        let robust = 1.0 + 2.0 * (3.0 * f32::EPSILON * 0.5) / (1.0 - 3.0 * f32::EPSILON * 0.5);
        let t0 = (Vec3::from(min) - r.o) * inv;
        let t1 = (Vec3::from(max) - r.o) * inv;
        let near = t0.min(t1).max_element().max(0.0);
        let far = (t0.max(t1).min_element() * robust).min(tmax);
        if near <= far {
            near
        } else {
            f32::INFINITY
        }
    }

    /// A model of the kernel's `intersect_scene` (geometry.cuh) with triangles only: the
    /// closest hit `(prim, t)` and the most stack entries it had in use.
    fn model_walk(gpu: &[FlatBvhNode], leaf: &[LeafPrim], r: &Ray) -> (Option<(u32, f32)>, usize) {
        let inv = Vec3::new(1.0 / r.d.x, 1.0 / r.d.y, 1.0 / r.d.z);
        let tr = TriRay::new(r);
        let (mut tmax, mut best, mut stack, mut peak) = (r.tmax, None, Vec::new(), 0);
        if box_enter(r, inv, gpu[0].a_min, gpu[0].a_max, tmax) == f32::INFINITY {
            return (None, 0);
        }
        let mut child = gpu[0].a_child;
        loop {
            if child >> CHILD_INDEX_BITS == 0 {
                let n = &gpu[child as usize];
                let ta = box_enter(r, inv, n.a_min, n.a_max, tmax);
                let tb = box_enter(r, inv, n.b_min, n.b_max, tmax);
                let (near, tn, far, tf) = if ta <= tb {
                    (n.a_child, ta, n.b_child, tb)
                } else {
                    (n.b_child, tb, n.a_child, ta)
                };
                if tn != f32::INFINITY {
                    if tf != f32::INFINITY {
                        stack.push((far, tf));
                        peak = peak.max(stack.len());
                    }
                    child = near;
                    continue;
                }
            } else {
                let first = child & CHILD_INDEX_MAX;
                for lp in &leaf[first as usize..(first + (child >> CHILD_INDEX_BITS)) as usize] {
                    let p = [lp.p0, lp.p1, lp.p2].map(Vec3::from);
                    if let Some((t, _)) = intersect_tri_watertight(p, &tr, tmax) {
                        (tmax, best) = (t, Some((lp.prim, t)));
                    }
                }
            }
            loop {
                let Some((c, t)) = stack.pop() else {
                    return (best, peak);
                };
                if t <= tmax {
                    child = c;
                    break;
                }
            }
        }
    }

    #[test]
    fn the_kernels_walk_finds_the_cpu_closest_hits() {
        let (g, bvh) = soup(2000);
        let gpu = flatten_bvh(&bvh).unwrap();
        let mut rng = Pcg32::new(5, 9);
        let mut hits = 0;
        for _ in 0..2000 {
            let o = Vec3::new(rng.next_f32(), rng.next_f32(), rng.next_f32()) * 3.0 - 1.0;
            let target = Vec3::new(rng.next_f32(), rng.next_f32(), rng.next_f32());
            let ray = Ray {
                o,
                d: (target - o).normalize(),
                tmax: f32::INFINITY,
            };
            let cpu = bvh.intersect(&g, &ray).map(|(p, t, _)| (p, t.to_bits()));
            let (model, peak) = model_walk(&gpu, &bvh.leaf_prims, &ray);
            assert_eq!(model.map(|(p, t)| (p, t.to_bits())), cpu, "{ray:?}");
            assert!(peak <= bvh_depth(&bvh.nodes).unwrap() as usize);
            hits += cpu.is_some() as u32;
        }
        assert!(hits > 500, "{hits}");
    }

    #[test]
    fn a_comb_as_deep_as_the_stack_fills_it_exactly() {
        // the interior (right) children lie nearer than the leaves on the left, so the
        // walk pushes every left leaf before it reaches the bottom
        let mut bvh = comb(STACK_SIZE);
        for (i, n) in bvh.nodes.iter_mut().enumerate() {
            let left_leaf = i % 2 == 1;
            n.min = [if left_leaf { 5.0 } else { -1.0 }, -1.0, -1.0];
            n.max = [6.0, 1.0, 1.0];
        }
        bvh.leaf_prims = vec![LeafPrim::default(); STACK_SIZE + 1];
        let gpu = flatten_bvh(&bvh).unwrap();
        let ray = Ray {
            o: Vec3::new(-10.0, 0.5, 0.25),
            d: Vec3::X,
            tmax: f32::INFINITY,
        };
        assert_eq!(model_walk(&gpu, &bvh.leaf_prims, &ray), (None, STACK_SIZE));
    }

    /// The value of `#define name value` in `src`.
    fn define(src: &str, name: &str) -> u32 {
        let line = src
            .lines()
            .find(|l| l.starts_with(&format!("#define {name} ")))
            .unwrap_or_else(|| panic!("#define {name}"));
        let v = line.split_whitespace().nth(2).unwrap();
        v.trim_end_matches('u').parse().unwrap()
    }

    #[test]
    fn cuda_constants_match() {
        let flat = include_str!("../../kernels/flat.cuh");
        let features = include_str!("../../kernels/features.cuh");
        assert_eq!(define(flat, "HG_CHILD_INDEX_BITS"), CHILD_INDEX_BITS);
        // the generic modules' stack; specialised ones get at least their BVH's depth
        assert_eq!(define(features, "HG_STACK") as usize, STACK_SIZE);
    }
}
