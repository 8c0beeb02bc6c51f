//! `DeviceTensor`: float32 device memory with its ready fence, the unit
//! that DLPack exports share with consumers.
//!
//! Ownership and ordering:
//! - the data is written on the render stream; `ready` is recorded there after the
//!   last write, and every reader orders itself after that event: the host with
//!   [`DeviceTensor::wait`] (that event only, never the device), a consumer stream
//!   with [`DeviceTensor::order_stream`] (`cuStreamWaitEvent`, no host blocking);
//! - the memory is freed in stream order on the render stream (the pool may then give
//!   it to the next film), after every *release fence*: a consumer that named its
//!   stream leaves one when it lets go of the tensor ([`DeviceTensor::fence_stream`]),
//!   so its queued kernels finish before a later render reuses the memory. Fences are
//!   kept per stream (one event re-recorded), so a tensor exported a million times to
//!   the same stream holds one;
//! - a consumer that did not name its stream (`stream=None` or `-1`, or the per-thread
//!   default stream of another thread) cannot be fenced: such a tensor's memory goes to
//!   the [`Reclaimer`], which frees it only after a device-wide synchronise that it runs
//!   on its own thread (never the caller's), after the consumer let go;
//! - dropping needs no Python and binds the context itself: a DLPack deleter may drop
//!   the last share on any thread.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use cudarc::driver::{result as dres, sys as dsys, CudaContext, CudaStream};

use super::event::{Event, SPIN};
use super::memory::DeviceBuffer;
use super::transfer::Staging;
use super::{drv, guarded, release, Owned};
use crate::desc::params::DeviceValues;
use crate::error::{CudaError, Error, Result};
use crate::tensor::{copy_parallel, Buffer};

static LIVE_COUNT: AtomicUsize = AtomicUsize::new(0);
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Number and bytes of [`DeviceTensor`]s alive in this process (memory-growth tests);
/// memory waiting in the reclaimer counts until it is freed.
pub fn live_device_tensors() -> (usize, usize) {
    (
        LIVE_COUNT.load(Ordering::Relaxed),
        LIVE_BYTES.load(Ordering::Relaxed),
    )
}

/// What tensors need of their backend: the context, the render stream and pool (for
/// copies), the copy stream and staging buffers (for host reads) and the reclaimer.
pub(crate) struct Readers {
    pub(crate) ctx: Owned<Arc<CudaContext>>,
    pub(crate) stream: Owned<Arc<CudaStream>>,
    pub(crate) pool: Arc<super::memory::Pool>,
    pub(crate) copy_stream: Owned<Arc<CudaStream>>,
    pub(crate) staging: Staging,
    pub(crate) reclaimer: Reclaimer,
}

/// `len` float32 values on the device, fenced by `ready` (see the module docs).
pub struct DeviceTensor {
    data: Option<DeviceBuffer>,
    len: usize,
    ready: Event,
    fences: Mutex<HashMap<usize, Event>>,
    /// A consumer that could not be fenced has let go of it.
    unfenced: AtomicBool,
    readers: Arc<Readers>,
    ordinal: usize,
}

impl std::fmt::Debug for DeviceTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceTensor({} floats on cuda:{})",
            self.len, self.ordinal
        )
    }
}

impl DeviceTensor {
    /// Wraps `data` (first `len` values meaningful) written on its stream before `ready`.
    pub(crate) fn new(
        data: DeviceBuffer,
        len: usize,
        ready: Event,
        readers: Arc<Readers>,
        ordinal: usize,
    ) -> DeviceTensor {
        LIVE_COUNT.fetch_add(1, Ordering::Relaxed);
        LIVE_BYTES.fetch_add(data.bytes(), Ordering::Relaxed);
        DeviceTensor {
            data: Some(data),
            len,
            ready,
            fences: Mutex::new(HashMap::new()),
            unfenced: AtomicBool::new(false),
            readers,
            ordinal,
        }
    }

    fn buf(&self) -> &DeviceBuffer {
        self.data.as_ref().expect("the buffer lives until drop")
    }

    /// The number of float32 values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tensor holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device address of the first value (for DLPack).
    pub fn device_ptr(&self) -> u64 {
        self.buf().ptr()
    }

    /// Whether every write has finished (queries the event, never blocks); also true
    /// when the work failed, since a read then returns the error at once.
    pub fn is_ready(&self) -> bool {
        self.query().unwrap_or(true)
    }

    /// Whether every write has finished, or the error of the work that writes the tensor
    /// (queries the event, never blocks).
    pub fn query(&self) -> Result<bool> {
        guarded("querying a tensor", || {
            self.ready
                .query()
                .map_err(|e| Error::Cuda(CudaError::TensorWrite { error: Box::new(e) }))
        })
    }

    /// Returns once the tensor's writes are done: polls its ready event, spinning and
    /// then napping (see the device's `event` module). Waits for this event only, never the stream
    /// or the device.
    pub fn wait(&self) -> Result<()> {
        guarded("waiting for a tensor", || {
            self.ready
                .wait(SPIN)
                .map_err(|e| Error::Cuda(CudaError::TensorWrite { error: Box::new(e) }))
        })
    }

