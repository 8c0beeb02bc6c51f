//! `TensorXf` arithmetic and indexing: the protocol methods of `TensorXf` hand each
//! operation to the package's `heliograph._ops`, which computes host tensors with
//! NumPy and refuses to mix devices (see that module).

use heliograph::backend::cuda::elementwise::Operand;
use pyo3::call::PyCallArgs;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

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

/// `heliograph._ops.binary(op, a, b)`.
pub fn binary<'py>(
    op: &str,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    call(a.py(), "binary", (op, a, b))
}

/// `heliograph._ops.array_ufunc(ufunc, method, inputs, kwargs)`.
pub fn array_ufunc<'py>(
    ufunc: &Bound<'py, PyAny>,
    method: &str,
    inputs: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = ufunc.py();
    let kw = match kwargs {
        Some(k) => k.clone(),
        None => PyDict::new(py),
    };
    call(py, "array_ufunc", (ufunc, method, inputs, kw))
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
