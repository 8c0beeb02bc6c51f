//! `TensorXf`: a float32 tensor on the host or on a CUDA device that may still be
//! rendering.
//!
//! A tensor's values are the core's [`Storage`] (a running render, a host buffer, a
//! device tensor or a failed render); this file is the Python face and the waits.
//! A CPU render's tensor holds the background [`RenderJob`]; every read (`numpy()`,
//! `__array__`, `__repr__`, `__dlpack__`, `_repr_png_`, file writes) waits for exactly
//! that render with the GIL released, polling for Ctrl-C (which cancels the render) and
//! drawing the progress line. A CUDA tensor holds a [`DeviceTensor`]: host reads wait
//! on its ready event only, and `__dlpack__` follows the README's DLPack rules (the
//! consumer's stream waits on the event; the host waits only for `stream=None`).
//!
//! A tensor lives where its data came from: a render on the variant's device, a
//! `TensorXf(x)` where `x` lives (a CUDA array of any framework gives a CUDA tensor).

use std::sync::Arc;
use std::time::{Duration, Instant};

use heliograph::backend::cuda::DeviceTensor;
use heliograph::interop::export::Owner;
use heliograph::interop::Storage;
use heliograph::tensor::dlpack::{DEVICE_CPU, DEVICE_CUDA};
use heliograph::tensor::{Buffer, HostArray};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use crate::dlpack::{self, parse_export_args};
use crate::errors::{self, RenderError};
use crate::progress::ProgressLine;
use heliograph::interop::import::{import_values, shared_device, HostTo, Imported};
use heliograph::session::progress as settings;

/// A float32 tensor (`shape`, C order) on the host or a CUDA device.
#[pyclass(module = "heliograph", frozen, weakref)]
pub struct TensorXf {
    pub(crate) storage: Storage,
}

impl From<Storage> for TensorXf {
    fn from(storage: Storage) -> TensorXf {
        TensorXf { storage }
    }
}

impl TensorXf {
    /// The device tensor, for CUDA tensors.
    pub fn device_tensor(&self) -> Option<Arc<DeviceTensor>> {
        self.storage.device_tensor()
    }

    /// The shape.
    pub fn dims(&self) -> &[usize] {
        self.storage.shape()
    }

    /// The whole developed film of a render that returns some of its channels (waits
    /// for the render); `None` for other tensors.
    pub fn film(&self, py: Python<'_>) -> PyResult<Option<TensorXf>> {
        if !self.storage.is_film_part() {
            return Ok(None);
        }
        self.wait(py)?;
        match self.storage.developed_film() {
            Some(film) => Ok(Some(film.map_err(errors::to_py)?.into())),
            None => Ok(None),
        }
    }

    /// The data on the host ([`read`]).
    pub fn wait(&self, py: Python<'_>) -> PyResult<Arc<Buffer>> {
        read(py, &self.storage)
    }

    /// A NumPy array of the (finished) data: a view of the host buffer, or of a host
    /// copy of a CUDA tensor (then a fresh array nobody else holds: `owned`).
    pub(crate) fn numpy_view<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let t = slf.get();
        let view = HostView {
            buf: t.wait(py)?,
            shape: t.dims().to_vec(),
        };
        py.import("numpy")?
            .call_method1("from_dlpack", (Bound::new(py, view)?,))
    }
}

