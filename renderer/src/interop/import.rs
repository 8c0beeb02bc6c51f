//! What an import of another producer's DLPack tensor accepts, checked before any of
//! its memory is read: the memory lives where the producer's `__dlpack_device__()`
//! said ([`check_device`]), and a CUDA tensor has an element type, a number of
//! dimensions and a layout the device copy reads ([`cuda_array`]). Host tensors are
//! checked by the strided reader ([`crate::tensor::strided`]).

use crate::backend::cuda::{ForeignArray, MAX_DIMS};
use crate::error::{ArrayProblem, Error, Result};
use crate::tensor::dlpack::{DLTensor, DEVICE_CPU, DEVICE_CUDA_HOST};
use crate::tensor::strided::{check_dtype, layout};

/// An error unless `t` lives where `__dlpack_device__` said (`claimed`; `None` for a
/// producer without it, which must hold host memory).
pub fn check_device(t: &DLTensor, claimed: Option<(i32, i32)>) -> Result<()> {
    let (kind, id) = (t.device.device_type, t.device.device_id);
    let host = |k| k == DEVICE_CPU || k == DEVICE_CUDA_HOST;
    let same = match claimed {
        None => host(kind),
        Some((k, i)) => (host(k) && host(kind)) || (k == kind && i == id),
    };
    if same {
        return Ok(());
    }
    Err(Error::array(
        ArrayProblem::Device,
        format!(
            "the producer's capsule holds memory of DLPack device ({kind}, {id}), but its \
             __dlpack_device__() said {}",
            claimed.map_or("nothing (a host array)".to_string(), |(k, i)| format!(
                "({k}, {i})"
            ))
        ),
    ))
}

/// The array the device copy of a CUDA tensor `t` reads, and its extents.
///
/// # Safety
/// `t`'s shape and strides have `ndim` entries (DLPack).
pub unsafe fn cuda_array(t: &DLTensor) -> Result<(ForeignArray, Vec<usize>)> {
    check_dtype(t.dtype)?;
    if t.ndim as usize > MAX_DIMS {
        return Err(Error::array(
            ArrayProblem::Layout,
            format!(
                "a CUDA array with {} dimensions cannot be imported (at most {MAX_DIMS})",
                t.ndim
            ),
        ));
    }
    let elem = (t.dtype.bits / 8) as usize;
    // SAFETY: the caller's contract.
    let l = unsafe { layout(t, elem) }?;
    let a = ForeignArray {
        ptr: (t.data as u64).wrapping_add(t.byte_offset),
        shape: l.shape.clone(),
        strides: l.strides.clone(),
        dtype: t.dtype,
    };
    if l.count > 0 && t.data.is_null() {
        return Err(Error::array(
            ArrayProblem::Layout,
            "the CUDA array's data pointer is null",
        ));
    }
    Ok((a, l.extents()))
}
