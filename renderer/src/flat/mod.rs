//! The flat scene: `#[repr(C)]` plain-old-data records and arrays that a GPU
//! kernel reads directly.
//!
//! Every record here has a CUDA C twin in `renderer/kernels/flat.cuh` with the same
//! size and field offsets. Three checks keep them in step:
//!
//! 1. Rust `const` asserts below (sizes, and "no implicit padding": the size equals
//!    the sum of the field sizes, so a record can be viewed as bytes soundly);
//! 2. `flat.cuh` lists every (record, field, offset) in its `HG_LAYOUT` X-macro and
//!    turns each entry into a `static_assert` (checked by NVRTC at every compile);
//!    a CPU unit test here parses that list and compares it with [`LAYOUT`]
//!    (computed by `offset_of!`), so the numbers in the header cannot go stale;
//! 3. a GPU kernel (`hg_layout_table`) writes the offsets NVRTC actually used, and
//!    the GPU test compares them with [`LAYOUT`] entry by entry.
//!
//! What is flattened and why:
//!
//! * BVH nodes: the CPU's 32-byte one-box nodes become 64-byte two-box nodes
//!   ([`FlatBvhNode`], [`bvh`]), so the GPU fetches one node per visited interior node;
//!   leaf primitives ([`LeafPrim`], 48 bytes, triangles inlined in leaf order) are
//!   already POD without padding: uploaded as-is. Scenes of a few primitives also get
//!   each primitive (or parallelogram pair of triangles) as an affine map into a unit
//!   shape ([`FlatUnitPrim`], [`unit_prims`]), for the GPU's brute-force test.
//! * Primitives ([`Prim`]: shape, triangle) are POD: uploaded as-is.
//! * Shape groups ([`instances`]): each group's tree, primitives and mesh data are
//!   appended once after the scene's own, in the same arrays; an instance is a shape
//!   record of kind [`INSTANCE`](crate::shapes::tag::INSTANCE) naming its group's tree (two-level traversal).
//! * Shapes: each shape's [`FlatShape`] ([`crate::shapes::record`]).
//! * Mesh attributes: `glam::Vec3` is `#[repr(C)]` 12 bytes, but flattened to
//!   `[f32; 3]` / `[f32; 2]` / `[u32; 3]` so the layout does not depend on glam.
//! * Camera, film + filter, integrator: their categories' records, [`FlatCamera`]
//!   ([`crate::sensors::record`]), [`FlatFilm`] ([`crate::films::record`]) and
//!   [`FlatIntegrator`] ([`crate::integrators::record`]).
//! * BSDFs: each plugin's own `#[repr(C)]` record (`bsdfs/<name>.rs`, checked against
//!   its CUDA twin by the registry), one after another in the word array `bsdf_data`
//!   (16-byte slots, handle order), and a [`RecordRef`] `{kind, offset}` per BSDF in
//!   `bsdfs` ([`crate::bsdfs::registry::flatten`]).
//! * Textures: as BSDFs, each plugin's own record (`textures/<name>.rs`) in the word
//!   array `tex_data` and a [`RecordRef`] per texture in `textures`
//!   ([`crate::textures::registry::flatten`]); a bitmap's record says where its image
//!   starts in `texels`, every image one after another.
//! * Emitters: as BSDFs, each plugin's own record (`emitters/<name>.rs`) in the word
//!   array `emitter_data` and a [`RecordRef`] per emitter in `emitters`
//!   ([`crate::emitters::registry::flatten`]); an environment map's record holds where
//!   its texels and its sampling distribution lie in the arrays below.
//! * Sampling distributions (`Distribution1D/2D`, [`materials`]): records of offsets and
//!   sizes, with their arrays in a side array of floats.

use std::mem::{offset_of, size_of};

use crate::accel::LeafPrim;
use crate::error::Result;
use crate::films::record::{flatten_film, FlatFilm};
use crate::integrators::record::{flatten_integrator, FlatIntegrator};
use crate::scene::RenderSetup;
use crate::sensors::record::{flatten_camera, FlatCamera};
use crate::shapes::record::{flatten_shape, FlatShape};
use crate::shapes::tag::MESH as SHAPE_MESH;
use crate::shapes::Prim;

pub use crate::samplers::FlatSampler;

