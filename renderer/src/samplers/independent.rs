//! `independent`: independent uniform random numbers, as Mitsuba's. Each (pixel, sample
//! index) pair draws from a PCG32 stream of its own, so the image does not depend on
//! which thread or wave renders which sample.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `sample_count` | integer | 4 | samples per pixel (any count) |
//! | `seed` | integer | 0 | added to the render's seed |
//!
//! ```xml
//! <sampler type="independent"><integer name="sample_count" value="64"/></sampler>
//! ```

use super::SampleRng;
use crate::math::Vec2;

/// No strata to jitter within.
pub const HAS_JITTER: bool = false;

/// Every count works as it is.
pub fn effective_count(spp: u32) -> u64 {
    u64::from(spp)
}

/// A uniform float in `[0,1)`.
#[inline]
pub fn next_1d(r: &mut SampleRng) -> f32 {
    r.dim = r.dim.wrapping_add(1);
    r.pcg.next_f32()
}

/// Two uniform floats.
#[inline]
pub fn next_2d(r: &mut SampleRng) -> Vec2 {
    r.dim = r.dim.wrapping_add(1);
    let x = r.pcg.next_f32();
    Vec2::new(x, r.pcg.next_f32())
}
