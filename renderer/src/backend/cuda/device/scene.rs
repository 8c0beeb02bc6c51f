//! The persistent device scene: a built scene's flat arrays, uploaded once (at the
//! scene's first render), then patched in place on the render stream by parameter
//! updates — exactly the records and texel ranges an update changed
//! ([`crate::scene::loaded::Changes`]). A render reads the arrays where they are and
//! enqueues its kernels: nothing per render flattens, hashes or uploads scene data.
//!
//! Patches are stream ordered: renders enqueued before an update read the old values,
//! renders after it the new ones. A texture from NumPy goes through page-locked
//! staging (an asynchronous DMA); one from another framework's CUDA array (an imported
//! [`DeviceTensor`]) is copied device to device. A geometry update re-uploads the
//! geometry arrays (the BVH was rebuilt on the host); the texels stay where they are.
//! Moved mesh vertices (a refit on the host: same tree, new boxes) rewrite only the
//! arrays a refit changes, in place: [`REFIT_ARRAYS`].

use std::mem::size_of;

use super::event::Event;
use super::memory::DeviceBuffer;
use super::tensor::DeviceTensor;
use super::{guarded, CudaBackend, CudaFilm};
use crate::backend::cuda::features::{FeatureBasis, Features};
use crate::desc::params::TensorData;
use crate::emitters::registry::RecordCtx as EmitterRecordCtx;
use crate::error::{CudaError, Error, Result};
use crate::films::record::{flatten_film, FlatFilm};
use crate::flat::unit_prims::{self, FlatUnitPrim};
use crate::flat::{as_bytes, FlatBsdf, FlatDist2D, FlatScene, RecordRef};
use crate::integrators::record::{flatten_integrator, FlatIntegrator};
use crate::scene::loaded::Changes;
use crate::scene::RenderSetup;
use crate::sensors::record::{flatten_camera, FlatCamera};
use crate::sensors::Sensor;
use crate::textures::registry::RecordCtx;
use crate::{integrators::AnyIntegrator, render::RenderOptions};

/// The flat arrays every scene kernel takes, in the order of `HG_SCENE_ARRAYS`
/// (kernels/scene.cuh); the counts sit between them as that list says, a brute-force
/// module's unit records follow them by value, and camera, film and integrator travel
/// by value too.
pub(crate) const SCENE_ARRAYS: [&str; 21] = [
    "nodes",
    "leaf",
    "prims",
    "shapes",
    "positions",
    "normals",
    "uvs",
    "tris",
    "bsdfs",
    "bsdf_data",
    "textures",
    "texels",
    "emitters",
    "emitter_data",
    "env",
    "dist1d",
    "dist2d",
    "dist_data",
    "bsphere",
    "attrs",
    "tex_data",
];

/// The arrays a refit rewrites ([`Changes::refit`]); their sizes do not change.
const REFIT_ARRAYS: [&str; 8] = [
    "nodes",
    "leaf",
    "shapes",
    "positions",
    "normals",
    "dist1d",
    "dist_data",
    "bsphere",
];

/// Bytes of the camera and film records in device memory: the camera, then the film
/// at [`FILM_RECORD_AT`].
const RECORDS_BYTES: usize = size_of::<FlatCamera>() + size_of::<FlatFilm>();
/// Where the film record starts in the records buffer.
pub(crate) const FILM_RECORD_AT: u64 = size_of::<FlatCamera>() as u64;

/// Index of `name` in [`SCENE_ARRAYS`].
fn slot(name: &str) -> usize {
    SCENE_ARRAYS
        .iter()
        .position(|n| *n == name)
        .expect("a scene array name")
}

/// Arrays larger than this go through page-locked staging on updates; smaller ones are
/// copied from ordinary memory (the driver stages them before returning).
const STAGE_OVER: usize = 64 << 10;

/// A scene's flat arrays on the device (see the module docs).
pub struct DeviceScene {
    arrays: Vec<DeviceBuffer>,
    pub(crate) camera: FlatCamera,
    pub(crate) film: FlatFilm,
    pub(crate) integrator: FlatIntegrator,
    pub(crate) node_count: u32,
    pub(crate) emitter_count: u32,
    pub(crate) env_count: u32,
    pub(crate) unit_prims: Vec<FlatUnitPrim>,
    pub(crate) basis: FeatureBasis,
    /// The camera and film records in device memory (the depth kernel reads them there).
    records: DeviceBuffer,
    image_offsets: Vec<u32>,
    /// Each BSDF's kind and where its record lies in `bsdf_data`.
    bsdf_refs: Vec<FlatBsdf>,
    /// Each texture's kind and where its record lies in `tex_data`.
    tex_refs: Vec<RecordRef>,
    /// Each emitter's kind and where its record lies in `emitter_data`.
    emitter_refs: Vec<RecordRef>,
    /// The flat 2D distributions (an environment map's record holds its own).
    dist2d: Vec<FlatDist2D>,
    version: u64,
    ordinal: usize,
}

