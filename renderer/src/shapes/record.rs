//! The record the kernels read of every shape ([`FlatShape`], twin of `FlatShape` in
//! `kernels/flat.cuh`): `AnyShape` is a Rust enum (no fixed layout) whose analytic
//! variants hold `glam::Affine3A` (16-byte SIMD columns with padding), flattened to
//! explicit float arrays in glam's column order so that the GPU repeats the CPU's
//! arithmetic operation by operation.

use std::mem::{offset_of, size_of};

use glam::Affine3A;

use crate::plugin::record::Pod;

/// `FlatShape::flags` bit: `flip_normals`.
pub const FLAG_FLIP: u32 = 1;
/// `FlatShape::flags` bit: the mesh has vertex normals.
pub const FLAG_NORMALS: u32 = 2;
/// `FlatShape::flags` bit: the mesh has texture coordinates.
pub const FLAG_UVS: u32 = 4;

/// One shape, any kind (160 bytes). Affine maps are column-major 3×4:
/// x axis, y axis, z axis, translation (glam's `Affine3A` order).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatShape {
    /// The tag of its record kind ([`super::tag`]).
    pub kind: u32,
    /// `FLAG_*` bits.
    pub flags: u32,
    /// BSDF handle.
    pub bsdf: u32,
    /// Emitter handle or `NO_EMITTER`.
    pub emitter: u32,
    /// Meshes: first triangle in `FlatScene::tris`. Instances: the header node of
    /// their group's BVH in `FlatScene::nodes` (`flat/instances.rs`).
    pub first_tri: u32,
    /// Meshes: triangle count. Instances: their group's index.
    pub tri_count: u32,
    /// Surface area (world space).
    pub area: f32,
    /// Spheres and cylinders: world radius.
    pub radius: f32,
    /// Spheres: centre.
    pub center: [f32; 3],
    /// Meshes: index of the area distribution over triangles in `FlatScene::dist1d`
    /// (`u32::MAX` for analytic shapes).
    pub area_dist: u32,
    /// Rectangles and disks: the (possibly flipped) unit normal.
    pub normal: [f32; 3],
    /// Padding.
    pub pad1: u32,
    /// Object-to-world map (analytic shapes; cylinders: of the unit cylinder;
    /// instances: group to world).
    pub to_world: [f32; 12],
    /// World-to-object map (analytic shapes; instances: world to group).
    pub to_local: [f32; 12],
}

// SAFETY: #[repr(C)], made of u32/f32 (arrays) only, and its size equals the sum of its
// fields (asserted by the layout table's macro, `crate::flat::LAYOUT`).
unsafe impl Pod for FlatShape {}

// Sizes fixed by the CUDA twin.
const _: () = assert!(size_of::<FlatShape>() == 160);
const _: () = assert!(offset_of!(FlatShape, to_local) == 112);

/// Column-major 3×4 floats of an affine map (x, y, z axes, translation).
pub(crate) fn affine_cols(a: &Affine3A) -> [f32; 12] {
    let (x, y, z, t) = (
        a.matrix3.x_axis,
        a.matrix3.y_axis,
        a.matrix3.z_axis,
        a.translation,
    );
    [x.x, x.y, x.z, y.x, y.y, y.z, z.x, z.y, z.z, t.x, t.y, t.z]
}

/// Flattens one shape record.
pub(crate) fn flatten_shape(s: &crate::shapes::Shape) -> FlatShape {
    let mut f = FlatShape {
        kind: s.geom.tag(),
        bsdf: s.bsdf,
        emitter: s.emitter,
        ..FlatShape::default()
    };
    s.geom.flatten(&mut f);
    f
}