    /// As [`Self::wait`], for waits that must stay interruptible (Ctrl-C): once the
    /// spin is over, `keep_waiting` is asked every 50 ms; returns `Ok(false)` as soon as
    /// it says no (the writes go on; the tensor stays valid).
    pub fn wait_until(&self, keep_waiting: impl FnMut() -> bool) -> Result<bool> {
        guarded("waiting for a tensor", || {
            self.ready
                .wait_until(SPIN, keep_waiting)
                .map_err(|e| Error::Cuda(CudaError::TensorWrite { error: Box::new(e) }))
        })
    }

    /// The ready event's handle (`CUevent`).
    pub fn ready_event_handle(&self) -> usize {
        self.ready.handle()
    }

    /// Makes the stream with handle `stream` (a `CUstream`; 1 = legacy default stream,
    /// 2 = this thread's per-thread default stream) wait for the tensor's writes,
    /// without blocking the host.
    pub fn order_stream(&self, stream: usize) -> Result<()> {
        if stream == self.buf().stream().cu_stream() as usize {
            return Ok(()); // the render stream is ordered already
        }
        guarded("cuStreamWaitEvent", || {
            self.ready.order(stream as dsys::CUstream).map_err(|e| {
                Error::Cuda(CudaError::TensorOrder {
                    stream,
                    error: Box::new(e),
                })
            })
        })
    }

    /// Records a release fence on consumer stream `stream`: the memory is not reused
    /// before the work queued there so far has finished. One event per stream,
    /// re-recorded. Never fails loudly (a DLPack deleter calls it); on failure the
    /// tensor falls back to the reclaimer. Returns whether the fence was recorded.
    pub fn fence_stream(&self, stream: usize) -> bool {
        let r = guarded("release fence", || {
            let mut fences = self
                .fences
                .lock()
                .map_err(|_| Error::Cuda(CudaError::Lock { what: "fence" }))?;
            if let Some(e) = fences.get(&stream) {
                return e.record(stream as dsys::CUstream);
            }
            let e = Event::recorded(&self.readers.ctx, stream as dsys::CUstream)?;
            fences.insert(stream, e);
            Ok(())
        });
        if r.is_err() {
            self.mark_unfenced();
        }
        r.is_ok()
    }

    /// A consumer that could not be fenced (it named no stream) has let go: the memory
    /// is freed only after the reclaimer's device-wide synchronise.
    pub fn mark_unfenced(&self) {
        self.unfenced.store(true, Ordering::Relaxed);
    }

    /// Number of release fences held (tests: bounded by the number of streams).
    pub fn fence_count(&self) -> usize {
        self.fences.lock().map(|f| f.len()).unwrap_or(0)
    }

    /// Copies the values to the host: a copy on the copy stream (after the tensor's
    /// writes, nothing else) into page-locked staging, a wait on that copy only, then
    /// one host copy out.
    pub fn to_host(&self) -> Result<Vec<f32>> {
        let mut out = vec![0f32; self.len];
        self.read_into(&mut out)?;
        Ok(out)
    }

    /// As [`Self::to_host`], into `out` (`len` values).
    pub fn read_into(&self, out: &mut [f32]) -> Result<()> {
        if out.len() != self.len {
            return Err(Error::Cuda(CudaError::Internal(format!(
                "reading {} values into room for {}",
                self.len,
                out.len()
            ))));
        }
        // SAFETY: out has room for len values.
        unsafe { self.read_raw(out.as_mut_ptr()) }
    }

    /// As [`Self::to_host`], into a new host [`Buffer`] (written once, not zero-filled
    /// first).
    pub fn to_buffer(&self) -> Result<Buffer> {
        let buf = Buffer::uninit(self.len)?;
        // SAFETY: the buffer has room for len values; read_raw writes them all or fails
        // (and the buffer is dropped unread).
        unsafe { self.read_raw(buf.as_ptr()) }?;
        Ok(buf)
    }

    /// Copies the values to `out` through page-locked staging, on the copy stream after
    /// the ready event (a read waits for its own render, not for later ones).
    ///
    /// # Safety
    /// `out` must be valid for writes of `len` floats.
    unsafe fn read_raw(&self, out: *mut f32) -> Result<()> {
        if self.len == 0 {
            return self.wait();
        }
        guarded("reading a tensor", || {
            let r = &self.readers;
            let bytes = self.len * 4;
            let mut lease = r.staging.lease(bytes)?;
            let copy = r.copy_stream.cu_stream();
            self.ready.order(copy)?;
            r.ctx.bind_to_thread().map_err(drv("binding the context"))?;
            // SAFETY: the staging buffer holds `bytes` bytes and stays leased until the
            // copy's event below has completed; the tensor (alive: &self) has `bytes`.
            unsafe { dres::memcpy_dtoh_async(lease.as_mut_slice(), self.device_ptr(), copy) }
                .map_err(drv("copying a tensor to the host"))?;
            let done = Event::recorded(&r.ctx, copy)?;
            done.wait(SPIN)?;
            // SAFETY: the caller's contract; the lease holds len floats.
            unsafe { copy_parallel(&lease.floats()[..self.len], out) };
            Ok(())
        })
    }
}

