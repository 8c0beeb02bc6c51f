//! Scene parameters and tensors: a parameter's array value read as a new tensor
//! ([`tensor_of`]), and an imported array made a parameter's new value (imported
//! where [`import_target`] says, then [`value_of`]), each where the values live.

use std::sync::Arc;

use crate::backend::cuda::{CudaBackend, DeviceTensor};
use crate::desc::params::DeviceValues;
use crate::desc::{ParamValue, TensorData};
use crate::error::{ArrayProblem, Error, Result};
use crate::interop::import::{HostTo, Imported};
use crate::interop::Storage;
use crate::session::values::{from_device, from_host};
use crate::tensor::HostArray;

/// A new tensor holding the value of a texture or array parameter: a copy, so that
/// writes to the tensor do not touch the scene's values (a texture on the device is
/// copied there).
pub fn tensor_of(v: &ParamValue) -> Result<Storage> {
    match v {
        ParamValue::Tensor(t) => {
            let shape = t.shape.to_vec();
            match &t.data {
                TensorData::Host(p) => Storage::from_values(shape, &p.data),
                TensorData::Device(d) => {
                    let copy = device_tensor(d.as_ref())?.duplicate()?;
                    Ok(Storage::device(shape, Arc::new(copy)))
                }
            }
        }
        ParamValue::Array(a) => Storage::from_values(a.shape.clone(), &a.data),
        _ => Err(Error::array(
            ArrayProblem::Argument,
            format!("{} is no array", v.kind_a()),
        )),
    }
}

/// The CUDA tensor of device values.
fn device_tensor(d: &dyn DeviceValues) -> Result<&DeviceTensor> {
    d.as_any()
        .downcast_ref::<DeviceTensor>()
        .ok_or_else(|| Error::array(ArrayProblem::Dtype, "device values of an unknown backend"))
}

/// Where the import of a new value for parameter `current` puts a host array: onto
/// `upload`, the GPU whose copy of the scene keeps the value there
/// ([`upload_target`](crate::session::Session::upload_target): one host copy, into
/// page-locked staging, scanned for non-finite values on the way), or else into a
/// `Vec`.
pub fn import_target<'a>(current: &ParamValue, upload: Option<&'a Arc<CudaBackend>>) -> HostTo<'a> {
    let len = current.shape().iter().product();
    upload.map_or(HostTo::Vec, |be| HostTo::Param(be, len))
}

/// An imported array as the new value of parameter `key` (of the kind `current`
/// has): host values are converted ([`from_host`]); a CUDA array stays on the device
/// for a texture ([`from_device`]), while a smaller value on the device is read (a
/// few floats). `shared`: the caller keeps using the imported tensor (a `TensorXf` of
/// its own), so the scene takes a copy of it.
pub fn value_of(
    key: &str,
    current: &ParamValue,
    imported: Imported,
    shared: bool,
) -> Result<ParamValue> {
    let Imported::Device {
        tensor,
        shape,
        dtype,
        non_finite,
    } = imported
    else {
        return from_host(key, current, imported.into_host()?);
    };
    if !matches!(current, ParamValue::Tensor(_)) {
        let data = tensor.to_host()?;
        return from_host(key, current, HostArray { shape, data, dtype });
    }
    let tensor = match shared {
        true => Arc::new(tensor.duplicate()?),
        false => tensor,
    };
    from_device(key, current, tensor, &shape, dtype, non_finite)
}
