//! Turns a [`SceneDesc`](crate::desc::SceneDesc) into a render-ready
//! [`Scene`](super::Scene): resolves references, builds every plugin through its
//! category's registry, and checks that every property was read.
//!
//! While it builds, the context also records what parameter updates need
//! ([`BuildLog`]): every object (texture, BSDF, emitter, shape, sensor) with its key
//! prefix and path, the records its build allocated (its own, nested constants,
//! images, distributions) and which objects read it. An update then rebuilds one
//! object by *replaying* its build on the same slots: the plugin's own `build` runs
//! again on the edited description, each allocation returns the handle it returned
//! the first time and overwrites that slot, and nested objects are not rebuilt — so an
//! updated scene is exactly the scene a fresh load of the edited description gives.
//! Plugins declare their editable parameters through [`BuildCtx::declare`] and the
//! helpers around it ([`crate::desc::params`]).
//!
//! Plugins see the context through the [`BuildContext`] trait of the leaf module
//! [`crate::plugin`]: they never import this builder.
//!
//! The context's state and its look-ups (ids, nested objects, file paths) stand here;
//! each of its other jobs has a file: `scope` (object scopes and reference cycles),
//! `log` (the build log and replays), `alloc` (the records a build adds), `texture`,
//! `bsdf_emitter`, `declare` (parameter declarations), `plugin_context` (what plugins
//! see of it) and `scene` (the build of a whole scene).

mod alloc;
mod bsdf_emitter;
mod declare;
mod log;
mod plugin_context;
mod scene;
mod scope;
mod texture;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::bsdfs::AnyBsdf;
use crate::desc::cache::LoadCache;
use crate::desc::keys::ObjectKeys;
use crate::desc::params::ParamTable;
use crate::desc::paths::find_file;
use crate::desc::props::{Props, Value};
use crate::desc::{Category, ObjectDesc};
use crate::emitters::AnyEmitter;
use crate::error::{Error, Loc, Result};
use crate::math::Distribution2D;
use crate::plugin::BuildContext;
use crate::shapes::Geometry;
use crate::textures::{TexRef, TextureStore};

pub use log::{Alloc, BuildLog, ObjRecord};
#[cfg(test)]
pub(crate) use plugin_context::with_test_context;
pub use scene::build_scene;
pub(crate) use scene::{build_logged, same_bvh_input};

/// The replay of one object's build (see the module docs).
#[derive(Debug)]
struct Replay {
    allocs: Vec<Alloc>,
    cursor: usize,
}

/// An object being built, and where its slot in the log is.
#[derive(Debug)]
struct Open {
    record: Option<usize>,
    /// Its id and where it is defined.
    id: Option<(String, Loc)>,
    /// Where it was reached from (a reference or the nesting property).
    via: Loc,
}

/// Mutable state while a scene is built. Plugin `build` functions receive it to
/// add records, resolve textures, nested BSDFs and file paths, and declare their
/// parameters.
#[derive(Default)]
pub struct BuildCtx {
    /// Geometry built so far.
    pub geom: Geometry,
    /// BSDFs built so far.
    pub bsdfs: Vec<AnyBsdf>,
    /// Textures built so far.
    pub textures: TextureStore,
    /// Emitters built so far.
    pub emitters: Vec<AnyEmitter>,
    /// Environment-map distributions built so far.
    pub dists2d: Vec<Distribution2D>,
    ids: HashMap<String, Arc<ObjectDesc>>,
    built_bsdfs: HashMap<String, u32>,
    built_textures: HashMap<String, TexRef>,
    default_bsdf: Option<u32>,
    keys: ObjectKeys,
    log: BuildLog,
    /// Log record of each object built so far, by address.
    record_of: HashMap<usize, usize>,
    /// Objects finished so far.
    finished: usize,
    /// Slots a replay overwrote.
    written: Vec<Alloc>,
    /// In a replay context: the scene's distributions, copied into `dists2d` only
    /// when a replay writes one (they can be large).
    base_dists: Option<Arc<Vec<Distribution2D>>>,
    params: ParamTable,
    open: Vec<Open>,
    replay: Option<Replay>,
    cache: LoadCache,
}

impl BuildCtx {
    /// A context that resolves `<ref>`s against the objects of `root` that have ids.
    pub fn new(root: &ObjectDesc) -> Result<Self> {
        Self::with_cache(root, LoadCache::default())
    }

    /// As [`Self::new`], reading files through `cache`.
    pub fn with_cache(root: &ObjectDesc, cache: LoadCache) -> Result<Self> {
        let mut ctx = BuildCtx {
            keys: ObjectKeys::new(root),
            cache,
            ..BuildCtx::default()
        };
        ctx.collect_ids(root)?;
        Ok(ctx)
    }

    fn collect_ids(&mut self, root: &ObjectDesc) -> Result<()> {
        let mut todo = vec![root];
        while let Some(obj) = todo.pop() {
            for e in obj.props.entries() {
                if let Value::Object(child) = &e.value {
                    if let Some(id) = &child.id {
                        if let Some(prev) = self.ids.get(id) {
                            return Err(Error::parse(
                                &child.loc,
                                format!("duplicate id \"{id}\" (first defined at {})", prev.loc),
                            ));
                        }
                        self.ids.insert(id.clone(), child.clone());
                    }
                    todo.push(child);
                }
            }
        }
        Ok(())
    }

    /// The files this scene read.
    pub fn cache(&self) -> &LoadCache {
        &self.cache
    }

    /// Whether this context replays an object for an update (its parameter values
    /// were checked when they were set).
    pub fn is_replay(&self) -> bool {
        self.replay.is_some()
    }

    /// The object an `id` refers to.
    pub fn lookup(&self, id: &str, loc: &Loc) -> Result<Arc<ObjectDesc>> {
        self.ids.get(id).cloned().ok_or_else(|| {
            let mut known: Vec<&str> = self.ids.keys().map(|s| s.as_str()).collect();
            known.sort();
            Error::parse(
                loc,
                format!(
                    "reference to unknown id \"{id}\" (defined ids: {})",
                    known.join(", ")
                ),
            )
        })
    }

    /// Nested objects of `category` in `p` (references resolved), marking them used.
    pub fn children(&self, p: &Props, category: Category) -> Result<Vec<Arc<ObjectDesc>>> {
        BuildContext::children(self, p, category)
    }

    /// As [`Self::children`], with where each was nested or referenced.
    pub fn children_at(
        &self,
        p: &Props,
        category: Category,
    ) -> Result<Vec<(Arc<ObjectDesc>, Loc)>> {
        let mut out = Vec::new();
        for e in p.entries() {
            let obj = match &e.value {
                Value::Object(o) => o.clone(),
                Value::Ref(id) => self.lookup(id, &e.loc)?,
                _ => continue,
            };
            if obj.category == category {
                e.mark_used();
                out.push((obj, e.loc.clone()));
            }
        }
        Ok(out)
    }

    /// At most one nested object of `category`.
    pub fn child(&self, p: &Props, category: Category) -> Result<Option<Arc<ObjectDesc>>> {
        BuildContext::child(self, p, category)
    }

    /// Resolves a filename property: next to the file that wrote it, else in the
    /// scene's `<path>` folders (latest first), as Mitsuba's file resolver does.
    pub fn resolve_path(&self, p: &Props, key: &str) -> Result<PathBuf> {
        let name = p
            .string_opt(key)?
            .ok_or_else(|| Error::param(&p.loc, key, "is required"))?;
        let loc = p.entry_loc(key);
        find_file(&loc, &name, self.cache.search_paths())
            .map_err(|msg| Error::param(&loc, key, msg))
    }
}
