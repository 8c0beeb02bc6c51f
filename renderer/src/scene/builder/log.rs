//! The build log that parameter updates read (every object with its key, path, slots
//! and dependents) and the replay that rebuilds one object of it on the slots of its
//! first build.

use super::{BuildCtx, Open, Replay};
use crate::desc::cache::LoadCache;
use crate::desc::params::ParamTable;
use crate::desc::{Category, ObjectDesc};
use crate::error::{Error, Result};
use crate::math::Distribution2D;
use crate::scene::Scene;
use crate::textures::{self, TextureStore};

/// A slot a build allocated (or a nested object it resolved), in call order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alloc {
    /// A texture record (a constant, a texture's own record, or a resolved nested texture).
    Texture(u32),
    /// An image of the texture store.
    Image(u32),
    /// An environment map's sampling distribution.
    Dist2d(u32),
    /// A BSDF record (own, or a resolved nested BSDF).
    Bsdf(u32),
    /// An emitter record.
    Emitter(u32),
}

/// One object of a built scene, as the build saw it.
#[derive(Clone, Debug)]
pub struct ObjRecord {
    /// Key prefix of its parameters (empty for objects without a name).
    pub key: String,
    /// Property names from the root of the description to the object.
    pub path: Vec<String>,
    /// Its category.
    pub category: Category,
    /// Its plugin name.
    pub kind: String,
    /// Its handle: texture, BSDF or emitter record, shape index (0 for the sensor).
    pub handle: u32,
    /// An area emitter's shape.
    pub shape: Option<u32>,
    /// What its build allocated or resolved, in order.
    pub allocs: Vec<Alloc>,
    /// When its build finished, among all objects (an object finishes after every
    /// object it reads).
    pub order: usize,
    /// Objects whose records were built from this one (they read its record, e.g. a
    /// texture's mean): rebuilt after it.
    pub dependents: Vec<usize>,
}

/// Every object of a built scene, in the order their builds finished (an object
/// finishes after the objects it reads).
#[derive(Clone, Debug, Default)]
pub struct BuildLog {
    /// The objects.
    pub objects: Vec<ObjRecord>,
}

impl BuildCtx {
    /// In a replay: the slot the original build got at this point, which must be of
    /// the kind `want` describes.
    pub(super) fn replayed(&mut self, want: &str) -> Option<Result<Alloc>> {
        let r = self.replay.as_mut()?;
        let a = r.allocs.get(r.cursor).copied();
        r.cursor += 1;
        Some(a.ok_or_else(|| {
            Error::Render(format!(
                "internal error: an updated object allocated more than its first build \
                 (a {want} past the end)"
            ))
        }))
    }

    pub(super) fn replay_mismatch(got: Alloc, want: &str) -> Error {
        Error::Render(format!(
            "internal error: an updated object's build diverged from its first build \
             (wanted a {want}, the first build had {got:?})"
        ))
    }

    /// Rebuilds the object of record `r` (found at `obj` in the edited description) on
    /// the slots of its first build.
    pub(crate) fn replay(&mut self, log: &BuildLog, r: usize, obj: &ObjectDesc) -> Result<()> {
        let rec = &log.objects[r];
        self.replay = Some(Replay {
            allocs: rec.allocs.clone(),
            cursor: 0,
        });
        self.open.push(Open {
            record: None,
            id: None,
            via: obj.loc.clone(),
        });
        let res = match rec.category {
            Category::Texture => textures::build(obj, self)
                .and_then(|t| self.add_texture(t))
                .map(drop),
            Category::Bsdf => self.build_bsdf_record(obj).map(drop),
            Category::Emitter => self.build_emitter_record(obj, rec.shape).map(drop),
            c => Err(Error::Render(format!(
                "internal error: a {} is not rebuilt by replay",
                c.tag()
            ))),
        };
        self.open.pop();
        self.replay = None;
        res
    }

    /// A context that replays objects of a built scene on copies of its records.
    pub(crate) fn for_replay(
        root: &ObjectDesc,
        cache: LoadCache,
        scene: &Scene,
    ) -> Result<BuildCtx> {
        let mut ctx = BuildCtx::with_cache(root, cache)?;
        ctx.bsdfs = scene.bsdfs.to_vec();
        ctx.textures = TextureStore::clone(&scene.textures);
        ctx.emitters = scene.emitters.to_vec();
        ctx.base_dists = Some(scene.dists2d.clone());
        Ok(ctx)
    }

    /// A context over the same description and files as this one (its ids and object
    /// names, found when it was made), with nothing built: for the builds of an update
    /// that are not replays.
    pub(crate) fn fresh(&self) -> BuildCtx {
        BuildCtx {
            ids: self.ids.clone(),
            keys: self.keys.clone(),
            cache: self.cache.clone(),
            ..BuildCtx::default()
        }
    }

    /// The slots replays have overwritten so far.
    pub(crate) fn written(&self) -> &[Alloc] {
        &self.written
    }

    /// The distributions after the replays: `None` when no replay wrote one.
    pub(crate) fn take_replayed_dists(&mut self) -> Option<Vec<Distribution2D>> {
        match self.base_dists {
            Some(_) => None,
            None => Some(std::mem::take(&mut self.dists2d)),
        }
    }

    /// The log and declarations of the build.
    pub(crate) fn take_log(&mut self) -> (BuildLog, ParamTable) {
        (
            std::mem::take(&mut self.log),
            std::mem::take(&mut self.params),
        )
    }
}
