//! `ldsampler`: a scrambled low-discrepancy (0,2)-sequence, as Mitsuba's. The pixel's
//! `n` samples (`n` a power of two) are, in every dimension, the first `n` points of the
//! (0,2)-sequence in base 2 — the van der Corput radical inverse for x and Sobol's second
//! dimension for y — each coordinate scrambled by an XOR with a random value of the pixel
//! (random digit scrambling, which keeps the net property), and visited in a
//! pseudo-random order that differs per dimension (a shuffling network seeded by the
//! pixel and the dimension). So in 2D they form a (0, log2 n, 2)-net: every elementary
//! interval `[a/2^i, (a+1)/2^i) × [b/2^j, (b+1)/2^j)` with `i + j = log2 n` holds exactly
//! one sample; in 1D every interval `[k/n, (k+1)/n)` holds one.
//!
//! `sample_count` must be a square power of two (4, 16, 64, 256, ...): another count is
//! rounded up to the next one (1 renders 4, 10 renders 16, 32 renders 64), with a
//! warning, as Mitsuba does; a render's `spp` override is rounded the same way, and the
//! film averages the effective count. Coordinates have 24 bits (Mitsuba's y has 32
//! before its conversion to float, which can round to 1).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `sample_count` | integer | 4 | samples per pixel, rounded up to 4^k |
//! | `seed` | integer | 0 | added to the render's seed |
//!
//! ```xml
//! <sampler type="ldsampler"><integer name="sample_count" value="64"/></sampler>
//! ```

use super::{ceil_log2, permute_pow2, tea, unit_from_bits, SampleRng};
use crate::math::Vec2;

/// No jitter: the scrambling randomises the points.
pub const HAS_JITTER: bool = false;

/// The smallest `4^k >= spp`, `k >= 1`.
pub fn effective_count(spp: u32) -> u64 {
    let k = ceil_log2(spp).div_ceil(2).max(1);
    1u64 << (2 * k)
}

/// Van der Corput's radical inverse in base 2 of `i`, XOR-scrambled, as 32 bits.
#[inline]
pub fn radical_inverse_bits(i: u32, scramble: u32) -> u32 {
    i.reverse_bits() ^ scramble
}

/// Sobol's second dimension (generator matrix: Pascal's triangle mod 2) of `i`,
/// XOR-scrambled, as 32 bits.
#[inline]
pub fn sobol2_bits(mut i: u32, mut scramble: u32) -> u32 {
    let mut v = 1u32 << 31;
    while i != 0 {
        if i & 1 != 0 {
            scramble ^= v;
        }
        i >>= 1;
        v ^= v >> 1;
    }
    scramble
}

/// The shuffled sample's radical inverse.
#[inline]
pub fn next_1d(r: &mut SampleRng) -> f32 {
    let seed = r.next_dim_seed();
    let i = permute_pow2(r.index, r.count, seed);
    let scramble = tea(r.pixel_seed, 0x48bc48eb, 4).0;
    unit_from_bits(radical_inverse_bits(i, scramble))
}

/// The shuffled sample's (0,2)-sequence point.
#[inline]
pub fn next_2d(r: &mut SampleRng) -> Vec2 {
    let seed = r.next_dim_seed();
    let i = permute_pow2(r.index, r.count, seed);
    let (sx, sy) = tea(r.pixel_seed, 0x98bc51ab, 4);
    Vec2::new(
        unit_from_bits(radical_inverse_bits(i, sx)),
        unit_from_bits(sobol2_bits(i, sy)),
    )
}
