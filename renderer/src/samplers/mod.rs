//! Samplers: where each sample path's random numbers come from. Mitsuba 3's
//! `independent`, `stratified`, `multijitter` and `ldsampler`, one file each (the file's
//! doc is the plugin's manual), registered by one line each in the registry below.
//!
//! Every sampler takes these parameters (`jitter` only `stratified` and `multijitter`):
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `sample_count` | integer | 4 | samples per pixel (some samplers round it up: see each) |
//! | `seed` | integer | 0 | added to the render's seed |
//! | `jitter` | boolean | true | random offsets within the strata (else their centres) |
//!
//! ```xml
//! <sampler type="stratified"><integer name="sample_count" value="64"/></sampler>
//! ```
//!
//! A sample is identified by its pixel and its index `0 .. sample_count` in the pixel.
//! [`SampleRng`] holds its state: a PCG32 stream of its own (the `independent` numbers,
//! and the jitter within strata), the sample index, the sample count, the dimension
//! counter (one step per `next_1d`/`next_2d` call) and a seed of its pixel from which
//! the per-dimension permutations of the sample indices are drawn. Nothing depends on
//! which thread renders which sample, so an image is the same whatever the thread count.
//!
//! The sample count a sampler works with is its *effective* count ([`Sampler::effective`]):
//! a count the sampler cannot stratify is rounded up as Mitsuba does (with a warning when
//! the scene is loaded), and a render's `spp` override is rounded the same way; the
//! film's sample count is always the effective one.
//!
//! The CUDA twin is `renderer/kernels/samplers.cuh`: the same integer arithmetic, and
//! the same float conversions (exactly rounded), so both backends draw the same numbers.

use crate::desc::ObjectDesc;
use crate::error::{Error, Result};
use crate::math::rng::mix64;
use crate::math::{Pcg32, Vec2, ONE_MINUS_EPSILON};
use crate::plugin::registry::register_plugins;

// The registry: one line per plugin, `TAG = module` (the file `<module>.rs`, whose
// position is its tag). Each module provides `HAS_JITTER`, `effective_count(spp) -> u64`,
// `next_1d(&mut SampleRng) -> f32` and `next_2d(&mut SampleRng) -> Vec2`.
register_plugins! {
    category "sampler" in "samplers";
    tags, dispatch sampler_module;
    INDEPENDENT = independent,
    STRATIFIED = stratified,
    MULTIJITTER = multijitter,
    LDSAMPLER = ldsampler,
}

/// The kind tag of sampler `name`.
fn kind_of(name: &str) -> Option<u32> {
    KNOWN.iter().position(|k| *k == name).map(|i| i as u32)
}

/// Whether sampler `kind` reads `jitter`.
fn has_jitter(kind: u32) -> bool {
    sampler_module!(kind, s => s::HAS_JITTER, _ => false)
}

/// The sample count sampler `kind` works with for `spp` requested.
fn rounded_count(kind: u32, spp: u32) -> u64 {
    sampler_module!(kind, s => s::effective_count(spp), _ => u64::from(spp))
}

impl SampleRng {
    /// The sampler's value in `[0,1)` for the current dimension; advances it.
    #[inline(always)]
    pub fn next_1d(&mut self) -> f32 {
        // the default sampler inline (two PCG steps at most), the others by a call
        if self.kind == tag::INDEPENDENT {
            return independent::next_1d(self);
        }
        self.next_1d_other()
    }

    /// The sampler's point in `[0,1)²` for the current dimension; advances it.
    #[inline(always)]
    pub fn next_2d(&mut self) -> Vec2 {
        if self.kind == tag::INDEPENDENT {
            return independent::next_2d(self);
        }
        self.next_2d_other()
    }

    #[inline(never)]
    fn next_1d_other(&mut self) -> f32 {
        sampler_module!(self.kind, s => s::next_1d(self), _ => self.pcg.next_f32())
    }

    #[inline(never)]
    fn next_2d_other(&mut self) -> Vec2 {
        sampler_module!(self.kind, s => s::next_2d(self), _ => independent::next_2d(self))
    }
}

