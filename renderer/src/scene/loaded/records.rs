//! Record writes: the values an update writes in place, the hooks that recompute what
//! derives from them, and the move of the rewritten records and images into the new
//! scene, with the slots whose contents changed listed in the update's [`Changes`].

use std::sync::Arc;

use super::plan::Plan;
use super::{push_unique, Changes, ImageChange, LoadedScene};
use crate::desc::params::TensorData;
use crate::scene::builder::{Alloc, BuildCtx};
use crate::scene::Scene;
use crate::textures::{AnyTexture, Constant};

impl LoadedScene {
    /// Writes the images and constant textures of `plan` into `ctx`'s records; returns
    /// the slots written.
    pub(super) fn write_in_place(plan: &Plan, ctx: &mut BuildCtx) -> Vec<Alloc> {
        let mut written = Vec::new();
        for p in &plan.images {
            ctx.textures.images[p.image as usize] = p.px.clone();
            written.push(Alloc::Image(p.image));
        }
        for &(t, c) in &plan.constants {
            ctx.textures.records[t as usize] = AnyTexture::Constant(Constant::new(c));
            written.push(Alloc::Texture(t));
        }
        written
    }

    /// Runs the `parameters_changed` hooks of `plan` on `ctx`'s records, with the
    /// textures' means as they stand after the writes and replays; returns the records
    /// rewritten.
    pub(super) fn parameters_changed(&self, plan: &Plan, ctx: &mut BuildCtx) -> Vec<Alloc> {
        let mut written = Vec::new();
        for &r in &plan.hooks {
            let h = self.log.objects[r].handle;
            let mut b = ctx.bsdfs[h as usize];
            b.parameters_changed(&|t| ctx.textures.mean(t));
            ctx.bsdfs[h as usize] = b;
            written.push(Alloc::Bsdf(h));
        }
        written
    }

    /// Moves the records and images written in place (`patched`) and the replayed ones
    /// into `scene` and lists the slots whose contents changed.
    pub(super) fn collect_records(
        &self,
        ctx: &mut BuildCtx,
        patched: &[Alloc],
        scene: &mut Scene,
        changes: &mut Changes,
    ) {
        let written: Vec<Alloc> = (patched.iter().copied())
            .chain(ctx.written().iter().copied())
            .collect();
        let old = &self.setup.scene;
        for a in &written {
            match *a {
                Alloc::Texture(h)
                    if ctx.textures.records[h as usize] != old.textures.records[h as usize] =>
                {
                    push_unique(&mut changes.textures, h)
                }
                // a device-only image changes back to its host values even when the
                // host slot is the same array (its values went stale on the device)
                Alloc::Image(i)
                    if !Arc::ptr_eq(
                        &ctx.textures.images[i as usize],
                        &old.textures.images[i as usize],
                    ) || self.device_images.contains(&i) =>
                {
                    changes.images.retain(|c| c.image != i);
                    changes.images.push(ImageChange {
                        image: i,
                        data: TensorData::Host(ctx.textures.images[i as usize].clone()),
                    });
                }
                Alloc::Bsdf(h) if ctx.bsdfs[h as usize] != old.bsdfs[h as usize] => {
                    push_unique(&mut changes.bsdfs, h)
                }
                Alloc::Emitter(h) if ctx.emitters[h as usize] != old.emitters[h as usize] => {
                    push_unique(&mut changes.emitters, h)
                }
                Alloc::Dist2d(i) => push_unique(&mut changes.dists, i),
                _ => {}
            }
        }
        if !changes.textures.is_empty() || !changes.images.is_empty() {
            scene.textures = Arc::new(std::mem::take(&mut ctx.textures));
        }
        if !changes.bsdfs.is_empty() {
            scene.bsdfs = Arc::new(std::mem::take(&mut ctx.bsdfs));
        }
        if !changes.emitters.is_empty() {
            scene.emitters = Arc::new(std::mem::take(&mut ctx.emitters));
        }
        if let Some(d) = ctx.take_replayed_dists() {
            scene.dists2d = Arc::new(d);
        }
    }
}
