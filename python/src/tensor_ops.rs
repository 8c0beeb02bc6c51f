//! `TensorXf` arithmetic and indexing. Operations of CUDA tensors and Python numbers
//! run on the device (the core's elementwise kernel, on the render stream); arithmetic
//! and comparisons of host tensors and Python numbers are the core's
//! ([`heliograph::tensor::ops`], NumPy's results bit for bit). Every other operation
//! (other operands, other NumPy functions, indexing) goes to the package's
//! `heliograph._ops`, which computes host tensors with NumPy and refuses to mix
//! devices (see that module).

use std::sync::Arc;

use heliograph::backend::cuda::elementwise::Operand;
use heliograph::tensor::ops::{self, Binary, Unary};
use heliograph::tensor::Buffer;
use pyo3::call::PyCallArgs;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyTuple};

use crate::errors::to_py;
use crate::tensor::TensorXf;

/// `heliograph._ops.<func>(*args)`.
pub fn call<'py>(
    py: Python<'py>,
    func: &str,
    args: impl PyCallArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    package(py, "_ops", func, args)
}

/// `heliograph.<module>.<func>(*args)`: a function of the Python package.
pub fn package<'py>(
    py: Python<'py>,
    module: &str,
    func: &str,
    args: impl PyCallArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let m = py.import(format!("heliograph.{module}"))?;
    m.getattr(func)?.call1(args)
}

/// `a <op> b` (op: a NumPy ufunc name): on the device for CUDA tensors and Python
/// numbers, in the core for host tensors and Python numbers, otherwise
/// `heliograph._ops.binary(op, a, b)`.
pub fn binary<'py>(
    op: &str,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let args = [a.clone(), b.clone()];
    if all_cuda_operands(&args) {
        return cuda(a.py(), op, &args);
    }
    if let Some(r) = host_binary(op, a, b)? {
        return Ok(r);
    }
    call(a.py(), "binary", (op, a, b))
}

/// `<op>(t)` (op: a NumPy ufunc name): on the device for a CUDA tensor, in the core
/// for a host tensor, otherwise `heliograph._ops.unary(op, t)`.
pub fn unary<'py>(op: &str, t: &Bound<'py, TensorXf>) -> PyResult<Bound<'py, PyAny>> {
    let py = t.py();
    if t.get().device_tensor().is_some() {
        return cuda(py, op, &[t.clone().into_any()]);
    }
    match Unary::from_name(op) {
        Some(u) if t.get().device_tensor().is_none() => {
            let buf = t.get().wait(py)?;
            let values = u.apply(buf.as_slice());
            host_result(py, t.get().dims().to_vec(), &values)
        }
        _ => call(py, "unary", (op, t)),
    }
}

/// Whether every one of `args` is a tensor or a Python number and one is a CUDA
/// tensor: then the operation runs on the device ([`cuda`]).
fn all_cuda_operands(args: &[Bound<'_, PyAny>]) -> bool {
    let number = |a: &Bound<'_, PyAny>| {
        a.is_exact_instance_of::<PyFloat>()
            || a.is_exact_instance_of::<PyInt>()
            || a.is_exact_instance_of::<PyBool>()
    };
    let cuda = |a: &Bound<'_, PyAny>| {
        a.cast::<TensorXf>()
            .is_ok_and(|t| t.get().device_tensor().is_some())
    };
    args.iter()
        .all(|a| a.cast::<TensorXf>().is_ok() || number(a))
        && args.iter().any(cuda)
}

/// `op` of `args` (tensors and numbers, one a CUDA tensor) on the device: an error
/// unless every tensor lives on the same device.
fn cuda<'py>(py: Python<'py>, op: &str, args: &[Bound<'py, PyAny>]) -> PyResult<Bound<'py, PyAny>> {
    let mut devices: Vec<String> = args
        .iter()
        .filter_map(|a| a.cast::<TensorXf>().ok())
        .map(|t| t.get().device_name())
        .collect();
    devices.sort();
    devices.dedup();
    if devices.len() > 1 {
        return Err(PyValueError::new_err(format!(
            "TensorXf {op}: the operands live on different devices ({}); move one first \
             (TensorXf(x) under the same variant), heliograph does not copy silently",
            devices.join(", ")
        )));
    }
    // NumPy's alias (the CUDA kernel names each operation once)
    let op = if op == "divide" { "true_divide" } else { op };
    let t = _elementwise(py, op, args.to_vec())?;
    Ok(Bound::new(py, t)?.into_any())
}

/// An operand the core computes with: a host tensor (not read yet) or a Python number
/// that NumPy takes as a float32 (a `float` inside float32's range, or an `int` that
/// a double holds exactly).
enum HostOperand<'a, 'py> {
    Tensor(&'a Bound<'py, TensorXf>),
    Scalar(f32),
}

fn host_operand<'a, 'py>(x: &'a Bound<'py, PyAny>) -> Option<HostOperand<'a, 'py>> {
    if let Ok(t) = x.cast::<TensorXf>() {
        return t
            .get()
            .device_tensor()
            .is_none()
            .then_some(HostOperand::Tensor(t));
    }
    if x.is_exact_instance_of::<PyFloat>() {
        let v: f64 = x.extract().ok()?;
        let f = v as f32;
        // a finite double that float32 cannot hold: NumPy's overflow rules apply
        return (f.is_finite() || !v.is_finite()).then_some(HostOperand::Scalar(f));
    }
    if x.is_exact_instance_of::<PyInt>() {
        let v: i64 = x.extract().ok()?;
        return (v.unsigned_abs() <= 1 << 53).then_some(HostOperand::Scalar(v as f32));
    }
    None
}

/// The values of a host operand, waiting for a tensor's render.
enum HostValues {
    Tensor(Arc<Buffer>, Vec<usize>),
    Scalar(f32),
}

impl HostValues {
    fn read(py: Python<'_>, o: HostOperand<'_, '_>) -> PyResult<HostValues> {
        Ok(match o {
            HostOperand::Tensor(t) => {
                HostValues::Tensor(t.get().wait(py)?, t.get().dims().to_vec())
            }
            HostOperand::Scalar(x) => HostValues::Scalar(x),
        })
    }

    fn operand(&self) -> ops::Operand<'_> {
        match self {
            HostValues::Tensor(b, s) => ops::Operand::Values(b.as_slice(), s),
            HostValues::Scalar(x) => ops::Operand::Scalar(*x),
        }
    }
}