/// A sensor's sampler settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    /// Which sampler ([`tag`]).
    pub kind: u32,
    /// Effective samples per pixel (the requested count rounded as the sampler needs).
    pub sample_count: u32,
    /// Added to the render's seed.
    pub seed: u32,
    /// `stratified`/`multijitter`: random offsets within the strata.
    pub jitter: bool,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            kind: tag::INDEPENDENT,
            sample_count: 4,
            seed: 0,
            jitter: true,
        }
    }
}

impl Sampler {
    /// Sampler `name` with its default settings (4 samples per pixel, seed 0, jitter).
    pub fn by_name(name: &str) -> Option<Sampler> {
        kind_of(name).map(|kind| Sampler {
            kind,
            ..Sampler::default()
        })
    }

    /// The plugin name.
    pub fn name(&self) -> &'static str {
        KNOWN.get(self.kind as usize).copied().unwrap_or(KNOWN[0])
    }

    /// The sample count this sampler renders for `spp` requested (`spp` rounded up as
    /// the sampler needs: a square, a power of four, ...); an error for 0 or a rounded
    /// count past `u32::MAX`.
    pub fn effective(&self, spp: u32) -> std::result::Result<u32, String> {
        if spp == 0 {
            return Err("must be at least 1, got 0".into());
        }
        let n = rounded_count(self.kind, spp);
        u32::try_from(n).map_err(|_| {
            format!(
                "{spp} samples round up to {n} for the {} sampler, more than {}",
                self.name(),
                u32::MAX
            )
        })
    }

    /// The settings a record holds (its count as the sample count).
    pub fn from_flat(f: &FlatSampler) -> Sampler {
        Sampler {
            kind: f.kind,
            sample_count: f.sample_count,
            seed: f.seed,
            jitter: f.jitter != 0,
        }
    }

    /// The record the backends read for a render of `sample_count` (effective) samples.
    pub fn flat(&self, sample_count: u32) -> FlatSampler {
        FlatSampler {
            kind: self.kind,
            sample_count,
            jitter: u32::from(self.jitter),
            seed: self.seed,
        }
    }
}

/// The sampler as the backends read it (16 bytes; `FlatSampler` in kernels/flat.cuh,
/// held by the film record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct FlatSampler {
    /// [`tag`].
    pub kind: u32,
    /// The render's effective samples per pixel.
    pub sample_count: u32,
    /// 1: random offsets within the strata.
    pub jitter: u32,
    /// The sampler's `seed`.
    pub seed: u32,
}

impl Default for FlatSampler {
    fn default() -> Self {
        Sampler::default().flat(4)
    }
}

/// The random numbers of one sample path: the sampler's state for sample `index` of its
/// pixel.
#[derive(Clone, Debug)]
pub struct SampleRng {
    /// The sample's own stream: `independent`'s numbers and the jitter within strata.
    pcg: Pcg32,
    kind: u32,
    jitter: bool,
    /// Sample index within the pixel, `< count`.
    index: u32,
    /// The effective sample count.
    count: u32,
    /// Dimensions drawn so far (one per `next_1d`/`next_2d`).
    dim: u32,
    /// The pixel's seed of its per-dimension permutations and scrambles.
    pixel_seed: u32,
}

/// What the samples of one pixel share: [`SampleRng::new`]'s hashes of the seed and the
/// pixel, computed once for all of them.
#[derive(Clone, Copy, Debug)]
pub struct PixelStreams {
    sampler: FlatSampler,
    /// The render's seed plus the sampler's, times the golden-ratio constant.
    seed_hash: u64,
    pixel: u64,
    pixel_seed: u32,
}

impl PixelStreams {
    /// The streams of pixel `pixel` under `sampler` and render `seed`.
    #[inline]
    pub fn new(sampler: &FlatSampler, seed: u64, pixel: u64) -> Self {
        let seed = seed.wrapping_add(u64::from(sampler.seed));
        PixelStreams {
            sampler: *sampler,
            seed_hash: seed.wrapping_mul(0x9e3779b97f4a7c15),
            pixel,
            pixel_seed: pixel_seed(seed, pixel),
        }
    }

