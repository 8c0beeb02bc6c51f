//! `traverse(scene)` → `SceneParameters`, a dict-like view over
//! [`heliograph::scene::SceneParams`] (key names, validation and the rebuild on
//! `update()` live in the core).

use std::sync::Mutex;

use heliograph::math::{Transform, Vec3};
use heliograph::scene::params::shape_str;
use heliograph::scene::{ParamValue, PixelArray, SceneParams};
use heliograph::Loc;
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList};

use crate::dict::{pixels, transform_of};
use crate::errors::{to_py, SceneError};
use crate::scene::PyScene;
use crate::tensor::{to_host_array, TensorXf};

/// The editable parameters of a scene, under Mitsuba's key names.
#[pyclass(module = "heliograph", frozen)]
pub struct SceneParameters {
    scene: Py<PyScene>,
    inner: Mutex<SceneParams>,
}

impl SceneParameters {
    fn lock(&self) -> std::sync::MutexGuard<'_, SceneParams> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `traverse(scene)`.
#[pyfunction]
pub fn traverse(scene: &Bound<'_, PyAny>) -> PyResult<SceneParameters> {
    let s = scene
        .cast::<PyScene>()
        .map_err(|_| PyTypeError::new_err("traverse() takes a heliograph Scene"))?;
    let params = {
        let st = s.get().lock();
        SceneParams::traverse(&st.desc, &st.scene)
    };
    Ok(SceneParameters {
        scene: s.clone().unbind(),
        inner: Mutex::new(params),
    })
}

fn key_error(p: &SceneParams, key: &str) -> PyErr {
    let keys: Vec<&str> = p.keys().collect();
    PyKeyError::new_err(format!(
        "'{key}' is not a parameter of this scene; it has: {}",
        keys.join(", ")
    ))
}

fn to_python<'py>(py: Python<'py>, v: &ParamValue) -> PyResult<Bound<'py, PyAny>> {
    match v {
        ParamValue::Float(x) => Ok(PyFloat::new(py, *x).into_any()),
        ParamValue::Color(c) => {
            let cls = py.import("heliograph")?.getattr("ScalarColor3f")?;
            cls.call1((c.x, c.y, c.z))
        }
        ParamValue::Vector(c) => {
            Ok(Bound::new(py, TensorXf::from_data(vec![3], &c.to_array()))?.into_any())
        }
        ParamValue::Transform(t) => {
            let rows = t.to_rows().map(|r| r.map(|x| x as f64));
            let cls = py.import("heliograph")?.getattr("ScalarTransform4f")?;
            cls.call1((rows,))
        }
        ParamValue::Tensor(p) => {
            let shape = vec![p.height, p.width, p.channels];
            Ok(Bound::new(py, TensorXf::from_data(shape, &p.data))?.into_any())
        }
    }
}

/// Converts a Python value to the kind `current` has; a shape the core cannot
/// even represent gets the core's message format.
fn from_python(
    py: Python<'_>,
    key: &str,
    current: &ParamValue,
    v: &Bound<'_, PyAny>,
) -> PyResult<ParamValue> {
    let mismatch = |given: &[usize]| {
        SceneError::new_err(format!(
            "<parameters>: parameter \"{key}\": expected a {} of shape {}, got an array of shape {}",
            current.kind(),
            shape_str(&current.shape()),
            shape_str(given)
        ))
    };
    if v.is_instance_of::<PyBool>() || v.is_none() || v.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(format!(
            "parameter \"{key}\": expected a {} of shape {}, got {}",
            current.kind(),
            shape_str(&current.shape()),
            v.get_type().name()?
        )));
    }
    if v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>() {
        return Ok(ParamValue::Float(v.extract()?));
    }
    if let Some(t) = transform_of(v, &format!("<parameters>: parameter \"{key}\""))? {
        return Ok(ParamValue::Transform(t));
    }
    let a = to_host_array(py, v).map_err(|e| {
        // the same exception type, with the key in front
        let msg = format!("<parameters>: parameter \"{key}\": {}", e.value(py));
        PyErr::from_type(e.get_type(py), msg)
    })?;
    Ok(match (&a.shape[..], current) {
        ([], _) => ParamValue::Float(a.data[0] as f64),
        ([3], ParamValue::Color(_)) => ParamValue::Color(Vec3::from_slice(&a.data)),
        ([3], _) => ParamValue::Vector(Vec3::from_slice(&a.data)),
        ([4, 4], ParamValue::Transform(_)) => {
            let mut rows = [[0f32; 4]; 4];
            for (i, r) in rows.iter_mut().enumerate() {
                r.copy_from_slice(&a.data[4 * i..4 * i + 4]);
            }
            let t = Transform::from_rows(rows).ok_or_else(|| {
                SceneError::new_err(format!(
                    "<parameters>: parameter \"{key}\": the matrix is singular or not finite"
                ))
            })?;
            ParamValue::Transform(t)
        }
        ([_, _, _], ParamValue::Tensor(_)) | ([_, _], ParamValue::Tensor(_)) => {
            if !a.is_float() {
                return Err(SceneError::new_err(format!(
                    "<parameters>: parameter \"{key}\": expected float data, got {}",
                    a.dtype_name()
                )));
            }
            let given = a.shape.clone();
            if !matches!(given.last(), Some(1 | 3 | 4)) && given.len() == 3 {
                return Err(mismatch(&given));
            }
            let loc = Loc::unknown(&format!("<parameters>: parameter \"{key}\""));
            let px: PixelArray = pixels(a, &loc)?;
            ParamValue::Tensor(std::sync::Arc::new(px))
        }
        (s, _) => return Err(mismatch(s)),
    })
}

