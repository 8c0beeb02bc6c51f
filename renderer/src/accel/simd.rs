//! The instruction-set level of the CPU traversal, chosen at run time.
//!
//! The wide BVH ([`super::wide`]) tests eight boxes per node with one of four code
//! paths: `scalar` (a plain loop, any CPU), `sse` (two 4-wide SSE4.2 halves), `avx2`
//! (one 8-wide AVX2 test) and `avx512` (the 8-wide test with AVX-512VL mask compares).
//! The best level the CPU supports is taken unless the environment variable
//! `HELIOGRAPH_SIMD` names one: a level the CPU lacks, or an unknown name, is an error
//! when a render starts (it names the choices), never a crash on an illegal
//! instruction. All levels find the same hits.

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The environment variable that forces a level.
pub const ENV: &str = "HELIOGRAPH_SIMD";

/// The accepted values of [`ENV`].
pub const CHOICES: &str = "scalar, sse, avx2, avx512";

/// An instruction-set level of the traversal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimdLevel {
    /// Plain Rust, any CPU.
    Scalar,
    /// SSE4.2: boxes in two 4-wide halves, triangles four at a time.
    Sse,
    /// AVX2: boxes eight at a time.
    Avx2,
    /// AVX-512 (F + VL): boxes eight at a time with mask registers.
    Avx512,
}

impl SimdLevel {
    /// Every level, lowest first.
    pub const ALL: [SimdLevel; 4] = [
        SimdLevel::Scalar,
        SimdLevel::Sse,
        SimdLevel::Avx2,
        SimdLevel::Avx512,
    ];

    /// The level's name as [`ENV`] spells it.
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Scalar => "scalar",
            SimdLevel::Sse => "sse",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
        }
    }

    /// The level named `s` (case-insensitive), or an error naming the choices.
    pub fn parse(s: &str) -> Result<SimdLevel> {
        let t = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|l| l.name() == t)
            .ok_or_else(|| {
                Error::Render(format!(
                    "{ENV}={s:?} is not a SIMD level; choose one of: {CHOICES}"
                ))
            })
    }

    /// Whether this CPU can run the level.
    pub fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                SimdLevel::Scalar => true,
                SimdLevel::Sse => is_x86_feature_detected!("sse4.2"),
                SimdLevel::Avx2 => is_x86_feature_detected!("avx2"),
                SimdLevel::Avx512 => {
                    is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == SimdLevel::Scalar
        }
    }

    /// The highest level this CPU supports.
    pub fn best() -> SimdLevel {
        Self::ALL
            .into_iter()
            .rev()
            .find(|l| l.supported())
            .unwrap_or(SimdLevel::Scalar)
    }
}

/// The level for the value of [`ENV`] (`None`: unset): the best supported one, or the
/// one it names when this CPU supports it.
pub fn level_for(value: Option<&str>) -> Result<SimdLevel> {
    let Some(v) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(SimdLevel::best());
    };
    let l = SimdLevel::parse(v)?;
    if !l.supported() {
        return Err(Error::Render(format!(
            "{ENV}={v:?}: this CPU does not support {} (it supports up to {}); choose one \
             of: {CHOICES}",
            l.name(),
            SimdLevel::best().name()
        )));
    }
    Ok(l)
}

/// This process's level: [`ENV`] as it was on first use, read once.
pub fn level() -> Result<SimdLevel> {
    static LEVEL: OnceLock<std::result::Result<SimdLevel, String>> = OnceLock::new();
    LEVEL
        .get_or_init(|| {
            let v = std::env::var(ENV).ok();
            level_for(v.as_deref()).map_err(|e| e.to_string())
        })
        .clone()
        .map_err(Error::Render)
}

/// The level traversal uses: [`level`], or `scalar` when [`ENV`] is invalid (renders
/// refuse to start then, so this only serves direct calls of the BVH).
#[inline]
pub fn active() -> SimdLevel {
    static ACTIVE: OnceLock<SimdLevel> = OnceLock::new();
    *ACTIVE.get_or_init(|| level().unwrap_or(SimdLevel::Scalar))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for l in SimdLevel::ALL {
            assert_eq!(SimdLevel::parse(l.name()).unwrap(), l);
            assert_eq!(SimdLevel::parse(&l.name().to_uppercase()).unwrap(), l);
        }
        let e = SimdLevel::parse("neon").unwrap_err().to_string();
        assert!(e.contains("\"neon\"") && e.contains(CHOICES), "{e}");
        let e = level_for(Some("avx3")).unwrap_err().to_string();
        assert!(e.contains(ENV) && e.contains(CHOICES), "{e}");
    }

    #[test]
    fn unset_means_the_best_level_and_scalar_always_runs() {
        assert_eq!(level_for(None).unwrap(), SimdLevel::best());
        assert_eq!(level_for(Some("")).unwrap(), SimdLevel::best());
        assert_eq!(level_for(Some("scalar")).unwrap(), SimdLevel::Scalar);
        for l in SimdLevel::ALL {
            // a level the CPU lacks is refused, one it has is taken
            assert_eq!(level_for(Some(l.name())).is_ok(), l.supported(), "{l:?}");
        }
    }
}
