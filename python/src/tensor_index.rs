//! Indexing of CUDA tensors, on the device: Python index objects become the core's
//! index items (`heliograph::tensor::index`), which the core gathers (`t[index]`) or
//! writes into a copy of the tensor (`t[index] = value`, see
//! `heliograph::interop::index`).
//! `heliograph._ops` calls these for CUDA tensors; host tensors index with NumPy.
//!
//! Supported: ints, slices, `...`, `None` and tuples of these (NumPy's basic
//! indexing), and `t[mask] = value` with a CUDA mask covering the tensor's leading
//! axes. Anything whose result shape depends on the data (`t[mask]`) or that reads
//! elements by a host array of positions is an error saying how to do it on the host.

use std::sync::Arc;

use heliograph::backend::cuda::DeviceTensor;
use heliograph::interop::index::{getitem, setitem};
use heliograph::interop::ops::{Number, Operand};
use heliograph::tensor::index::{self, Index, Item, View};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PySlice, PyTuple};

use crate::errors::{to_py, type_name};
use crate::tensor::{read, TensorXf};
use crate::tensor_ops::Gil;

/// Parses `index` (the object between the brackets).
fn parse(index: &Bound<'_, PyAny>) -> PyResult<Index<Arc<DeviceTensor>>> {
    let items: Vec<Bound<'_, PyAny>> = match index.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![index.clone()],
    };
    if let Some(pos) = items.iter().position(|i| i.is_instance_of::<TensorXf>()) {
        let mask = items[pos].cast::<TensorXf>()?.get();
        let Some(d) = mask.device_tensor() else {
            return Err(to_py(index::host_mask("a CPU TensorXf")));
        };
        if items.len() > 1 {
            return Err(to_py(index::mask_in_tuple()));
        }
        return Ok(Index::Mask(d, mask.dims().to_vec()));
    }
    items
        .iter()
        .map(item)
        .collect::<PyResult<_>>()
        .map(Index::Basic)
}

/// One item of a basic index.
fn item(obj: &Bound<'_, PyAny>) -> PyResult<Item> {
    let py = obj.py();
    if obj.is_none() {
        return Ok(Item::NewAxis);
    }
    if obj.is(py.Ellipsis()) {
        return Ok(Item::Ellipsis);
    }
    if let Ok(s) = obj.cast::<PySlice>() {
        let part = |name: &str| -> PyResult<Option<i64>> {
            let v = s.getattr(name)?;
            if v.is_none() {
                return Ok(None);
            }
            integer(&v).map(Some).ok_or_else(|| {
                PyTypeError::new_err(
                    "slice indices must be integers or None or have an __index__ method",
                )
            })
        };
        return Ok(Item::Slice {
            start: part("start")?,
            stop: part("stop")?,
            step: part("step")?,
        });
    }
    let np_bool = py.import("numpy")?.getattr("bool_")?;
    if obj.is_instance_of::<PyBool>() || obj.is_instance(&np_bool)? {
        return Err(to_py(index::bool_scalar()));
    }
    if let Some(i) = integer(obj) {
        return Ok(Item::Int(i));
    }
    Err(refused(obj))
}

/// `operator.index(obj)` as an i64, saturated (a position beyond ±2^63 is out of range
/// of any tensor either way); `None` when `obj` is not an integer.
fn integer(obj: &Bound<'_, PyAny>) -> Option<i64> {
    let i = obj
        .py()
        .import("operator")
        .ok()?
        .call_method1("index", (obj,))
        .ok()?;
    match i.extract::<i64>() {
        Ok(v) => Some(v),
        Err(_) => Some(if i.gt(0).ok()? { i64::MAX } else { i64::MIN }),
    }
}

/// The error for an index item that is no basic index.
fn refused(obj: &Bound<'_, PyAny>) -> PyErr {
    let kind = type_name(obj);
    let dtype_kind: Option<String> = obj
        .getattr("dtype")
        .and_then(|d| d.getattr("kind"))
        .and_then(|k| k.extract())
        .ok();
    if dtype_kind.as_deref() == Some("b") {
        return to_py(index::host_mask(&kind));
    }
    let arrayish = obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.hasattr("__array__").unwrap_or(false)
        || obj.hasattr("__dlpack__").unwrap_or(false);
    to_py(match arrayish {
        true => index::advanced(&kind),
        false => index::not_an_index(&kind),
    })
}

/// `_cuda_getitem(t, index)`: `t[index]` of a CUDA tensor, gathered on the render stream
/// into a new CUDA tensor ([`index::getitem`]); a float (a host read of that one
/// element) when the index names one element.
#[pyfunction]
pub fn _cuda_getitem<'py>(
    t: &Bound<'py, TensorXf>,
    index: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = t.py();
    let r = getitem(&Gil(py), &t.get().storage, &parse(index)?)?;
    if r.shape().is_empty() {
        let v = read(py, &r)?.as_slice()[0];
        return Ok(v.into_pyobject(py)?.into_any());
    }
    Ok(Bound::new(py, TensorXf::from(r))?.into_any())
}

/// `_cuda_setitem(t, index, value)`: the data of CUDA tensor `t` with `t[index] = value`
/// applied, as a new CUDA tensor computed on the render stream (`value`: a number or a
/// CUDA tensor; [`index::setitem`]). `TensorXf.__setitem__` makes it `t`'s data.
#[pyfunction]
pub fn _cuda_setitem(
    t: &Bound<'_, TensorXf>,
    index: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<TensorXf> {
    let index = parse(index)?;
    let tensor = value.cast::<TensorXf>().ok();
    let value = match &tensor {
        Some(v) => Operand::Tensor(&v.get().storage),
        None => match value.extract::<f64>() {
            Ok(x) => Operand::Number(Number::Float(x)),
            Err(_) => Operand::Other(String::new()),
        },
    };
    Ok(setitem(&Gil(t.py()), &t.get().storage, &index, &value)?.into())
}

/// `_index_view(shape, index)`: the `(offset, shape, strides)` (in elements) that a
/// basic `index` names in a C-order tensor of `shape`, as CUDA indexing computes it
/// (tests compare it with NumPy's indexing without a GPU).
#[pyfunction]
pub fn _index_view(
    shape: Vec<usize>,
    index: &Bound<'_, PyAny>,
) -> PyResult<(usize, Vec<usize>, Vec<i64>)> {
    let Index::Basic(items) = parse(index)? else {
        return Err(PyIndexError::new_err("_index_view: a mask names no view"));
    };
    let View {
        offset,
        shape,
        strides,
    } = index::view(&shape, &items).map_err(to_py)?;
    Ok((offset, shape, strides))
}