#[pymethods]
impl SceneParameters {
    fn keys(&self) -> Vec<String> {
        self.lock().keys().map(str::to_string).collect()
    }

    fn items<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
        let p = self.lock();
        let mut out = Vec::new();
        for k in p.keys() {
            out.push((k.to_string(), to_python(py, p.get(k).map_err(to_py)?)?));
        }
        Ok(out)
    }

    fn values<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        Ok(self.items(py)?.into_iter().map(|kv| kv.1).collect())
    }

    fn __len__(&self) -> usize {
        self.lock().len()
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> bool {
        key.extract::<String>()
            .is_ok_and(|k| self.lock().contains(&k))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, self.keys())?
            .try_iter()
            .map(|i| i.into_any())
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        let p = self.lock();
        match p.get(key) {
            Ok(v) => to_python(py, v),
            Err(_) => Err(key_error(&p, key)),
        }
    }

    /// Validates and stages a new value; it takes effect at `update()`.
    fn __setitem__(&self, py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let current = {
            let p = self.lock();
            match p.get(key) {
                Ok(v) => v.clone(),
                Err(_) => return Err(key_error(&p, key)),
            }
        };
        let new = from_python(py, key, &current, value)?;
        self.lock().set(key, new).map_err(to_py)
    }

    /// Keeps only some parameters: a list of keys, or a regular expression that
    /// `re.search` must find in the key (as Mitsuba's `keep`). Unknown keys in a list
    /// are a KeyError.
    fn keep(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let all = self.keys();
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
                return Err(key_error(&self.lock(), k));
            }
            list
        };
        self.lock().keep(|k| wanted.iter().any(|w| w == k));
        Ok(())
    }

    /// Keys set since the last update.
    fn changed(&self) -> Vec<String> {
        self.lock()
            .changed()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// Writes the staged values into the scene and rebuilds it (only the sensor when
    /// only camera parameters changed, else the whole scene); returns the keys that
    /// changed. On error the scene is unchanged.
    fn update(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let scene = self.scene.bind(py).get();
        // no lock is held while the GIL is released (another thread could hold the
        // GIL and wait for the lock); the rebuild works on copies
        let mut params = self.lock().clone();
        let keys: Vec<String> = params.changed().into_iter().map(str::to_string).collect();
        if keys.is_empty() {
            return Ok(keys);
        }
        let (desc, prev) = {
            let st = scene.lock();
            (st.desc.clone(), st.scene.clone())
        };
        let (new_desc, new_scene) = py
            .detach(move || params.update_from(&desc, &prev).map(|r| (r, params)))
            .map_err(to_py)
            .map(|((d, s), p)| {
                *self.lock() = p;
                (d, s)
            })?;
        let mut st = scene.lock();
        st.desc = new_desc;
        st.scene = std::sync::Arc::new(new_scene);
        Ok(keys)
    }

    fn __repr__(&self) -> String {
        let p = self.lock();
        format!("SceneParameters[\n{}]", p.table())
    }
}
