//! `multijitter`: correlated multi-jittered samples (Kensler, "Correlated Multi-Jittered
//! Sampling", Pixar 2013), as Mitsuba's. In 2D the pixel's `n = nx × ny` samples fill
//! an `nx × ny` grid of cells, one sample per cell, and at the same time the `n` columns
//! and the `n` rows of width `1/n` (the n-rooks property): cell `(cx, cy)` places its
//! sample in column `cx·ny + σy(cy)` and row `cy·nx + σx(cx)`, with σx, σy permutations
//! shared by all cells ("correlated"). The cells are visited in a pseudo-random order,
//! and all three permutations come from Kensler's hash seeded by the pixel and the
//! dimension. In 1D the samples are a permutation of the `n` intervals `[k/n, (k+1)/n)`.
//! Each sample lies at a random offset within its column and row (`jitter`) or at the
//! centre.
//!
//! The grid is `ny = floor(√spp)` rows of `nx = ceil(spp / ny)` cells, as Mitsuba: a
//! count that is not `nx·ny` is rounded up to it (10 renders 12 = 4 × 3 samples), with a
//! warning; a render's `spp` override is rounded the same way, and the film averages the
//! effective count. (A square count keeps a square grid.)
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `sample_count` | integer | 4 | samples per pixel, rounded up to `nx·ny` |
//! | `seed` | integer | 0 | added to the render's seed |
//! | `jitter` | boolean | true | random offsets within the strata (else their centres) |
//!
//! ```xml
//! <sampler type="multijitter"><integer name="sample_count" value="64"/></sampler>
//! ```

use super::{isqrt, permute_kensler, stratum_point, SampleRng};
use crate::math::Vec2;

/// Offsets within strata are random unless `jitter` is false.
pub const HAS_JITTER: bool = true;

/// `nx · ny` for `spp` (see the module doc).
pub fn effective_count(spp: u32) -> u64 {
    let (nx, ny) = grid(u64::from(spp));
    nx * ny
}

/// The grid `(nx, ny)` for `spp` samples; also recovers it from an effective count
/// `n = nx·ny`: `ny² <= n < (ny+1)²` since `ny <= nx <= ny + 2`.
pub fn grid(spp: u64) -> (u64, u64) {
    let ny = isqrt(spp).max(1);
    (spp.div_ceil(ny), ny)
}

/// Interval `permutation(index)` of `n`, offset by the jitter.
#[inline]
pub fn next_1d(r: &mut SampleRng) -> f32 {
    let seed = r.next_dim_seed();
    let p = permute_kensler(r.index, r.count, seed.wrapping_mul(0x45fbe943));
    stratum_point(p, r.count, r.jitter24())
}

/// The cell `permutation(index)`, its column and row from the correlated permutations.
#[inline]
pub fn next_2d(r: &mut SampleRng) -> Vec2 {
    let seed = r.next_dim_seed();
    let n = r.count;
    let (nx, ny) = grid(u64::from(n));
    let (nx, ny) = (nx as u32, ny as u32);
    let s = permute_kensler(r.index, n, seed.wrapping_mul(0x51633e2d));
    let (cy, cx) = (s / nx, s % nx);
    let sx = permute_kensler(cx, nx, seed.wrapping_mul(0x68bc21eb));
    let sy = permute_kensler(cy, ny, seed.wrapping_mul(0x02e5be93));
    let jx = r.jitter24();
    let jy = r.jitter24();
    Vec2::new(
        stratum_point(cx * ny + sy, n, jx),
        stratum_point(cy * nx + sx, n, jy),
    )
}