    /// The state of sample `index` of the pixel.
    #[inline]
    pub fn sample(&self, index: u64) -> SampleRng {
        SampleRng {
            pcg: Pcg32::new(mix64(self.seed_hash ^ index), self.pixel),
            kind: self.sampler.kind,
            jitter: self.sampler.jitter != 0,
            // index < sample_count <= u32::MAX
            index: index as u32,
            count: self.sampler.sample_count.max(1),
            dim: 0,
            pixel_seed: self.pixel_seed,
        }
    }
}

impl SampleRng {
    /// The state of sample `index` of pixel `pixel` under `sampler` and render `seed`.
    #[inline]
    pub fn new(sampler: &FlatSampler, seed: u64, pixel: u64, index: u64) -> Self {
        PixelStreams::new(sampler, seed, pixel).sample(index)
    }

    /// An `independent` stream (tests and tools that need plain random numbers).
    pub fn independent(seed: u64, pixel: u64, index: u64) -> Self {
        Self::new(&FlatSampler::default(), seed, pixel, index)
    }

    /// The seed of the current dimension's permutation (the pixel's seed plus the
    /// dimension, as Mitsuba), and a step to the next dimension.
    #[inline]
    fn next_dim_seed(&mut self) -> u32 {
        let s = self.pixel_seed.wrapping_add(self.dim);
        self.dim = self.dim.wrapping_add(1);
        s
    }

    /// 24 random bits from the sample's stream when jittering, else `None` (centres).
    #[inline]
    fn jitter24(&mut self) -> Option<u32> {
        self.jitter.then(|| self.pcg.next_u32() >> 8)
    }
}

/// A pixel's seed: a hash of the render seed and the pixel index.
#[inline]
fn pixel_seed(seed: u64, pixel: u64) -> u32 {
    (mix64(mix64(seed ^ 0x6a09e667f3bcc909) ^ pixel) >> 32) as u32
}

/// Builds a `<sampler>`.
pub fn build(obj: &ObjectDesc) -> Result<Sampler> {
    let kind = kind_of(&obj.kind).ok_or_else(|| Error::UnknownPlugin {
        loc: obj.loc.clone(),
        category: "sampler",
        name: obj.kind.clone(),
        known: KNOWN.join(", "),
    })?;
    let p = &obj.props;
    let requested = p.int_in("sample_count", 4, 1, u32::MAX as i64)? as u32;
    let seed = p.int_in("seed", 0, 0, u32::MAX as i64)? as u32;
    let jitter = if has_jitter(kind) {
        p.bool("jitter", true)?
    } else {
        true
    };
    p.check_unused(&obj.kind)?;
    let mut s = Sampler {
        kind,
        sample_count: requested,
        seed,
        jitter,
    };
    let loc = p.entry_loc("sample_count");
    s.sample_count = s
        .effective(requested)
        .map_err(|m| Error::param(&loc, "sample_count", m))?;
    if s.sample_count != requested {
        eprintln!(
            "heliograph: warning: {loc}: the {} sampler renders {} samples per pixel for \
             sample_count {requested} (rounded up as Mitsuba does)",
            obj.kind, s.sample_count
        );
    }
    Ok(s)
}

// ---- integer arithmetic shared by the samplers (twins in kernels/samplers.cuh) ----

/// Tiny Encryption Algorithm (Zafar, Olano and Curtis, "GPU random numbers via the tiny
/// encryption algorithm", 2010) with `rounds` rounds, as Mitsuba's `sample_tea_32`.
#[inline]
pub(crate) fn tea(mut v0: u32, mut v1: u32, rounds: u32) -> (u32, u32) {
    let mut sum = 0u32;
    for _ in 0..rounds {
        sum = sum.wrapping_add(0x9e3779b9);
        v0 = v0.wrapping_add(
            (v1 << 4).wrapping_add(0xa341316c)
                ^ v1.wrapping_add(sum)
                ^ (v1 >> 5).wrapping_add(0xc8013ea4),
        );
        v1 = v1.wrapping_add(
            (v0 << 4).wrapping_add(0xad90777d)
                ^ v0.wrapping_add(sum)
                ^ (v0 >> 5).wrapping_add(0x7e95761e),
        );
    }
    (v0, v1)
}

