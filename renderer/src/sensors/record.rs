//! The record the kernels read of the sensor's camera ([`FlatCamera`], twin of
//! `FlatCamera` in `kernels/flat.cuh`; the origin is precomputed on the CPU,
//! bit-identical to `Transform::point`).

use std::mem::{offset_of, size_of};

use crate::plugin::record::Pod;

/// The camera (80 bytes; [`crate::sensors::camera`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatCamera {
    /// Camera origin in world space (`to_world.point(0)`).
    pub origin: [f32; 3],
    /// tan(x_fov / 2).
    pub tan_half_x: f32,
    /// The linear part of camera-to-world, column-major 3×3.
    pub lin: [f32; 9],
    /// Full film aspect ratio (width / height).
    pub aspect: f32,
    /// Near clip distance.
    pub near_clip: f32,
    /// Far clip distance.
    pub far_clip: f32,
    /// `sensors::camera::CAMERA_*`.
    pub kind: u32,
    /// Thin lens: aperture radius.
    pub aperture_radius: f32,
    /// Thin lens: distance of the plane in focus.
    pub focus_distance: f32,
    /// Padding to 80 bytes.
    pub pad: u32,
}

// SAFETY: #[repr(C)], made of u32/f32 (arrays) only, and its size equals the sum of its
// fields (asserted by the layout table's macro, `crate::flat::LAYOUT`).
unsafe impl Pod for FlatCamera {}

// Sizes fixed by the CUDA twin.
const _: () = assert!(size_of::<FlatCamera>() == 80);
const _: () = assert!(offset_of!(FlatCamera, lin) == 16);

/// Flattens the camera.
pub fn flatten_camera(cam: &crate::sensors::Camera) -> FlatCamera {
    let m = glam::Mat3::from_mat4(cam.to_world.m);
    FlatCamera {
        origin: cam.to_world.point(glam::Vec3::ZERO).to_array(),
        tan_half_x: cam.tan_half_x,
        lin: m.to_cols_array(),
        aspect: cam.aspect,
        near_clip: cam.near_clip,
        far_clip: cam.far_clip,
        kind: cam.kind,
        aperture_radius: cam.aperture_radius,
        focus_distance: cam.focus_distance,
        pad: 0,
    }
}