/// Everything a kernel needs, as flat arrays and records.
#[derive(Clone, Debug, Default)]
pub struct FlatScene {
    /// GPU BVH nodes (two-box; node 0 is the header, see [`bvh`]; empty for an empty scene).
    pub nodes: Vec<FlatBvhNode>,
    /// Leaf primitives in leaf order, triangles inlined.
    pub leaf_prims: Vec<LeafPrim>,
    /// The leaf slots as unit-shape maps (a parallelogram pair of triangles one) for the
    /// brute-force test of small scenes (empty past [`unit_prims::UNIT_PRIMS_MAX`]
    /// primitives).
    pub unit_prims: Vec<FlatUnitPrim>,
    /// BVH primitives (shape, triangle).
    pub prims: Vec<Prim>,
    /// Shapes.
    pub shapes: Vec<FlatShape>,
    /// Mesh vertex positions (world space).
    pub positions: Vec<[f32; 3]>,
    /// Mesh vertex normals (empty, or parallel to `positions`).
    pub normals: Vec<[f32; 3]>,
    /// Mesh texture coordinates (empty, or parallel to `positions`).
    pub uvs: Vec<[f32; 2]>,
    /// Triangles as absolute vertex indices.
    pub tris: Vec<[u32; 3]>,
    /// The camera.
    pub camera: FlatCamera,
    /// Film and filter.
    pub film: FlatFilm,
    /// Integrator settings.
    pub integrator: FlatIntegrator,
    /// Each BSDF's kind and where its record starts in `bsdf_data`.
    pub bsdfs: Vec<FlatBsdf>,
    /// The BSDF records, in handle order, each in a 16-byte slot.
    pub bsdf_data: Vec<u32>,
    /// Each texture's kind and where its record starts in `tex_data`.
    pub textures: Vec<RecordRef>,
    /// The texture records, in handle order, each in a 16-byte slot.
    pub tex_data: Vec<u32>,
    /// Texels of every bitmap and envmap, image after image.
    pub texels: Vec<f32>,
    /// Where each image of the texture store starts in `texels`.
    pub image_offsets: Vec<u32>,
    /// The mesh attribute lookup table and values ([`crate::textures::AttributeTable`]).
    pub attrs: Vec<f32>,
    /// Each emitter's kind and where its record starts in `emitter_data`.
    pub emitters: Vec<RecordRef>,
    /// The emitter records, in handle order, each in a 16-byte slot.
    pub emitter_data: Vec<u32>,
    /// Indices of the environment emitters (evaluated on escape).
    pub env_emitters: Vec<u32>,
    /// 1D distributions (mesh areas, envmap rows and marginals).
    pub dist1d: Vec<FlatDist1D>,
    /// 2D distributions (envmaps), in `Scene::dists2d` order.
    pub dist2d: Vec<FlatDist2D>,
    /// The floats the distributions point into.
    pub dist_data: Vec<f32>,
    /// The scene's bounding sphere: centre x, y, z and radius.
    pub bsphere: [f32; 4],
    /// The depth of the BVH's deepest leaf (the root is at depth 0): the traversal
    /// stack never holds more entries (kernels/geometry.cuh).
    pub bvh_depth: u32,
    /// The deepest stack of adapter BSDFs (`mask` around `twosided` is 2): the levels
    /// the kernels' BSDF dispatch must reach.
    pub bsdf_depth: u32,
}

impl FlatScene {
    /// Flattens a built scene: geometry, BVH, camera, film, integrator, materials,
    /// textures, emitters and sampling distributions; an error when the BVH does not
    /// fit the GPU's traversal (see [`flatten_bvh`]).
    pub fn from_scene(setup: &RenderSetup) -> Result<FlatScene> {
        Self::from_scene_with(setup, true)
    }

