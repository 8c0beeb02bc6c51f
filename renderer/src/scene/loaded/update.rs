//! The update itself: staged values written in place or replayed into their objects,
//! the geometry and sensor rebuilt, the parameters committed, all or nothing; and its
//! errors, which name the parameters that caused them.

use std::sync::Arc;

use super::plan::Plan;
use super::{Changes, ImageChange, LoadedScene};
use crate::desc::params::{ParamDecl, ParamTable, ParamValue, TensorData};
use crate::desc::Category;
use crate::error::{Error, Loc, Result};
use crate::scene::builder::BuildCtx;
use crate::scene::RenderSetup;

impl LoadedScene {
    /// Applies `staged` (declaration index, checked value: [`SceneParams::staged`]).
    ///
    /// One rule decides how: a value whose key the owner's plugin lists in its
    /// `EDITABLE` table is written where the table says it lives (an image, or the
    /// record of a constant texture), and each object that reads it and derives values
    /// from its textures' means recomputes them in its `parameters_changed` hook. Every
    /// other value (a key no table lists, a shape's, the sensor's), and a reader whose
    /// plugin has no such hook, rebuilds what it changes as the module docs say. On
    /// error nothing changes.
    ///
    /// [`SceneParams::staged`]: crate::desc::params::SceneParams::staged
    pub fn update(&mut self, staged: &[(usize, ParamValue)]) -> Result<Changes> {
        if staged.is_empty() {
            return Ok(Changes::default());
        }
        let plan = self.plan(staged)?;
        let mut ctx = BuildCtx::for_replay(&plan.desc.root, self.cache.clone(), &self.setup.scene)?;
        // values written in place, before the objects that read them are rebuilt
        let mut patched = Self::write_in_place(&plan, &mut ctx);
        for (r, obj) in &plan.replay {
            ctx.replay(&self.log, *r, obj)
                .map_err(|e| self.refused(&plan, |d| d.owner == *r, e))?;
        }
        patched.extend(self.parameters_changed(&plan, &mut ctx));
        // device-only images: the host slot keeps its old (stale) values
        let mut setup = RenderSetup::clone(&self.setup);
        let mut changes = Changes::default();
        self.collect_records(&mut ctx, &patched, &mut setup.scene, &mut changes);
        self.rebuild(&plan, &ctx, &mut setup, &mut changes)?;
        for (image, _, data) in &plan.device_images {
            changes.images.retain(|c| c.image != *image);
            changes.images.push(ImageChange {
                image: *image,
                data: TensorData::Device(data.clone()),
            });
        }
        // commit
        let mut params = ParamTable::clone(&self.params);
        for (i, v) in staged {
            params.commit(*i, v.clone());
            self.commit_linked(&mut params, *i);
        }
        if changes.geometry || changes.refit {
            self.sync_positions(&mut params, &setup.scene);
        }
        for c in &changes.images {
            match c.data {
                TensorData::Device(_) => self.device_images.insert(c.image),
                TensorData::Host(_) => self.device_images.remove(&c.image),
            };
        }
        self.desc = plan.desc;
        self.setup = Arc::new(setup);
        self.params = Arc::new(params);
        self.version += 1;
        Ok(changes)
    }

    /// `e`, from rebuilding what the staged declarations of `plan` that `by` selects
    /// change, as an error of those parameters (of every staged one when `by` selects
    /// none).
    pub(super) fn refused(&self, plan: &Plan, by: impl Fn(&ParamDecl) -> bool, e: Error) -> Error {
        let staged = plan.staged;
        let keys: Vec<&str> = staged
            .iter()
            .map(|(i, _)| &self.params.decls()[*i])
            .filter(|d| by(d))
            .map(|d| d.key.as_str())
            .collect();
        self.wrap(staged, keys, e)
    }

    /// Whether declaration `d` belongs to an object of category `c`.
    pub(super) fn is(&self, d: &ParamDecl, c: Category) -> bool {
        self.log.objects[d.owner].category == c
    }

    fn wrap<'a>(
        &'a self,
        staged: &[(usize, ParamValue)],
        mut keys: Vec<&'a str>,
        e: Error,
    ) -> Error {
        if keys.is_empty() {
            keys = staged
                .iter()
                .map(|(i, _)| self.params.decls()[*i].key.as_str())
                .collect();
        }
        Error::param(
            &Loc::unknown("<parameters>"),
            &keys.join("\", \""),
            format!("the update was refused and nothing changed: {e}"),
        )
    }
}
