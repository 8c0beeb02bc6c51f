//! Device memory from heliograph's own stream-ordered pool.
//!
//! Films, accumulators, scene arrays and imported arrays are allocated with
//! `cuMemAllocFromPoolAsync` on the render stream and freed with `cuMemFreeAsync` on
//! it, so a buffer is reused only after every earlier operation of the render stream
//! (and every fence a consumer left on it, see [`super::tensor`]). The pool keeps up to
//! [`keep_bytes`] of freed memory instead of returning it to the driver at every
//! synchronisation: a loop that renders, exports and drops films allocates from memory
//! it already holds, while memory beyond that goes back to the driver for the other
//! libraries of the process. When an allocation finds the device full, the pool first
//! gives back everything it keeps and tries once more. The device's default pool, which
//! other libraries may use, is left alone.

use std::sync::Arc;

use cudarc::driver::{result as dres, sys as dsys, CudaStream};

use super::{drv, release, Owned};
use crate::error::{CudaError, Error, Result};

/// Freed memory the pool keeps for reuse: 2 GiB, at most an eighth of the device (many
/// 4K films and their scene; a framework sharing the device gets the rest back).
pub(crate) fn keep_bytes(total_mem: usize) -> u64 {
    (2u64 << 30).min(total_mem as u64 / 8)
}

/// A memory pool of one device; destroyed when the backend and every buffer from it
/// are gone (the driver releases it once its allocations are freed).
#[derive(Debug)]
pub(crate) struct Pool {
    pool: dsys::CUmemoryPool,
    total_mem: usize,
}

// SAFETY: a CUmemoryPool handle may be used from any thread of its context.
unsafe impl Send for Pool {}
// SAFETY: as above; the pool's operations are thread-safe in the driver.
unsafe impl Sync for Pool {}

impl Pool {
    /// A pool on device `ordinal` that keeps up to [`keep_bytes`] of the memory it frees.
    pub(crate) fn new(ordinal: usize, total_mem: usize) -> Result<Arc<Pool>> {
        // SAFETY: all-zero is a valid CUmemPoolProps (no handle types, no limits).
        let mut props: dsys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = dsys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = dsys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        props.location.type_ = dsys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = ordinal as i32;
        // SAFETY: props is a valid, initialised CUmemPoolProps.
        let pool = unsafe { dres::mem_pool::create(&props) }
            .map_err(drv("creating the film memory pool"))?;
        let mut keep = keep_bytes(total_mem);
        // SAFETY: the release threshold attribute takes a u64.
        let set = unsafe {
            dsys::cuMemPoolSetAttribute(
                pool,
                dsys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut keep as *mut u64 as *mut std::ffi::c_void,
            )
        };
        let pool = Arc::new(Pool { pool, total_mem });
        set.result()
            .map_err(drv("setting the pool's release threshold"))?;
        Ok(pool)
    }

