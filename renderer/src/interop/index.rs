//! Indexing of CUDA tensors on the device, by the rules of [`crate::tensor::index`]:
//! `t[index]` gathered into a new tensor ([`gather`]) and `t[index] = value` written
//! into a copy of the tensor ([`assign`]), both enqueued on the render stream.

use std::sync::Arc;

use crate::backend::cuda::elementwise::{plan_mask_write, plan_write, Operand};
use crate::backend::cuda::{CudaBackend, DeviceTensor};
use crate::error::Result;
use crate::tensor::index::{self, Index, View};

/// The elements of CUDA tensor `t` that `view` names ([`index::view`]), as a new
/// tensor, and its shape.
pub fn gather(
    be: &CudaBackend,
    t: &DeviceTensor,
    view: View,
) -> Result<(DeviceTensor, Vec<usize>)> {
    let shape = view.shape.clone();
    let (r, _) = be.elementwise("positive", &[Operand::View(t, view)])?;
    Ok((r, shape))
}

/// The data of CUDA tensor `target` of `shape` with `target[index] = value` applied,
/// as a new tensor.
pub fn assign(
    be: &CudaBackend,
    target: &DeviceTensor,
    shape: &[usize],
    index: &Index<Arc<DeviceTensor>>,
    value: Operand<'_, DeviceTensor>,
) -> Result<DeviceTensor> {
    match index {
        Index::Basic(items) => {
            let plan = plan_write(index::view(shape, items)?, &value)?;
            be.assign(target, &plan, &[value])
        }
        Index::Mask(m, mshape) => {
            let plan = plan_mask_write(shape, mshape, &value)?;
            let mask = Operand::Tensor(m.as_ref(), mshape.clone());
            be.assign(target, &plan, &[mask, value])
        }
    }
}
