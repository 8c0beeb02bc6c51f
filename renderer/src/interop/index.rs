//! Indexing of CUDA tensors on the device, by the rules of [`crate::tensor::index`]:
//! `t[index]` gathered into a new tensor ([`getitem`]) and `t[index] = value` written
//! into a copy of the tensor ([`setitem`]), both enqueued on the render stream.

use std::sync::Arc;

use crate::backend::cuda::elementwise::{plan_mask_write, plan_write, Operand as DeviceOperand};
use crate::backend::cuda::{CudaBackend, DeviceTensor};
use crate::error::{ArrayProblem, Error, Result};
use crate::interop::ops::{Caller, Operand};
use crate::interop::Storage;
use crate::tensor::index::{self, Index};

/// The device tensor of `t`, which the caller sent to CUDA indexing.
fn cuda_target(t: &Storage) -> Result<Arc<DeviceTensor>> {
    t.device_tensor().ok_or_else(|| {
        Error::array(
            ArrayProblem::Argument,
            "internal error: a CUDA index of a host tensor",
        )
    })
}

/// `t[index]` of CUDA tensor `t`: the elements a basic index names, as a new CUDA
/// tensor (0-d when the index names one element); a mask is an error (the result's
/// shape would depend on the mask's values).
pub fn getitem<C: Caller>(
    c: &C,
    t: &Storage,
    index: &Index<Arc<DeviceTensor>>,
) -> Result<Storage, C::Error> {
    let d = cuda_target(t).map_err(|e| c.error(e))?;
    let Index::Basic(items) = index else {
        return Err(c.error(index::mask_read()));
    };
    let view = index::view(t.shape(), items).map_err(|e| c.error(e))?;
    let shape = view.shape.clone();
    let be = c.cuda()?;
    let (r, _) = c
        .detach(|| be.elementwise("positive", &[DeviceOperand::View(d.as_ref(), view)]))
        .map_err(|e| c.error(e))?;
    Ok(Storage::device(shape, Arc::new(r)))
}

/// The data of CUDA tensor `target` with `target[index] = value` applied (`value`: a
/// number or a CUDA tensor), as a new CUDA tensor of the target's shape.
pub fn setitem<C: Caller>(
    c: &C,
    target: &Storage,
    index: &Index<Arc<DeviceTensor>>,
    value: &Operand<'_>,
) -> Result<Storage, C::Error> {
    let d = cuda_target(target).map_err(|e| c.error(e))?;
    let shape = target.shape().to_vec();
    let refused = |problem, msg: &str| c.error(Error::array(problem, msg));
    let not_a_number = || {
        let msg = "TensorXf assignment: the value must be a number or a CUDA TensorXf";
        refused(ArrayProblem::Dtype, msg)
    };
    let held;
    let value = match value {
        Operand::Tensor(v) => {
            held = v.device_tensor().ok_or_else(|| {
                let msg =
                    "TensorXf assignment: the value is a host tensor and the target a CUDA tensor";
                refused(ArrayProblem::Argument, msg)
            })?;
            DeviceOperand::Tensor(held.as_ref(), v.shape().to_vec())
        }
        Operand::Number(n) => DeviceOperand::Scalar(n.device().ok_or_else(not_a_number)?),
        Operand::Other(_) => return Err(not_a_number()),
    };
    let be = c.cuda()?;
    let r = c.detach(|| assign(&be, &d, &shape, index, value));
    Ok(Storage::device(shape, Arc::new(r.map_err(|e| c.error(e))?)))
}

/// The data of CUDA tensor `target` of `shape` with `target[index] = value` applied,
/// as a new tensor.
fn assign(
    be: &CudaBackend,
    target: &DeviceTensor,
    shape: &[usize],
    index: &Index<Arc<DeviceTensor>>,
    value: DeviceOperand<'_, DeviceTensor>,
) -> Result<DeviceTensor> {
    match index {
        Index::Basic(items) => {
            let plan = plan_write(index::view(shape, items)?, &value)?;
            be.assign(target, &plan, &[value])
        }
        Index::Mask(m, mshape) => {
            let plan = plan_mask_write(shape, mshape, &value)?;
            let mask = DeviceOperand::Tensor(m.as_ref(), mshape.clone());
            be.assign(target, &plan, &[mask, value])
        }
    }
}