impl DeviceTensor {
    /// A device copy, made on the render stream after the tensor's writes, with its
    /// own ready event.
    pub fn duplicate(&self) -> Result<DeviceTensor> {
        guarded("copying a tensor", || {
            let r = &self.readers;
            let bytes = self.len * 4;
            let copy = r.pool.alloc(bytes, &r.stream, "a tensor copy")?;
            self.ready.order(r.stream.cu_stream())?;
            // SAFETY: both hold `bytes` bytes; the source lives until the copy ran (its
            // free is stream ordered after it).
            unsafe { copy.copy_from_device(0, self.device_ptr(), bytes) }?;
            let ready = Event::recorded(&r.ctx, r.stream.cu_stream())?;
            Ok(DeviceTensor::new(
                copy,
                self.len,
                ready,
                r.clone(),
                self.ordinal,
            ))
        })
    }
}

impl DeviceValues for DeviceTensor {
    fn len(&self) -> usize {
        self.len
    }
    fn to_host(&self) -> Result<Vec<f32>> {
        DeviceTensor::to_host(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Drop for DeviceTensor {
    fn drop(&mut self) {
        release(|| {
            let Some(data) = self.data.take() else {
                return;
            };
            let bytes = data.bytes();
            // the free below is stream ordered after every consumer's release fence
            let fences = std::mem::take(self.fences.get_mut().unwrap_or_else(|p| p.into_inner()));
            let stream = data.stream().cu_stream();
            for f in fences.values() {
                let _ = f.order(stream);
            }
            LIVE_COUNT.fetch_sub(1, Ordering::Relaxed);
            if self.unfenced.load(Ordering::Relaxed) {
                self.readers.reclaimer.reclaim(data, bytes);
            } else {
                LIVE_BYTES.fetch_sub(bytes, Ordering::Relaxed);
                drop(data);
            }
        });
    }
}

/// Frees memory whose consumers could not be fenced, after a device-wide synchronise
/// on its own thread: every kernel a consumer queued before letting go has then run.
/// Buffers are batched, so one synchronise frees every buffer handed over before it
/// started; the caller never waits.
#[derive(Clone)]
pub(crate) struct Reclaimer {
    shared: Arc<ReclaimShared>,
}

struct ReclaimShared {
    ctx: Owned<Arc<CudaContext>>,
    queue: Mutex<Vec<(DeviceBuffer, usize)>>,
    wake: Condvar,
    thread: OnceLock<()>,
}

impl Reclaimer {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Reclaimer {
        Reclaimer {
            shared: Arc::new(ReclaimShared {
                ctx: Owned::new(ctx.clone()),
                queue: Mutex::new(Vec::new()),
                wake: Condvar::new(),
                thread: OnceLock::new(),
            }),
        }
    }

    /// Bytes waiting to be freed.
    pub(crate) fn pending(&self) -> usize {
        self.shared
            .queue
            .lock()
            .map(|q| q.iter().map(|(_, b)| b).sum())
            .unwrap_or(0)
    }

    fn reclaim(&self, buf: DeviceBuffer, bytes: usize) {
        let s = &self.shared;
        if let Ok(mut q) = s.queue.lock() {
            q.push((buf, bytes));
        }
        s.wake.notify_one();
        s.thread.get_or_init(|| {
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("heliograph-reclaim".into())
                .spawn(move || reclaim_loop(&shared));
            if spawned.is_err() {
                // no thread: free now; the stream order still protects heliograph's
                // own work
                if let Ok(mut q) = s.queue.lock() {
                    for (b, n) in q.drain(..) {
                        LIVE_BYTES.fetch_sub(n, Ordering::Relaxed);
                        drop(b);
                    }
                }
            }
        });
    }
}

fn reclaim_loop(s: &ReclaimShared) {
    loop {
        let batch: Vec<(DeviceBuffer, usize)> = {
            let Ok(mut q) = s.queue.lock() else { return };
            while q.is_empty() {
                q = match s.wake.wait(q) {
                    Ok(q) => q,
                    Err(_) => return,
                };
            }
            std::mem::take(&mut *q)
        };
        // every consumer kernel queued before the buffers were handed over is done
        // when this returns (an error, e.g. a faulted context, frees them anyway)
        if s.ctx.bind_to_thread().is_ok() {
            // SAFETY: synchronises the bound context; touches no memory.
            let _ = unsafe { dsys::cuCtxSynchronize() };
        }
        for (b, n) in batch {
            LIVE_BYTES.fetch_sub(n, Ordering::Relaxed);
            drop(b);
        }
        std::thread::sleep(Duration::from_millis(1)); // batch what arrives meanwhile
    }
}
