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

    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[f32]) -> Result<Arc<Buffer>> {
        let mut b = Self::allocate(data.len(), false)?;
        b.as_mut_slice().copy_from_slice(data);
        Ok(Arc::new(b))
    }

    /// The values.
    pub fn as_slice(&self) -> &[f32] {
        // SAFETY: ptr/len describe a live allocation owned by self (allocate() fills it
        // before anyone reads: from_slice copies, zeroed zeroes).
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

#[cfg(test)]
mod tests {
    use super::*;

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
