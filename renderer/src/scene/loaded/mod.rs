//! A loaded scene: its description, the render-ready [`Scene`] built from it, and
//! what parameter updates need (the build log, the declared parameters, the files
//! it read). [`LoadedScene::update`] applies staged parameter values by writing them
//! in place where their plugins say they live, and by rebuilding only what else they
//! change:
//!
//! - a parameter that its plugin lists as editable ([`crate::plugin::patch`]: a
//!   bitmap's data, the colour of a constant texture given in the description) is
//!   written into the image or texture record it lives in; the objects that read it
//!   and derive values from their textures' means (a plastic's sampling weight)
//!   recompute them in their `parameters_changed` hook, or are rebuilt as below when
//!   their plugin has none;
//! - any other texture, BSDF or emitter parameter rebuilds its object by replaying its
//!   build on the slots of the first build (see [`super::builder`]), then the objects
//!   that read it, in build order;
//! - a shape's `to_world` rebuilds the geometry (every shape, from the cached mesh
//!   files, never from disk) and the BVH: the cost of a fresh build minus parsing and
//!   file reads;
//! - a mesh's vertex positions move that mesh in place and refit the BVH (same tree,
//!   new boxes; [`Bvh::refit`]); a triangle that becomes degenerate or stops being so
//!   changes the primitive set and falls back to the rebuild above;
//! - a sensor parameter rebuilds the sensor;
//! - texture data that lives in device memory ([`TensorData::Device`]) is not copied
//!   to the host: the image is marked device-only and the backend copies it on the
//!   device; the host copy is fetched only where the host needs it (a CPU render,
//!   a BSDF that derives values from the texture's mean).
//!
//! The result is the scene a fresh load of the edited description gives, bit for bit
//! (after a refit: up to the BVH's topology, which gives the same hits), and [`Changes`] says which records, images and parts changed, for backends that
//! keep their own copy of the scene (the CUDA backend patches exactly those). An
//! update that fails changes nothing.
//!
//! The scene, its queries and the helpers its steps share stand here; each step of an
//! update has a file: `plan` (what staged values need), `write` (writing them into the
//! description), `records` (writing values in place, running the hooks and moving the
//! rewritten records into the scene), `rebuild`
//! (geometry, BVH and sensor), `commit` (what committed parameters show after it) and
//! `update` (the whole update and its errors).
//!
//! [`Scene`]: super::Scene
//! [`Bvh::refit`]: crate::accel::Bvh::refit

mod commit;
mod plan;
mod rebuild;
mod records;
mod update;
mod write;

use std::collections::HashSet;
use std::sync::Arc;

use super::builder::{build_logged, Alloc, BuildLog};
use super::RenderSetup;
use crate::desc::cache::LoadCache;
use crate::desc::params::{ParamTable, ParamValue, SceneParams, TensorData, TensorValue};
use crate::desc::props::PixelArray;
use crate::desc::SceneDesc;
use crate::error::{Error, Result};

/// One image an update replaced.
#[derive(Clone, Debug)]
pub struct ImageChange {
    /// Its index in the texture store.
    pub image: u32,
    /// Where the new values are: on the host (already in the scene's texture store)
    /// or in device memory (the host copy is stale until fetched).
    pub data: TensorData,
}

/// What an update changed.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    /// Texture records rewritten.
    pub textures: Vec<u32>,
    /// Images replaced.
    pub images: Vec<ImageChange>,
    /// BSDF records rewritten.
    pub bsdfs: Vec<u32>,
    /// Emitter records rewritten.
    pub emitters: Vec<u32>,
    /// Environment-map distributions rebuilt.
    pub dists: Vec<u32>,
    /// The geometry and BVH were rebuilt.
    pub geometry: bool,
    /// Mesh positions moved and the BVH was refit: the geometry arrays kept their
    /// sizes (positions, normals, BVH boxes, leaf triangles, shape areas and area
    /// distributions changed; primitives, triangles and texture coordinates did not).
    pub refit: bool,
    /// The sensor was rebuilt.
    pub sensor: bool,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.textures.is_empty()
            && self.images.is_empty()
            && self.bsdfs.is_empty()
            && self.emitters.is_empty()
            && self.dists.is_empty()
            && !self.geometry
            && !self.refit
            && !self.sensor
    }
}

