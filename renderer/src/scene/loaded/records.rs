//! Record collection: the records replays rewrote and the images written in place move
//! into the new scene, and the slots whose contents changed are listed in the update's
//! [`Changes`].

use std::sync::Arc;

use super::{push_unique, Changes, ImageChange, LoadedScene};
use crate::desc::params::TensorData;
use crate::scene::builder::{Alloc, BuildCtx};
use crate::scene::Scene;

impl LoadedScene {
    /// Moves the replayed records and the images written in place (`patched`) into
    /// `scene` and lists the slots whose contents changed.
    pub(super) fn collect_records(
        &self,
        ctx: &mut BuildCtx,
        patched: &[u32],
        scene: &mut Scene,
        changes: &mut Changes,
    ) {
        let written: Vec<Alloc> = (patched.iter().map(|&i| Alloc::Image(i)))
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
