//! DLPack on the host (../shared/DLPACK.md): the FFI structs, a 64-byte-aligned
//! float buffer, export as legacy (`dltensor`) or versioned (`dltensor_versioned`)
//! capsules; `import` copies from any host DLPack producer.
//!
//! Ownership: a capsule's `manager_ctx` holds an `Arc` of the buffer, so the
//! memory lives until both heliograph and the consumer are done. The capsule
//! destructor calls the deleter only while the capsule still has its unconsumed
//! name (a consumer renames it to `used_*` and calls the deleter itself), and the
//! deleter needs no Python, so it may run on any thread.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::{c_void, CStr};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// `kDLCPU`.
pub const DEVICE_CPU: i32 = 1;
/// `kDLCUDA`.
pub const DEVICE_CUDA: i32 = 2;
pub(crate) const CODE_INT: u8 = 0;
pub(crate) const CODE_UINT: u8 = 1;
pub(crate) const CODE_FLOAT: u8 = 2;
pub(crate) const CODE_BOOL: u8 = 6;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`.
const FLAG_IS_COPIED: u64 = 2;

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLDevice {
    /// Device type (1 = CPU, 2 = CUDA).
    pub device_type: i32,
    /// Device ordinal.
    pub device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDataType {
    /// Type code (0 int, 1 uint, 2 float, 6 bool, ...).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for scalars).
    pub lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
pub struct DLTensor {
    pub(crate) data: *mut c_void,
    pub(crate) device: DLDevice,
    pub(crate) ndim: i32,
    pub(crate) dtype: DLDataType,
    pub(crate) shape: *mut i64,
    pub(crate) strides: *mut i64,
    pub(crate) byte_offset: u64,
}

/// `DLManagedTensor` (legacy capsules).
#[repr(C)]
pub struct DLManagedTensor {
    pub(crate) dl_tensor: DLTensor,
    pub(crate) manager_ctx: *mut c_void,
    pub(crate) deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
pub struct DLPackVersion {
    major: u32,
    minor: u32,
}

/// `DLManagedTensorVersioned` (versioned capsules).
#[repr(C)]
pub struct DLManagedTensorVersioned {
    pub(crate) version: DLPackVersion,
    pub(crate) manager_ctx: *mut c_void,
    pub(crate) deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    pub(crate) flags: u64,
    pub(crate) dl_tensor: DLTensor,
}

/// Capsule exports whose deleter has not run yet (for leak and double-free tests).
pub static LIVE_EXPORTS: AtomicIsize = AtomicIsize::new(0);

/// A float32 buffer aligned to 64 bytes (XLA:CPU copies unaligned buffers).
pub struct Buffer {
    ptr: NonNull<f32>,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this struct; sharing happens through Arc.
unsafe impl Send for Buffer {}
// SAFETY: see above; readers only read, and writers are DLPack consumers by contract.
unsafe impl Sync for Buffer {}

impl Buffer {
    fn layout(len: usize) -> Layout {
        // never zero-sized, so that the pointer is a real allocation
        Layout::from_size_align((len * 4).max(64), 64).expect("buffer size overflows")
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[f32]) -> Arc<Buffer> {
        let layout = Self::layout(data.len());
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) } as *mut f32;
        let Some(ptr) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        // SAFETY: the allocation holds at least `data.len()` floats and does not overlap `data`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.as_ptr(), data.len()) };
        Arc::new(Buffer {
            ptr,
            len: data.len(),
        })
    }

    /// The values.
    pub fn as_slice(&self) -> &[f32] {
        // SAFETY: ptr/len describe a live allocation owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The data pointer (for DLPack).
    pub fn as_ptr(&self) -> *mut f32 {
        self.ptr.as_ptr()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated in from_slice with the same layout.
        unsafe { dealloc(self.ptr.as_ptr() as *mut u8, Self::layout(self.len)) }
    }
}

/// What a capsule owns: the managed tensor record plus the buffer and the
/// shape/strides arrays it points into.
struct Export<M> {
    managed: M,
    _owner: Arc<Buffer>,
    _shape: Box<[i64]>,
    _strides: Box<[i64]>,
}

unsafe extern "C" fn delete_legacy(m: *mut DLManagedTensor) {
    if !m.is_null() {
        // SAFETY: manager_ctx is the Box<Export> this record lives in (see export()).
        unsafe {
            drop(Box::from_raw(
                (*m).manager_ctx as *mut Export<DLManagedTensor>,
            ))
        };
        LIVE_EXPORTS.fetch_sub(1, Ordering::Relaxed);
    }
}

unsafe extern "C" fn delete_versioned(m: *mut DLManagedTensorVersioned) {
    if !m.is_null() {
        // SAFETY: as delete_legacy.
        unsafe {
            drop(Box::from_raw(
                (*m).manager_ctx as *mut Export<DLManagedTensorVersioned>,
            ))
        };
        LIVE_EXPORTS.fetch_sub(1, Ordering::Relaxed);
    }
}

pub(crate) const NAME_LEGACY: &CStr = c"dltensor";
pub(crate) const NAME_VERSIONED: &CStr = c"dltensor_versioned";
pub(crate) const USED_LEGACY: &CStr = c"used_dltensor";
pub(crate) const USED_VERSIONED: &CStr = c"used_dltensor_versioned";

unsafe extern "C" fn capsule_destructor_legacy(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with a live capsule; IsValid sets no error.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, NAME_LEGACY.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, NAME_LEGACY.as_ptr()) as *mut DLManagedTensor;
            if let Some(d) = m.as_ref().and_then(|m| m.deleter) {
                d(m);
            }
        }
    }
}

unsafe extern "C" fn capsule_destructor_versioned(cap: *mut ffi::PyObject) {
    // SAFETY: as capsule_destructor_legacy.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, NAME_VERSIONED.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, NAME_VERSIONED.as_ptr())
                as *mut DLManagedTensorVersioned;
            if let Some(d) = m.as_ref().and_then(|m| m.deleter) {
                d(m);
            }
        }
    }
}

/// Exports `buf` with `shape` (C order) as a capsule; `versioned` picks the
/// capsule kind, `copied` sets the IS_COPIED flag (versioned only).
pub fn export<'py>(
    py: Python<'py>,
    buf: Arc<Buffer>,
    shape: &[usize],
    versioned: bool,
    copied: bool,
) -> PyResult<Bound<'py, PyCapsule>> {
    LIVE_EXPORTS.fetch_add(1, Ordering::Relaxed);
    let mut shape_arr: Box<[i64]> = shape.iter().map(|&n| n as i64).collect();
    let mut strides: Box<[i64]> = vec![0; shape.len()].into_boxed_slice();
    let mut s = 1i64;
    for i in (0..shape.len()).rev() {
        strides[i] = s;
        s *= shape_arr[i].max(1);
    }
    let tensor = DLTensor {
        data: buf.as_ptr() as *mut c_void,
        device: DLDevice {
            device_type: DEVICE_CPU,
            device_id: 0,
        },
        ndim: shape.len() as i32,
        dtype: DLDataType {
            code: CODE_FLOAT,
            bits: 32,
            lanes: 1,
        },
        shape: shape_arr.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    if versioned {
        let managed = DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 1 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_versioned),
            flags: if copied { FLAG_IS_COPIED } else { 0 },
            dl_tensor: tensor,
        };
        let ctx = Box::into_raw(Box::new(Export {
            managed,
            _owner: buf,
            _shape: shape_arr,
            _strides: strides,
        }));
        // SAFETY: ctx is a live Box; the record points back at it for the deleter.
        let m = unsafe {
            (*ctx).managed.manager_ctx = ctx as *mut c_void;
            NonNull::from(&mut (*ctx).managed).cast::<c_void>()
        };
        // SAFETY: m stays valid until the deleter runs; the destructor checks the name.
        let cap = unsafe {
            PyCapsule::new_with_pointer_and_destructor(
                py,
                m,
                NAME_VERSIONED,
                Some(capsule_destructor_versioned),
            )
        };
        if cap.is_err() {
            // SAFETY: the capsule was not created, so nobody else owns ctx.
            unsafe { delete_versioned(m.as_ptr() as *mut DLManagedTensorVersioned) };
        }
        cap
    } else {
        let managed = DLManagedTensor {
            dl_tensor: tensor,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_legacy),
        };
        let ctx = Box::into_raw(Box::new(Export {
            managed,
            _owner: buf,
            _shape: shape_arr,
            _strides: strides,
        }));
        // SAFETY: as above.
        let m = unsafe {
            (*ctx).managed.manager_ctx = ctx as *mut c_void;
            NonNull::from(&mut (*ctx).managed).cast::<c_void>()
        };
        // SAFETY: as above.
        let cap = unsafe {
            PyCapsule::new_with_pointer_and_destructor(
                py,
                m,
                NAME_LEGACY,
                Some(capsule_destructor_legacy),
            )
        };
        if cap.is_err() {
            // SAFETY: as above.
            unsafe { delete_legacy(m.as_ptr() as *mut DLManagedTensor) };
        }
        cap
    }
}

/// Checks the arguments of `__dlpack__` for a host tensor (DLPACK.md table) and
/// returns `(versioned, copy)`.
pub fn check_export_args(
    stream: Option<&Bound<'_, PyAny>>,
    max_version: Option<&Bound<'_, PyAny>>,
    dl_device: Option<&Bound<'_, PyAny>>,
    copy: Option<&Bound<'_, PyAny>>,
) -> PyResult<(bool, bool)> {
    if let Some(s) = stream.filter(|s| !s.is_none()) {
        if s.is_instance_of::<pyo3::types::PyBool>() || !s.is_instance_of::<pyo3::types::PyInt>() {
            return Err(PyTypeError::new_err(format!(
                "__dlpack__: stream must be None or an int, got {}",
                s.get_type().name()?
            )));
        }
        let v: i64 = s.extract()?;
        if v < -1 {
            return Err(PyValueError::new_err(format!(
                "__dlpack__: stream {v} is not a valid stream (must be >= -1)"
            )));
        }
        return Err(PyBufferError::new_err(format!(
            "__dlpack__: a CPU tensor takes only stream=None, got stream={v}"
        )));
    }
    let versioned = match max_version.filter(|m| !m.is_none()) {
        None => false,
        Some(m) => {
            let (major, _minor): (i64, i64) = m.extract().map_err(|_| {
                PyTypeError::new_err("__dlpack__: max_version must be a (major, minor) tuple")
            })?;
            major >= 1
        }
    };
    if let Some(d) = dl_device.filter(|d| !d.is_none()) {
        let (kind, id): (i32, i32) = d.extract().map_err(|_| {
            PyTypeError::new_err("__dlpack__: dl_device must be a (device_type, device_id) tuple")
        })?;
        if kind != DEVICE_CPU || id != 0 {
            return Err(PyBufferError::new_err(format!(
                "__dlpack__: a CPU tensor cannot be exported to device ({kind}, {id})"
            )));
        }
    }
    let copy = match copy.filter(|c| !c.is_none()) {
        None => false,
        Some(c) => c
            .extract::<bool>()
            .map_err(|_| PyTypeError::new_err("__dlpack__: copy must be None, True or False"))?,
    };
    Ok((versioned, copy))
}

mod import;

pub use import::{import, HostArray};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_64_byte_aligned_and_hold_their_data() {
        for n in [0usize, 1, 3, 1000] {
            let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let b = Buffer::from_slice(&data);
            assert_eq!(b.as_ptr() as usize % 64, 0);
            assert_eq!(b.as_slice(), &data[..]);
        }
    }

    #[test]
    fn record_layouts_match_dlpack_h() {
        // dlpack.h on 64-bit: DLTensor 48 bytes, DLManagedTensor 64, DLManagedTensorVersioned 80
        assert_eq!(std::mem::size_of::<DLTensor>(), 48);
        assert_eq!(std::mem::size_of::<DLManagedTensor>(), 64);
        assert_eq!(std::mem::size_of::<DLManagedTensorVersioned>(), 80);
        assert_eq!(
            std::mem::offset_of!(DLManagedTensorVersioned, dl_tensor),
            32
        );
    }
}
