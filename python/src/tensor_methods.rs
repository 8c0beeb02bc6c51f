//! `TensorXf`'s Python methods: construction, reads (each waits for the tensor's
//! render or kernel, see [`crate::tensor`]), exports, indexing and the arithmetic
//! operators (see [`crate::tensor_ops`]).

use heliograph::interop::export::export_owner;
use heliograph::io::{encode_png, image_dims};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict, PyTuple};

use crate::dlpack::{self, parse_export_args};
use crate::errors;
use crate::tensor::{host_device, import_any, TensorXf};
use crate::tensor_ops::{self, Gil};
use heliograph::interop::import::HostTo;

#[pymethods]
impl TensorXf {
    /// `TensorXf(array)`: copies a NumPy array, any DLPack producer, a nested list or a TensorXf.
    /// A CUDA array (a CUDA TensorXf, or any framework's) gives a CUDA tensor, copied
    /// on the device (the host never waits).
    #[new]
    fn py_new(py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<TensorXf> {
        if let Ok(t) = array.cast::<TensorXf>() {
            let storage = &t.get().storage;
            if let Some(copy) = py.detach(|| storage.device_copy()) {
                return Ok(copy.map_err(errors::to_py)?.into());
            }
        }
        let cuda = host_device()?;
        let host_to = cuda.as_ref().map_or(HostTo::Buffer, HostTo::Device);
        let imported = import_any(py, array, host_to, None)?;
        Ok(imported.into_storage().map_err(errors::to_py)?.into())
    }

    /// The whole film of an `aov` render (all its channels; the tensor holds those that
    /// Mitsuba's `render` returns), or None when the tensor is the whole film.
    fn _film(&self, py: Python<'_>) -> PyResult<Option<TensorXf>> {
        self.film(py)
    }

    /// `"cuda:N"` for a CUDA tensor, `"cpu"` otherwise.
    #[getter(device)]
    fn device_name(&self) -> String {
        self.storage.device_name()
    }

    /// The shape, as a tuple.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.dims())
    }

