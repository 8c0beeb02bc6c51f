//! What a render is asked for ([`RenderOptions`]) and how it reports back
//! ([`Progress`]): shared by the integrators that render whole images, both backends,
//! the differentiable passes and the binding.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::samplers::Sampler;

/// What to render.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Samples per pixel; `None` uses the scene's sampler `sample_count`.
    pub spp: Option<u32>,
    /// Seed; the same scene, spp, seed and backend give a bitwise identical image.
    pub seed: u64,
}

impl RenderOptions {
    /// The options of a render call whose `spp` 0 means the scene's own sample count,
    /// as in Mitsuba.
    pub fn new(spp: u32, seed: u64) -> RenderOptions {
        RenderOptions {
            spp: (spp > 0).then_some(spp),
            seed,
        }
    }

    /// The effective sample count under the scene's `sampler`: the `spp` override
    /// rounded as the sampler needs (`stratified`: a square, ...), else the sampler's
    /// own; rejects 0.
    pub fn resolve_spp(&self, sampler: &Sampler) -> Result<u32> {
        resolve_spp(self.spp, sampler)
    }
}

/// The integer arguments of a render call, checked before anything renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderArg {
    /// Samples per pixel, in [0, 2³² - 1]; 0: the scene's sample count.
    Spp,
    /// The seed, any 64-bit unsigned integer.
    Seed,
    /// The sensor index: 0, a scene has one sensor.
    Sensor,
}

impl RenderArg {
    /// The argument's name.
    pub fn name(self) -> &'static str {
        match self {
            RenderArg::Spp => "spp",
            RenderArg::Seed => "seed",
            RenderArg::Sensor => "sensor",
        }
    }

    /// `x` if it is in the argument's range; else what is wrong, naming the argument.
    pub fn check(self, x: i128) -> std::result::Result<u64, String> {
        let (name, max) = match self {
            RenderArg::Spp => ("spp", u64::from(u32::MAX)),
            RenderArg::Seed | RenderArg::Sensor => (self.name(), u64::MAX),
        };
        let note = match self {
            RenderArg::Spp => " (0: the scene's sample count)",
            RenderArg::Seed | RenderArg::Sensor => "",
        };
        if !(0..=i128::from(max)).contains(&x) {
            return Err(format!("'{name}' must be in [0, {max}]{note}, got {x}"));
        }
        if self == RenderArg::Sensor && x != 0 {
            return Err(format!(
                "'sensor' index must be 0 (the scene has one sensor), got {x}"
            ));
        }
        Ok(x as u64)
    }
}

/// The effective sample count of a render with `spp` override under `sampler`.
pub fn resolve_spp(spp: Option<u32>, sampler: &Sampler) -> Result<u32> {
    match spp {
        None => Ok(sampler.sample_count),
        Some(spp) => sampler
            .effective(spp)
            .map_err(|m| Error::Render(format!("spp: {m}"))),
    }
}

/// Shared progress and cancellation state of one render.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
    cancelled: AtomicBool,
}

impl Progress {
    /// Samples finished so far and the total.
    pub fn samples(&self) -> (u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }

    /// Asks the render to stop at the next tile boundary.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    pub(crate) fn start(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
    }

    pub(crate) fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }
}