impl std::fmt::Debug for DeviceScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes: usize = self.arrays.iter().map(|a| a.bytes()).sum();
        write!(
            f,
            "DeviceScene({bytes} bytes on cuda:{}, version {})",
            self.ordinal, self.version
        )
    }
}

impl DeviceScene {
    /// The device address of scene array `name`.
    pub(crate) fn ptr(&self, name: &str) -> u64 {
        self.arrays[slot(name)].ptr()
    }

    /// The device address of the camera record (then the film record at [`FILM_RECORD_AT`]).
    pub(crate) fn records_ptr(&self) -> u64 {
        self.records.ptr()
    }

    /// The film record for a render of `spp` (effective) samples per pixel.
    pub(crate) fn film_with_count(&self, spp: u32) -> FlatFilm {
        let mut f = self.film;
        f.sampler.sample_count = spp;
        f
    }

    /// The version of the scene (`LoadedScene::version`) it mirrors.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Bytes of device memory held.
    pub fn bytes(&self) -> usize {
        self.arrays.iter().map(|a| a.bytes()).sum::<usize>() + self.records.bytes()
    }

    /// The plugin set of the module that renders this scene with brute force up to
    /// `brute_max` unit records.
    pub(crate) fn features(&self, brute_max: usize) -> Features {
        Features::from_basis(&self.basis, brute_max)
    }

    /// A brute-force module's `UnitPrims` kernel parameter for `features`, as words.
    pub(crate) fn unit_words(&self, features: &Features) -> Result<Vec<u32>> {
        if !features.brute_force {
            return Ok(Vec::new());
        }
        unit_prims::kernel_param(&self.unit_prims, features.unit_cap as usize).ok_or(Error::Cuda(
            CudaError::UnitRecords {
                records: self.unit_prims.len(),
                cap: features.unit_cap,
            },
        ))
    }
}

