//! Update planning: what staged values need (the edited description, the values
//! written in place with the objects whose hooks recompute what derives from them,
//! the objects to replay with their readers in build order, the images that stay in
//! device memory, whether the geometry, a mesh's positions or the sensor change) and
//! which device values can stay on the device. The plan finds each object that the
//! later steps rebuild in the edited description once, so they search nothing.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::write::write_desc;
use super::{host_tensor, LoadedScene};
use crate::desc::keys;
use crate::desc::params::{ParamDecl, ParamValue, TensorData, TensorValue};
use crate::desc::props::PixelArray;
use crate::desc::{Category, ObjectDesc, SceneDesc};
use crate::error::{Error, Result};
use crate::math::Color;
use crate::plugin::patch::{place_of, Place};

impl LoadedScene {
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
    pub(super) fn reads_means(&self, r: usize) -> bool {
        self.bsdf_entry(r).is_some_and(|e| e.reads_texture_means)
    }

    /// Whether object `r` recomputes what it derives from its textures' means in its
    /// plugin's `parameters_changed` hook.
    fn means_in_hook(&self, r: usize) -> bool {
        self.bsdf_entry(r).is_some_and(|e| e.means_in_hook)
    }

    /// The registry entry of object `r`'s plugin, if `r` is a BSDF.
    fn bsdf_entry(&self, r: usize) -> Option<&'static crate::bsdfs::registry::BsdfEntry> {
        let o = &self.log.objects[r];
        (o.category == Category::Bsdf)
            .then(|| crate::bsdfs::registry::entry(&o.kind))
            .flatten()
    }

    /// Where parameter `key` of object `r` lives, if its plugin writes it in place
    /// (the `EDITABLE` table of the plugin's registry entry).
    pub(super) fn place(&self, r: usize, key: &str) -> Option<Place> {
        let rec = &self.log.objects[r];
        let name = key.strip_prefix(rec.key.as_str())?.strip_prefix('.')?;
        let table = match rec.category {
            Category::Texture => crate::textures::registry::entry(&rec.kind)?.editable,
            Category::Bsdf => crate::bsdfs::registry::entry(&rec.kind)?.editable,
            Category::Emitter => crate::emitters::registry::entry(&rec.kind)?.editable,
            _ => return None,
        };
        place_of(table, name)
    }

    /// The image that a parameter of object `r` is written into in place, if its
    /// plugin says it lives there (`place`, from [`Self::place`]): a bitmap's data.
    fn image_in_place(&self, r: usize, place: Option<Place>) -> Option<u32> {
        match place? {
            Place::Image => self.image_of(r),
            Place::Constant { .. } => None,
        }
    }

    /// The constant texture that value `v` of declaration `d` is written into in place,
    /// with its new colour, if the owner's plugin says the value lives there (`place`,
    /// from [`Self::place`]) and the colour is one the build accepts (a float beyond
    /// `f32` is refused by the build, so it is rebuilt to report that).
    fn constant_in_place(
        &self,
        d: &ParamDecl,
        place: Option<Place>,
        v: &ParamValue,
    ) -> Option<(u32, Color)> {
        let Place::Constant { .. } = place? else {
            return None;
        };
        let c = match v {
            ParamValue::Float(x) => Color::splat(*x as f32),
            ParamValue::Color(c) => *c,
            _ => return None,
        };
        Some((d.texture?, c)).filter(|_| c.is_finite())
    }

    /// Whether a device value for parameter `key` would stay on the device at update
    /// (a bitmap's data that no reader needs on the host): a backend with a device
    /// copy of the scene can then upload a host array for it straight away.
    pub fn keeps_on_device(&self, key: &str) -> bool {
        let Some(d) = self.params.decls().iter().find(|d| d.key == key) else {
            return false;
        };
        let image = self.image_in_place(d.owner, self.place(d.owner, key));
        if image.is_none() || !matches!(d.value, ParamValue::Tensor(_)) {
            return false;
        }
        let mut readers = BTreeSet::from([d.owner]);
        self.add_readers(&mut readers);
        !readers.iter().any(|&r| self.reads_means(r))
    }

    /// What `staged` needs: the edited description, the values written in place and
    /// the hooks they call for, the objects to replay (owners and their dependents, in
    /// build order), device images, geometry and sensor flags.
    pub(super) fn plan<'a>(&self, staged: &'a [(usize, ParamValue)]) -> Result<Plan<'a>> {
        let mut root = self.desc.root.clone();
        let mut owners = BTreeSet::new();
        // objects whose parameters are written in place, not rebuilt
        let mut patched = BTreeSet::new();
        let mut moved = Vec::new();
        let mut sensor = false;
        let mut plan = Plan {
            staged,
            desc: self.desc.clone(),
            replay: Vec::new(),
            constants: Vec::new(),
            hooks: Vec::new(),
            device_images: Vec::new(),
            images: Vec::new(),
            geometry: false,
            shapes: Vec::new(),
            moved: Vec::new(),
            sensor: None,
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
            let place = self.place(d.owner, &d.key);
            let in_place = self.image_in_place(d.owner, place);
            match (device, in_place) {
                // a bitmap's data in device memory: no description or host change, only
                // its readers that derive values from it are rebuilt (below)
                (Some(data), Some(image)) => {
                    plan.device_images.retain(|(im, ..)| *im != image);
                    plan.device_images.push((image, *i, data));
                    patched.insert(d.owner);
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
            // a bitmap's data on the host: written into the texture store in place
            if let (Some(image), ParamValue::Tensor(t)) = (in_place, v) {
                plan.patch_image(rec.order, image, host_tensor(t)?);
                patched.insert(d.owner);
                continue;
            }
            // a constant texture's colour: its record is rewritten in place
            if let Some((t, c)) = self.constant_in_place(d, place, v) {
                plan.constants.retain(|(u, _)| *u != t);
                plan.constants.push((t, c));
                patched.insert(d.owner);
                continue;
            }
            match rec.category {
                // vertex positions (the only array parameters of a shape)
                Category::Shape if matches!(d.value, ParamValue::Array(_)) => {
                    if !moved.contains(&d.owner) {
                        moved.push(d.owner)
                    }
                }
                Category::Shape => plan.geometry = true,
                Category::Sensor => sensor = true,
                _ => {
                    owners.insert(d.owner);
                }
            }
        }
        // the readers of what was written in place that derive values from it: their
        // hooks recompute those values, or, where the plugin has no such hook, they
        // are rebuilt
        let mut readers = patched;
        self.add_readers(&mut readers);
        let (hooked, rebuilt): (Vec<usize>, Vec<usize>) = (readers.into_iter())
            .filter(|&r| self.reads_means(r))
            .partition(|&r| self.means_in_hook(r));
        owners.extend(rebuilt);
        self.add_readers(&mut owners);
        let mut hooks: Vec<usize> = hooked.into_iter().filter(|r| !owners.contains(r)).collect();
        hooks.sort_by_key(|&r| self.log.objects[r].order);
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
        let needs_host = !hooks.is_empty() || replay.iter().any(|&r| self.reads_means(r));
        if needs_host {
            for (image, i, data) in std::mem::take(&mut plan.device_images) {
                let d = &self.params.decls()[i];
                let t = TensorValue {
                    shape: v_shape(&d.value),
                    data: TensorData::Device(data),
                };
                let px = host_tensor(&t)?;
                let host = ParamValue::Tensor(TensorValue::host(px.clone()));
                let rec = &self.log.objects[d.owner];
                write_desc(&mut root, &rec.path, &d.target, &host, &d.key)?;
                plan.patch_image(rec.order, image, px);
            }
        }
        plan.desc = SceneDesc {
            root,
            search_paths: self.desc.search_paths.clone(),
        };
        plan.hooks = hooks;
        self.find_nodes(&mut plan, replay, &moved, sensor)?;
        Ok(plan)
    }

    /// Finds in `plan`'s edited description the objects that the update rebuilds: the
    /// objects `replay`, every shape when the geometry changes or meshes (the shapes
    /// `moved`) move, since a mesh that no longer fits in place rebuilds it, and the
    /// sensor if `sensor`. Runs after every write, so the nodes are the final ones.
    fn find_nodes(
        &self,
        plan: &mut Plan,
        replay: Vec<usize>,
        moved: &[usize],
        sensor: bool,
    ) -> Result<()> {
        let root = plan.desc.root.clone();
        let node = |r: usize| keys::find(&root, &self.log.objects[r].path).cloned();
        for r in replay {
            let obj = node(r).ok_or_else(|| {
                Error::Render(format!(
                    "internal error: object \"{}\" is missing from the edited description",
                    self.log.objects[r].key
                ))
            })?;
            plan.replay.push((r, obj));
        }
        let objects = &self.log.objects;
        if plan.geometry || !moved.is_empty() {
            for r in (0..objects.len()).filter(|&r| objects[r].category == Category::Shape) {
                let Some(obj) = node(r) else {
                    let key = &objects[r].key;
                    let e = Error::Render(format!("internal error: shape \"{key}\" is missing"));
                    return Err(self.refused(plan, |d| self.is(d, Category::Shape), e));
                };
                plan.shapes.push((r, obj));
            }
            for &r in moved {
                let found = plan.shapes.iter().find(|(s, _)| *s == r);
                (plan.moved).extend(found.map(|(_, obj)| (objects[r].handle, obj.clone())));
            }
        }
        if sensor {
            let obj = (0..objects.len())
                .find(|&r| objects[r].category == Category::Sensor)
                .ok_or_else(|| Error::Render("internal error: no sensor in the log".into()))
                .and_then(|r| {
                    node(r).ok_or_else(|| {
                        Error::Render("internal error: the sensor is missing".into())
                    })
                })
                .map_err(|e| self.refused(plan, |d| self.is(d, Category::Sensor), e))?;
            plan.sensor = Some(obj);
        }
        Ok(())
    }
}

