//! The collapse of the binary tree into the wide one.

use super::{
    TriPack, WideBvh, WideLeaf, WideNode, EMPTY, INDEX_BITS, LEAF_BIT, PACK_BIT, SHAPE_BIT, WIDTH,
};
use crate::accel::{Bvh, BvhNode};

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
