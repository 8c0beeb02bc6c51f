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
    /// The effective sample count under the scene's `sampler`: the `spp` override
    /// rounded as the sampler needs (`stratified`: a square, ...), else the sampler's
    /// own; rejects 0.
    pub fn resolve_spp(&self, sampler: &Sampler) -> Result<u32> {
        resolve_spp(self.spp, sampler)
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
