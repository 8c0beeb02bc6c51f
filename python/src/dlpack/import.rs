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

use std::sync::Arc;

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};

use heliograph::backend::cuda::CudaBackend;
use heliograph::interop::consumed::{self, park_release, Taken};
use heliograph::interop::import::{
    check_device, check_ordinal, claimed_cuda, import_cuda, read_host_to, HostTo, Imported,
};

use heliograph::interop::export::{NAME_LEGACY, NAME_VERSIONED, USED_LEGACY, USED_VERSIONED};
use heliograph::tensor::dlpack::DLTensor;

use crate::errors::to_py;

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
    let cuda = match claimed_cuda(claimed).map_err(to_py)? {
        Some(id) => Some(cuda_backend_for(py, id)?),
        None => None,
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
                let t = SendPtr(t);
                // SAFETY: as above; the deleter runs once the copy has (taken is parked).
                py.detach(move || unsafe { import_cuda(be, t.get()) })
                    .map_err(to_py)
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

/// The CUDA backend, for an array on CUDA device `id`.
fn cuda_backend_for(py: Python<'_>, id: i32) -> PyResult<Arc<CudaBackend>> {
    let be = crate::cuda::backend(py).map_err(|e| {
        PyBufferError::new_err(format!(
            "a CUDA array cannot be imported without the CUDA backend: {}",
            e.value(py)
        ))
    })?;
    check_ordinal(id, be.info().ordinal).map_err(to_py)?;
    Ok(be)
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
    // SAFETY: renaming marks the capsule consumed: its destructor no longer deletes.
    unsafe { ffi::PyCapsule_SetName(ptr, used.as_ptr()) };
    // SAFETY: the capsule is consumed: only `Taken` calls the deleter (at once, for a
    // version heliograph does not read, so that its memory is released).
    unsafe { Taken::new(managed, versioned) }.map_err(to_py)
}

/// Releases the parked capsules whose copies have finished
/// ([`heliograph::interop::consumed::sweep_parked`]), holding the GIL, which some
/// producers' deleters take.
pub fn sweep_parked(_py: Python<'_>) {
    consumed::sweep_parked();
}
