//! `stratified`: stratified samples, as Mitsuba's. For every dimension the pixel's `n`
//! samples are a pseudo-random permutation (Kensler's hash, seeded by the pixel and the
//! dimension) of the `n` strata: in 1D the intervals `[k/n, (k+1)/n)`, in 2D the cells
//! of a `√n × √n` grid; each sample lies in its stratum at a random offset (`jitter`)
//! or at its centre. So the `n` samples of a pixel put exactly one point in each stratum
//! of each dimension; across dimensions the permutations are independent.
//!
//! `sample_count` must be a perfect square: another count is rounded up to the next
//! square (10 renders 16 samples per pixel), with a warning, as Mitsuba does; a render's
//! `spp` override is rounded the same way, and the film averages the effective count.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `sample_count` | integer | 4 | samples per pixel, rounded up to a square |
//! | `seed` | integer | 0 | added to the render's seed |
//! | `jitter` | boolean | true | random offsets within the strata (else their centres) |
//!
//! ```xml
//! <sampler type="stratified"><integer name="sample_count" value="64"/></sampler>
//! ```

use super::{isqrt, permute_kensler, stratum_point, SampleRng};
use crate::math::Vec2;

/// Offsets within strata are random unless `jitter` is false.
pub const HAS_JITTER: bool = true;

/// The smallest square `>= spp`.
pub fn effective_count(spp: u32) -> u64 {
    let r = grid_resolution(u64::from(spp));
    r * r
}

/// `ceil(sqrt(n))`.
fn grid_resolution(n: u64) -> u64 {
    let r = isqrt(n);
    if r * r < n {
        r + 1
    } else {
        r
    }
}

/// Stratum `permutation(index)` of `n`, offset by the jitter.
#[inline]
pub fn next_1d(r: &mut SampleRng) -> f32 {
    let seed = r.next_dim_seed();
    let p = permute_kensler(r.index, r.count, seed);
    stratum_point(p, r.count, r.jitter24())
}

/// Cell `permutation(index)` of the `√n × √n` grid (row-major), offset by the jitter.
#[inline]
pub fn next_2d(r: &mut SampleRng) -> Vec2 {
    let seed = r.next_dim_seed();
    let p = permute_kensler(r.index, r.count, seed);
    // count is a square (effective_count)
    let res = isqrt(u64::from(r.count)) as u32;
    let (y, x) = (p / res, p % res);
    let jx = r.jitter24();
    let jy = r.jitter24();
    Vec2::new(stratum_point(x, res, jx), stratum_point(y, res, jy))
}
