//! `DeviceTensor`: float32 device memory with its ready fence (DESIGN.md §4), the unit
//! that DLPack exports share with consumers (../shared/DLPACK.md).
//!
//! Ownership and ordering:
//! - the data is written on the render stream; `ready` is recorded there after the
//!   last write, and every reader orders itself after that event: the host with
//!   [`DeviceTensor::wait`] (that event only, never the device), a consumer stream
//!   with [`DeviceTensor::order_stream`] (`cuStreamWaitEvent`, no host blocking);
//! - the memory is freed with `cuMemFreeAsync` on the render stream, so queued
//!   heliograph work that reads it finishes first; a consumer that read it on its own
//!   stream leaves a *release fence* ([`DeviceTensor::fence_stream`]) that the render
//!   stream waits on before the free, so a consumer's queued kernels finish before a
//!   later render can reuse the memory;
//! - dropping needs no Python and binds the context itself: a DLPack deleter may drop
//!   the last share on any thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    result as dres, sys as dsys, CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr,
};

use super::{drv, guarded, read_back, CudaBackend};
use crate::error::{Error, Result};

static LIVE_COUNT: AtomicUsize = AtomicUsize::new(0);
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Number and bytes of [`DeviceTensor`]s alive in this process (memory-growth tests).
pub fn live_device_tensors() -> (usize, usize) {
    (
        LIVE_COUNT.load(Ordering::Relaxed),
        LIVE_BYTES.load(Ordering::Relaxed),
    )
}

/// `len` float32 values on the device, fenced by `ready` (see the module docs).
pub struct DeviceTensor {
    data: CudaSlice<f32>,
    len: usize,
    ready: CudaEvent,
    fences: Mutex<Vec<CudaEvent>>,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
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
    /// Wraps `data` (first `len` values meaningful) written on `stream` before `ready`.
    pub(super) fn new(
        data: CudaSlice<f32>,
        len: usize,
        ready: CudaEvent,
        ctx: Arc<CudaContext>,
        stream: Arc<CudaStream>,
        ordinal: usize,
    ) -> DeviceTensor {
        LIVE_COUNT.fetch_add(1, Ordering::Relaxed);
        LIVE_BYTES.fetch_add(data.num_bytes(), Ordering::Relaxed);
        DeviceTensor {
            data,
            len,
            ready,
            fences: Mutex::new(Vec::new()),
            ctx,
            stream,
            ordinal,
        }
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
        let (ptr, _sync) = self.data.device_ptr(&self.stream);
        ptr
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
            self.ready.try_is_complete().map_err(|e| {
                Error::Cuda(format!("the render that writes this tensor failed: {e:?}"))
            })
        })
    }

    /// Blocks the calling thread until the tensor's writes are done: waits on its ready
    /// event only (`cuEventSynchronize`), never on the stream or the device.
    pub fn wait(&self) -> Result<()> {
        guarded("waiting for a tensor", || {
            self.ready.synchronize().map_err(|e| {
                Error::Cuda(format!("the render that writes this tensor failed: {e:?}"))
            })
        })
    }

    /// Makes the stream with handle `stream` (a `CUstream`; 1 = legacy default stream,
    /// 2 = this thread's per-thread default stream) wait for the tensor's writes,
    /// without blocking the host.
    pub fn order_stream(&self, stream: usize) -> Result<()> {
        if stream == self.stream.cu_stream() as usize {
            return Ok(()); // the render stream is ordered already
        }
        guarded("cuStreamWaitEvent", || {
            self.ctx
                .bind_to_thread()
                .map_err(drv("binding the context"))?;
            // SAFETY: the event lives as long as self; the stream handle comes from the
            // consumer, which promises that it is a live stream of this device.
            unsafe {
                dres::stream::wait_event(
                    stream as dsys::CUstream,
                    self.ready.cu_event(),
                    dsys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
            }
            .map_err(|e| {
                Error::Cuda(format!(
                    "making stream {stream:#x} wait for the tensor: {e:?}"
                ))
            })
        })
    }

    /// Records a release fence on consumer stream `stream`: the memory is not freed
    /// before the work queued there so far has finished. Never fails loudly (a DLPack
    /// deleter calls it); returns whether the fence was recorded.
    pub fn fence_stream(&self, stream: usize) -> bool {
        let r = guarded("release fence", || {
            let ev = self.ctx.new_event(None).map_err(drv("creating a fence"))?;
            // SAFETY: the event is live; the consumer's stream is live while it holds
            // the tensor, which it still does when its deleter runs.
            unsafe { dres::event::record(ev.cu_event(), stream as dsys::CUstream) }
                .map_err(drv("recording a release fence"))?;
            self.fences
                .lock()
                .map_err(|_| Error::Cuda("fence lock poisoned".into()))?
                .push(ev);
            Ok(())
        });
        r.is_ok()
    }

    /// Copies the values to the host: a copy on the render stream (after the tensor's
    /// writes), then a wait on that copy's event only.
    pub fn to_host(&self) -> Result<Vec<f32>> {
        let mut v = guarded("reading a tensor", || {
            read_back(&self.ctx, &self.stream, &self.data)
        })?;
        v.truncate(self.len);
        Ok(v)
    }

    /// A device copy, made on the render stream after the tensor's writes, with its
    /// own ready event.
    pub fn duplicate(&self) -> Result<DeviceTensor> {
        guarded("copying a tensor", || {
            let copy = self
                .stream
                .clone_dtod(&self.data)
                .map_err(drv("copying a tensor on the device"))?;
            let ready = self
                .stream
                .record_event(None)
                .map_err(drv("recording the copy's ready event"))?;
            Ok(DeviceTensor::new(
                copy,
                self.len,
                ready,
                self.ctx.clone(),
                self.stream.clone(),
                self.ordinal,
            ))
        })
    }
}

