//! DLPack capsules: export of host and CUDA tensors as legacy (`dltensor`) or
//! versioned (`dltensor_versioned`) capsules, and import from any producer
//! ([`import`]). The structs, buffers and strided reads are the core's
//! ([`heliograph::tensor`]); this module is the PyCapsule glue.
//!
//! Ownership: a capsule's `manager_ctx` holds an `Arc` of the buffer, so the
//! memory lives until both heliograph and the consumer are done. The capsule
//! destructor calls the deleter only while the capsule still has its unconsumed
//! name (a consumer renames it to `used_*` and calls the deleter itself), and the
//! deleter needs no Python, so it may run on any thread.

use std::ffi::{c_void, CStr};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::thread::ThreadId;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use heliograph::backend::cuda::DeviceTensor;
pub use heliograph::tensor::dlpack::{
    DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
    CODE_FLOAT, DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST, FLAG_IS_COPIED,
};
pub use heliograph::tensor::{Buffer, HostArray};

/// Capsule exports whose deleter has not run yet (for leak and double-free tests).
pub static LIVE_EXPORTS: AtomicIsize = AtomicIsize::new(0);

/// How the memory of a CUDA export is made safe to reuse once the consumer lets go
/// (see "After the consumer drops its tensor" in the README).
#[derive(Clone, Copy, Debug)]
pub enum Fence {
    /// A stream the deleter can fence from any thread (1 or a pointer > 2).
    Stream(usize),
    /// The per-thread default stream (2) of the exporting thread: fenced there if the
    /// deleter runs on that thread, otherwise like `Unknown`.
    PerThread(ThreadId),
    /// The consumer named no stream (`None`, `-1`): the reclaimer frees the memory
    /// after a device-wide synchronise on its own thread.
    Unknown,
}

/// What a capsule shares: host memory, or device memory plus how to fence it when the
/// consumer is done.
pub enum Owner {
    /// A host buffer.
    Host(Arc<Buffer>),
    /// A CUDA tensor.
    Device {
        /// The tensor.
        tensor: Arc<DeviceTensor>,
        /// How its reuse is made safe after the consumer's queued work.
        fence: Fence,
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

    /// Drops the share; a device share first leaves its release fence (or hands the
    /// memory to the reclaimer when no stream can be fenced).
    fn release(self) {
        let Owner::Device { tensor, fence } = &self else {
            return;
        };
        match *fence {
            Fence::Stream(s) => {
                tensor.fence_stream(s);
            }
            Fence::PerThread(t) if t == std::thread::current().id() => {
                tensor.fence_stream(2);
            }
            Fence::PerThread(_) | Fence::Unknown => tensor.mark_unfenced(),
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
        dtype: DLDataType::F32,
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

pub use import::{import, import_device, park_release, parked, sweep_parked, HostTo, Imported};
