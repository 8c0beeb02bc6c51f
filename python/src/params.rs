//! `traverse(scene)` → `SceneParameters`, a dict-like view over the scene's declared
//! parameters ([`heliograph::desc::SceneParams`]): key names, checks and the update
//! (which rebuilds only what changed, and patches the CUDA copy of the scene in place)
//! live in the core.
//!
//! `params[key] = x` accepts numbers, colours, transforms, and for texture data any
//! array: a NumPy array or nested list (converted on the host), a `TensorXf`, or any
//! framework's CUDA array (copied device to device, never through the host).
//! A mesh's vertex positions take an array of their exact shape (a CUDA array is
//! read to the host: the BVH is refit there).

use std::sync::Mutex;

use heliograph::desc::{ParamValue, SceneParams};
use heliograph::interop::param::{import_target, tensor_of, value_of};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList};

use crate::dict::transform_of;
use crate::errors::{to_py, type_name};
use crate::scene::PyScene;
use crate::tensor::{import_any, TensorXf};
use heliograph::interop::import::HostTo;

/// The editable parameters of a scene, under Mitsuba's key names.
#[pyclass(module = "heliograph", frozen)]
pub struct SceneParameters {
    scene: Py<PyScene>,
    inner: Mutex<SceneParams>,
}

impl SceneParameters {
    /// The view, with current values read from the scene (another view may have
    /// updated it).
    fn lock(&self, py: Python<'_>) -> std::sync::MutexGuard<'_, SceneParams> {
        let table = self.scene.bind(py).get().params_table(py);
        let mut p = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        p.refresh(&table);
        p
    }

    /// The current value of `key`; a KeyError naming the keys there are otherwise.
    fn current(&self, py: Python<'_>, key: &str) -> PyResult<ParamValue> {
        let p = self.lock(py);
        p.get(key).cloned().map_err(|_| key_error(&p, key))
    }
}

/// `traverse(scene)`.
#[pyfunction]
pub fn traverse(scene: &Bound<'_, PyAny>) -> PyResult<SceneParameters> {
    let s = scene
        .cast::<PyScene>()
        .map_err(|_| PyTypeError::new_err("traverse() takes a heliograph Scene"))?;
    let params = SceneParams::new(&s.get().params_table(s.py()));
    Ok(SceneParameters {
        scene: s.clone().unbind(),
        inner: Mutex::new(params),
    })
}

fn key_error(p: &SceneParams, key: &str) -> PyErr {
    PyKeyError::new_err(p.missing(key))
}

/// The Python value of parameter `key`, of the type Mitsuba returns: a float,
/// `ScalarColor3f`, `ScalarPoint3f` (a `position`) or `ScalarVector3f`,
/// `ScalarTransform4f`, or a `TensorXf`.
fn to_python<'py>(py: Python<'py>, key: &str, v: &ParamValue) -> PyResult<Bound<'py, PyAny>> {
    match v {
        ParamValue::Float(x) => Ok(PyFloat::new(py, *x).into_any()),
        ParamValue::Color(c) => {
            let cls = py.import("heliograph")?.getattr("ScalarColor3f")?;
            cls.call1((c.x, c.y, c.z))
        }
        ParamValue::Vector(c) => {
            let name = if key.ends_with("position") {
                "ScalarPoint3f"
            } else {
                "ScalarVector3f"
            };
            let cls = py.import("heliograph")?.getattr(name)?;
            cls.call1((c.x, c.y, c.z))
        }
        ParamValue::Transform(t) => {
            let rows = t.to_rows().map(|r| r.map(|x| x as f64));
            let cls = py.import("heliograph")?.getattr("ScalarTransform4f")?;
            cls.call1((rows,))
        }
        ParamValue::Tensor(_) | ParamValue::Array(_) => {
            let storage = py.detach(|| tensor_of(v)).map_err(to_py)?;
            Ok(Bound::new(py, TensorXf::from(storage))?.into_any())
        }
    }
}

/// Converts a Python value to the kind `current` has; a shape the core cannot even
/// represent gets the core's message format.
fn from_python(
    py: Python<'_>,
    key: &str,
    current: &ParamValue,
    v: &Bound<'_, PyAny>,
    host_to: HostTo<'_>,
) -> PyResult<ParamValue> {
    if v.is_instance_of::<PyBool>() || v.is_none() || v.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(format!(
            "parameter \"{key}\": {}, got {}",
            current.expected(),
            v.get_type().name()?
        )));
    }
    if v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>() {
        return Ok(ParamValue::Float(v.extract()?));
    }
    if let Some(t) = transform_of(v, &format!("<parameters>: parameter \"{key}\""))? {
        return Ok(ParamValue::Transform(t));
    }
    let imported = import_any(py, v, host_to, None).map_err(|e| {
        // the same exception type, with the key in front
        let msg = format!("<parameters>: parameter \"{key}\": {}", e.value(py));
        PyErr::from_type(e.get_type(py), msg)
    })?;
    let shared = v.cast::<TensorXf>().is_ok();
    py.detach(|| value_of(key, current, imported, shared))
        .map_err(to_py)
}