    /// Always `numpy.float32`.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("numpy")?.getattr("dtype")?.call1(("float32",))
    }

    /// Number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.dims().len()
    }

    /// Whether the data is available without waiting.
    #[getter]
    fn ready(&self) -> bool {
        self.storage.is_ready()
    }

    fn __len__(&self) -> PyResult<usize> {
        self.dims()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d tensor"))
    }

    /// A NumPy view of the data (waits for the render).
    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::numpy_view(slf)
    }

    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // a CUDA tensor's host data is a fresh copy already: copy=True needs no other
        let fresh = slf.get().device_tensor().is_some();
        let mut a = Self::numpy_view(slf)?;
        if let Some(dt) = dtype.filter(|d| !d.is_none()) {
            let same: bool = a.getattr("dtype")?.eq(dt)?;
            if !same && copy == Some(false) {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "TensorXf.__array__: a dtype conversion needs a copy, but copy=False",
                ));
            }
            a = a.call_method1("astype", (dt,))?;
            return Ok(a);
        }
        if copy == Some(true) && !fresh {
            a = a.call_method0("copy")?;
        }
        Ok(a)
    }

    /// `t[index]`: NumPy indexing; an array result is a new `TensorXf` (on the tensor's
    /// device), one element a float.
    fn __getitem__<'py>(
        slf: &Bound<'py, Self>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::call(slf.py(), "getitem", (slf, index))
    }

    /// `t[index] = value`: NumPy assignment. The tensor takes new storage with the
    /// change (a CUDA tensor's computed on the device): arrays exported earlier keep
    /// the old values.
    fn __setitem__(
        slf: &Bound<'_, Self>,
        index: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = slf.py();
        let data = tensor_ops::call(py, "setitem", (slf, index, value))?;
        let new = import_any(py, &data, HostTo::Vec, None)?;
        new.assign_to(&slf.get().storage).map_err(errors::to_py)
    }

    /// NumPy functions (`np.exp(t)`, `np.maximum(t, 0)`, ...) on tensors.
    #[pyo3(signature = (ufunc, method, *inputs, **kwargs))]
    fn __array_ufunc__<'py>(
        _slf: &Bound<'py, Self>,
        ufunc: &Bound<'py, PyAny>,
        method: &str,
        inputs: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::array_ufunc(ufunc, method, inputs, kwargs)
    }

    fn __add__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("add", slf.as_any(), other)
    }

    fn __radd__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("add", other, slf.as_any())
    }

    fn __sub__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("subtract", slf.as_any(), other)
    }

    fn __rsub__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("subtract", other, slf.as_any())
    }

    fn __mul__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("multiply", slf.as_any(), other)
    }

    fn __rmul__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("multiply", other, slf.as_any())
    }

    fn __truediv__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("true_divide", slf.as_any(), other)
    }

    fn __rtruediv__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("true_divide", other, slf.as_any())
    }

    fn __pow__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
        _modulo: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("power", slf.as_any(), other)
    }

    fn __rpow__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
        _modulo: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("power", other, slf.as_any())
    }

    fn __lt__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("less", slf.as_any(), other)
    }

    fn __le__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("less_equal", slf.as_any(), other)
    }

    fn __gt__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("greater", slf.as_any(), other)
    }

    fn __ge__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("greater_equal", slf.as_any(), other)
    }

    fn __eq__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("equal", slf.as_any(), other)
    }

    fn __ne__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::binary("not_equal", slf.as_any(), other)
    }

    fn __neg__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::unary("negative", slf)
    }

    fn __abs__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::unary("absolute", slf)
    }

    fn __pos__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        tensor_ops::unary("positive", slf)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let view = Self::numpy_view(slf)?;
        let body = view.repr()?.to_string();
        let body = body.strip_prefix("array(").unwrap_or(&body);
        let body = body.rsplit_once(", dtype=").map(|b| b.0).unwrap_or(body);
        let body = body.strip_suffix(')').unwrap_or(body);
        Ok(format!(
            "TensorXf({body}, shape={})",
            heliograph::desc::params::shape_str(slf.get().dims())
        ))
    }

    /// PNG of the tonemapped (clamped, sRGB-encoded) image, for notebooks.
    fn _repr_png_<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let t = slf.get();
        let Some((w, h, c)) = image_dims(t.dims()) else {
            return Ok(None);
        };
        let buf = t.wait(slf.py())?;
        let png = encode_png(buf.as_slice(), w, h, c).map_err(PyRuntimeError::new_err)?;
        Ok(Some(PyBytes::new(slf.py(), &png)))
    }

    /// DLPack export, by the README's rules for CPU and CUDA tensors.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        slf: &Bound<'py, Self>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<&Bound<'py, PyAny>>,
        dl_device: Option<&Bound<'py, PyAny>>,
        copy: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let args = parse_export_args(stream, max_version, dl_device, copy)?;
        let t = slf.get();
        let (owner, copied) = export_owner(&Gil(slf.py()), &t.storage, &args)?;
        dlpack::export(slf.py(), owner, t.dims(), args.versioned, copied)
    }

    /// `(2, ordinal)` for a CUDA tensor, `(1, 0)` for a CPU tensor.
    fn __dlpack_device__(&self) -> (i32, i32) {
        self.storage.dlpack_device()
    }

    /// A PyTorch tensor sharing this memory (`torch.from_dlpack`).
    fn torch<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py()
            .import("torch")?
            .call_method1("from_dlpack", (slf,))
    }

    /// A JAX array (`jax.dlpack.from_dlpack`, which passes JAX's stream; JAX copies
    /// host data it cannot alias).
    fn jax<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let dl = slf.py().import("jax.dlpack")?;
        dl.call_method1("from_dlpack", (slf,))
    }

    /// A CuPy array sharing this memory (`cupy.from_dlpack`, which passes CuPy's stream).
    fn cupy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("cupy")?.call_method1("from_dlpack", (slf,))
    }

    /// A TensorFlow tensor, from a legacy capsule made with `stream=None`.
    fn tf<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let dl = slf.py().import("tensorflow.experimental.dlpack")?;
        let cap = Self::__dlpack__(slf, None, None, None, None)?;
        dl.call_method1("from_dlpack", (cap,))
    }
}
