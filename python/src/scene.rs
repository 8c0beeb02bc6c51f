//! `Scene`, variants, the loaders and `render`.
//!
//! A `Scene` holds the loaded scene (description, render-ready scene, parameters) and,
//! once it has been rendered under `cuda_rgb`, its copy on the device: uploaded at the
//! first CUDA render, patched in place by every update, read by every render — so a
//! render only enqueues kernels.

use std::sync::{Arc, Mutex, MutexGuard};

use heliograph::backend::cpu::render_async;
use heliograph::backend::cuda::{check_supported, CudaBackend, CudaFilm, DeviceScene};
use heliograph::backend::{Backend, RenderOptions};
use heliograph::scene::params::ParamTable;
use heliograph::scene::{xml, LoadedScene, ParamValue, SceneDesc};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

use crate::errors::{to_py, VariantError};
use crate::params::SceneParameters;
use crate::tensor::TensorXf;

/// The backend of the variant set by `set_variant` (none until then: the CPU).
static VARIANT: Mutex<Option<Backend>> = Mutex::new(None);

fn set_one(py: Python<'_>, name: &str) -> PyResult<Backend> {
    match Backend::from_variant(name) {
        Some(Backend::Cuda) => crate::cuda::backend(py)
            .map(|_| Backend::Cuda)
            .map_err(|e| {
                let why = e.value(py).to_string();
                let why = why.strip_prefix("CUDA unavailable: ").unwrap_or(&why);
                crate::errors::CudaUnavailableError::new_err(format!(
                    "CUDA unavailable: variant \"{name}\" needs the CUDA backend: {why}; use \"cpu_rgb\""
                ))
            }),
        Some(b) => Ok(b),
        None => Err(VariantError::new_err(format!(
            "unknown variant \"{name}\" (available: {}; Mitsuba aliases scalar_rgb and llvm_ad_rgb mean cpu_rgb, cuda_ad_rgb means cuda_rgb)",
            variants().join(", ")
        ))),
    }
}

/// `set_variant(*names)`: the first name that works is selected (as Mitsuba).
#[pyfunction]
#[pyo3(signature = (*names))]
pub fn set_variant(py: Python<'_>, names: Vec<String>) -> PyResult<()> {
    let mut last = VariantError::new_err("set_variant() needs at least one variant name");
    for n in &names {
        match set_one(py, n) {
            Ok(v) => {
                *VARIANT.lock().unwrap_or_else(|p| p.into_inner()) = Some(v);
                return Ok(());
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The current variant, or None before `set_variant`.
#[pyfunction]
pub fn variant() -> Option<&'static str> {
    backend().and_then(Backend::variant)
}

/// The backend of the current variant, or None before `set_variant`.
pub fn backend() -> Option<Backend> {
    *VARIANT.lock().unwrap_or_else(|p| p.into_inner())
}

/// The variants this build can run (`cuda_rgb` needs a usable GPU when selected).
#[pyfunction]
pub fn variants() -> Vec<&'static str> {
    Backend::VARIANTS.iter().map(|(name, _)| *name).collect()
}

/// A loaded scene (see the module docs).
#[pyclass(module = "heliograph", name = "Scene", frozen)]
pub struct PyScene {
    state: Mutex<SceneState>,
}

/// The loaded scene and its device copy, changed together by updates.
pub struct SceneState {
    /// The description, the render-ready scene and the parameters.
    pub loaded: LoadedScene,
    /// The copy on the CUDA device, once rendered there.
    pub device: Option<DeviceScene>,
}

impl PyScene {
    fn build(py: Python<'_>, desc: SceneDesc) -> PyResult<PyScene> {
        let loaded = py.detach(|| LoadedScene::new(desc)).map_err(to_py)?;
        Ok(PyScene {
            state: Mutex::new(SceneState {
                loaded,
                device: None,
            }),
        })
    }

    /// Runs `f` on the state, locked without the GIL (another thread may hold the lock
    /// while it rebuilds geometry).
    pub fn with_state<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut SceneState) -> T + Send,
    ) -> T {
        py.detach(|| f(&mut self.lock_now()))
    }

    fn lock_now(&self) -> MutexGuard<'_, SceneState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current parameter table.
    pub fn params_table(&self, py: Python<'_>) -> Arc<ParamTable> {
        self.with_state(py, |st| st.loaded.params().clone())
    }

    /// Applies staged parameter values (see `SceneParameters.update`): the host scene is
    /// rebuilt where they change it, then the device copy patched; returns the new table.
    pub fn update(
        &self,
        py: Python<'_>,
        staged: &[(usize, ParamValue)],
    ) -> PyResult<Arc<ParamTable>> {
        crate::dlpack::sweep_parked(py);
        // a forked child of the process that used CUDA updates the host scene only: the
        // device copy is the parent's (and CUDA renders refuse to run there)
        let backend = crate::cuda::opened().unwrap_or(None);
        py.detach(|| {
            let mut st = self.lock_now();
            let changes = st.loaded.update(staged)?;
            let version = st.loaded.version();
            let scene = st.loaded.scene().clone();
            let table = st.loaded.params().clone();
            if let (Some(dev), Some(be)) = (st.device.as_mut(), backend.as_ref()) {
                if let Err(e) = be.update_scene(dev, &scene, &changes, version) {
                    // the next CUDA render uploads the whole scene again
                    st.device = None;
                    return Err(heliograph::Error::Cuda(format!(
                        "the update was applied, but patching the scene on the GPU failed \
                         ({e}); the next render uploads it again"
                    )));
                }
            }
            Ok(table)
        })
        .map_err(to_py)
    }

    /// The backend a new host value for `key` should be uploaded to: the scene has a
    /// device copy and the value would stay on the device at update.
    pub fn upload_target(&self, py: Python<'_>, key: &str) -> Option<Arc<CudaBackend>> {
        let be = crate::cuda::opened().ok().flatten()?;
        let keep = self.with_state(py, |st| {
            st.device.is_some() && st.loaded.keeps_on_device(key)
        });
        keep.then_some(be)
    }

    /// Enqueues a CUDA render: uploads the scene first if it has no current device
    /// copy (the host copy of device-only textures is fetched first).
    fn render_cuda(&self, be: &CudaBackend, opts: &RenderOptions) -> heliograph::Result<CudaFilm> {
        let mut st = self.lock_now();
        let version = st.loaded.version();
        if st.device.as_ref().is_none_or(|d| d.version() != version) {
            st.device = None;
            st.loaded.fetch_device_images()?;
            check_supported(st.loaded.scene())?;
            let dev = be.upload_scene(st.loaded.scene(), version)?;
            st.device = Some(dev);
        }
        let spp = st.loaded.scene().sensor.sampler.sample_count;
        let dev = st.device.as_ref().expect("uploaded above");
        be.render_scene(dev, opts, spp)
    }
}

