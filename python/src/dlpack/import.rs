//! DLPack import from any producer (NumPy, PyTorch, JAX, CuPy, ...): host tensors are
//! read into float32 on the host (the core's strided reader); CUDA tensors are copied
//! device to device on heliograph's render stream and never go through the host.
//!
//! A CUDA producer is asked for its tensor with `stream=<heliograph's render stream>`,
//! so it orders its pending writes before the copy, which runs on that stream (or, where
//! the caller knows the stream the producer writes on, with `stream=-1` while the render
//! stream waits for that stream: `after` of [`import_device`]). The
//! producer's capsule is consumed at once (renamed `used_*`) but its deleter runs only
//! once the copy has finished: the capsule is *parked* with the imported tensor and
//! released by the next heliograph call that finds the copy done ([`sweep_parked`]),
//! holding the GIL (some producers' deleters need it). The host never waits.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};

use heliograph::backend::cuda::{CudaBackend, DeviceTensor};
use heliograph::interop::import::{check_device, cuda_array, read_host_to, HostTo, Imported};

use heliograph::interop::export::{NAME_LEGACY, NAME_VERSIONED, USED_LEGACY, USED_VERSIONED};

use super::{
    DLManagedTensor, DLManagedTensorVersioned, DLTensor, HostArray, DEVICE_CPU, DEVICE_CUDA,
    DEVICE_CUDA_HOST,
};
use crate::errors::to_py;

/// Imports `obj` into host memory: a host array is read, a CUDA array is copied on the
/// device and then read (this waits for the copy: for callers that need the values on
/// the host, such as image files and bitmaps).
pub fn import(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<HostArray> {
    let imported = import_device(py, obj, HostTo::Vec, None)?;
    py.detach(|| imported.into_host()).map_err(to_py)
}

/// Imports `obj`, keeping a CUDA array on the device (see the module docs); a host
/// array goes where `host_to` says. `after`: the CUDA stream whose queued work writes
/// `obj`, for a caller that knows it (PyTorch's current stream, the one PyTorch's own
/// export orders from): the producer is then asked for no synchronisation (`stream=-1`,
/// which DLPack leaves to the consumer) and the render stream waits for that stream
/// itself — the same order as passing the render stream, without the producer's
/// synchronisation code (PyTorch's is Python: an external-stream object and an event,
/// ~85 µs inside autograd's backward). A host array ignores it.
pub fn import_device(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    host_to: HostTo<'_>,
    after: Option<usize>,
) -> PyResult<Imported> {
    sweep_parked(py);
    let claimed = match obj.call_method0("__dlpack_device__") {
        Ok(d) => Some(d.extract::<(i32, i32)>().map_err(|_| {
            PyTypeError::new_err("__dlpack_device__() must return a (device_type, device_id) tuple")
        })?),
        Err(_) => None,
    };
    let cuda = match claimed {
        None | Some((DEVICE_CPU, _)) | Some((DEVICE_CUDA_HOST, _)) => None,
        Some((DEVICE_CUDA, id)) => Some(cuda_backend_for(py, id)?),
        Some((kind, id)) => {
            return Err(PyBufferError::new_err(format!(
                "cannot import an array on DLPack device ({kind}, {id}): heliograph reads host \
                 memory (1) and CUDA memory (2) of the device it renders on"
            )))
        }
    };
    let kwargs = PyDict::new(py);
    if let Some(be) = &cuda {
        match after {
            Some(_) => kwargs.set_item("stream", -1)?,
            None => kwargs.set_item("stream", be.stream_handle())?,
        }
    }
    kwargs.set_item("max_version", PyTuple::new(py, [1u32, 1u32])?)?;
    let cap = match obj.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(c) => c,
        // an older producer without max_version: ask again for a legacy capsule
        Err(e) if e.is_instance_of::<PyTypeError>(py) => {
            kwargs.del_item("max_version")?;
            obj.call_method("__dlpack__", (), Some(&kwargs))?
        }
        Err(e) => return Err(e),
    };
    let cap = cap
        .cast_into::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err("__dlpack__ did not return a capsule"))?;
    let taken = take(&cap)?;
    // SAFETY: the producer keeps the tensor alive until its deleter runs.
    let t = unsafe { taken.tensor() };
    let res = check_device(t, claimed)
        .map_err(to_py)
        .and_then(|()| match &cuda {
            // SAFETY: as above; the capsule (held here) keeps the memory alive without the GIL.
            None => {
                let t = SendPtr(t);
                py.detach(move || unsafe { read_host_to(t.get(), host_to) })
                    .map_err(to_py)
            }
            Some(be) => {
                if let Some(stream) = after {
                    be.join_stream(stream).map_err(to_py)?;
                }
                // SAFETY: as above; the deleter runs once the copy has (taken is parked).
                unsafe { copy_cuda(py, be, t) }
            }
        });
    match (&res, &cuda) {
        (Ok(Imported::Device { tensor, .. }), Some(_)) => park_release(taken, tensor.clone()),
        _ => drop(taken),
    }
    res
}

/// A tensor reference that crosses a GIL release (the capsule keeps it alive).
struct SendPtr<'a>(&'a DLTensor);

// SAFETY: the DLTensor describes memory the producer keeps alive until its deleter runs;
// reading it from another thread without the GIL is what DLPack allows.
unsafe impl Send for SendPtr<'_> {}

impl<'a> SendPtr<'a> {
    fn get(self) -> &'a DLTensor {
        self.0
    }
}