#[pymethods]
impl SceneParameters {
    fn keys(&self, py: Python<'_>) -> Vec<String> {
        self.lock(py).keys().map(str::to_string).collect()
    }

    fn items<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
        let p = self.lock(py).clone();
        let mut out = Vec::new();
        for k in p.keys() {
            out.push((k.to_string(), to_python(py, k, p.get(k).map_err(to_py)?)?));
        }
        Ok(out)
    }

    fn values<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        Ok(self.items(py)?.into_iter().map(|kv| kv.1).collect())
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.lock(py).len()
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> bool {
        key.extract::<String>()
            .is_ok_and(|k| self.lock(py).contains(&k))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, self.keys(py))?
            .try_iter()
            .map(|i| i.into_any())
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, key, &self.current(py, key)?)
    }

    /// Checks and stages a new value; it takes effect at `update()`.
    fn __setitem__(&self, py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let current = self.current(py, key)?;
        // a texture of a scene the GPU holds goes straight to the device, unless a
        // reader needs its values on the host
        let upload = self.scene.bind(py).get().upload_target(py, key);
        let host_to = import_target(&current, upload.as_ref());
        let new = from_python(py, key, &current, value, host_to)?;
        // the finiteness scan of a large texture runs without the GIL
        let mut staged = self.lock(py).clone();
        let staged = py
            .detach(move || staged.set(key, new).map(|()| staged))
            .map_err(to_py)?;
        *self.inner.lock().unwrap_or_else(|p| p.into_inner()) = staged;
        Ok(())
    }

    /// Keeps only some parameters: a list of keys, or a regular expression that
    /// `re.search` must find in the key (as Mitsuba's `keep`). Unknown keys in a list
    /// are a KeyError.
    fn keep(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let all = self.keys(py);
        let wanted: Vec<String> = if keys.is_instance_of::<pyo3::types::PyString>() {
            let re = py.import("re")?;
            let mut out = Vec::new();
            for k in &all {
                if !re.call_method1("search", (keys, k))?.is_none() {
                    out.push(k.clone());
                }
            }
            out
        } else {
            let list: Vec<String> = keys.extract().map_err(|_| {
                PyTypeError::new_err("keep() takes a list of keys or a regular expression string")
            })?;
            if let Some(k) = list.iter().find(|k| !all.contains(k)) {
                return Err(key_error(&self.lock(py), k));
            }
            list
        };
        self.lock(py).keep(|k| wanted.iter().any(|w| w == k));
        Ok(())
    }

    /// Keys set since the last update.
    fn changed(&self, py: Python<'_>) -> Vec<String> {
        self.lock(py)
            .changed()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// Applies the staged values, rebuilding only what they change (on the CUDA
    /// variant the scene's device copy is patched in place, asynchronously); returns the
    /// keys that changed. On error nothing changes and the values stay staged.
    ///
    /// `values` (a dict, or anything with `items()`, as Mitsuba's `update(values)`) is
    /// set first, key by key.
    #[pyo3(signature = (values=None))]
    fn update(&self, py: Python<'_>, values: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
        if let Some(v) = values.filter(|v| !v.is_none()) {
            let items = v.call_method0("items").map_err(|_| {
                PyTypeError::new_err(format!(
                    "SceneParameters.update(): 'values' must be a dict or have items(), got {}",
                    type_name(v)
                ))
            })?;
            for kv in items.try_iter()? {
                let (k, x): (String, Bound<'_, PyAny>) = kv?.extract().map_err(|_| {
                    PyTypeError::new_err(
                        "SceneParameters.update(): 'values' items must be (str key, value) pairs",
                    )
                })?;
                self.__setitem__(py, &k, &x)?;
            }
        }
        let (keys, staged) = {
            let p = self.lock(py);
            let keys: Vec<String> = p.changed().into_iter().map(str::to_string).collect();
            (keys, p.staged())
        };
        if keys.is_empty() {
            return Ok(keys);
        }
        let table = self.scene.bind(py).get().update(py, &staged)?;
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .commit(&table);
        Ok(keys)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("SceneParameters[\n{}]", self.lock(py).table())
    }
}