    /// As [`Self::from_scene`]; without `texels` the texel array stays empty (the
    /// image offsets are still computed): for backends that already hold the texels.
    pub fn from_scene_with(setup: &RenderSetup, texels: bool) -> Result<FlatScene> {
        let g = &setup.scene.geom;
        let (mut dist1d, mut dist_data) = (Vec::new(), Vec::new());
        let mut shapes: Vec<FlatShape> = g.shapes.iter().map(flatten_shape).collect();
        for (s, d) in shapes.iter_mut().zip(&g.area_dists) {
            s.area_dist = if s.kind == SHAPE_MESH && !d.is_empty() {
                push_dist1d(d, &mut dist1d, &mut dist_data)
            } else {
                u32::MAX
            };
        }
        let dist2d: Vec<FlatDist2D> = setup
            .scene
            .dists2d
            .iter()
            .map(|d| flatten_dist2d(d, &mut dist1d, &mut dist_data))
            .collect();
        let (bsdfs, bsdf_data) = crate::bsdfs::registry::flatten(&setup.scene.bsdfs);
        let (texels, image_offsets) = if texels {
            concat_images(&setup.scene.textures.images)?
        } else {
            (Vec::new(), image_offsets(&setup.scene.textures.images)?)
        };
        let offsets = &image_offsets;
        let (textures, tex_data) =
            crate::textures::registry::flatten(&setup.scene.textures, offsets);
        let at = crate::emitters::registry::RecordCtx {
            image_offsets: offsets,
            dist2d: &dist2d,
        };
        let (emitters, emitter_data) =
            crate::emitters::registry::flatten(&setup.scene.emitters, &at);
        let mut flat = FlatScene {
            bsdfs,
            bsdf_data: bsdf_data.words,
            textures,
            tex_data: tex_data.words,
            attrs: setup.scene.textures.attributes.words.clone(),
            emitters,
            emitter_data: emitter_data.words,
            texels,
            image_offsets,
            env_emitters: setup.scene.env_emitters.clone(),
            dist1d,
            dist2d,
            dist_data,
            nodes: flatten_bvh(&setup.scene.bvh)?,
            bvh_depth: bvh::bvh_depth(&setup.scene.bvh.nodes)?,
            bsdf_depth: crate::bsdfs::registry::max_adapter_depth(&setup.scene.bsdfs),
            leaf_prims: setup.scene.bvh.leaf_prims.clone(),
            unit_prims: unit_prims::unit_prims(
                &setup.scene.bvh.leaf_prims,
                &shapes,
                g.shapes.iter().any(|s| s.geom.walks_bvh()),
            ),
            prims: g.prims.clone(),
            shapes,
            positions: g.mesh.positions.iter().map(|p| p.to_array()).collect(),
            normals: g.mesh.normals.iter().map(|n| n.to_array()).collect(),
            uvs: g.mesh.uvs.iter().map(|t| t.to_array()).collect(),
            tris: g.mesh.tris.clone(),
            camera: flatten_camera(&setup.sensor.camera),
            film: flatten_film(&setup.sensor.film, &setup.sensor.sampler),
            integrator: flatten_integrator(&setup.integrator),
            bsphere: [
                setup.scene.bsphere.0.x,
                setup.scene.bsphere.0.y,
                setup.scene.bsphere.0.z,
                setup.scene.bsphere.1,
            ],
        };
        let attr_slots = setup.scene.textures.attributes.names.len();
        instances::append_groups(g, attr_slots, &mut flat)?;
        Ok(flat)
    }
}

/// The images one after another, and where each starts; an error past the 2^32
/// values a kernel indexes.
pub fn concat_images(
    images: &[std::sync::Arc<crate::desc::PixelArray>],
) -> Result<(Vec<f32>, Vec<u32>)> {
    let offsets = image_offsets(images)?;
    let total: usize = images.iter().map(|i| i.data.len()).sum();
    let mut texels = Vec::with_capacity(total);
    for img in images {
        texels.extend_from_slice(&img.data);
    }
    Ok((texels, offsets))
}

/// Where each image starts when the images are laid one after another; an error past
/// the 2^32 values a kernel indexes.
pub fn image_offsets(images: &[std::sync::Arc<crate::desc::PixelArray>]) -> Result<Vec<u32>> {
    let mut offsets = Vec::with_capacity(images.len());
    let mut total = 0usize;
    for img in images {
        offsets.push(total as u32);
        total += img.data.len();
        if total > u32::MAX as usize {
            return Err(crate::error::Error::Render(format!(
                "the scene's images hold more than the 2^32 - 1 values the kernels index \
                 ({total} and counting)"
            )));
        }
    }
    Ok(offsets)
}

