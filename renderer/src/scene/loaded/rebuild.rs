//! The rebuilds that are not replays: every shape's geometry and the BVH (unless the
//! primitives' bounds are unchanged), meshes moved in place with a refit BVH, and
//! the sensor, all in one build context, a fresh copy of the replays' one.

use std::sync::Arc;

use super::plan::Plan;
use super::{Changes, LoadedScene};
use crate::accel::Bvh;
use crate::desc::Category;
use crate::error::Result;
use crate::scene::builder::{same_bvh_input, BuildCtx};
use crate::scene::{RenderSetup, Scene};
use crate::sensors;
use crate::shapes::{self, Geometry};

impl LoadedScene {
    /// Rebuilds the geometry (or moves the meshes) and the sensor that `plan` changes
    /// into `setup`, in a fresh copy of the replays' context `replays` (same
    /// description and files), and says so in `changes`; an error names the shape or
    /// sensor parameters that caused it.
    pub(super) fn rebuild(
        &self,
        plan: &Plan,
        replays: &BuildCtx,
        setup: &mut RenderSetup,
        changes: &mut Changes,
    ) -> Result<()> {
        if !plan.geometry && plan.moved.is_empty() && plan.sensor.is_none() {
            return Ok(());
        }
        let mut ctx = replays.fresh();
        if plan.geometry || !plan.moved.is_empty() {
            let refit = (self.rebuild_geometry(plan, &ctx, &mut setup.scene))
                .map_err(|e| self.refused(plan, |d| self.is(d, Category::Shape), e))?;
            changes.refit = refit;
            changes.geometry = !refit;
        }
        if let Some(obj) = &plan.sensor {
            setup.sensor = sensors::build(obj, &mut ctx)
                .map_err(|e| self.refused(plan, |d| self.is(d, Category::Sensor), e))?;
            changes.sensor = true;
        }
        Ok(())
    }

    /// Moves `plan`'s moved meshes to their written positions and refits the BVH
    /// (`true`) unless the geometry changes otherwise or one of them no longer fits in
    /// place (see [`shapes::mesh::move_in_place`]): then rebuilds every shape's geometry
    /// from `plan`'s nodes with its current material and emitter, and the BVH unless
    /// the primitives' bounds are unchanged (`false`).
    fn rebuild_geometry(&self, plan: &Plan, ctx: &BuildCtx, scene: &mut Scene) -> Result<bool> {
        let old = &self.setup.scene.geom;
        if !plan.geometry {
            let mut geom = Geometry::clone(old);
            let mut fits = true;
            for (h, obj) in &plan.moved {
                let m = shapes::mesh_of(obj, ctx)?;
                fits = m.is_some_and(|m| shapes::mesh::move_in_place(&mut geom, *h, &m));
                if !fits {
                    break;
                }
            }
            if fits {
                scene.bvh = Arc::new(self.setup.scene.bvh.refit(&geom)?);
                scene.bsphere = geom.bounds().bounding_sphere();
                scene.geom = Arc::new(geom);
                return Ok(true);
            }
        }
        // shape groups are not editable: the instances place the groups already built
        let mut geom = Geometry {
            groups: old.groups.clone(),
            uv_unread: old.uv_unread,
            ..Geometry::default()
        };
        for (r, obj) in &plan.shapes {
            let rec = &self.log.objects[*r];
            let s = old.shapes[rec.handle as usize];
            let h = shapes::rebuild_geometry(obj, ctx, &mut geom, s.bsdf, s.emitter)?;
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
        Ok(false)
    }
}