/// Enqueues the device-to-device copy of a CUDA tensor.
///
/// # Safety
/// `t` must describe live device memory of `be`'s device until the returned tensor is
/// ready.
unsafe fn copy_cuda(py: Python<'_>, be: &CudaBackend, t: &DLTensor) -> PyResult<Imported> {
    // SAFETY: the caller's contract.
    let (a, shape) = unsafe { cuda_array(t) }.map_err(to_py)?;
    let tensor = py.detach(|| be.import_device(&a)).map_err(to_py)?;
    Ok(Imported::Device {
        tensor: Arc::new(tensor),
        shape,
        dtype: t.dtype,
        non_finite: None,
    })
}

/// The CUDA backend, for an array on CUDA device `id`.
fn cuda_backend_for(py: Python<'_>, id: i32) -> PyResult<Arc<CudaBackend>> {
    let be = crate::cuda::backend(py).map_err(|e| {
        PyBufferError::new_err(format!(
            "a CUDA array cannot be imported without the CUDA backend: {}",
            e.value(py)
        ))
    })?;
    if id < 0 || id as usize != be.info().ordinal {
        return Err(PyBufferError::new_err(format!(
            "the array is on CUDA device {id}, but heliograph renders on device {}: move it \
             there first (e.g. x.to('cuda:{}'))",
            be.info().ordinal,
            be.info().ordinal
        )));
    }
    Ok(be)
}

/// A consumed producer capsule: its managed tensor, whose deleter runs on drop.
pub struct Taken {
    managed: *mut std::ffi::c_void,
    versioned: bool,
}

// SAFETY: the managed tensor is the producer's; DLPack lets its deleter run on any
// thread (heliograph runs it while holding the GIL, see sweep_parked).
unsafe impl Send for Taken {}

impl Taken {
    /// The tensor.
    ///
    /// # Safety
    /// Valid until the drop runs the deleter.
    unsafe fn tensor(&self) -> &DLTensor {
        // SAFETY: `managed` points at the record kind `versioned` says.
        unsafe {
            if self.versioned {
                &(*(self.managed as *mut DLManagedTensorVersioned)).dl_tensor
            } else {
                &(*(self.managed as *mut DLManagedTensor)).dl_tensor
            }
        }
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        // SAFETY: the record is the producer's, consumed by us; its deleter frees it.
        unsafe {
            if self.versioned {
                let m = self.managed as *mut DLManagedTensorVersioned;
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            } else {
                let m = self.managed as *mut DLManagedTensor;
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            }
        }
    }
}

/// Consumes the capsule as the protocol says (renamed to `used_*`); the deleter runs
/// when the returned value is dropped.
fn take(cap: &Bound<'_, PyCapsule>) -> PyResult<Taken> {
    let ptr = cap.as_ptr();
    // SAFETY: ptr is a live capsule; IsValid sets no error.
    let versioned = unsafe { ffi::PyCapsule_IsValid(ptr, NAME_VERSIONED.as_ptr()) } == 1;
    // SAFETY: as above.
    let legacy = unsafe { ffi::PyCapsule_IsValid(ptr, NAME_LEGACY.as_ptr()) } == 1;
    let (name, used) = match (versioned, legacy) {
        (true, _) => (NAME_VERSIONED, USED_VERSIONED),
        (_, true) => (NAME_LEGACY, USED_LEGACY),
        _ => {
            return Err(PyValueError::new_err(
                "__dlpack__ returned a capsule that is not an unconsumed DLPack tensor",
            ))
        }
    };
    // SAFETY: a valid capsule of that name holds the record kind it names.
    let managed = unsafe { ffi::PyCapsule_GetPointer(ptr, name.as_ptr()) };
    if managed.is_null() {
        return Err(PyValueError::new_err(
            "the DLPack capsule holds a null pointer",
        ));
    }
    if versioned {
        // SAFETY: as above.
        let major = unsafe { (*(managed as *mut DLManagedTensorVersioned)).version.major };
        if major != 1 {
            // consume it anyway, so its memory is released
            let t = Taken { managed, versioned };
            // SAFETY: renaming consumes the capsule; `t`'s drop calls the deleter.
            unsafe { ffi::PyCapsule_SetName(ptr, used.as_ptr()) };
            drop(t);
            return Err(PyBufferError::new_err(format!(
                "the producer returned a DLPack {major}.x capsule; heliograph reads 1.x"
            )));
        }
    }
    // SAFETY: renaming marks the capsule consumed: its destructor no longer deletes.
    unsafe { ffi::PyCapsule_SetName(ptr, used.as_ptr()) };
    Ok(Taken { managed, versioned })
}

/// Capsules whose device copy is still queued, with the tensor that copy fills.
static PARKED: Mutex<Vec<(Taken, Arc<DeviceTensor>)>> = Mutex::new(Vec::new());

/// Keeps `taken` (the producer's memory) until `copy` is ready.
pub fn park_release(taken: Taken, copy: Arc<DeviceTensor>) {
    if let Ok(mut p) = PARKED.lock() {
        p.push((taken, copy));
    }
}

/// Releases the parked capsules whose copies have finished (or failed: the memory is
/// then no longer read either). Needs the GIL, which some producers' deleters take. In
/// a forked child of the process that initialised CUDA, nothing: they are the parent's.
pub fn sweep_parked(_py: Python<'_>) {
    if heliograph::backend::cuda::forked().is_some() {
        return;
    }
    let done: Vec<(Taken, Arc<DeviceTensor>)> = match PARKED.lock() {
        Ok(mut p) => {
            let (ready, busy): (Vec<_>, Vec<_>) = p.drain(..).partition(|(_, t)| t.is_ready());
            *p = busy;
            ready
        }
        Err(_) => return,
    };
    drop(done); // deleters run here, outside the lock
}

/// Number of parked capsules (tests).
pub fn parked() -> usize {
    PARKED.lock().map(|p| p.len()).unwrap_or(0)
}
