//! What the committed parameters show after an update: a declaration whose property
//! another one's write removed, and every mesh's positions after a geometry change.

use std::sync::Arc;

use super::LoadedScene;
use crate::desc::params::{ArrayValue, ParamTable, ParamValue, Target};
use crate::scene::Scene;
use crate::shapes;

impl LoadedScene {
    /// After committing declaration `i`: a declaration of the same object whose
    /// property `i`'s target removed shows what the missing property means — for a
    /// transform, the identity (a mesh's `to_world` after its positions were written:
    /// they include it).
    pub(super) fn commit_linked(&self, params: &mut ParamTable, i: usize) {
        let decls = self.params.decls();
        let Target::Prop { remove, .. } = &decls[i].target else {
            return;
        };
        for (j, other) in decls.iter().enumerate() {
            let removed = matches!(&other.target, Target::Prop { set, .. } if remove.contains(set));
            if other.owner == decls[i].owner && removed {
                if let ParamValue::Transform(_) = other.value {
                    params.commit(j, ParamValue::Transform(crate::math::Transform::IDENTITY));
                }
            }
        }
    }

    /// After a geometry change: every mesh's positions parameters show its world-space
    /// positions in `scene` (both keys share one array).
    pub(super) fn sync_positions(&self, params: &mut ParamTable, scene: &Scene) {
        let mut by_owner: Vec<(usize, Arc<Vec<f32>>)> = Vec::new();
        for (j, d) in self.params.decls().iter().enumerate() {
            // vertex positions, the only array parameters
            let ParamValue::Array(old) = &d.value else {
                continue;
            };
            let data = match by_owner.iter().find(|(o, _)| *o == d.owner) {
                Some((_, data)) => data.clone(),
                None => {
                    let h = self.log.objects[d.owner].handle as usize;
                    let Some(shapes::AnyShape::Mesh(m)) = scene.geom.shapes.get(h).map(|s| s.geom)
                    else {
                        continue;
                    };
                    let (v0, n) = (m.first_vertex as usize, m.vertex_count as usize);
                    let world = &scene.geom.mesh.positions[v0..v0 + n];
                    let data: Vec<f32> = world.iter().flat_map(|p| p.to_array()).collect();
                    let data = if data == **old.data {
                        old.data.clone()
                    } else {
                        Arc::new(data)
                    };
                    by_owner.push((d.owner, data.clone()));
                    data
                }
            };
            if !Arc::ptr_eq(&data, &old.data) {
                let shape = old.shape.clone();
                params.commit(j, ParamValue::Array(ArrayValue { shape, data }));
            }
        }
    }
}
