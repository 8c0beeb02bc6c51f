//! `TensorXf` arithmetic and indexing: the protocol methods of `TensorXf` hand each
//! operation to the package's `heliograph._ops`, which computes host tensors with
//! NumPy and refuses to mix devices (see that module).

use pyo3::call::PyCallArgs;
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
