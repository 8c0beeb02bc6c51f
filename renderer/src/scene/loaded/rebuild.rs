//! The rebuilds that are not replays: every shape's geometry and the BVH (unless the
//! primitives' bounds are unchanged), meshes moved in place with a refit BVH, and
//! the sensor.

use std::sync::Arc;

use super::LoadedScene;
use crate::accel::Bvh;
use crate::desc::keys;
use crate::desc::{Category, ObjectDesc};
use crate::error::{Error, Result};
use crate::scene::builder::{same_bvh_input, BuildCtx};
use crate::scene::Scene;
use crate::sensors;
use crate::shapes::{self, Geometry};

impl LoadedScene {
    /// Rebuilds every shape's geometry from `root` with its current material and
    /// emitter, then the BVH unless the primitives' bounds are unchanged.
    pub(super) fn rebuild_geometry(&self, root: &Arc<ObjectDesc>, scene: &mut Scene) -> Result<()> {
        let ctx = BuildCtx::with_cache(root, self.cache.clone())?;
        let old = &self.setup.scene.geom;
        // shape groups are not editable: the instances place the groups already built
        let mut geom = Geometry {
            groups: old.groups.clone(),
            uv_unread: old.uv_unread,
            ..Geometry::default()
        };
        for rec in self
            .log
            .objects
            .iter()
            .filter(|r| r.category == Category::Shape)
        {
            let obj = keys::find(root, &rec.path).ok_or_else(|| {
                Error::Render(format!("internal error: shape \"{}\" is missing", rec.key))
            })?;
            let s = old.shapes[rec.handle as usize];
            let h = shapes::rebuild_geometry(obj, &ctx, &mut geom, s.bsdf, s.emitter)?;
            debug_assert_eq!(h, rec.handle);
        }
        geom.seal_groups();
        let bvh = if same_bvh_input(old, &geom) {
            scene.bvh.clone()
        } else {
            Arc::new(Bvh::build(&geom))
        };
        scene.bsphere = geom.bounds().bounding_sphere();
        scene.geom = Arc::new(geom);
        scene.bvh = bvh;
        Ok(())
    }

    /// Moves the meshes `moved` (shape handles) to their written positions and refits
    /// the BVH; `false` when one of them no longer fits in place (see
    /// [`shapes::mesh::move_in_place`]) and the geometry and BVH were rebuilt instead.
    pub(super) fn move_meshes(
        &self,
        root: &Arc<ObjectDesc>,
        scene: &mut Scene,
        moved: &[u32],
    ) -> Result<bool> {
        let ctx = BuildCtx::with_cache(root, self.cache.clone())?;
        let mut geom = Geometry::clone(&self.setup.scene.geom);
        for &h in moved {
            let rec = self
                .log
                .objects
                .iter()
                .find(|r| r.category == Category::Shape && r.handle == h)
                .ok_or_else(|| Error::Render(format!("internal error: no shape {h} in the log")))?;
            let obj = keys::find(root, &rec.path).ok_or_else(|| {
                Error::Render(format!("internal error: shape \"{}\" is missing", rec.key))
            })?;
            let fits = shapes::mesh_of(obj, &ctx)?
                .is_some_and(|m| shapes::mesh::move_in_place(&mut geom, h, &m));
            if !fits {
                self.rebuild_geometry(root, scene)?;
                return Ok(false);
            }
        }
        scene.bvh = Arc::new(self.setup.scene.bvh.refit(&geom)?);
        scene.bsphere = geom.bounds().bounding_sphere();
        scene.geom = Arc::new(geom);
        Ok(true)
    }

    pub(super) fn rebuild_sensor(&self, root: &Arc<ObjectDesc>) -> Result<sensors::Sensor> {
        let rec = self
            .log
            .objects
            .iter()
            .find(|r| r.category == Category::Sensor)
            .ok_or_else(|| Error::Render("internal error: no sensor in the log".into()))?;
        let obj = keys::find(root, &rec.path)
            .ok_or_else(|| Error::Render("internal error: the sensor is missing".into()))?;
        let mut ctx = BuildCtx::with_cache(root, self.cache.clone())?;
        sensors::build(obj, &mut ctx)
    }
}
