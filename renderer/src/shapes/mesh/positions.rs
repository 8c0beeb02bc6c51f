//! Written vertex positions (see the docs of [`super`]): the parameters a mesh
//! declares, the props they replace, and the update that moves a mesh in place.

use std::path::Path;
use std::sync::Arc;

use super::{tri_area, Mesh, TriMesh};
use crate::desc::params::{ArrayValue, ParamValue, Range, Target};
use crate::desc::props::{Props, Value};
use crate::error::{Error, Result};
use crate::math::{Distribution1D, Vec3};
use crate::plugin::BuildContext;
use crate::shapes::{AnyShape, Geometry};

/// The property that holds written vertex positions ([`crate::desc::props::Value::Positions`]).
pub const POSITIONS_PROP: &str = "vertex_positions";

impl TriMesh {
    /// Replaces the positions with written ones ([`POSITIONS_PROP`] in `p`, world
    /// space) and drops the file's normals, which no longer fit them.
    pub fn with_written_positions(mut self, p: &Props, path: &Path) -> Result<Self> {
        let Some(e) = p.get(POSITIONS_PROP) else {
            return Ok(self);
        };
        let Value::Positions(v) = &e.value else {
            return Err(Error::param(
                &e.loc,
                POSITIONS_PROP,
                format!("expected vertex positions, got a {}", e.value.type_name()),
            ));
        };
        if v.len() != self.positions.len() {
            return Err(Error::param(
                &e.loc,
                POSITIONS_PROP,
                format!(
                    "{} vertex positions for a mesh of {} vertices ({})",
                    v.len(),
                    self.positions.len(),
                    path.display()
                ),
            ));
        }
        self.positions.clone_from(v);
        self.normals = None;
        Ok(self)
    }
}

/// Moves shape `handle`'s mesh in `geom` to the positions of `m` (the same mesh,
/// rebuilt from its description after its positions were written): positions,
/// normals, the area distribution and the area, in place; the primitives stay.
///
/// Returns `false` when `m` does not fit in place: another vertex or triangle count,
/// normals gained or lost, or a triangle that became degenerate or stopped being so
/// (the primitive set changes, which needs a BVH build). `geom` is then partly
/// written and must be discarded.
pub fn move_in_place(geom: &mut Geometry, handle: u32, m: &TriMesh) -> bool {
    let Some(AnyShape::Mesh(rec)) = geom.shapes.get(handle as usize).map(|s| s.geom) else {
        return false;
    };
    let (v0, nv) = (rec.first_vertex as usize, rec.vertex_count as usize);
    if m.positions.len() != nv
        || m.tris.len() != rec.tri_count as usize
        || m.normals.is_some() != rec.has_normals
    {
        return false;
    }
    let store = &mut geom.mesh;
    let was_prim: Vec<bool> = (0..rec.tri_count)
        .map(|k| tri_area(store, rec.first_tri + k) > 0.0)
        .collect();
    store.positions[v0..v0 + nv].copy_from_slice(&m.positions);
    if let Some(n) = &m.normals {
        store.normals[v0..v0 + nv].copy_from_slice(n);
    }
    let areas: Vec<f32> = (0..rec.tri_count)
        .map(|k| tri_area(store, rec.first_tri + k))
        .collect();
    if areas.iter().zip(&was_prim).any(|(&a, &p)| (a > 0.0) != p) {
        return false;
    }
    let dist = Distribution1D::new(&areas).unwrap_or_default();
    let area = if dist.is_empty() { 0.0 } else { dist.sum };
    geom.area_dists[handle as usize] = dist;
    geom.shapes[handle as usize].geom = AnyShape::Mesh(Mesh { area, ..rec });
    true
}

/// Declares the world-space vertex positions `positions` of the mesh being built, under
/// both keys (see the module docs).
pub fn declare_positions(ctx: &mut dyn BuildContext, positions: &[Vec3]) {
    let data: Arc<Vec<f32>> = Arc::new(positions.iter().flat_map(|p| p.to_array()).collect());
    let n = positions.len();
    for (name, shape) in [("vertex_positions", vec![3 * n]), ("positions", vec![n, 3])] {
        let value = ParamValue::Array(ArrayValue {
            shape,
            data: data.clone(),
        });
        let target = Target::Prop {
            set: POSITIONS_PROP.to_string(),
            remove: vec!["to_world".to_string()],
        };
        ctx.declare(name, value, target, Range::Any);
    }
}