/// `a <op> b` in the core when both are host operands and `op` is one of the core's;
/// `None` otherwise. Operands are read in order, as NumPy reads them.
fn host_binary<'py>(
    op: &str,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = a.py();
    let (Some(bin), Some(x), Some(y)) = (Binary::from_name(op), host_operand(a), host_operand(b))
    else {
        return Ok(None);
    };
    let x = HostValues::read(py, x)?;
    let y = HostValues::read(py, y)?;
    let (shape, values) = ops::binary(bin, op, x.operand(), y.operand()).map_err(to_py)?;
    host_result(py, shape, &values).map(Some)
}

/// The tensor of an operation's host result, where `TensorXf(values)` puts it. A 0-d
/// result has shape (1,), as NumPy's `ascontiguousarray` has always made it.
fn host_result<'py>(
    py: Python<'py>,
    mut shape: Vec<usize>,
    values: &[f32],
) -> PyResult<Bound<'py, PyAny>> {
    if shape.is_empty() {
        shape.push(1);
    }
    let t = TensorXf::from_host_values(py, shape, values)?;
    Ok(Bound::new(py, t)?.into_any())
}

/// `heliograph._ops.array_ufunc(ufunc, method, inputs, kwargs)`.
pub fn array_ufunc<'py>(
    ufunc: &Bound<'py, PyAny>,
    method: &str,
    inputs: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = ufunc.py();
    if method == "__call__" && kwargs.is_none_or(|k| k.is_empty()) {
        if let Some(r) = native_ufunc(ufunc, inputs)? {
            return Ok(r);
        }
    }
    let kw = match kwargs {
        Some(k) => k.clone(),
        None => PyDict::new(py),
    };
    call(py, "array_ufunc", (ufunc, method, inputs, kw))
}

/// A NumPy function of tensors and numbers computed without going back to Python: on
/// the device, or as one of the core's host operations; `None` otherwise.
fn native_ufunc<'py>(
    ufunc: &Bound<'py, PyAny>,
    inputs: &Bound<'py, PyTuple>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Ok(name) = ufunc
        .getattr("__name__")
        .and_then(|n| n.extract::<String>())
    else {
        return Ok(None);
    };
    let args: Vec<Bound<'py, PyAny>> = inputs.iter().collect();
    if all_cuda_operands(&args) {
        return cuda(ufunc.py(), &name, &args).map(Some);
    }
    match &args[..] {
        [a, b] => host_binary(&name, a, b),
        [a] => match (Unary::from_name(&name), a.cast::<TensorXf>()) {
            (Some(_), Ok(t)) if t.get().device_tensor().is_none() => unary(&name, t).map(Some),
            _ => Ok(None),
        },
        _ => Ok(None),
    }
}

/// `_elementwise(op, args)`: `op` (a NumPy ufunc name) of CUDA tensors and numbers,
/// as a new CUDA tensor computed on the render stream (see `heliograph._ops`).
#[pyfunction]
pub fn _elementwise(
    py: Python<'_>,
    op: &str,
    args: Vec<Bound<'_, PyAny>>,
) -> PyResult<crate::tensor::TensorXf> {
    let mut tensors = Vec::new();
    let mut scalars = Vec::new();
    for (k, a) in args.iter().enumerate() {
        match a.cast::<crate::tensor::TensorXf>() {
            Ok(t) => {
                let t = t.get();
                let d = t.device_tensor().ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "TensorXf {op}: operand {k} is a host tensor; CUDA arithmetic takes CUDA tensors and numbers"
                    ))
                })?;
                tensors.push((k, d, t.dims().to_vec()));
            }
            Err(_) => {
                let x: f64 =
                    a.extract().map_err(|_| {
                        PyTypeError::new_err(format!(
                        "TensorXf {op}: operand {k} must be a CUDA TensorXf or a number, got {}",
                        a.get_type().name().map(|n| n.to_string()).unwrap_or_default()
                    ))
                    })?;
                scalars.push((k, x as f32));
            }
        }
    }
    let mut operands = Vec::new();
    for k in 0..args.len() {
        if let Some((_, d, s)) = tensors.iter().find(|t| t.0 == k) {
            operands.push(Operand::Tensor(d.as_ref(), s.clone()));
        } else if let Some((_, x)) = scalars.iter().find(|s| s.0 == k) {
            operands.push(Operand::Scalar(*x));
        }
    }
    let be = crate::cuda::backend(py)?;
    let (t, shape) = py
        .detach(|| be.elementwise(op, &operands))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(crate::tensor::TensorXf::device(shape, t))
}
