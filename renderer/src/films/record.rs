//! The record the kernels read of the film, its reconstruction filter and the sensor's
//! sampler ([`FlatFilm`], twin of `FlatFilm` in `kernels/flat.cuh`).

use std::mem::size_of;

use crate::plugin::record::Pod;
use crate::rfilters::AnyFilter;
use crate::samplers::FlatSampler;

/// `FlatFilm::filter` of a box filter.
pub const FILTER_BOX: u32 = 0;
/// `FlatFilm::filter` of a tent filter.
pub const FILTER_TENT: u32 = 1;
/// `FlatFilm::filter` of a gaussian filter.
pub const FILTER_GAUSSIAN: u32 = 2;

/// Film geometry, reconstruction filter and the sensor's sampler (64 bytes): every
/// kernel that starts samples already takes the film record, so the sampler travels
/// with it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatFilm {
    /// Full film width.
    pub width: u32,
    /// Full film height.
    pub height: u32,
    /// Crop window origin (x, y).
    pub crop_offset: [u32; 2],
    /// Crop window size (x, y): the rendered image size.
    pub crop_size: [u32; 2],
    /// 1 when an alpha channel is written.
    pub alpha: u32,
    /// `FILTER_*`.
    pub filter: u32,
    /// Filter support radius in pixels.
    pub filter_radius: f32,
    /// Gaussian standard deviation (0 for other filters).
    pub filter_stddev: f32,
    /// The constant of the GPU's closed-form sample placement (kernels/film.cuh): `1 /
    /// radius` for a tent, `a radius²` with `a = -1 / (2 stddev²)` for a gaussian (the
    /// exponent of its truncation offset, about -8), 0 for a box.
    pub filter_k: f32,
    /// Padding to 48 bytes (the sampler record starts 16-byte aligned).
    pub pad: u32,
    /// The sensor's sampler; its `sample_count` is rewritten per render with the
    /// render's effective sample count.
    pub sampler: FlatSampler,
}

// SAFETY: #[repr(C)], made of u32/f32 (arrays) only, and its size equals the sum of its
// fields (asserted by the layout table's macro, `crate::flat::LAYOUT`).
unsafe impl Pod for FlatFilm {}

// Size fixed by the CUDA twin.
const _: () = assert!(size_of::<FlatFilm>() == 64);

/// Flattens the film, its filter and the sensor's `sampler`.
pub fn flatten_film(film: &crate::films::Film, sampler: &crate::samplers::Sampler) -> FlatFilm {
    let (filter, filter_radius, filter_stddev, filter_k) = match film.rfilter {
        AnyFilter::Box { radius } => (FILTER_BOX, radius, 0.0, 0.0),
        AnyFilter::Tent { radius } => (FILTER_TENT, radius, 0.0, (1.0 / f64::from(radius)) as f32),
        AnyFilter::Gaussian { stddev, radius } => {
            let ratio = f64::from(radius) / f64::from(stddev);
            (
                FILTER_GAUSSIAN,
                radius,
                stddev,
                (-0.5 * ratio * ratio) as f32,
            )
        }
    };
    FlatFilm {
        width: film.width,
        height: film.height,
        crop_offset: film.crop_offset,
        crop_size: film.crop_size,
        alpha: u32::from(film.alpha),
        filter,
        filter_radius,
        filter_stddev,
        filter_k,
        pad: 0,
        sampler: sampler.flat(sampler.sample_count),
    }
}