/// Position of `i` in a pseudo-random permutation of `0..n` chosen by `seed`: Kensler's
/// hash ("Correlated multi-jittered sampling", Pixar 2013), cycle-walked into range.
/// The final offset by `seed` is taken modulo `n` without 32-bit wrap-around, so the
/// map is a permutation for every seed.
#[inline]
pub(crate) fn permute_kensler(mut i: u32, n: u32, seed: u32) -> u32 {
    if n <= 1 {
        return 0;
    }
    let mut w = n - 1;
    w |= w >> 1;
    w |= w >> 2;
    w |= w >> 4;
    w |= w >> 8;
    w |= w >> 16;
    loop {
        i ^= seed;
        i = i.wrapping_mul(0xe170893d);
        i ^= seed >> 16;
        i ^= (i & w) >> 4;
        i ^= seed >> 8;
        i = i.wrapping_mul(0x0929eb3f);
        i ^= seed >> 23;
        i ^= (i & w) >> 1;
        i = i.wrapping_mul(1 | seed >> 27);
        i = i.wrapping_mul(0x6935fa69);
        i ^= (i & w) >> 11;
        i = i.wrapping_mul(0x74dcb303);
        i ^= (i & w) >> 2;
        i = i.wrapping_mul(0x9e501cc3);
        i ^= (i & w) >> 2;
        i = i.wrapping_mul(0xc860a3df);
        i &= w;
        i ^= i >> 5;
        if i < n {
            break;
        }
    }
    ((u64::from(i) + u64::from(seed)) % u64::from(n)) as u32
}

/// Position of `i` in a pseudo-random permutation of `0..n`, `n` a power of two: a
/// shuffling network with a two-round TEA decision per bit (Mitsuba's `permute`).
#[inline]
pub(crate) fn permute_pow2(mut i: u32, n: u32, seed: u32) -> u32 {
    let mut bit = 1u32;
    while bit < n {
        // i and i ^ bit take the same decision: the pair swaps or stays
        if tea(i | bit, seed, 2).0 & bit != 0 {
            i ^= bit;
        }
        bit <<= 1;
    }
    i
}

/// `ceil(log2(n))` for `n >= 1`.
#[inline]
pub(crate) fn ceil_log2(n: u32) -> u32 {
    32 - n.saturating_sub(1).leading_zeros()
}

/// `floor(sqrt(n))`, exactly.
pub(crate) fn isqrt(n: u64) -> u64 {
    let mut r = (n as f64).sqrt() as u64;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r
}

/// The point of stratum `k` of `n` equal strata of `[0,1)`: at `(k + j) / n` with `j`
/// the jitter's 24 bits (`None`: the centre, `j = 1/2`). The offset is quantised to the
/// centre of a cell of the `2^-24` grid, and numerator and denominator are exact floats,
/// so the one correctly rounded division lands strictly inside the stratum (for
/// `n <= 2^23`): `floor(x * n) == k` holds exactly, and `x < 1`.
#[inline]
pub(crate) fn stratum_point(k: u32, n: u32, j24: Option<u32>) -> f32 {
    let b = 23u32.saturating_sub(ceil_log2(n));
    let den = u64::from(n) << (b + 1);
    let offset = match j24 {
        Some(j) => 2 * (u64::from(j) >> (24 - b)) + 1,
        None => 1u64 << b,
    };
    let num = (u64::from(k) << (b + 1)) + offset;
    (num as f32 / den as f32).min(ONE_MINUS_EPSILON)
}

/// The top 24 bits of `bits` as a float in `[0,1)` (exact).
#[inline]
pub(crate) fn unit_from_bits(bits: u32) -> f32 {
    (bits >> 8) as f32 * (1.0 / 16_777_216.0)
}

#[cfg(test)]
mod tests;