/// A scene with its description and what updates need.
#[derive(Clone, Debug)]
pub struct LoadedScene {
    desc: SceneDesc,
    setup: Arc<RenderSetup>,
    log: Arc<BuildLog>,
    params: Arc<ParamTable>,
    cache: LoadCache,
    /// Images whose current values live only in device memory.
    device_images: HashSet<u32>,
    /// Incremented by every update that changed something.
    version: u64,
}

impl LoadedScene {
    /// Builds `desc`.
    pub fn new(desc: SceneDesc) -> Result<LoadedScene> {
        let cache = LoadCache::with_search_paths(desc.search_paths.clone());
        let (setup, log, params) = build_logged(&desc, cache.clone())?;
        Ok(LoadedScene {
            desc,
            setup: Arc::new(setup),
            log: Arc::new(log),
            params: Arc::new(params),
            cache,
            device_images: HashSet::new(),
            version: 0,
        })
    }

    /// The description the scene was built from (with every update written in).
    pub fn desc(&self) -> &SceneDesc {
        &self.desc
    }

    /// The render-ready scene with its sensor and integrator. Its device-only images
    /// (see [`Self::device_images`]) are stale on the host.
    pub fn setup(&self) -> &Arc<RenderSetup> {
        &self.setup
    }

    /// The declared parameters with their current values.
    pub fn params(&self) -> &Arc<ParamTable> {
        &self.params
    }

    /// The build log (objects, their slots and dependents).
    pub fn log(&self) -> &BuildLog {
        &self.log
    }

    /// `traverse(scene)`: the parameters, nothing staged.
    pub fn traverse(&self) -> SceneParams {
        SceneParams::new(&self.params)
    }

    /// Images whose current values live only in device memory.
    pub fn device_images(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.device_images.iter().copied().collect();
        v.sort_unstable();
        v
    }

    /// Counts the updates that changed something.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Makes the host copy of every device-only image current, copying each from
    /// device memory (waits for the device work that writes it).
    pub fn fetch_device_images(&mut self) -> Result<()> {
        for image in self.device_images() {
            let decl = self.params.decls().iter().find(|d| match &d.value {
                ParamValue::Tensor(t) => {
                    matches!(t.data, TensorData::Device(_)) && self.image_of(d.owner) == Some(image)
                }
                _ => false,
            });
            let Some(ParamValue::Tensor(t)) = decl.map(|d| d.value.clone()) else {
                continue;
            };
            let host = host_tensor(&t)?;
            let mut textures = (*self.setup.scene.textures).clone();
            textures.images[image as usize] = host;
            let mut setup = RenderSetup::clone(&self.setup);
            setup.scene.textures = Arc::new(textures);
            self.setup = Arc::new(setup);
            self.device_images.remove(&image);
        }
        Ok(())
    }

    /// The first image an object's build allocated (a bitmap's or environment map's).
    fn image_of(&self, owner: usize) -> Option<u32> {
        self.log.objects[owner].allocs.iter().find_map(|a| match a {
            Alloc::Image(i) => Some(*i),
            _ => None,
        })
    }
}

fn push_unique(v: &mut Vec<u32>, x: u32) {
    if !v.contains(&x) {
        v.push(x);
    }
}

/// The host values of `t` as a pixel array.
fn host_tensor(t: &TensorValue) -> Result<Arc<PixelArray>> {
    let [h, w, c] = t.shape;
    match &t.data {
        TensorData::Host(p) => Ok(p.clone()),
        TensorData::Device(d) => {
            let data = d.to_host()?;
            if data.len() != h * w * c {
                return Err(Error::Render(format!(
                    "device values hold {} floats for a ({h}, {w}, {c}) tensor",
                    data.len()
                )));
            }
            Ok(Arc::new(PixelArray {
                width: w,
                height: h,
                channels: c,
                data,
            }))
        }
    }
}

#[cfg(test)]
mod patch_tests;
#[cfg(test)]
mod positions_tests;
#[cfg(test)]
mod tests;
