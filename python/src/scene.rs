//! `Scene` and the loaders.
//!
//! A `Scene` holds a [`Session`]: the loaded scene (description, render-ready scene,
//! parameters) and, once it has been rendered under `cuda_rgb`, its copy on the
//! device. The variant (see [`crate::variant`]) selects the renderer that the
//! session's verbs run on.

use std::sync::{Arc, Mutex, MutexGuard};

use heliograph::backend::cuda::CudaBackend;
use heliograph::desc::params::ParamTable;
use heliograph::desc::{xml, ParamValue, SceneDesc};
use heliograph::session::Session;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

use crate::errors::{to_py, type_name};

/// A loaded scene (see the module docs).
#[pyclass(module = "heliograph", name = "Scene", frozen, weakref)]
pub struct PyScene {
    /// Shared with the XLA render functions registered for the scene.
    state: Arc<Mutex<Session>>,
}

impl PyScene {
    fn build(py: Python<'_>, desc: SceneDesc) -> PyResult<PyScene> {
        let session = py.detach(|| Session::new(desc)).map_err(to_py)?;
        Ok(PyScene {
            state: Arc::new(Mutex::new(session)),
        })
    }

    /// Runs `f` on the session, locked without the GIL (another thread may hold the
    /// lock while it rebuilds geometry).
    pub fn with_state<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Session) -> T + Send,
    ) -> T {
        py.detach(|| f(&mut self.lock_now()))
    }

    /// The session, locked by this thread (without the GIL: the caller has released it
    /// or never held it).
    pub(crate) fn lock_now(&self) -> MutexGuard<'_, Session> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session, shared (an XLA render function holds it).
    pub fn session(&self) -> Arc<Mutex<Session>> {
        self.state.clone()
    }

    /// The current parameter table.
    pub fn params_table(&self, py: Python<'_>) -> Arc<ParamTable> {
        self.with_state(py, |st| st.loaded().params().clone())
    }

    /// Applies staged parameter values (see `SceneParameters.update` and
    /// [`Session::update`]); returns the new table.
    pub fn update(
        &self,
        py: Python<'_>,
        staged: &[(usize, ParamValue)],
    ) -> PyResult<Arc<ParamTable>> {
        crate::dlpack::sweep_parked(py);
        self.with_state(py, |st| st.update(staged)).map_err(to_py)
    }

    /// The backend a new host value for `key` should be uploaded to
    /// ([`Session::upload_target`]).
    pub fn upload_target(&self, py: Python<'_>, key: &str) -> Option<Arc<CudaBackend>> {
        self.with_state(py, |st| st.upload_target(key))
    }
}

#[pymethods]
impl PyScene {
    /// What the package's scene methods report (`sensors()`, `bbox()`, ...): a dict.
    fn _info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.with_state(py, |st| st.summary());
        let d = PyDict::new(py);
        d.set_item("film_size", s.film_size)?;
        d.set_item("crop_size", s.crop_size)?;
        d.set_item("crop_offset", s.crop_offset)?;
        d.set_item("sensor_to_world", s.sensor_to_world)?;
        d.set_item("x_fov", s.x_fov)?;
        d.set_item("sample_count", s.sample_count)?;
        d.set_item("shapes", s.shapes)?;
        d.set_item("emitters", s.emitters)?;
        d.set_item("integrator", s.integrator)?;
        d.set_item("bbox", s.bbox)?;
        Ok(d)
    }

    /// The scene's sensors (Mitsuba's `Scene.sensors()`).
    fn sensors<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        crate::tensor_ops::package(slf.py(), "_objects", "scene_sensors", (slf,))
    }

    /// The scene's emitters.
    fn emitters<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        crate::tensor_ops::package(slf.py(), "_objects", "scene_emitters", (slf,))
    }

    /// The scene's shapes.
    fn shapes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        crate::tensor_ops::package(slf.py(), "_objects", "scene_shapes", (slf,))
    }

    /// The scene's integrator.
    fn integrator<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        crate::tensor_ops::package(slf.py(), "_objects", "scene_integrator", (slf,))
    }

    /// The bounding box of the scene's geometry.
    fn bbox<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        crate::tensor_ops::package(slf.py(), "_objects", "scene_bbox", (slf,))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.with_state(py, |st| st.headline())
    }
}

fn defines(params: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    if let Some(p) = params {
        for (k, v) in p.iter() {
            let k: String = k.extract()?;
            let s = if v.is_instance_of::<PyBool>() {
                if v.extract::<bool>()? {
                    "true"
                } else {
                    "false"
                }
                .to_string()
            } else if v.is_instance_of::<PyString>() {
                v.extract()?
            } else {
                v.str()?.to_string()
            };
            out.push((k, s));
        }
    }
    Ok(out)
}

/// `load_file(path, **params)`: a Mitsuba XML file; `params` override its `<default>`s.
#[pyfunction]
#[pyo3(signature = (path, **params))]
pub fn load_file(
    py: Python<'_>,
    path: std::path::PathBuf,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyScene> {
    let defs = defines(params)?;
    let desc = py.detach(|| xml::load_file(&path, &defs)).map_err(to_py)?;
    PyScene::build(py, desc)
}

/// `load_string(xml, **params)`: a Mitsuba XML document in a string.
#[pyfunction]
#[pyo3(signature = (string, **params))]
pub fn load_string(
    py: Python<'_>,
    string: &str,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyScene> {
    let defs = defines(params)?;
    let desc = xml::load_string(string, &defs).map_err(to_py)?;
    PyScene::build(py, desc)
}

/// `load_dict(dict)`: Mitsuba's dict format.
#[pyfunction]
pub fn load_dict(py: Python<'_>, dict: &Bound<'_, PyAny>) -> PyResult<PyScene> {
    let d = dict.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!("load_dict() takes a dict, got {}", type_name(dict)))
    })?;
    let desc = crate::dict::load_dict(py, d)?;
    PyScene::build(py, desc)
}
