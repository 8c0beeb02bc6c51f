//! A parameter's new value given as an array, on the host or in device memory,
//! converted to the kind the parameter has (checked against its shape and element
//! type); the values themselves are checked when they are set.

use std::sync::Arc;

use crate::backend::cuda::DeviceTensor;
use crate::desc::params::{non_finite_msg, shape_str, ArrayValue, DeviceValues};
use crate::desc::{ParamValue, PixelArray, TensorData, TensorValue};
use crate::error::{Error, Loc, Result};
use crate::math::{Transform, Vec3};
use crate::tensor::dlpack::{DLDataType, CODE_FLOAT};
use crate::tensor::strided::HostArray;

/// A parameter error for `key`, as `update` reports them.
fn param_error(key: &str, msg: impl Into<String>) -> Error {
    Error::param(&Loc::unknown("<parameters>"), key, msg)
}

/// The error of a value of the wrong kind or shape for `key`.
fn mismatch(key: &str, current: &ParamValue, given: &[usize]) -> Error {
    param_error(
        key,
        format!(
            "expected {} of shape {}, got an array of shape {}",
            current.kind_a(),
            shape_str(&current.shape()),
            shape_str(given)
        ),
    )
}

/// A texture's new values in device memory (`tensor`, of the producer's `shape` and
/// element type), for the texture parameter `current`; `non_finite` is the index of
/// the first non-finite value where the values were scanned.
pub fn from_device(
    key: &str,
    current: &ParamValue,
    tensor: Arc<DeviceTensor>,
    shape: &[usize],
    dtype: DLDataType,
    non_finite: Option<usize>,
) -> Result<ParamValue> {
    let ParamValue::Tensor(cur) = current else {
        return Err(mismatch(key, current, shape));
    };
    if dtype.code != CODE_FLOAT {
        return Err(param_error(
            key,
            format!("expected float data, got {}", dtype.name()),
        ));
    }
    let given = match shape[..] {
        [h, w] => [h, w, 1],
        [h, w, c] => [h, w, c],
        _ => return Err(mismatch(key, current, shape)),
    };
    if given != cur.shape {
        return Err(mismatch(key, current, &given));
    }
    if let Some(i) = non_finite {
        return Err(param_error(key, non_finite_msg(&given, i)));
    }
    Ok(ParamValue::Tensor(TensorValue {
        shape: given,
        data: TensorData::Device(tensor as Arc<dyn DeviceValues>),
    }))
}

/// A host array as the kind `current` has.
pub fn from_host(key: &str, current: &ParamValue, a: HostArray) -> Result<ParamValue> {
    Ok(match (&a.shape[..], current) {
        (s, ParamValue::Array(cur)) => {
            if s != cur.shape.as_slice() {
                return Err(mismatch(key, current, s));
            }
            if !a.is_float() {
                return Err(param_error(
                    key,
                    format!("expected float data, got {}", a.dtype_name()),
                ));
            }
            ParamValue::Array(ArrayValue {
                shape: a.shape,
                data: Arc::new(a.data),
            })
        }
        ([], _) => ParamValue::Float(a.data[0] as f64),
        ([3], ParamValue::Color(_)) => ParamValue::Color(Vec3::from_slice(&a.data)),
        ([3], _) => ParamValue::Vector(Vec3::from_slice(&a.data)),
        ([4, 4], ParamValue::Transform(_)) => {
            let mut rows = [[0f32; 4]; 4];
            for (i, r) in rows.iter_mut().enumerate() {
                r.copy_from_slice(&a.data[4 * i..4 * i + 4]);
            }
            let t = Transform::from_rows(rows)
                .ok_or_else(|| param_error(key, "the matrix is singular or not finite"))?;
            ParamValue::Transform(t)
        }
        ([_, _, _], ParamValue::Tensor(_)) | ([_, _], ParamValue::Tensor(_)) => {
            if !a.is_float() {
                return Err(param_error(
                    key,
                    format!("expected float data, got {}", a.dtype_name()),
                ));
            }
            let (h, w, c) = match a.shape[..] {
                [h, w] => (h, w, 1),
                [h, w, c] if matches!(c, 1 | 3 | 4) => (h, w, c),
                _ => return Err(mismatch(key, current, &a.shape)),
            };
            // float data of a checked shape; SceneParams::set checks the values
            let px = PixelArray {
                width: w,
                height: h,
                channels: c,
                data: a.data,
            };
            ParamValue::Tensor(TensorValue::host(Arc::new(px)))
        }
        (s, _) => return Err(mismatch(key, current, s)),
    })
}