/// The data of `storage` on the host: waits (GIL released) for the render — Ctrl-C cancels a CPU
/// render — or, for a CUDA tensor, copies it after its ready event into a new host
/// buffer (the buffer is the caller's own: a CUDA tensor's host data is never
/// shared).
pub fn read(py: Python<'_>, storage: &Storage) -> PyResult<Arc<Buffer>> {
    if let Some(d) = storage.device_tensor() {
        wait_device(py, &d)?;
        let buf = py
            .detach(|| d.to_buffer().map(Arc::new))
            .map_err(errors::to_py)?;
        return Ok(buf);
    }
    let start = Instant::now();
    let delay = settings::delay();
    let mut bar = ProgressLine::default();
    let mut poll = Duration::from_micros(200);
    loop {
        if let Some(r) = storage.try_finish(errors::to_py, RenderError::new_err) {
            if r.is_ok() {
                bar.complete(py, start.elapsed());
            }
            bar.finish(py);
            return r;
        }
        // wake as soon as the render ends (the poll only bounds the Ctrl-C latency)
        match storage.completion() {
            Some(c) => py.detach(|| c.wait_timeout(poll)),
            None => py.detach(|| {
                std::thread::sleep(poll);
                false
            }),
        };
        poll = (poll * 2).min(Duration::from_millis(20));
        if let Err(e) = py.check_signals() {
            py.detach(|| storage.cancel("render cancelled by KeyboardInterrupt"));
            bar.finish(py);
            return Err(e);
        }
        if settings::enabled() && start.elapsed() >= delay {
            let Some((done, total)) = storage.samples() else {
                continue;
            };
            bar.draw(py, done, total, start.elapsed());
        }
    }
}

/// Release fences a CUDA tensor holds (tests: one per consumer stream, however often
/// it is exported); 0 for a host tensor.
#[pyfunction]
pub fn _cuda_fence_count(t: &Bound<'_, TensorXf>) -> usize {
    t.get().device_tensor().map_or(0, |d| d.fence_count())
}

/// Waits on the host for a CUDA tensor's ready event (that event only), with the GIL
/// released: a short poll, then a sleep on the event; Ctrl-C interrupts the wait (the
/// kernel runs on; the tensor stays valid). A failed kernel surfaces as an error here.
pub(crate) fn wait_device(py: Python<'_>, d: &Arc<DeviceTensor>) -> PyResult<()> {
    let mut interrupt = None;
    let done = py
        .detach(|| {
            d.wait_until(|| {
                Python::attach(|py| match py.check_signals() {
                    Ok(()) => true,
                    Err(e) => {
                        interrupt = Some(e);
                        false
                    }
                })
            })
        })
        .map_err(errors::to_py)?;
    match (done, interrupt) {
        (true, _) => Ok(()),
        (false, Some(e)) => Err(e),
        (false, None) => Err(RenderError::new_err(
            "the wait for a CUDA tensor was interrupted",
        )),
    }
}

/// The device that a tensor made from host data lives on: under `cuda_rgb` a host array
/// is uploaded, as Mitsuba's TensorXf is on the GPU.
pub(crate) fn host_device() -> PyResult<Option<Arc<heliograph::backend::cuda::CudaBackend>>> {
    match crate::variant::backend() {
        Some(b) if b.holds_tensors_on_device() => crate::cuda::opened(),
        _ => Ok(None),
    }
}

/// Whether `obj` says it lives on a CUDA device (`__dlpack_device__()[0] == 2`).
pub fn on_cuda(obj: &Bound<'_, PyAny>) -> bool {
    if obj.is_instance_of::<pyo3::types::PyType>() {
        return false;
    }
    obj.call_method0("__dlpack_device__")
        .and_then(|d| d.extract::<(i32, i32)>())
        .is_ok_and(|(kind, _)| kind == DEVICE_CUDA)
}