impl FlatScene {
    /// Every array the `direct`/`path` kernels read, by name, as bytes (the upload;
    /// the host tests write each to `<name>.bin`).
    pub fn render_arrays(&self) -> Vec<(&'static str, &[u8])> {
        vec![
            ("camera", as_bytes(std::slice::from_ref(&self.camera))),
            ("film", as_bytes(std::slice::from_ref(&self.film))),
            (
                "integrator",
                as_bytes(std::slice::from_ref(&self.integrator)),
            ),
            ("nodes", as_bytes(&self.nodes)),
            ("leaf", as_bytes(&self.leaf_prims)),
            ("unit", as_bytes(&self.unit_prims)),
            ("prims", as_bytes(&self.prims)),
            ("shapes", as_bytes(&self.shapes)),
            ("positions", as_bytes(&self.positions)),
            ("normals", as_bytes(&self.normals)),
            ("uvs", as_bytes(&self.uvs)),
            ("tris", as_bytes(&self.tris)),
            ("bsdfs", as_bytes(&self.bsdfs)),
            ("bsdf_data", as_bytes(&self.bsdf_data)),
            ("textures", as_bytes(&self.textures)),
            ("texels", as_bytes(&self.texels)),
            ("attrs", as_bytes(&self.attrs)),
            ("emitters", as_bytes(&self.emitters)),
            ("emitter_data", as_bytes(&self.emitter_data)),
            ("env", as_bytes(&self.env_emitters)),
            ("dist1d", as_bytes(&self.dist1d)),
            ("dist2d", as_bytes(&self.dist2d)),
            ("dist_data", as_bytes(&self.dist_data)),
            ("bsphere", as_bytes(&self.bsphere)),
            ("tex_data", as_bytes(&self.tex_data)),
        ]
    }
}

/// A 128-bit hash of `bytes` (two independent multiply-xorshift lanes over 8-byte
/// words, then the tail and the length): the CUDA backend re-uploads a flat array only
/// when its hash or length changes.
pub fn content_hash(bytes: &[u8]) -> u128 {
    const K: [u64; 2] = [0x9e37_79b9_7f4a_7c15, 0xc2b2_ae3d_27d4_eb4f];
    let mut h = [0x243f_6a88_85a3_08d3u64, 0x1319_8a2e_0370_7344u64];
    let mix = |h: u64, w: u64, k: u64| {
        let x = (h ^ w).wrapping_mul(k);
        x ^ (x >> 29)
    };
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        let w = u64::from_le_bytes(a);
        h[0] = mix(h[0], w, K[0]);
        h[1] = mix(h[1], w.rotate_left(31), K[1]);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    let w = u64::from_le_bytes(tail) ^ ((bytes.len() as u64) << 3);
    h[0] = mix(mix(h[0], w, K[0]), h[1], K[1]);
    h[1] = mix(mix(h[1], w.rotate_left(17), K[1]), h[0], K[0]);
    (u128::from(h[0]) << 64) | u128::from(h[1])
}

pub use crate::plugin::record::{as_bytes, Pod, RecordRef};

// SAFETY: each type below is #[repr(C)], made of u32/f32 (arrays) only, and its
// size equals the sum of its fields (asserted by the layout table's macro).
unsafe impl Pod for FlatSampler {}
unsafe impl Pod for FlatBvhNode {}
unsafe impl Pod for LeafPrim {}
unsafe impl Pod for FlatUnitPrim {}
unsafe impl Pod for Prim {}
unsafe impl Pod for FlatDist1D {}
unsafe impl Pod for FlatDist2D {}

pub mod bvh;
pub mod instances;
mod layout;
pub use bvh::{flatten_bvh, FlatBvhNode};
pub mod unit_prims;
pub use unit_prims::FlatUnitPrim;
pub mod materials;
pub use crate::plugin::record::LayoutEntry;
pub use layout::{plugin_layout, LAYOUT};
use materials::{flatten_dist2d, push_dist1d};
pub use materials::{FlatBsdf, FlatDist1D, FlatDist2D};

// Sizes fixed by the CUDA twins (no implicit padding is asserted by `LAYOUT`'s macro).
const _: () = assert!(size_of::<FlatSampler>() == 16);
const _: () = assert!(size_of::<FlatBsdf>() == 8 && size_of::<FlatDist1D>() == 16);
const _: () = assert!(size_of::<Prim>() == 8 && size_of::<LeafPrim>() == 48);
const _: () = assert!(size_of::<FlatUnitPrim>() == 64);
const _: () = assert!(size_of::<FlatBvhNode>() == 64 && offset_of!(FlatBvhNode, b_min) == 32);

#[cfg(test)]
mod tests;
