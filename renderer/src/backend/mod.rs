//! Render backends. The CPU backend (rayon) is the reference; the CUDA backend
//! (issue 4) renders the same scenes and must agree within Monte Carlo noise.
//!
//! Renders are issued in waves (DESIGN.md §3): the sample budget is split into
//! passes so that progress can be reported and a render cancelled between them.

pub mod cpu;
pub mod cuda;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::scene::Scene;

/// What to render.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Samples per pixel; `None` uses the scene's sampler `sample_count`.
    pub spp: Option<u32>,
    /// Seed; the same scene, spp, seed and backend give a bitwise identical image.
    pub seed: u64,
}

impl RenderOptions {
    /// The effective sample count for `scene`, rejecting 0.
    pub fn resolve_spp(&self, scene: &Scene) -> Result<u32> {
        let spp = self.spp.unwrap_or(scene.sensor.sampler.sample_count);
        if spp == 0 {
            return Err(Error::Render("spp must be at least 1".into()));
        }
        Ok(spp)
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
