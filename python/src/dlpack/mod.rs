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

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use heliograph::backend::cuda::DeviceTensor;

/// `kDLCPU`.
pub const DEVICE_CPU: i32 = 1;
/// `kDLCUDA`.
pub const DEVICE_CUDA: i32 = 2;
/// `kDLCUDAHost` (pinned host memory, readable by the host).
pub const DEVICE_CUDA_HOST: i32 = 3;
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
    pub(crate) major: u32,
    pub(crate) minor: u32,
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

/// What a capsule shares: host memory, or device memory plus the consumer stream (if
/// known) on which to leave a release fence when the consumer is done.
pub enum Owner {
    /// A host buffer.
    Host(Arc<Buffer>),
    /// A CUDA tensor; `fence`: the consumer's stream handle (1 = legacy default stream,
    /// or a stream > 2), whose queued work the free must wait for.
    Device {
        /// The tensor.
        tensor: Arc<DeviceTensor>,
        /// The consumer's stream, when it named one the deleter can use.
        fence: Option<usize>,
    },
}

impl Owner {
    fn data_and_device(&self) -> (*mut c_void, DLDevice) {
        match self {
            Owner::Host(b) => (
                b.as_ptr() as *mut c_void,
                DLDevice {
                    device_type: DEVICE_CPU,
                    device_id: 0,
                },
            ),
            Owner::Device { tensor, .. } => (
                tensor.device_ptr() as usize as *mut c_void,
                DLDevice {
                    device_type: DEVICE_CUDA,
                    device_id: tensor.ordinal() as i32,
                },
            ),
        }
    }

    /// Drops the share; a device share first leaves its release fence.
    fn release(self) {
        if let Owner::Device {
            tensor,
            fence: Some(s),
        } = &self
        {
            tensor.fence_stream(*s);
        }
    }
}

/// What a capsule owns: the managed tensor record plus the memory and the
/// shape/strides arrays it points into.
struct Export<M> {
    managed: M,
    owner: Option<Owner>,
    _shape: Box<[i64]>,
    _strides: Box<[i64]>,
}

/// The two managed-tensor records, so one code path builds both capsule kinds.
trait Managed: Sized {
    /// The unconsumed capsule name.
    const NAME: &'static CStr;
    /// A record for `tensor` with `flags` (ignored by the legacy record) and no context yet.
    fn new(tensor: DLTensor, flags: u64) -> Self;
    fn ctx(&self) -> *mut c_void;
    fn set_ctx(&mut self, ctx: *mut c_void);
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)>;
}

impl Managed for DLManagedTensor {
    const NAME: &'static CStr = NAME_LEGACY;
    fn new(dl_tensor: DLTensor, _flags: u64) -> Self {
        DLManagedTensor {
            dl_tensor,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete::<DLManagedTensor>),
        }
    }
    fn ctx(&self) -> *mut c_void {
        self.manager_ctx
    }
    fn set_ctx(&mut self, ctx: *mut c_void) {
        self.manager_ctx = ctx;
    }
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)> {
        self.deleter
    }
}

impl Managed for DLManagedTensorVersioned {
    const NAME: &'static CStr = NAME_VERSIONED;
    fn new(dl_tensor: DLTensor, flags: u64) -> Self {
        DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 1 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete::<DLManagedTensorVersioned>),
            flags,
            dl_tensor,
        }
    }
    fn ctx(&self) -> *mut c_void {
        self.manager_ctx
    }
    fn set_ctx(&mut self, ctx: *mut c_void) {
        self.manager_ctx = ctx;
    }
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)> {
        self.deleter
    }
}

/// The DLPack deleter: frees the export and drops its share of the memory. Needs no
/// Python and may run on any thread; a panic must not cross the C boundary.
unsafe extern "C" fn delete<M: Managed>(m: *mut M) {
    if m.is_null() {
        return;
    }
    // SAFETY: manager_ctx is the Box<Export<M>> this record lives in (see export()).
    let mut export = unsafe { Box::from_raw((*m).ctx() as *mut Export<M>) };
    let owner = export.owner.take();
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        if let Some(o) = owner {
            o.release();
        }
        drop(export);
    }));
    LIVE_EXPORTS.fetch_sub(1, Ordering::Relaxed);
}

pub(crate) const NAME_LEGACY: &CStr = c"dltensor";
pub(crate) const NAME_VERSIONED: &CStr = c"dltensor_versioned";
pub(crate) const USED_LEGACY: &CStr = c"used_dltensor";
pub(crate) const USED_VERSIONED: &CStr = c"used_dltensor_versioned";

/// The capsule destructor: calls the deleter only while the capsule still has its
/// unconsumed name (a consumer renames it and calls the deleter itself).
unsafe extern "C" fn capsule_destructor<M: Managed>(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with a live capsule; IsValid sets no error.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, M::NAME.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, M::NAME.as_ptr()) as *mut M;
            if let Some(d) = m.as_ref().and_then(|m| m.deleter()) {
                d(m);
            }
        }
    }
}

/// Exports `owner`'s memory with `shape` (float32, C order) as a capsule: versioned
/// (`dltensor_versioned`, with IS_COPIED when `copied`) or legacy (`dltensor`).
pub fn export<'py>(
    py: Python<'py>,
    owner: Owner,
    shape: &[usize],
    versioned: bool,
    copied: bool,
) -> PyResult<Bound<'py, PyCapsule>> {
    let flags = if copied { FLAG_IS_COPIED } else { 0 };
    if versioned {
        make_capsule::<DLManagedTensorVersioned>(py, owner, shape, flags)
    } else {
        make_capsule::<DLManagedTensor>(py, owner, shape, flags)
    }
}

fn make_capsule<'py, M: Managed>(
    py: Python<'py>,
    owner: Owner,
    shape: &[usize],
    flags: u64,
) -> PyResult<Bound<'py, PyCapsule>> {
    LIVE_EXPORTS.fetch_add(1, Ordering::Relaxed);
    let mut shape_arr: Box<[i64]> = shape.iter().map(|&n| n as i64).collect();
    let mut strides: Box<[i64]> = vec![0; shape.len()].into_boxed_slice();
    let mut s = 1i64;
    for i in (0..shape.len()).rev() {
        strides[i] = s;
        s *= shape_arr[i].max(1);
    }
    let (data, device) = owner.data_and_device();
    let tensor = DLTensor {
        data,
        device,
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
    let ctx = Box::into_raw(Box::new(Export {
        managed: M::new(tensor, flags),
        owner: Some(owner),
        _shape: shape_arr,
        _strides: strides,
    }));
    // SAFETY: ctx is a live Box; the record points back at it for the deleter.
    let m = unsafe {
        (*ctx).managed.set_ctx(ctx as *mut c_void);
        NonNull::from(&mut (*ctx).managed).cast::<c_void>()
    };
    // SAFETY: m stays valid until the deleter runs; the destructor checks the name.
    let cap = unsafe {
        PyCapsule::new_with_pointer_and_destructor(py, m, M::NAME, Some(capsule_destructor::<M>))
    };
    if cap.is_err() {
        // SAFETY: the capsule was not created, so nobody else owns ctx.
        unsafe { delete::<M>(m.as_ptr() as *mut M) };
    }
    cap
}

mod args;

pub use args::{ExportArgs, StreamArg};

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
