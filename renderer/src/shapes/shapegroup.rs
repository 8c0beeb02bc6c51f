//! `shapegroup`: shapes that are not rendered themselves but through `instance`s.
//!
//! | parameter    | type  | default  | meaning                                                  |
//! |----------|-------|----------|----------------------------------------------------------|
//! | (nested) | shape | required | the group's shapes, each with its own material and `to_world` |
//!
//! The group's shapes are built once, in the group's own space, with a BVH of their
//! own; every [`super::instance`] that references the group (`<ref id=...>`) places
//! that BVH in the world with its `to_world` (two-level acceleration: the scene's BVH
//! holds one primitive per instance). As in Mitsuba 3, a group holds no `shapegroup`,
//! no `instance` and no emitters (an area light nested in a group's shape is an
//! error). A group's shapes are not editable through `traverse`; their materials are.
//! Every shape plugin may be a member (meshes, `sphere`, `rectangle`, `disk`,
//! `cylinder`), on the CPU and on CUDA alike: the CUDA backend uploads each group's
//! BVH and mesh data once and walks it from every instance ([`crate::flat::instances`]).
//!
//! ```xml
//! <shape type="shapegroup" id="tree">
//!     <shape type="ply"><string name="filename" value="meshes/trunk.ply"/></shape>
//!     <shape type="sphere"><point name="center" x="0" y="2" z="0"/></shape>
//! </shape>
//! <shape type="instance"><ref id="tree"/></shape>
//! ```

use std::sync::Arc;

use super::ShapeContext;
use super::{add_geometry, build_geometry, Built, Geometry};
use crate::accel::Bvh;
use crate::desc::props::Props;
use crate::desc::{Category, ObjectDesc};
use crate::error::{Error, Result};
use crate::math::Transform;
use crate::plugin::BuildContext;

/// A built shape group: its shapes in group space and their BVH.
#[derive(Clone, Debug)]
pub struct ShapeGroup {
    /// What identifies the group's description ([`key_of`]).
    pub key: String,
    /// The group's shapes (in group space; material handles are the scene's).
    pub geom: Geometry,
    /// The BVH over `geom`.
    pub bvh: Bvh,
}

/// The key of a group description: its id, or where it is written when it has none
/// (a group nested directly in an instance). Stable across parameter updates, which
/// keep ids and locations.
pub fn key_of(obj: &ObjectDesc) -> String {
    match &obj.id {
        Some(id) => id.clone(),
        None => format!("@{}", obj.loc),
    }
}

/// The index in `ctx.geom.groups` of the group `obj`, building it on first use.
pub fn ensure(obj: &ObjectDesc, ctx: &mut dyn ShapeContext) -> Result<u32> {
    let key = key_of(obj);
    if let Some(i) = ctx.geometry().groups.iter().position(|g| g.key == key) {
        return Ok(i as u32);
    }
    let mut geom = Geometry::default();
    for (child, via) in ctx.children_at(&obj.props, Category::Shape)? {
        let nested = match child.kind.as_str() {
            "shapegroup" => Some("a shapegroup cannot hold another shapegroup"),
            "instance" => Some("a shapegroup cannot hold an instance (nested instancing)"),
            _ => None,
        };
        if let Some(msg) = nested {
            return Err(Error::parse(&via, msg));
        }
        add_member(&child, ctx, &mut geom)?;
    }
    obj.props.check_unused("shapegroup")?;
    if geom.prims.is_empty() {
        return Err(Error::parse(
            &obj.loc,
            format!("shapegroup \"{key}\" holds no shapes"),
        ));
    }
    let bvh = Bvh::build(&geom);
    let groups = &mut ctx.geometry().groups;
    groups.push(Arc::new(ShapeGroup { key, geom, bvh }));
    Ok(groups.len() as u32 - 1)
}

/// Builds one shape of a group into the group's geometry.
fn add_member(obj: &ObjectDesc, ctx: &mut dyn ShapeContext, geom: &mut Geometry) -> Result<()> {
    let p = &obj.props;
    if let Some(e) = ctx.child(p, Category::Emitter)? {
        return Err(Error::parse(
            &e.loc,
            format!(
                "a shape in a shapegroup cannot emit light (instancing of emitters is not \
                 supported): remove the <emitter> from this \"{}\"",
                obj.kind
            ),
        ));
    }
    let to_world = p.transform("to_world")?;
    let flip = p.bool("flip_normals", false)?;
    let built = build_geometry(obj, &*ctx, &to_world, flip)?;
    let bsdf = ctx.bsdf_of(p)?;
    p.check_unused(&obj.kind)?;
    add_geometry(geom, built, flip, bsdf);
    Ok(())
}

/// A group as plain geometry (in a shape's place, not at the scene's top level or in an
/// instance): an error.
pub fn build(
    p: &Props,
    _ctx: &dyn BuildContext,
    _to_world: &Transform,
    _flip: bool,
) -> Result<Built> {
    Err(Error::parse(
        &p.loc,
        "a shapegroup is only allowed at the scene's top level (or nested in an instance)",
    ))
}
