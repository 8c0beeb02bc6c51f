//! Another producer's DLPack tensor once its capsule has been consumed ([`Taken`]),
//! and the tensors *parked* until the device copy that reads them has run: the
//! producer's deleter runs only then ([`park_release`], [`sweep_parked`]), so the host
//! never waits for an import.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use crate::backend::cuda::DeviceTensor;
use crate::error::{ArrayProblem, Error, Result};
use crate::tensor::dlpack::{DLManagedTensor, DLManagedTensorVersioned, DLTensor};

/// A consumed producer capsule: its managed tensor, whose deleter runs on drop.
pub struct Taken {
    managed: *mut c_void,
    versioned: bool,
}

// SAFETY: the managed tensor is the producer's; DLPack lets its deleter run on any
// thread (heliograph runs it while holding the GIL, see sweep_parked).
unsafe impl Send for Taken {}

impl Taken {
    /// Takes over a consumed capsule's record: a `DLManagedTensorVersioned` when
    /// `versioned`, a `DLManagedTensor` otherwise. A versioned record of a major
    /// version other than 1 is released at once, and an error.
    ///
    /// # Safety
    /// `managed` points at a live record of that kind, whose capsule has been renamed
    /// (consumed): nobody else calls its deleter.
    pub unsafe fn new(managed: *mut c_void, versioned: bool) -> Result<Taken> {
        let taken = Taken { managed, versioned };
        if versioned {
            // SAFETY: the caller's contract.
            let major = unsafe { (*(managed as *mut DLManagedTensorVersioned)).version.major };
            if major != 1 {
                drop(taken);
                return Err(Error::array(
                    ArrayProblem::Device,
                    format!(
                        "the producer returned a DLPack {major}.x capsule; heliograph reads 1.x"
                    ),
                ));
            }
        }
        Ok(taken)
    }

    /// The tensor.
    ///
    /// # Safety
    /// Valid until the drop runs the deleter.
    pub unsafe fn tensor(&self) -> &DLTensor {
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

/// Capsules whose device copy is still queued, with the tensor that copy fills.
static PARKED: Mutex<Vec<(Taken, Arc<DeviceTensor>)>> = Mutex::new(Vec::new());

/// Keeps `taken` (the producer's memory) until `copy` is ready.
pub fn park_release(taken: Taken, copy: Arc<DeviceTensor>) {
    if let Ok(mut p) = PARKED.lock() {
        p.push((taken, copy));
    }
}

/// Releases the parked capsules whose copies have finished (or failed: the memory is
/// then no longer read either). The caller holds what the producers' deleters need
/// (Python's GIL, which some take). In a forked child of the process that initialised
/// CUDA, nothing: they are the parent's.
pub fn sweep_parked() {
    if crate::backend::cuda::forked().is_some() {
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