#[pymethods]
impl PyScene {
    fn __repr__(&self, py: Python<'_>) -> String {
        let s = self.with_state(py, |st| st.loaded.scene().clone());
        let f = &s.sensor.film;
        format!(
            "Scene(shapes={}, emitters={}, bsdfs={}, film={}x{})",
            s.geom.shapes.len(),
            s.emitters.len(),
            s.bsdfs.len(),
            f.width,
            f.height
        )
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
        PyTypeError::new_err(format!(
            "load_dict() takes a dict, got {}",
            dict.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let desc = crate::dict::load_dict(py, d)?;
    PyScene::build(py, desc)
}

/// `render(scene, params=None, spp=None, seed=0, sensor=0)`: starts the render
/// (on the CPU, or on the CUDA render stream under `cuda_rgb`) and returns its
/// `TensorXf` at once; reading the tensor waits for it.
#[pyfunction]
#[pyo3(signature = (scene, params=None, spp=None, seed=None, sensor=None))]
pub fn render(
    scene: &Bound<'_, PyAny>,
    params: Option<&Bound<'_, PyAny>>,
    spp: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    sensor: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorXf> {
    let scene = scene.cast::<PyScene>().map_err(|_| {
        PyTypeError::new_err(
            "render(): 'scene' must be a heliograph Scene (from load_dict/load_file/load_string)",
        )
    })?;
    if let Some(p) = params.filter(|p| !p.is_none()) {
        if p.cast::<SceneParameters>().is_err() {
            return Err(PyTypeError::new_err(
                "render(): 'params' must be None or the SceneParameters of traverse()",
            ));
        }
    }
    let spp = match spp.filter(|s| !s.is_none()) {
        None => None,
        Some(s) => Some(positive_int(s, "spp")?),
    };
    let seed = match seed {
        Some(s) => non_negative_int(s, "seed")?,
        None => 0,
    };
    let sensor = match sensor {
        Some(s) => non_negative_int(s, "sensor")?,
        None => 0,
    };
    if sensor != 0 {
        return Err(PyValueError::new_err(
            "render(): the scene has one sensor; 'sensor' must be 0",
        ));
    }
    let py = scene.py();
    let opts = RenderOptions { spp, seed };
    crate::dlpack::sweep_parked(py);
    if backend() == Some(Backend::Cuda) {
        let be = crate::cuda::backend(py)?;
        let s: &PyScene = scene.get();
        let film = py.detach(|| s.render_cuda(&be, &opts)).map_err(to_py)?;
        let (w, h, c) = film.shape();
        return Ok(TensorXf::device(vec![h, w, c], film.into_tensor()));
    }
    let scene_arc = scene
        .get()
        .with_state(py, |st| {
            st.loaded.fetch_device_images()?;
            Ok(st.loaded.scene().clone())
        })
        .map_err(to_py)?;
    let f = &scene_arc.sensor.film;
    let shape = vec![
        f.crop_size[1] as usize,
        f.crop_size[0] as usize,
        f.channels(),
    ];
    let job = render_async(scene_arc, opts).map_err(to_py)?;
    Ok(TensorXf::pending(shape, job))
}

fn int_arg(v: &Bound<'_, PyAny>, name: &str) -> PyResult<i128> {
    if v.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "render(): '{name}' must be an int, got bool"
        )));
    }
    v.extract::<i128>().map_err(|_| {
        let ty = v
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        PyTypeError::new_err(format!("render(): '{name}' must be an int, got {ty}"))
    })
}

fn positive_int(v: &Bound<'_, PyAny>, name: &str) -> PyResult<u32> {
    let x = int_arg(v, name)?;
    if !(1..=u32::MAX as i128).contains(&x) {
        return Err(PyValueError::new_err(format!(
            "render(): '{name}' must be in [1, {}], got {x}",
            u32::MAX
        )));
    }
    Ok(x as u32)
}

fn non_negative_int(v: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    let x = int_arg(v, name)?;
    if !(0..=u64::MAX as i128).contains(&x) {
        return Err(PyValueError::new_err(format!(
            "render(): '{name}' must be in [0, {}], got {x}",
            u64::MAX
        )));
    }
    Ok(x as u64)
}
