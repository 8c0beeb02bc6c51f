//! Work ordered with another framework's stream: an XLA custom call (JAX under
//! `jax.jit`) hands heliograph its own stream and device buffers and expects the call's
//! work to be ordered on that stream.
//!
//! The pattern, all without a host wait: [`CudaBackend::join_stream`] makes the render
//! stream wait for what the caller queued before the call (the inputs' writes), the
//! work runs on the render stream, [`CudaBackend::copy_to_foreign`] writes the outputs
//! into the caller's buffers, and [`CudaBackend::join_render_stream`] makes the caller's
//! stream wait for all of it. Because the caller's stream waits for everything the
//! call queued, the caller's buffers (inputs read by the copies, outputs written) are
//! not reused before the render stream is done with them.

use super::event::Event;
use super::tensor::DeviceTensor;
use super::{drv, guarded, CudaBackend};
use crate::error::{CudaError, Error, Result};
use cudarc::driver::result as dres;
use cudarc::driver::sys as dsys;

impl CudaBackend {
    /// Makes the render stream wait for the work queued so far on `stream` (a
    /// `CUstream` of this device's primary context).
    pub fn join_stream(&self, stream: usize) -> Result<()> {
        if stream == self.stream_handle() {
            return Ok(());
        }
        guarded("waiting for the caller's stream", || {
            let e = Event::recorded(&self.ctx, stream as dsys::CUstream)?;
            e.order(self.stream.cu_stream())
        })
    }

    /// Makes `stream` wait for the work queued so far on the render stream.
    pub fn join_render_stream(&self, stream: usize) -> Result<()> {
        if stream == self.stream_handle() {
            return Ok(());
        }
        guarded("ordering the caller's stream after the render", || {
            let e = Event::recorded(&self.ctx, self.stream.cu_stream())?;
            e.order(stream as dsys::CUstream)
        })
    }

    /// Copies `t` into `dst`, device memory of another framework that holds
    /// `t.len()` floats, on the render stream after the tensor's writes.
    ///
    /// # Safety
    /// `[dst, dst + 4 t.len())` must be device memory of this context that stays valid
    /// until the render stream has run the copy (see the module docs).
    pub unsafe fn copy_to_foreign(&self, t: &DeviceTensor, dst: u64) -> Result<()> {
        if t.ordinal() != self.info.ordinal {
            return Err(Error::Cuda(CudaError::Internal(format!(
                "a tensor of GPU {} copied on GPU {}",
                t.ordinal(),
                self.info.ordinal
            ))));
        }
        t.order_stream(self.stream_handle())?;
        if t.is_empty() {
            return Ok(());
        }
        guarded("copying into the caller's buffer", || {
            // SAFETY: the tensor holds len floats; dst per the caller's contract.
            unsafe {
                dres::memcpy_dtod_async(dst, t.device_ptr(), t.len() * 4, self.stream.cu_stream())
            }
            .map_err(drv("copying into the caller's buffer"))
        })
    }
}
