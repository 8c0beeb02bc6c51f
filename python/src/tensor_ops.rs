//! `TensorXf` arithmetic and indexing. Operations of tensors and Python numbers that
//! the core computes ([`heliograph::interop::ops`]: on the device for CUDA tensors,
//! NumPy's results bit for bit for host tensors) go there; every other operation
//! (other operands, other NumPy functions, indexing) goes to the package's
//! `heliograph._ops`, which computes host tensors with NumPy and refuses to mix
//! devices (see that module).

use std::sync::Arc;

use heliograph::backend::cuda::{CudaBackend, DeviceTensor};
use heliograph::interop::ops::{self, Caller, Number, Operand};
use heliograph::interop::Storage;
use heliograph::tensor::Buffer;
use pyo3::call::PyCallArgs;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyTuple};

use crate::errors::{to_py, type_name};
use crate::tensor::{host_device, read, wait_device, TensorXf};

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

/// `a <op> b` (op: a NumPy ufunc name): in the core when it computes it, otherwise
/// `heliograph._ops.binary(op, a, b)`.
pub fn binary<'py>(
    op: &str,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    match native(op, &[a.clone(), b.clone()])? {
        Some(r) => Ok(r),
        None => call(a.py(), "binary", (op, a, b)),
    }
}

/// `<op>(t)` (op: a NumPy ufunc name): in the core when it computes it, otherwise
/// `heliograph._ops.unary(op, t)`.
pub fn unary<'py>(op: &str, t: &Bound<'py, TensorXf>) -> PyResult<Bound<'py, PyAny>> {
    match native(op, &[t.clone().into_any()])? {
        Some(r) => Ok(r),
        None => call(t.py(), "unary", (op, t)),
    }
}

/// `op` of `args` in the core ([`ops::apply`]), as a new tensor; `None` when an
/// argument is no tensor or Python number, or the core does not compute it.
fn native<'py>(op: &str, args: &[Bound<'py, PyAny>]) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(py) = args.first().map(|a| a.py()) else {
        return Ok(None);
    };
    let Some(operands) = operands(args, |a| number(a).map(Operand::Number)) else {
        return Ok(None);
    };
    match ops::apply(&Gil(py), op, &operands) {
        Some(r) => Ok(Some(Bound::new(py, TensorXf::from(r?))?.into_any())),
        None => Ok(None),
    }
}

/// `args` as the core's operands: a tensor as its storage, any other value as `other`
/// makes it (`None`: not an operand, and then no list).
fn operands<'a>(
    args: &'a [Bound<'_, PyAny>],
    other: impl Fn(&Bound<'_, PyAny>) -> Option<Operand<'a>>,
) -> Option<Vec<Operand<'a>>> {
    args.iter()
        .map(|a| match a.cast::<TensorXf>() {
            Ok(t) => Some(Operand::Tensor(&t.get().storage)),
            Err(_) => other(a),
        })
        .collect()
}

/// A Python float, int or bool (exactly those types) as the core's number.
fn number(x: &Bound<'_, PyAny>) -> Option<Number> {
    if x.is_exact_instance_of::<PyFloat>() {
        return x.extract().ok().map(Number::Float);
    }
    if x.is_exact_instance_of::<PyInt>() {
        return Some(Number::Int {
            exact: x.extract().ok(),
            double: x.extract().ok(),
        });
    }
    if x.is_exact_instance_of::<PyBool>() {
        return x.extract().ok().map(Number::Bool);
    }
    None
}

/// The core's operations under the GIL: reads wait as [`read`] does, long work runs
/// with the GIL released.
pub struct Gil<'py>(pub Python<'py>);

impl Caller for Gil<'_> {
    type Error = PyErr;

    fn error(&self, e: heliograph::Error) -> PyErr {
        to_py(e)
    }

    fn read(&self, t: &Storage) -> PyResult<Arc<Buffer>> {
        read(self.0, t)
    }

    fn wait(&self, d: &Arc<DeviceTensor>) -> PyResult<()> {
        wait_device(self.0, d)
    }

    fn cuda(&self) -> PyResult<Arc<CudaBackend>> {
        crate::cuda::backend(self.0)
    }

    fn result_device(&self) -> PyResult<Option<Arc<CudaBackend>>> {
        host_device()
    }

    fn detach<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T {
        self.0.detach(f)
    }
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
        let name = ufunc
            .getattr("__name__")
            .and_then(|n| n.extract::<String>());
        if let Ok(name) = name {
            let args: Vec<Bound<'py, PyAny>> = inputs.iter().collect();
            if let Some(r) = native(&name, &args)? {
                return Ok(r);
            }
        }
    }
    let kw = match kwargs {
        Some(k) => k.clone(),
        None => PyDict::new(py),
    };
    call(py, "array_ufunc", (ufunc, method, inputs, kw))
}

/// `_elementwise(op, args)`: `op` (a NumPy ufunc name) of CUDA tensors and numbers,
/// as a new CUDA tensor computed on the render stream (see `heliograph._ops`).
#[pyfunction]
pub fn _elementwise(py: Python<'_>, op: &str, args: Vec<Bound<'_, PyAny>>) -> PyResult<TensorXf> {
    let float = |a: &Bound<'_, PyAny>| match a.extract::<f64>() {
        Ok(x) => Some(Operand::Number(Number::Float(x))),
        Err(_) => Some(Operand::Other(type_name(a))),
    };
    let operands = operands(&args, float).unwrap_or_default();
    Ok(ops::on_device(&Gil(py), op, &operands)?.into())
}
