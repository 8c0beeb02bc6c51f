//! `Buffer`: float32 host memory aligned to 64 bytes, the storage of host tensors and
//! of host copies of device tensors (XLA:CPU copies buffers that are not 64-byte
//! aligned instead of sharing them).

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::Arc;

use crate::error::{Error, Result};

/// A float32 buffer aligned to 64 bytes (see the module docs).
pub struct Buffer {
    ptr: NonNull<f32>,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this struct; sharing happens through Arc.
unsafe impl Send for Buffer {}
// SAFETY: see above; readers only read, and writers are DLPack consumers by contract.
unsafe impl Sync for Buffer {}

impl Buffer {
    fn layout(len: usize) -> Result<Layout> {
        // never zero-sized, so that the pointer is a real allocation
        let bytes = len
            .checked_mul(4)
            .filter(|&b| b <= isize::MAX as usize - 64)
            .ok_or_else(|| Error::Render(format!("a buffer of {len} floats is too large")))?;
        Layout::from_size_align(bytes.max(64), 64)
            .map_err(|e| Error::Render(format!("a buffer of {len} floats: {e}")))
    }

    fn allocate(len: usize, zeroed: bool) -> Result<Buffer> {
        let layout = Self::layout(len)?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe {
            if zeroed {
                alloc_zeroed(layout)
            } else {
                alloc(layout)
            }
        } as *mut f32;
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::Render(format!(
                "out of memory: a host buffer of {:.2} GiB could not be allocated",
                layout.size() as f64 / (1u64 << 30) as f64
            ))
        })?;
        Ok(Buffer { ptr, len })
    }

    /// `len` zeros; an error (not an abort) when the memory cannot be allocated.
    pub fn zeroed(len: usize) -> Result<Buffer> {
        Self::allocate(len, true)
    }

    /// `len` values of unspecified contents, for a reader that writes every one of them
    /// (through [`Self::as_ptr`]) before the buffer is read or shared: one pass over
    /// the memory instead of zero-filling it first.
    pub(crate) fn uninit(len: usize) -> Result<Buffer> {
        Self::allocate(len, false)
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[f32]) -> Result<Arc<Buffer>> {
        let b = Self::uninit(data.len())?;
        // SAFETY: the new buffer has room for data.len() values and does not overlap it.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), b.as_ptr(), data.len()) };
        Ok(Arc::new(b))
    }

    /// The values.
    pub fn as_slice(&self) -> &[f32] {
        // SAFETY: ptr/len describe a live allocation owned by self, filled before anyone
        // reads: from_slice copies, zeroed zeroes, an uninit buffer's reader writes all.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The values, for filling a buffer that is not shared yet.
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        // SAFETY: as above; &mut self is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The data pointer (for DLPack).
    pub fn as_ptr(&self) -> *mut f32 {
        self.ptr.as_ptr()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Ok(layout) = Self::layout(self.len) {
            // SAFETY: allocated in allocate() with the same layout.
            unsafe { dealloc(self.ptr.as_ptr() as *mut u8, layout) }
        }
    }
}

/// Copies `src` to `dst` (room for `src.len()` values, not overlapping it): copies of a
/// megabyte or more are split over a small pool of its own (one core copies at a
/// fraction of the memory bandwidth; the render pool may be busy with a CPU render). In
/// a forked child, whose copy of the pool has no threads, it copies on the caller's.
///
/// # Safety
/// `dst` must be valid for writes of `src.len()` floats and not overlap `src`.
pub unsafe fn copy_parallel(src: &[f32], dst: *mut f32) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16; // 256 KiB
    let pool = match copy_pool() {
        Some(p) if src.len() >= 4 * CHUNK => p,
        _ => {
            // SAFETY: caller's contract.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
            return;
        }
    };
    let dst = dst as usize;
    pool.install(|| {
        src.par_chunks(CHUNK).enumerate().for_each(|(i, chunk)| {
            // SAFETY: chunk i goes to dst[i * CHUNK..], inside the caller's room; chunks
            // do not overlap each other or src.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    chunk.as_ptr(),
                    (dst as *mut f32).add(i * CHUNK),
                    chunk.len(),
                )
            };
        })
    });
}

/// The copy pool (at most 4 threads), if this process made it.
fn copy_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<(u32, Option<rayon::ThreadPool>)> = std::sync::OnceLock::new();
    let (pid, pool) = POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let pool = (threads > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("heliograph-copy-{i}"))
                    .build()
                    .ok()
            })
            .flatten();
        (std::process::id(), pool)
    });
    (*pid == std::process::id())
        .then_some(pool.as_ref())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_copies_copy_every_value() {
        for n in [0usize, 5, (1 << 18) - 1, 1 << 18, 3 * (1 << 18) + 7] {
            let src: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let mut dst = vec![-1f32; n];
            // SAFETY: dst has room for n values and does not overlap src.
            unsafe { copy_parallel(&src, dst.as_mut_ptr()) };
            assert_eq!(src, dst, "{n}");
        }
    }

    #[test]
    fn buffers_are_64_byte_aligned_and_hold_their_data() {
        for n in [0usize, 1, 3, 1000] {
            let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let b = Buffer::from_slice(&data).unwrap();
            assert_eq!(b.as_ptr() as usize % 64, 0);
            assert_eq!(b.as_slice(), &data[..]);
            assert_eq!(Buffer::zeroed(n).unwrap().as_slice(), vec![0.0; n]);
        }
        let e = Buffer::zeroed(usize::MAX / 2).err().unwrap().to_string();
        assert!(e.contains("too large"), "{e}");
    }
}