impl CudaBackend {
    /// Uploads `scene` (at `version`) into a new device scene, on the render stream.
    pub fn upload_scene(&self, setup: &RenderSetup, version: u64) -> Result<DeviceScene> {
        guarded("uploading a scene", || {
            let flat = FlatScene::from_scene(setup)?;
            let mut arrays = Vec::with_capacity(SCENE_ARRAYS.len());
            let named = flat.render_arrays();
            for name in SCENE_ARRAYS {
                let bytes = named
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, b)| *b)
                    .ok_or_else(|| Error::Cuda(CudaError::MissingArray { name: name.into() }))?;
                arrays.push(self.upload_array(name, bytes)?);
            }
            let records = self
                .pool
                .alloc(RECORDS_BYTES, &self.stream, "the camera and film")?;
            let mut s = DeviceScene {
                arrays,
                camera: flat.camera,
                film: flat.film,
                integrator: flat.integrator,
                node_count: flat.nodes.len() as u32,
                emitter_count: flat.emitters.len() as u32,
                env_count: flat.env_emitters.len() as u32,
                unit_prims: flat.unit_prims.clone(),
                basis: FeatureBasis::of(&flat),
                records,
                image_offsets: flat.image_offsets.clone(),
                bsdf_refs: flat.bsdfs.clone(),
                tex_refs: flat.textures.clone(),
                emitter_refs: flat.emitters.clone(),
                dist2d: flat.dist2d.clone(),
                version,
                ordinal: self.info.ordinal,
            };
            self.write_records(&mut s)?;
            Ok(s)
        })
    }

    /// A new device buffer holding `bytes` (the first upload: ordinary memory, so a
    /// large scene is never held twice in page-locked memory).
    fn upload_array(&self, name: &str, bytes: &[u8]) -> Result<DeviceBuffer> {
        let buf = self
            .pool
            .alloc(bytes.len(), &self.stream, &format!("the scene's {name}"))?;
        // SAFETY: pageable memory: the driver has copied it when write() returns.
        unsafe { buf.write(0, bytes) }?;
        self.uploaded
            .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(buf)
    }

    fn write_records(&self, s: &mut DeviceScene) -> Result<()> {
        let mut bytes = Vec::with_capacity(RECORDS_BYTES);
        bytes.extend_from_slice(as_bytes(std::slice::from_ref(&s.camera)));
        bytes.extend_from_slice(as_bytes(std::slice::from_ref(&s.film)));
        self.write_array(&s.records, 0, &bytes)
    }

    /// Applies an update's `changes` (the scene is now `scene`, at `version`): patches
    /// the records, texel ranges and arrays that changed, on the render stream.
    pub fn update_scene(
        &self,
        s: &mut DeviceScene,
        setup: &RenderSetup,
        changes: &Changes,
        version: u64,
    ) -> Result<()> {
        guarded("updating a scene on the device", || {
            if changes.geometry || !changes.dists.is_empty() {
                self.replace_arrays(s, setup, &SCENE_ARRAYS)?;
            } else if changes.refit {
                // records may have changed in the same update
                self.patch_records(s, setup, changes)?;
                self.replace_arrays(s, setup, &REFIT_ARRAYS)?;
            } else {
                self.patch_records(s, setup, changes)?;
            }
            for c in &changes.images {
                self.patch_image(s, setup, c.image, &c.data)?;
            }
            if changes.sensor {
                s.camera = flatten_camera(&setup.sensor.camera);
                s.film = flatten_film(&setup.sensor.film, &setup.sensor.sampler);
                self.write_records(s)?;
            }
            s.version = version;
            Ok(())
        })
    }

    /// Enqueues the render of `s` seen through `sensor` and rendered by `integrator` in
    /// place of the scene's own (Mitsuba's `render(scene, sensor=, integrator=)`); a
    /// swapped sensor brings its sample count. The records a render takes by value are
    /// swapped for this render only; the camera and film records in device memory (the
    /// depth kernel reads them there) are rewritten in stream order before the render
    /// and restored after it, so renders queued before and after see the scene's own.
    pub fn render_scene_as(
        &self,
        s: &mut DeviceScene,
        sensor: Option<&Sensor>,
        integrator: Option<&AnyIntegrator>,
        opts: &RenderOptions,
        scene_spp: u32,
    ) -> Result<CudaFilm> {
        let saved = (s.camera, s.film, s.integrator, s.basis);
        let mut spp = scene_spp;
        if let Some(x) = sensor {
            s.camera = flatten_camera(&x.camera);
            s.film = flatten_film(&x.film, &x.sampler);
            spp = x.sampler.sample_count;
        }
        if let Some(i) = integrator {
            s.integrator = flatten_integrator(i);
        }
        s.basis = s.basis.with_frame(&s.integrator, &s.film);
        let film = guarded("writing a swapped camera and film", || {
            self.write_records(s)
        })
        .and_then(|()| self.render_scene(s, opts, spp));
        (s.camera, s.film, s.integrator, s.basis) = saved;
        let restored = guarded("restoring the scene's camera and film", || {
            self.write_records(s)
        });
        let film = film?;
        restored?;
        Ok(film)
    }

    /// Texture, BSDF and emitter records, each written where it lives.
    fn patch_records(
        &self,
        s: &mut DeviceScene,
        setup: &RenderSetup,
        changes: &Changes,
    ) -> Result<()> {
        let tex_at = RecordCtx::of(&setup.scene.textures, &s.image_offsets);
        for &t in &changes.textures {
            // an update rebuilds a texture with its plugin: same kind, same slot
            let (tex, at) = (
                &setup.scene.textures.records[t as usize],
                s.tex_refs[t as usize],
            );
            if tex.tag() != at.kind {
                return Err(Error::Cuda(CudaError::Internal(format!(
                    "texture {t} changed its kind from {} to {} in an update",
                    at.kind,
                    tex.tag()
                ))));
            }
            let words = tex.record_words(&tex_at);
            let at = at.offset as usize * 4;
            self.write_array(&s.arrays[slot("tex_data")], at, as_bytes(&words))?;
        }
        for &b in &changes.bsdfs {
            // an update rebuilds a BSDF with its plugin: same kind, same slot
            let (bsdf, at) = (&setup.scene.bsdfs[b as usize], s.bsdf_refs[b as usize]);
            if bsdf.tag() != at.kind {
                return Err(Error::Cuda(CudaError::Internal(format!(
                    "BSDF {b} changed its kind from {} to {} in an update",
                    at.kind,
                    bsdf.tag()
                ))));
            }
            let words = bsdf.record_words(&s.bsdf_refs);
            let at = at.offset as usize * 4;
            self.write_array(&s.arrays[slot("bsdf_data")], at, as_bytes(&words))?;
        }
        for &e in &changes.emitters {
            // an update rebuilds an emitter with its plugin: same kind, same slot
            let (emitter, at) = (
                &setup.scene.emitters[e as usize],
                s.emitter_refs[e as usize],
            );
            if emitter.tag() != at.kind {
                return Err(Error::Cuda(CudaError::Internal(format!(
                    "emitter {e} changed its kind from {} to {} in an update",
                    at.kind,
                    emitter.tag()
                ))));
            }
            let ctx = EmitterRecordCtx {
                image_offsets: &s.image_offsets,
                dist2d: &s.dist2d,
            };
            let words = emitter.record_words(&ctx);
            let at = at.offset as usize * 4;
            self.write_array(&s.arrays[slot("emitter_data")], at, as_bytes(&words))?;
        }
        Ok(())
    }

    /// The arrays `names` but the texels, from a new flattening (geometry or sampling
    /// distributions changed): written in place where the size is the same, else
    /// reallocated (the old buffer is freed after the renders that read it).
    fn replace_arrays(
        &self,
        s: &mut DeviceScene,
        setup: &RenderSetup,
        names: &[&str],
    ) -> Result<()> {
        let flat = FlatScene::from_scene_with(setup, false)?;
        for (name, bytes) in flat.render_arrays() {
            if name == "texels" || !names.contains(&name) {
                continue;
            }
            let buf = &mut s.arrays[slot(name)];
            if buf.bytes() == bytes.len() {
                self.write_array(buf, 0, bytes)?;
            } else {
                *buf = self.upload_array(name, bytes)?;
            }
        }
        s.node_count = flat.nodes.len() as u32;
        s.unit_prims = flat.unit_prims.clone();
        s.basis = FeatureBasis::of(&flat);
        s.bsdf_refs = flat.bsdfs.clone();
        s.tex_refs = flat.textures.clone();
        s.emitter_refs = flat.emitters.clone();
        s.dist2d = flat.dist2d.clone();
        s.camera = flat.camera;
        s.film = flat.film;
        self.write_records(s)
    }

    /// Writes `bytes` at `at`: through page-locked staging when large (an asynchronous
    /// DMA: the host never waits for queued renders), directly when small.
    fn write_array(&self, buf: &DeviceBuffer, at: usize, bytes: &[u8]) -> Result<()> {
        self.uploaded
            .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
        if bytes.len() <= STAGE_OVER {
            // SAFETY: pageable memory, copied before write() returns.
            return unsafe { buf.write(at, bytes) };
        }
        let mut lease = self.readers.staging.lease(bytes.len())?;
        lease.as_mut_slice().copy_from_slice(bytes);
        // SAFETY: the staging buffer stays leased until the DMA's event below completed.
        unsafe { buf.write(at, lease.as_slice()) }?;
        lease.release_after(Event::recorded(&self.ctx, buf.stream().cu_stream())?);
        Ok(())
    }

    /// Image `image`'s texel range from `data`: host values through staging, an
    /// imported device tensor device to device.
    fn patch_image(
        &self,
        s: &DeviceScene,
        setup: &RenderSetup,
        image: u32,
        data: &TensorData,
    ) -> Result<()> {
        let i = image as usize;
        let at = *s
            .image_offsets
            .get(i)
            .ok_or_else(|| Error::Cuda(CudaError::Internal(format!("no image {image}"))))?
            as usize
            * 4;
        let len = setup.scene.textures.images[i].data.len();
        let texels = &s.arrays[slot("texels")];
        match data {
            TensorData::Host(p) => {
                if p.data.len() != len {
                    return Err(size_error(image, len, p.data.len()));
                }
                self.write_array(texels, at, as_bytes(&p.data))
            }
            TensorData::Device(d) => {
                let t = d
                    .as_any()
                    .downcast_ref::<DeviceTensor>()
                    .ok_or(Error::Cuda(CudaError::ForeignValues))?;
                if t.len() != len {
                    return Err(size_error(image, len, t.len()));
                }
                if t.ordinal() != s.ordinal {
                    return Err(Error::Cuda(CudaError::TextureDevice {
                        texture: t.ordinal(),
                        scene: s.ordinal,
                    }));
                }
                // the tensor's writes (its import) come first; its memory is freed on
                // this stream after the copy, whenever the tensor is dropped
                t.order_stream(texels.stream().cu_stream() as usize)?;
                // SAFETY: the tensor holds len floats and lives until the copy ran
                // (stream-ordered free); the range lies in the texels (checked in copy).
                unsafe { texels.copy_from_device(at, t.device_ptr(), len * 4) }
            }
        }
    }
}

fn size_error(image: u32, want: usize, got: usize) -> Error {
    Error::Cuda(CudaError::Internal(format!(
        "image {image} holds {want} values, the update {got}"
    )))
}

// The Python binding keeps a scene's device copy next to it, shared across threads.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<DeviceScene>();
};
