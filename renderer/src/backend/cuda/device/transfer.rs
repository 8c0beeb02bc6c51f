//! Copies between host and device through page-locked staging.
//!
//! A copy from or to ordinary (pageable) host memory is slow and, for large sizes,
//! waits for the stream it is ordered on: the driver stages it through its own small
//! buffers chunk by chunk. heliograph copies through page-locked buffers instead, which
//! it allocates once and grows when a larger copy comes (allocating page-locked memory
//! is expensive and interrupts concurrent work, so it never happens per copy): an
//! upload is one host copy into staging plus an asynchronous DMA on the render stream;
//! a read is a DMA on the copy stream (which waits on the tensor's ready event only, so
//! a read never waits for renders enqueued after the tensor) plus one host copy out.
//!
//! A staging buffer is busy until the DMA that uses it has run (an event); uploads
//! rotate through a few buffers so the host rarely waits for one.

use std::sync::{Arc, Mutex};

use cudarc::driver::{result as dres, CudaContext};

use super::event::{Event, SPIN};
use super::{code, drv, release, Owned};
use crate::error::{CudaError, Error, Result};

/// Most page-locked buffers kept; past this a copy waits for the oldest busy one.
const MAX_SLOTS: usize = 4;

/// One page-locked buffer.
struct Slot {
    ptr: *mut u8,
    cap: usize,
    /// In use by a host thread.
    leased: bool,
    /// The DMA that last used it (the buffer is free once it completed).
    dma: Option<Event>,
}

// SAFETY: the buffer is plain page-locked host memory owned by the slot; access is
// serialised by the lease (one holder) and the DMA event.
unsafe impl Send for Slot {}

impl Drop for Slot {
    fn drop(&mut self) {
        release(|| {
            // a pending DMA still uses the buffer: wait for it before freeing
            if let Some(e) = self.dma.take() {
                let _ = e.wait(SPIN);
            }
            // SAFETY: allocated by cuMemHostAlloc in Staging::grow.
            let _ = unsafe { dres::free_host(self.ptr as *mut std::ffi::c_void) };
        });
    }
}

/// Page-locked staging buffers of one backend.
pub(crate) struct Staging {
    ctx: Owned<Arc<CudaContext>>,
    slots: Mutex<Vec<Slot>>,
}

/// One staging buffer, held by one host thread until dropped or [`Lease::release_after`].
pub(crate) struct Lease<'a> {
    staging: &'a Staging,
    index: usize,
    ptr: *mut u8,
    bytes: usize,
    dma: Option<Event>,
}

impl Staging {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Staging {
        Staging {
            ctx: Owned::new(ctx.clone()),
            slots: Mutex::new(Vec::new()),
        }
    }

    /// Bytes of page-locked memory held.
    pub(crate) fn held(&self) -> usize {
        self.slots
            .lock()
            .map(|s| s.iter().map(|s| s.cap).sum())
            .unwrap_or(0)
    }

    /// A buffer of at least `bytes` bytes that no DMA uses any more.
    pub(crate) fn lease(&self, bytes: usize) -> Result<Lease<'_>> {
        loop {
            let mut slots = self
                .slots
                .lock()
                .map_err(|_| Error::Cuda(CudaError::Lock { what: "staging" }))?;
            // a free buffer that fits (the smallest), else grow, else wait
            let mut best: Option<(usize, usize)> = None;
            for (i, s) in slots.iter_mut().enumerate() {
                if s.leased || s.cap < bytes {
                    continue;
                }
                if let Some(e) = &s.dma {
                    if !e.query()? {
                        continue;
                    }
                    s.dma = None;
                }
                if best.is_none_or(|(_, cap)| cap > s.cap) {
                    best = Some((i, s.cap));
                }
            }
            if let Some((i, _)) = best {
                slots[i].leased = true;
                return Ok(Lease {
                    staging: self,
                    index: i,
                    ptr: slots[i].ptr,
                    bytes,
                    dma: None,
                });
            }
            // replace the smallest idle buffer, or add one while under the bound
            let idle = (0..slots.len()).filter(|&i| !slots[i].leased && slots[i].dma.is_none());
            let victim = idle.min_by_key(|&i| slots[i].cap);
            if victim.is_some() || slots.len() < MAX_SLOTS {
                let cap = bytes.next_power_of_two().max(1 << 20);
                let slot = self.grow(cap)?;
                let i = match victim {
                    Some(i) => {
                        slots[i] = slot;
                        i
                    }
                    None => {
                        slots.push(slot);
                        slots.len() - 1
                    }
                };
                slots[i].leased = true;
                return Ok(Lease {
                    staging: self,
                    index: i,
                    ptr: slots[i].ptr,
                    bytes,
                    dma: None,
                });
            }
            // every buffer is busy: wait for the oldest DMA outside the lock
            let pending = slots.iter_mut().find_map(|s| s.dma.take());
            drop(slots);
            match pending {
                Some(e) => e.wait(SPIN)?,
                None => std::thread::yield_now(), // all leased by other threads
            }
        }
    }

    fn grow(&self, cap: usize) -> Result<Slot> {
        self.ctx
            .bind_to_thread()
            .map_err(drv("binding the context"))?;
        // SAFETY: allocates `cap` bytes of page-locked host memory (flags 0: cached, so
        // host reads of downloaded data are fast).
        let ptr = unsafe { dres::malloc_host(cap, 0) }.map_err(|e| {
            Error::Cuda(CudaError::StagingAlloc {
                bytes: cap,
                error: code(e),
            })
        })? as *mut u8;
        Ok(Slot {
            ptr,
            cap,
            leased: false,
            dma: None,
        })
    }

    fn give_back(&self, index: usize, dma: Option<Event>) {
        if let Ok(mut slots) = self.slots.lock() {
            if let Some(s) = slots.get_mut(index) {
                s.leased = false;
                s.dma = dma;
            }
        }
    }
}

impl Lease<'_> {
    /// The buffer.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the slot holds at least `bytes` bytes and this lease is its only user.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.bytes) }
    }

    /// The buffer, read-only.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(self.ptr, self.bytes) }
    }

    /// The first `bytes / 4` floats of the buffer (page-locked memory is page aligned).
    pub(crate) fn floats_mut(&mut self) -> &mut [f32] {
        debug_assert_eq!(self.ptr as usize % 4, 0);
        // SAFETY: as above; the memory is aligned for f32 and any bit pattern is one.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut f32, self.bytes / 4) }
    }

    /// As [`Self::floats_mut`], read-only.
    pub(crate) fn floats(&self) -> &[f32] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(self.ptr as *const f32, self.bytes / 4) }
    }

    /// Returns the buffer once the DMA `dma` (recorded after the copy that reads or
    /// writes it) has run.
    pub(crate) fn release_after(mut self, dma: Event) {
        self.dma = Some(dma);
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        self.staging.give_back(self.index, self.dma.take());
    }
}
