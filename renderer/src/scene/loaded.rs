//! A loaded scene: its description, the render-ready [`Scene`] built from it, and
//! what parameter updates need (the build log, the declared parameters, the files
//! it read). [`LoadedScene::update`] applies staged parameter values by rebuilding
//! only what they change:
//!
//! - a texture, BSDF or emitter parameter rebuilds its object by replaying its build
//!   on the slots of the first build (see [`super::builder`]), then the objects that
//!   read it (a plastic's sampling weight reads its textures' means), in build order;
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

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use super::builder::{build_logged, same_bvh_input, Alloc, BuildCtx, BuildLog};
use super::{RenderSetup, Scene};
use crate::accel::Bvh;
use crate::desc::cache::LoadCache;
use crate::desc::keys;
use crate::desc::params::{
    ArrayValue, ParamTable, ParamValue, SceneParams, Target, TensorData, TensorValue,
};
use crate::desc::props::{PixelArray, Value};
use crate::desc::{Category, ObjectDesc, SceneDesc};
use crate::error::{Error, Loc, Result};
use crate::sensors;
use crate::shapes::{self, Geometry};

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

    /// Applies `staged` (declaration index, checked value: [`SceneParams::staged`]) and
    /// rebuilds what they change. On error nothing changes.
    pub fn update(&mut self, staged: &[(usize, ParamValue)]) -> Result<Changes> {
        if staged.is_empty() {
            return Ok(Changes::default());
        }
        let plan = self.plan(staged)?;
        let mut ctx = BuildCtx::for_replay(&plan.desc.root, self.cache.clone(), &self.setup.scene)?;
        for &r in &plan.replay {
            let rec = &self.log.objects[r];
            let obj = keys::find(&plan.desc.root, &rec.path).ok_or_else(|| {
                Error::Render(format!(
                    "internal error: object \"{}\" is missing from the edited description",
                    rec.key
                ))
            })?;
            ctx.replay(&self.log, r, obj)
                .map_err(|e| self.refused(staged, r, e))?;
        }
        // device-only images: the host slot keeps its old (stale) values
        let mut setup = RenderSetup::clone(&self.setup);
        let mut changes = Changes::default();
        self.collect_records(&mut ctx, &mut setup.scene, &mut changes);
        if plan.geometry {
            self.rebuild_geometry(&plan.desc.root, &mut setup.scene)
                .map_err(|e| self.refused_kind(staged, Category::Shape, e))?;
            changes.geometry = true;
        } else if !plan.moved.is_empty() {
            let refit = self
                .move_meshes(&plan.desc.root, &mut setup.scene, &plan.moved)
                .map_err(|e| self.refused_kind(staged, Category::Shape, e))?;
            changes.refit = refit;
            changes.geometry = !refit;
        }
        if plan.sensor {
            setup.sensor = self
                .rebuild_sensor(&plan.desc.root)
                .map_err(|e| self.refused_kind(staged, Category::Sensor, e))?;
            changes.sensor = true;
        }
        for (image, data) in &plan.device_images {
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

    /// Moves the replayed records into `scene` and lists the slots whose contents
    /// changed.
    fn collect_records(&self, ctx: &mut BuildCtx, scene: &mut Scene, changes: &mut Changes) {
        let written: Vec<Alloc> = ctx.written().to_vec();
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

    /// Adds the readers of `objects` to it, transitively.
    fn add_readers(&self, objects: &mut BTreeSet<usize>) {
        let mut todo: Vec<usize> = objects.iter().copied().collect();
        while let Some(r) = todo.pop() {
            for &dep in &self.log.objects[r].dependents {
                if objects.insert(dep) {
                    todo.push(dep);
                }
            }
        }
    }

    /// Whether object `r` derives values from its textures' means on the host (a
    /// BSDF whose plugin says so: sampling weights, range checks).
    fn reads_means(&self, r: usize) -> bool {
        let o = &self.log.objects[r];
        o.category == Category::Bsdf
            && crate::bsdfs::registry::entry(&o.kind).is_some_and(|e| e.reads_texture_means)
    }

    /// Whether a device value for parameter `key` would stay on the device at update
    /// (a bitmap's data that no reader needs on the host): a backend with a device
    /// copy of the scene can then upload a host array for it straight away.
    pub fn keeps_on_device(&self, key: &str) -> bool {
        let Some(d) = self.params.decls().iter().find(|d| d.key == key) else {
            return false;
        };
        let rec = &self.log.objects[d.owner];
        if rec.kind != "bitmap"
            || self.image_of(d.owner).is_none()
            || !matches!(d.value, ParamValue::Tensor(_))
        {
            return false;
        }
        let mut readers = BTreeSet::from([d.owner]);
        self.add_readers(&mut readers);
        !readers.iter().any(|&r| self.reads_means(r))
    }

    /// What `staged` needs: the edited description, the objects to replay (owners and
    /// their dependents, in build order), device images, geometry and sensor flags.
    fn plan(&self, staged: &[(usize, ParamValue)]) -> Result<Plan> {
        let mut root = self.desc.root.clone();
        let mut owners = BTreeSet::new();
        let mut plan = Plan {
            desc: self.desc.clone(),
            replay: Vec::new(),
            device_images: Vec::new(),
            geometry: false,
            moved: Vec::new(),
            sensor: false,
        };
        for (i, v) in staged {
            let d = &self.params.decls()[*i];
            let rec = &self.log.objects[d.owner];
            let device = match v {
                ParamValue::Tensor(TensorValue {
                    data: TensorData::Device(data),
                    ..
                }) => Some(data.clone()),
                _ => None,
            };
            match (device, self.image_of(d.owner)) {
                // a bitmap's data in device memory: no description or host change, only
                // its readers are rebuilt (below)
                (Some(data), Some(image)) if rec.kind == "bitmap" => {
                    plan.device_images.retain(|(im, _)| *im != image);
                    plan.device_images.push((image, data));
                    owners.extend(rec.dependents.iter().copied());
                    continue;
                }
                // anything else that reads device values (an environment map's data,
                // which is padded and sampled on the host) gets their host copy
                (Some(data), _) => {
                    let t = TensorValue {
                        shape: v_shape(v),
                        data: TensorData::Device(data),
                    };
                    let host = ParamValue::Tensor(TensorValue::host(host_tensor(&t)?));
                    write_desc(&mut root, &rec.path, &d.target, &host, &d.key)?;
                }
                (None, _) => write_desc(&mut root, &rec.path, &d.target, v, &d.key)?,
            }
            match rec.category {
                // vertex positions (the only array parameters of a shape)
                Category::Shape if matches!(d.value, ParamValue::Array(_)) => {
                    push_unique(&mut plan.moved, rec.handle)
                }
                Category::Shape => plan.geometry = true,
                Category::Sensor => plan.sensor = true,
                _ => {
                    owners.insert(d.owner);
                }
            }
        }
        self.add_readers(&mut owners);
        let mut replay: Vec<usize> = owners
            .into_iter()
            .filter(|&r| {
                let c = self.log.objects[r].category;
                matches!(c, Category::Texture | Category::Bsdf | Category::Emitter)
            })
            .collect();
        replay.sort_by_key(|&r| self.log.objects[r].order);
        // device data read by a BSDF that derives values from texture means: those
        // values need the data on the host
        let needs_host = replay.iter().any(|&r| self.reads_means(r));
        if needs_host {
            for (image, data) in std::mem::take(&mut plan.device_images) {
                let owner = (0..self.log.objects.len()).find(|&r| {
                    self.log.objects[r].kind == "bitmap" && self.image_of(r) == Some(image)
                });
                let Some(owner) = owner else { continue };
                let (i, d) = self
                    .params
                    .decls()
                    .iter()
                    .enumerate()
                    .find(|(_, d)| d.owner == owner && matches!(d.value, ParamValue::Tensor(_)))
                    .ok_or_else(|| {
                        Error::Render("internal error: an image without its parameter".into())
                    })?;
                let shape = match &d.value {
                    ParamValue::Tensor(t) => t.shape,
                    _ => unreachable!("matched above"),
                };
                let t = TensorValue {
                    shape,
                    data: TensorData::Device(data),
                };
                let host = ParamValue::Tensor(TensorValue::host(host_tensor(&t)?));
                let rec = &self.log.objects[owner];
                write_desc(
                    &mut root,
                    &rec.path,
                    &self.params.decls()[i].target,
                    &host,
                    &d.key,
                )?;
                if let Err(pos) =
                    replay.binary_search_by_key(&rec.order, |&r| self.log.objects[r].order)
                {
                    replay.insert(pos, owner);
                }
            }
        }
        plan.desc = SceneDesc {
            root,
            search_paths: self.desc.search_paths.clone(),
        };
        plan.replay = replay;
        Ok(plan)
    }

    /// Rebuilds every shape's geometry from `root` with its current material and
    /// emitter, then the BVH unless the primitives' bounds are unchanged.
    fn rebuild_geometry(&self, root: &Arc<ObjectDesc>, scene: &mut Scene) -> Result<()> {
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
    fn move_meshes(
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

    /// After committing declaration `i`: a declaration of the same object whose
    /// property `i`'s target removed shows what the missing property means — for a
    /// transform, the identity (a mesh's `to_world` after its positions were written:
    /// they include it).
    fn commit_linked(&self, params: &mut ParamTable, i: usize) {
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
    fn sync_positions(&self, params: &mut ParamTable, scene: &Scene) {
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

    fn rebuild_sensor(&self, root: &Arc<ObjectDesc>) -> Result<sensors::Sensor> {
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

    /// `e`, from rebuilding object `r`, as an error of the parameters that caused it.
    fn refused(&self, staged: &[(usize, ParamValue)], r: usize, e: Error) -> Error {
        let keys: Vec<&str> = staged
            .iter()
            .map(|(i, _)| &self.params.decls()[*i])
            .filter(|d| d.owner == r)
            .map(|d| d.key.as_str())
            .collect();
        self.wrap(staged, keys, e)
    }

    fn refused_kind(&self, staged: &[(usize, ParamValue)], c: Category, e: Error) -> Error {
        let keys: Vec<&str> = staged
            .iter()
            .map(|(i, _)| &self.params.decls()[*i])
            .filter(|d| self.log.objects[d.owner].category == c)
            .map(|d| d.key.as_str())
            .collect();
        self.wrap(staged, keys, e)
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

struct Plan {
    desc: SceneDesc,
    replay: Vec<usize>,
    device_images: Vec<(u32, Arc<dyn crate::desc::params::DeviceValues>)>,
    geometry: bool,
    /// Meshes whose vertex positions were written (shape handles).
    moved: Vec<u32>,
    sensor: bool,
}

fn push_unique(v: &mut Vec<u32>, x: u32) {
    if !v.contains(&x) {
        v.push(x);
    }
}

fn v_shape(v: &ParamValue) -> [usize; 3] {
    match v {
        ParamValue::Tensor(t) => t.shape,
        _ => [0; 3],
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

/// Writes `value` for parameter `key` into the object at `path` below `root` as
/// `target` says, cloning shared nodes on the way.
fn write_desc(
    root: &mut Arc<ObjectDesc>,
    path: &[String],
    target: &Target,
    value: &ParamValue,
    key: &str,
) -> Result<()> {
    let o = node_mut(root, path, key)?;
    let loc = o.loc.clone();
    let float = |v: &ParamValue| match v {
        ParamValue::Float(x) => Ok(*x),
        _ => Err(Error::param(
            &Loc::unknown("<parameters>"),
            key,
            "expected a float",
        )),
    };
    match target {
        Target::Prop { set, remove } => {
            let like = o.props.get(set).map(|e| e.value.clone());
            let v = value.to_value(like.as_ref()).ok_or_else(|| {
                Error::param(
                    &Loc::unknown("<parameters>"),
                    key,
                    "device values cannot be written into the scene description",
                )
            })?;
            for r in remove {
                o.props.remove(r);
            }
            match o.props.value_mut(set) {
                Some(slot) => *slot = v,
                None => o.props.set(set, v, loc),
            }
        }
        Target::XFov => {
            let fov = float(value)?;
            o.props.remove("focal_length");
            o.props.set("fov", Value::Float(fov), loc.clone());
            o.props.set("fov_axis", Value::String("x".into()), loc);
        }
        Target::Eta => {
            let eta = float(value)?;
            o.props.set("int_ior", Value::Float(eta), loc.clone());
            o.props.set("ext_ior", Value::Float(1.0), loc);
        }
    }
    Ok(())
}

/// The object at `path` (entry names from `root`), made unique for editing.
fn node_mut<'a>(
    root: &'a mut Arc<ObjectDesc>,
    path: &[String],
    key: &str,
) -> Result<&'a mut ObjectDesc> {
    let mut node = root;
    for name in path {
        node = match Arc::make_mut(node).props.value_mut(name) {
            Some(Value::Object(child)) => child,
            _ => {
                let msg = "the scene description no longer has this object";
                return Err(Error::param(&Loc::unknown("<parameters>"), key, msg));
            }
        };
    }
    Ok(Arc::make_mut(node))
}

#[cfg(test)]
mod positions_tests;
#[cfg(test)]
mod tests;