impl Drop for DeviceTensor {
    fn drop(&mut self) {
        LIVE_COUNT.fetch_sub(1, Ordering::Relaxed);
        LIVE_BYTES.fetch_sub(self.data.num_bytes(), Ordering::Relaxed);
        // The field drops that follow (the stream-ordered free, the events) need the
        // context on this thread, which may be any thread a deleter runs on.
        let _ = self.ctx.bind_to_thread();
        let fences = std::mem::take(self.fences.get_mut().unwrap_or_else(|p| p.into_inner()));
        for f in &fences {
            // On failure the free below is still ordered after heliograph's own work.
            let _ = self.stream.wait(f);
        }
    }
}

impl CudaBackend {
    /// Uploads `data` to a new device tensor on the render stream.
    pub fn upload_tensor(&self, data: &[f32]) -> Result<DeviceTensor> {
        guarded("uploading a tensor", || {
            let buf = if data.is_empty() {
                self.stream.alloc_zeros::<f32>(1)
            } else {
                self.stream.clone_htod(data)
            }
            .map_err(|e| {
                super::mem_error("uploading a tensor", data.len() * 4, self.info.total_mem, e)
            })?;
            let ready = self
                .stream
                .record_event(None)
                .map_err(drv("recording the upload's ready event"))?;
            Ok(self.tensor(buf, data.len(), ready))
        })
    }

    /// Wraps a buffer written on the render stream before `ready`.
    pub(super) fn tensor(
        &self,
        data: CudaSlice<f32>,
        len: usize,
        ready: CudaEvent,
    ) -> DeviceTensor {
        DeviceTensor::new(
            data,
            len,
            ready,
            self.ctx.clone(),
            self.stream.clone(),
            self.info.ordinal,
        )
    }

    /// Copies `bytes` bytes at device address `ptr` (memory of another framework) to
    /// the host, on the render stream, and waits for that copy only. The producer must
    /// have ordered its pending writes before the render stream's current work (DLPack
    /// `__dlpack__(stream=<render stream>)`) and must keep the memory alive until this
    /// returns.
    pub fn read_device_bytes(&self, ptr: u64, bytes: usize) -> Result<Vec<u8>> {
        if bytes == 0 {
            return Ok(Vec::new());
        }
        guarded("reading foreign device memory", || {
            self.ctx
                .bind_to_thread()
                .map_err(drv("binding the context"))?;
            // pageable memory: no implicit synchronisation (see read_back)
            let mut host = vec![0u8; bytes];
            // SAFETY: host has `bytes` bytes; the caller guarantees [ptr, ptr + bytes) is
            // live device memory of this context until we return.
            unsafe {
                dres::memcpy_dtoh_async(
                    &mut host,
                    ptr as dsys::CUdeviceptr,
                    self.stream.cu_stream(),
                )
            }
            .map_err(|e| {
                Error::Cuda(format!(
                    "copying {bytes} bytes from device address {ptr:#x}: {e:?}"
                ))
            })?;
            let done = self
                .stream
                .record_event(None)
                .map_err(drv("recording the copy's event"))?;
            done.synchronize().map_err(drv("waiting for the copy"))?;
            Ok(host)
        })
    }

    /// A device-wide synchronise (`cuCtxSynchronize`): waits for every stream of the
    /// context, other frameworks' included. Never used by heliograph itself; it is the
    /// blunt baseline the seed reproduction compares the stream-aware export with.
    pub fn sync_device(&self) -> Result<()> {
        guarded("synchronising the device", || {
            self.ctx.synchronize().map_err(drv("cuCtxSynchronize"))
        })
    }
}
