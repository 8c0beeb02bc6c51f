//! Events: the fences every reader of device memory orders itself after.
//!
//! A fence is recorded without timing (cheaper to record). The host waits on one by
//! polling it ([`Event::wait`]): first spinning (yielding the core between polls), so
//! that the wait for a render of a few milliseconds returns within microseconds of
//! its end, then napping between polls, with naps that grow to a millisecond, so that
//! a long wait costs next to no CPU and no thread. (A thread blocked in
//! `cuEventSynchronize` wakes 50-150 microseconds late, a tenth of a short render.)
//! Events are created with blocking sync, for any consumer that waits on them itself.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{sys as dsys, CudaContext, DriverError};

use super::{code, release, Owned};
use crate::error::{CudaError, Error, Result};

/// How long a host wait spins before it naps between polls: up to a typical render of
/// a few milliseconds (CUDA's own default schedule spins without bound).
pub(crate) const SPIN: Duration = Duration::from_millis(10);
/// The first nap between polls after the spin, and the longest.
const NAPS: (Duration, Duration) = (Duration::from_micros(20), Duration::from_millis(1));
/// How often a long wait asks whether to keep waiting (Ctrl-C).
const ASK_EVERY: Duration = Duration::from_millis(50);

/// A CUDA event (`CUevent`) without timing, waited on by polling.
pub(crate) struct Event {
    ev: dsys::CUevent,
    ctx: Owned<Arc<CudaContext>>,
}

// SAFETY: a CUevent may be recorded, queried and waited on from any thread of its
// context (each call binds the context first).
unsafe impl Send for Event {}
// SAFETY: as above; the driver's event operations are thread-safe.
unsafe impl Sync for Event {}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event({:p})", self.ev)
    }
}

fn err(what: &'static str) -> impl Fn(DriverError) -> Error {
    move |e| {
        Error::Cuda(CudaError::Driver {
            what: what.into(),
            error: code(e),
        })
    }
}

impl Event {
    /// A new event with nothing recorded.
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<Event> {
        ctx.bind_to_thread().map_err(err("binding the context"))?;
        let mut ev = std::ptr::null_mut();
        let flags = dsys::CUevent_flags::CU_EVENT_BLOCKING_SYNC as u32
            | dsys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
        // SAFETY: ev receives a new event handle.
        unsafe { dsys::cuEventCreate(&mut ev, flags) }
            .result()
            .map_err(err("creating an event"))?;
        Ok(Event {
            ev,
            ctx: Owned::new(ctx.clone()),
        })
    }

    /// A new event recorded on `stream` (a `CUstream` handle of this context).
    pub(crate) fn recorded(ctx: &Arc<CudaContext>, stream: dsys::CUstream) -> Result<Event> {
        let e = Event::new(ctx)?;
        e.record(stream)?;
        Ok(e)
    }

    /// Records the event on `stream`, replacing what it recorded before: waits issued
    /// afterwards wait for the work enqueued there so far.
    pub(crate) fn record(&self, stream: dsys::CUstream) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(err("binding the context"))?;
        // SAFETY: the event is live; the stream is a live stream of this context (or
        // one of the special handles 1, 2).
        unsafe { dsys::cuEventRecord(self.ev, stream) }
            .result()
            .map_err(|e| {
                Error::Cuda(CudaError::Driver {
                    what: format!("recording an event on stream {:p}", stream),
                    error: code(e),
                })
            })
    }

    /// Makes `stream` wait for the event, without blocking the host.
    pub(crate) fn order(&self, stream: dsys::CUstream) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(err("binding the context"))?;
        // SAFETY: the event is live; the stream per the caller's promise.
        unsafe { dsys::cuStreamWaitEvent(stream, self.ev, 0) }
            .result()
            .map_err(|e| {
                Error::Cuda(CudaError::Driver {
                    what: format!("making stream {:p} wait for an event", stream),
                    error: code(e),
                })
            })
    }

    /// Whether the recorded work has finished; the error of the work that failed.
    pub(crate) fn query(&self) -> Result<bool> {
        self.ctx
            .bind_to_thread()
            .map_err(err("binding the context"))?;
        // SAFETY: the event is live.
        match unsafe { dsys::cuEventQuery(self.ev) } {
            dsys::cudaError_enum::CUDA_SUCCESS => Ok(true),
            dsys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            e => Err(Error::Cuda(CudaError::Driver {
                what: "the work this waits for failed".into(),
                error: code(e),
            })),
        }
    }

    /// Returns once the recorded work has finished: spins for up to `spin`, then naps
    /// between polls. Waits for this event only, never the device.
    pub(crate) fn wait(&self, spin: Duration) -> Result<()> {
        self.wait_until(spin, || true).map(drop)
    }

    /// As [`Self::wait`], asking `keep_waiting` every 50 ms once the spin is over;
    /// `Ok(false)` as soon as it says no (the recorded work goes on).
    pub(crate) fn wait_until(
        &self,
        spin: Duration,
        mut keep_waiting: impl FnMut() -> bool,
    ) -> Result<bool> {
        let start = Instant::now();
        while start.elapsed() < spin {
            if self.query()? {
                return Ok(true);
            }
            std::thread::yield_now();
        }
        let mut nap = NAPS.0;
        let mut asked = Instant::now();
        loop {
            if self.query()? {
                return Ok(true);
            }
            if asked.elapsed() >= ASK_EVERY {
                if !keep_waiting() {
                    return Ok(false);
                }
                asked = Instant::now();
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(NAPS.1);
        }
    }

    /// The raw handle (for DLPack consumers' `cuStreamWaitEvent`).
    pub(crate) fn handle(&self) -> usize {
        self.ev as usize
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // An event may be destroyed while work that records it is pending: the driver
        // releases it once that work completes.
        release(|| {
            if self.ctx.bind_to_thread().is_ok() {
                // SAFETY: created in new() and not destroyed before.
                let _ = unsafe { dsys::cuEventDestroy_v2(self.ev) };
            }
        });
    }
}
