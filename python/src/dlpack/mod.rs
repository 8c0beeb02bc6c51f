//! DLPack capsules: export of host and CUDA tensors as legacy (`dltensor`) or
//! versioned (`dltensor_versioned`) capsules, and import from any producer
//! ([`import`]). The structs, buffers, strided reads, export rules and managed
//! records are the core's ([`heliograph::tensor`], [`heliograph::interop::export`]);
//! this module is the PyCapsule glue.
//!
//! The capsule destructor calls the record's deleter only while the capsule still
//! has its unconsumed name (a consumer renames it to `used_*` and calls the deleter
//! itself).

use std::ffi::c_void;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use heliograph::interop::export::{delete, new_record, Managed, Owner};
use heliograph::tensor::dlpack::{DLManagedTensor, DLManagedTensorVersioned};

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
    if versioned {
        make_capsule::<DLManagedTensorVersioned>(py, owner, shape, copied)
    } else {
        make_capsule::<DLManagedTensor>(py, owner, shape, copied)
    }
}

fn make_capsule<'py, M: Managed>(
    py: Python<'py>,
    owner: Owner,
    shape: &[usize],
    copied: bool,
) -> PyResult<Bound<'py, PyCapsule>> {
    let m = new_record::<M>(owner, shape, copied);
    // SAFETY: m stays valid until the deleter runs; the destructor checks the name.
    let cap = unsafe {
        PyCapsule::new_with_pointer_and_destructor(
            py,
            m.cast::<c_void>(),
            M::NAME,
            Some(capsule_destructor::<M>),
        )
    };
    if cap.is_err() {
        // SAFETY: the capsule was not created, so nobody else owns the record.
        unsafe { delete::<M>(m.as_ptr()) };
    }
    cap
}

mod args;

pub use args::parse_export_args;

mod import;

pub use import::{import_device, sweep_parked};
