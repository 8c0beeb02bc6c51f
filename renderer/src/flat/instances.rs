//! Shape groups and their instances on the GPU: the second level of the two-level BVH
//! ([`crate::shapes::instance`], [`crate::shapes::shapegroup`]).
//!
//! The scene's own tree (the top level) is flattened as in a scene without instances:
//! it holds one primitive per instance, with the instance's world box. Each *group* is
//! flattened once, however many instances place it, and appended after the scene's own
//! data in the same arrays, so the kernels take no extra parameters and a group's data
//! is uploaded once with the scene's:
//!
//! * `nodes`: the group's two-box nodes, starting with a header node of its own (the
//!   same layout as node 0 of the scene's tree, [`super::bvh`]); child words index the
//!   whole array;
//! * `leaf_prims`: the group's leaf slots, triangles inlined in group space, `prim`
//!   and `shape` renumbered into the scene's arrays;
//! * `prims`: the group's primitives, renumbered (shapes: the group's records that
//!   [`crate::shapes::Geometry::seal_groups`] appended after the scene's shapes;
//!   triangles: offset into `tris`);
//! * `positions`, `normals`, `uvs`, `tris`: the group's mesh data in group space
//!   (normals and texture coordinates stay parallel to the positions, zero-filled where
//!   a part has none, as in [`crate::shapes::MeshStore`]).
//!
//! An instance's [`FlatShape`](super::FlatShape) (kind [`SHAPE_INSTANCE`](super::SHAPE_INSTANCE)) holds its group-to-world map
//! and inverse in `to_world` / `to_local`, the index of its group's header node in
//! `first_tri` and the group's index in `tri_count` (kernels/geometry.cuh
//! `intersect_instance`, kernels/scene.cuh `make_instance_hit`).

use super::bvh::{bvh_depth, flatten_bvh_at};
use super::FlatScene;
use crate::error::{Error, Result};
use crate::shapes::{AnyShape, Geometry, Prim};

/// Appends every group of `geom` to `flat` (see the module docs) and points each
/// instance record at its group's header node; raises `flat.bvh_depth` to the deepest
/// group tree (one traversal stack size serves both levels).
pub(crate) fn append_groups(geom: &Geometry, flat: &mut FlatScene) -> Result<()> {
    let mut headers = Vec::with_capacity(geom.groups.len());
    for (gi, g) in geom.groups.iter().enumerate() {
        let base = *geom.group_base.get(gi).ok_or_else(|| {
            Error::Render(format!(
                "internal error: shapegroup \"{}\" has no shape records",
                g.key
            ))
        })?;
        let (vb, tb) = (index(flat.positions.len())?, index(flat.tris.len())?);
        let (pb, sb) = (index(flat.prims.len())?, index(flat.leaf_prims.len())?);
        let header = index(flat.nodes.len())?;
        let m = &g.geom.mesh;
        let nv = m.positions.len();
        extend_parallel(&mut flat.normals, flat.positions.len(), &m.normals, nv);
        extend_parallel(&mut flat.uvs, flat.positions.len(), &m.uvs, nv);
        flat.positions.extend(m.positions.iter().map(|p| p.to_array()));
        flat.tris.extend(m.tris.iter().map(|t| t.map(|i| i + vb)));
        for (k, s) in g.geom.shapes.iter().enumerate() {
            if let AnyShape::Mesh(_) = s.geom {
                flat.shapes[base as usize + k].first_tri += tb;
            }
        }
        flat.prims.extend(g.geom.prims.iter().map(|p| {
            let mesh = matches!(g.geom.shapes[p.shape as usize].geom, AnyShape::Mesh(_));
            Prim {
                shape: base + p.shape,
                index: if mesh { p.index + tb } else { p.index },
            }
        }));
        flat.nodes.extend(flatten_bvh_at(&g.bvh, header, sb)?);
        flat.leaf_prims.extend(g.bvh.leaf_prims.iter().map(|lp| {
            let mut lp = *lp;
            lp.prim += pb;
            lp.shape += base;
            lp
        }));
        flat.bvh_depth = flat.bvh_depth.max(bvh_depth(&g.bvh.nodes)?);
        headers.push(header);
    }
    let n = flat.positions.len();
    if !flat.normals.is_empty() {
        flat.normals.resize(n, [0.0; 3]);
    }
    if !flat.uvs.is_empty() {
        flat.uvs.resize(n, [0.0; 2]);
    }
    for (s, f) in geom.shapes.iter().zip(flat.shapes.iter_mut()) {
        if let AnyShape::Instance(i) = &s.geom {
            f.first_tri = *headers.get(i.group as usize).ok_or_else(|| {
                Error::Render(format!("internal error: instance of missing group {}", i.group))
            })?;
        }
    }
    Ok(())
}

/// `n` as a `u32` index, or an error past the 2^32 elements the kernels index.
fn index(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| {
        Error::Render(format!(
            "the scene with its shapegroups holds {n} elements of one kind, more than the \
             2^32 - 1 the CUDA kernels index"
        ))
    })
}

/// Appends `src` (empty, or `n` values parallel to the `n` positions appended after the
/// `len` already there) to `dst` (empty, or parallel to the positions): zero-filled
/// where one side has no values, empty while neither has any.
fn extend_parallel<T: Copy + Default, U: Copy + Into<T>>(
    dst: &mut Vec<T>,
    len: usize,
    src: &[U],
    n: usize,
) {
    if src.is_empty() && dst.is_empty() {
        return;
    }
    dst.resize(len, T::default());
    if src.is_empty() {
        dst.resize(len + n, T::default());
    } else {
        dst.extend(src.iter().map(|&v| v.into()));
    }
}