/// Converts anything array-like to a host array: a TensorXf (waits), a DLPack
/// producer (CUDA arrays are copied on the device, then read), or (through
/// `numpy.asarray`) nested sequences.
pub fn to_host_array(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<HostArray> {
    let imported = import_any(py, obj, HostTo::Vec, None)?;
    py.detach(|| imported.into_host()).map_err(errors::to_py)
}

/// Imports anything array-like, keeping CUDA arrays on the device: a TensorXf (a host
/// one waits for its render; a CUDA one is shared), a DLPack producer, or (through
/// `numpy.asarray`) nested sequences. Host arrays go where `host_to` says. `after`:
/// the CUDA stream whose queued work writes another framework's CUDA array, when the
/// caller knows it ([`dlpack::import_device`]); heliograph's own tensors are ordered
/// already, and host data ignores it.
pub fn import_any(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    host_to: HostTo<'_>,
    after: Option<usize>,
) -> PyResult<Imported> {
    if let Ok(t) = obj.cast::<TensorXf>() {
        let t = t.get();
        if let Some(shared) = shared_device(&t.storage) {
            return Ok(shared);
        }
        let buf = t.wait(py)?;
        let shape = t.dims().to_vec();
        return py
            .detach(|| import_values(buf.as_slice(), shape, host_to))
            .map_err(errors::to_py);
    }
    let is_type = obj.is_instance_of::<pyo3::types::PyType>();
    if let Ok(kind) = obj.getattr("dtype").and_then(|d| d.getattr("kind")) {
        let kind: String = kind.extract().unwrap_or_default();
        if !is_type && !kind.is_empty() && !"biuf".contains(kind.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "expected numeric data, got an array of dtype kind '{kind}'"
            )));
        }
    }
    if obj.hasattr("__dlpack__")? && !is_type {
        let native = numpy_native_copy(py, obj)?;
        return dlpack::import_device(py, native.as_ref().unwrap_or(obj), host_to, after);
    }
    let np = py.import("numpy")?;
    let arr = np
        .call_method1("asarray", (obj,))
        .map_err(|e| PyTypeError::new_err(format!("cannot convert to an array: {e}")))?;
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    if !"biuf".contains(kind.as_str()) || kind.is_empty() {
        let ty = obj.get_type().name()?;
        return Err(PyTypeError::new_err(format!(
            "expected a number, a sequence of numbers or an array, got {ty} (array kind '{kind}')"
        )));
    }
    let native = numpy_native_copy(py, &arr)?;
    dlpack::import_device(py, native.as_ref().unwrap_or(&arr), host_to, None)
}

/// NumPy's C-order copy, in native byte order, of a NumPy array that DLPack cannot
/// describe and NumPy therefore refuses to export: one in non-native byte order (as
/// read from a big-endian file), or one whose strides are not a multiple of its item
/// size (a field of a structured array). `None` for anything else, which is imported
/// as it is.
fn numpy_native_copy<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let np = py.import("numpy")?;
    if !obj.is_instance(&np.getattr("ndarray")?)? {
        return Ok(None);
    }
    let dtype = obj.getattr("dtype")?;
    let native: bool = dtype.getattr("isnative")?.extract()?;
    let item: isize = dtype.getattr("itemsize")?.extract()?;
    let strides: Vec<isize> = obj.getattr("strides")?.extract()?;
    if native && (item == 0 || strides.iter().all(|s| s % item == 0)) {
        return Ok(None);
    }
    let want = dtype.call_method1("newbyteorder", ("=",))?;
    // astype rather than ascontiguousarray, which makes a 0-d array 1-d
    let kwargs = PyDict::new(py);
    kwargs.set_item("order", "C")?;
    obj.call_method("astype", (want,), Some(&kwargs)).map(Some)
}

/// A host buffer as NumPy sees it (`numpy.from_dlpack` of a CPU capsule): the view
/// keeps the buffer alive.
#[pyclass(module = "heliograph", frozen)]
struct HostView {
    buf: Arc<Buffer>,
    shape: Vec<usize>,
}

#[pymethods]
impl HostView {
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<&Bound<'py, PyAny>>,
        dl_device: Option<&Bound<'py, PyAny>>,
        copy: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let args = parse_export_args(stream, max_version, dl_device, copy)?;
        args.check_host().map_err(errors::to_py)?;
        let owner = Owner::Host(self.buf.clone());
        dlpack::export(py, owner, &self.shape, args.versioned, false)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        (DEVICE_CPU, 0)
    }
}
