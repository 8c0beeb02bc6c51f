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
//! An instance's [`FlatShape`](super::FlatShape) (kind [`INSTANCE`](crate::shapes::tag::INSTANCE)) holds its group-to-world map
//! and inverse in `to_world` / `to_local`, the index of its group's header node in
//! `first_tri` and the group's index in `tri_count` (kernels/geometry.cuh
//! `intersect_instance`, kernels/scene.cuh `make_instance_hit`).

use super::bvh::{bvh_depth, flatten_bvh_at};
use super::FlatScene;
use crate::error::{Error, Result};
use crate::shapes::{AnyShape, Geometry, Prim};
use crate::textures::AttributeTable;

/// Appends every group of `geom` to `flat` (see the module docs) and points each
/// instance record at its group's header node; raises `flat.bvh_depth` to the deepest
/// group tree (one traversal stack size serves both levels).
pub(crate) fn append_groups(
    geom: &Geometry,
    attr_slots: usize,
    flat: &mut FlatScene,
) -> Result<()> {
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
        flat.positions
            .extend(m.positions.iter().map(|p| p.to_array()));
        flat.tris.extend(m.tris.iter().map(|t| t.map(|i| i + vb)));
        for (k, s) in g.geom.shapes.iter().enumerate() {
            if let AnyShape::Mesh(_) = s.geom {
                flat.shapes[base as usize + k].first_tri += tb;
            }
        }
        // the mesh attribute lookups of the group's shapes follow their triangles
        let members = base as usize..base as usize + g.geom.shapes.len();
        if attr_slots > 0 {
            let row = geom.shapes.len();
            AttributeTable::shift_triangles(&mut flat.attrs, attr_slots, row, members, tb);
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
                Error::Render(format!(
                    "internal error: instance of missing group {}",
                    i.group
                ))
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

#[cfg(test)]
mod tests {
    use super::super::FlatScene;
    use crate::desc::xml;
    use crate::scene::build_scene;
    use crate::shapes::tag::{INSTANCE as SHAPE_INSTANCE, MESH as SHAPE_MESH};

    /// A textured mesh of the scene's own before one group of every member kind (a
    /// cube without vertex attributes, a disk, a cylinder, a sphere), placed twice.
    fn scene() -> crate::scene::RenderSetup {
        let torus = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/meshes/torus.obj");
        let xml = format!(
            r#"<scene version="3.0.0">
            <shape type="obj"><string name="filename" value="{torus}"/></shape>
            <shape type="shapegroup" id="g">
                <shape type="cube"><bsdf type="conductor"/></shape>
                <shape type="disk"><transform name="to_world"><translate z="2"/></transform></shape>
                <shape type="cylinder"><float name="radius" value="0.3"/></shape>
                <shape type="sphere"><point name="center" x="0" y="2" z="0"/></shape>
            </shape>
            <shape type="instance"><ref id="g"/></shape>
            <shape type="instance"><ref id="g"/>
                <transform name="to_world"><rotate y="1" angle="30"/><translate x="4"/></transform></shape>
            </scene>"#
        );
        build_scene(&xml::load_string(&xml, &[]).unwrap()).unwrap()
    }

    #[test]
    fn each_group_is_appended_once_with_its_indices_renumbered() {
        let s = scene();
        let f = FlatScene::from_scene(&s).unwrap();
        let g = &s.scene.geom.groups[0];
        let base = s.scene.geom.group_base[0] as usize;
        // attributes stay parallel to the positions: the scene's mesh has them, the cube none
        let n = f.positions.len();
        assert!(n > s.scene.geom.mesh.positions.len());
        assert_eq!((f.normals.len(), f.uvs.len()), (n, n));
        // both instances name the group's header, whose box is the group tree's root
        let inst: Vec<_> = f
            .shapes
            .iter()
            .filter(|r| r.kind == SHAPE_INSTANCE)
            .collect();
        assert_eq!(inst.len(), 2);
        let h = &f.nodes[inst[0].first_tri as usize];
        assert!(inst
            .iter()
            .all(|r| r.first_tri == inst[0].first_tri && r.tri_count == 0));
        assert_eq!((h.a_min, h.a_max), (g.bvh.nodes[0].min, g.bvh.nodes[0].max));
        assert_eq!(h.b_child as usize, g.bvh.leaf_prims.len());
        assert!(
            inst[0].first_tri as usize >= super::super::flatten_bvh(&s.scene.bvh).unwrap().len()
        );
        // the members keep their materials; a group slot names a renumbered primitive of
        // a member, and a triangle slot holds that triangle's group-space vertices
        for (k, m) in g.geom.shapes.iter().enumerate() {
            assert_eq!(f.shapes[base + k].bsdf, m.bsdf);
        }
        let first_slot = s.scene.bvh.leaf_prims.len();
        let slots = &f.leaf_prims[first_slot..];
        assert_eq!(slots.len(), g.bvh.leaf_prims.len());
        let mut tris = 0;
        for lp in slots {
            let p = f.prims[lp.prim as usize];
            assert_eq!(p.shape, lp.shape);
            assert!((lp.shape as usize) >= base && (lp.shape as usize) < f.shapes.len());
            let rec = &f.shapes[lp.shape as usize];
            if lp.is_tri == 0 {
                assert_ne!(rec.kind, SHAPE_MESH);
                continue;
            }
            tris += 1;
            assert_eq!(rec.kind, SHAPE_MESH);
            assert!(p.index >= rec.first_tri && p.index < rec.first_tri + rec.tri_count);
            let t = f.tris[p.index as usize];
            assert_eq!([lp.p0, lp.p1, lp.p2], t.map(|v| f.positions[v as usize]));
        }
        assert_eq!(tris, 12, "the cube's triangles");
        let depth = super::bvh_depth(&g.bvh.nodes).unwrap();
        assert!(f.bvh_depth >= depth);
    }
}
