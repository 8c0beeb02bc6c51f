//! Samplers. Only `independent` (uniform random numbers) exists: each
//! (pixel, sample index) pair gets its own PCG32 stream, so the image does not
//! depend on which thread or wave renders which sample.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `sample_count` | integer | 4 | samples per pixel |
//! | `seed` | integer | 0 | base seed |
//!
//! ```xml
//! <sampler type="independent"><integer name="sample_count" value="64"/></sampler>
//! ```

use crate::error::{Error, Result};
use crate::math::rng::mix64;
use crate::math::{Pcg32, Vec2};
use crate::scene::desc::ObjectDesc;

/// The `independent` sampler's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Sampler {
    /// Samples per pixel.
    pub sample_count: u32,
    /// Base seed.
    pub seed: u32,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            sample_count: 4,
            seed: 0,
        }
    }
}

/// The random number source of one sample path.
pub struct SampleRng(Pcg32);

impl SampleRng {
    /// The stream for sample `index` of pixel `pixel` under `seed`.
    #[inline]
    pub fn new(seed: u64, pixel: u64, index: u64) -> Self {
        SampleRng(Pcg32::new(
            mix64(seed.wrapping_mul(0x9e3779b97f4a7c15) ^ index),
            pixel,
        ))
    }

    /// A uniform float in `[0,1)`.
    #[inline]
    pub fn next_1d(&mut self) -> f32 {
        self.0.next_f32()
    }

    /// Two uniform floats.
    #[inline]
    pub fn next_2d(&mut self) -> Vec2 {
        let x = self.0.next_f32();
        Vec2::new(x, self.0.next_f32())
    }
}

/// Names of the sampler plugins.
pub const KNOWN: &[&str] = &["independent"];

/// Builds a `<sampler>`.
pub fn build(obj: &ObjectDesc) -> Result<Sampler> {
    if obj.kind != "independent" {
        return Err(Error::UnknownPlugin {
            loc: obj.loc.clone(),
            category: "sampler",
            name: obj.kind.clone(),
            known: KNOWN.join(", "),
        });
    }
    let p = &obj.props;
    let s = Sampler {
        sample_count: p.int_in("sample_count", 4, 1, u32::MAX as i64)? as u32,
        seed: p.int_in("seed", 0, 0, u32::MAX as i64)? as u32,
    };
    p.check_unused(&obj.kind)?;
    Ok(s)
}