    /// `bytes` (at least 16) on `stream`, usable by work enqueued there from now on.
    pub(crate) fn alloc(
        self: &Arc<Self>,
        bytes: usize,
        stream: &Arc<CudaStream>,
        what: &str,
    ) -> Result<DeviceBuffer> {
        let size = bytes.max(16);
        let mut ptr: dsys::CUdeviceptr = 0;
        let mut r = self.try_alloc(&mut ptr, size, stream);
        if r == dsys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
            // give back the freed memory the pool keeps, then try once more
            // SAFETY: the pool is live; trimming releases only unused memory.
            let _ = unsafe { dsys::cuMemPoolTrimTo(self.pool, 0) };
            r = self.try_alloc(&mut ptr, size, stream);
        }
        r.result()
            .map_err(|e| super::mem_error(what, size, self.total_mem, e))?;
        Ok(DeviceBuffer {
            ptr,
            bytes,
            stream: Owned::new(stream.clone()),
            _pool: self.clone(),
        })
    }

    fn try_alloc(
        &self,
        ptr: &mut dsys::CUdeviceptr,
        size: usize,
        stream: &Arc<CudaStream>,
    ) -> dsys::CUresult {
        // SAFETY: the pool and stream are live; ptr receives the allocation.
        unsafe { dsys::cuMemAllocFromPoolAsync(ptr, size, self.pool, stream.cu_stream()) }
    }

    /// As [`Self::alloc`], zero-filled on `stream`.
    pub(crate) fn alloc_zeros(
        self: &Arc<Self>,
        bytes: usize,
        stream: &Arc<CudaStream>,
        what: &str,
    ) -> Result<DeviceBuffer> {
        let buf = self.alloc(bytes, stream, what)?;
        // SAFETY: buf holds at least `bytes` bytes; the memset is ordered on its stream.
        unsafe { dres::memset_d8_async(buf.ptr, 0, bytes.max(16), stream.cu_stream()) }
            .map_err(drv("clearing a buffer"))?;
        Ok(buf)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        release(|| {
            // SAFETY: created in new(); outstanding frees complete before the driver
            // releases it.
            let _ = unsafe { dres::mem_pool::destroy(self.pool) };
        });
    }
}

/// Device memory from a [`Pool`], freed in stream order on the stream it was allocated
/// on when dropped (on any thread: the drop binds the context itself).
pub(crate) struct DeviceBuffer {
    ptr: dsys::CUdeviceptr,
    bytes: usize,
    stream: Owned<Arc<CudaStream>>,
    _pool: Arc<Pool>,
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer({:#x}, {} bytes)", self.ptr, self.bytes)
    }
}

impl DeviceBuffer {
    /// The device address.
    pub(crate) fn ptr(&self) -> u64 {
        self.ptr
    }

    /// The size asked for, in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The stream it is allocated (and freed) on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Copies `src` (host memory that stays valid until the copy ran: page-locked
    /// staging, or pageable memory, which the driver copies before returning) to byte
    /// offset `at`, on the buffer's stream.
    ///
    /// # Safety
    /// A pageable `src` is copied before this returns; a page-locked one must stay
    /// untouched until the stream has run the copy.
    pub(crate) unsafe fn write(&self, at: usize, src: &[u8]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        if at.checked_add(src.len()).is_none_or(|end| end > self.bytes) {
            return Err(Error::Cuda(CudaError::Internal(format!(
                "a {}-byte write at {at} past a {}-byte buffer",
                src.len(),
                self.bytes
            ))));
        }
        // SAFETY: the range lies in the buffer (checked above); src per the contract.
        unsafe { dres::memcpy_htod_async(self.ptr + at as u64, src, self.stream.cu_stream()) }
            .map_err(drv("copying to the device"))
    }

    /// Copies `bytes` bytes from device address `src` to byte offset `at`, on the
    /// buffer's stream.
    ///
    /// # Safety
    /// `[src, src + bytes)` must be device memory that stays valid until the stream
    /// has run the copy.
    pub(crate) unsafe fn copy_from_device(&self, at: usize, src: u64, bytes: usize) -> Result<()> {
        if at.checked_add(bytes).is_none_or(|end| end > self.bytes) {
            return Err(Error::Cuda(CudaError::Internal(format!(
                "a {bytes}-byte copy at {at} past a {}-byte buffer",
                self.bytes
            ))));
        }
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: both ranges are valid device memory (checked / caller's contract).
        unsafe {
            dres::memcpy_dtod_async(self.ptr + at as u64, src, bytes, self.stream.cu_stream())
        }
        .map_err(drv("copying on the device"))
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        release(|| {
            if self.stream.context().bind_to_thread().is_err() {
                return; // the context is gone: the driver reclaimed everything
            }
            // SAFETY: allocated from a pool on this stream and not freed before.
            let _ = unsafe { dres::free_async(self.ptr, self.stream.cu_stream()) };
        });
    }
}
