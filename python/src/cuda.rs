//! The process's CUDA backend (device 0), opened on first use and shared by the
//! `cuda_rgb` variant, CUDA tensors and imports of other frameworks' CUDA arrays; plus
//! the Python functions that reach it (`sync_device`, `cuda_stream`).
//!
//! CUDA does not survive `fork`: a child forked from a process that initialised CUDA
//! inherits this backend, but not a context to use it in. [`backend`] and [`opened`],
//! through which the binding reaches CUDA, raise `CudaUnavailableError` there
//! (saying so, and to use the 'spawn' start method); the core refuses every other
//! driver call in such a child too (reads of CUDA tensors, say) with the same error, and
//! the child drops what it inherited without calling the driver.

use std::sync::{Arc, OnceLock};

use heliograph::backend::cuda::{check_process, live_device_tensors, CudaBackend};
use pyo3::prelude::*;

use crate::errors::to_py;

/// The backend, or why it could not be opened (kept as text: the error type is not Clone).
static BACKEND: OnceLock<Result<Arc<CudaBackend>, String>> = OnceLock::new();

/// The CUDA backend, opened on first call; an error (`CudaUnavailableError`) that
/// says why when there is no usable GPU, or when this process is a forked child of the
/// one that initialised CUDA. The outcome is remembered.
pub fn backend(py: Python<'_>) -> PyResult<Arc<CudaBackend>> {
    check_process().map_err(to_py)?;
    py.detach(open_now)
        .map_err(crate::errors::CudaUnavailableError::new_err)
}

/// As [`backend`], from a thread that does not hold the GIL (an XLA custom call); the
/// error as text.
pub fn backend_now() -> Result<Arc<CudaBackend>, String> {
    check_process().map_err(|e| e.to_string())?;
    open_now()
}

fn open_now() -> Result<Arc<CudaBackend>, String> {
    BACKEND
        .get_or_init(|| CudaBackend::new(0).map(Arc::new).map_err(|e| e.to_string()))
        .clone()
}

/// The backend if it is already open (never opens it); `CudaUnavailableError` in a
/// forked child of the process that initialised CUDA (see [`backend`]).
pub fn opened() -> PyResult<Option<Arc<CudaBackend>>> {
    check_process().map_err(to_py)?;
    Ok(BACKEND.get().and_then(|r| r.as_ref().ok().cloned()))
}

/// `sync_device()`: waits for all work on the GPU, of every stream and framework
/// (`cuCtxSynchronize`), like Dr.Jit's `sync_device`. heliograph never needs it: reads
/// and exports wait for exactly the work that produces a tensor. A no-op when CUDA was
/// never used.
#[pyfunction]
pub fn sync_device(py: Python<'_>) -> PyResult<()> {
    match opened()? {
        Some(be) => py.detach(|| be.sync_device()).map_err(to_py),
        None => Ok(()),
    }
}

/// `cuda_stream()`: the handle of heliograph's render stream (a `CUstream` as an int),
/// for `torch.cuda.ExternalStream` or a producer's `__dlpack__(stream=...)`.
#[pyfunction]
pub fn cuda_stream(py: Python<'_>) -> PyResult<usize> {
    Ok(backend(py)?.stream_handle())
}

/// `(count, bytes)` of heliograph's CUDA tensors alive (tests of memory growth).
#[pyfunction]
pub fn _cuda_live_buffers() -> (usize, usize) {
    live_device_tensors()
}

/// `(page-locked staging bytes, device bytes waiting for the reclaimer)` of the backend,
/// `(0, 0)` when CUDA was never used (tests of memory growth and of the reclaimer).
#[pyfunction]
pub fn _cuda_held_bytes() -> (usize, usize) {
    match opened() {
        Ok(Some(be)) => be.held_bytes(),
        _ => (0, 0),
    }
}

/// DLPack capsules of other frameworks whose device copy is still queued, after
/// releasing those whose copy has finished (tests).
#[pyfunction]
pub fn _parked_imports(py: Python<'_>) -> usize {
    crate::dlpack::sweep_parked(py);
    heliograph::interop::consumed::parked()
}