/// What an update does, with the objects it rebuilds found in its edited description.
pub(super) struct Plan<'a> {
    /// The staged values (declaration index, checked value).
    pub(super) staged: &'a [(usize, ParamValue)],
    pub(super) desc: SceneDesc,
    /// Objects rebuilt by replaying their builds, in build order, with their nodes.
    pub(super) replay: Vec<(usize, Arc<ObjectDesc>)>,
    /// Constant textures written in place (record, new colour).
    pub(super) constants: Vec<(u32, Color)>,
    /// Objects whose `parameters_changed` hook runs after the writes and replays, in
    /// build order.
    pub(super) hooks: Vec<usize>,
    /// Images whose new values stay in device memory (image, staged declaration,
    /// values); empty when a reader needs them on the host.
    pub(super) device_images: Vec<(u32, usize, Arc<dyn crate::desc::params::DeviceValues>)>,
    /// Images written in place with their host values, in their owners' build order.
    pub(super) images: Vec<ImagePatch>,
    pub(super) geometry: bool,
    /// Every shape's log record with its node, when the geometry changes or meshes
    /// move; empty otherwise.
    pub(super) shapes: Vec<(usize, Arc<ObjectDesc>)>,
    /// Meshes whose vertex positions were written, in the order they were staged
    /// (shape handle, node).
    pub(super) moved: Vec<(u32, Arc<ObjectDesc>)>,
    /// The sensor's node, when a sensor parameter changes.
    pub(super) sensor: Option<Arc<ObjectDesc>>,
}

impl Plan<'_> {
    /// Writes `px` in place as image `image`, whose owner finished its build at
    /// `order` (the images keep their owners' build order, as rebuilds wrote them).
    fn patch_image(&mut self, order: usize, image: u32, px: Arc<PixelArray>) {
        self.images.retain(|p| p.image != image);
        let pos = self.images.partition_point(|p| p.order < order);
        self.images.insert(pos, ImagePatch { order, image, px });
    }
}

/// An image written in place.
pub(super) struct ImagePatch {
    /// When its owner finished its build.
    order: usize,
    /// Its index in the texture store.
    pub(super) image: u32,
    /// Its new values.
    pub(super) px: Arc<PixelArray>,
}

fn v_shape(v: &ParamValue) -> [usize; 3] {
    match v {
        ParamValue::Tensor(t) => t.shape,
        _ => [0; 3],
    }
}
