//! `render`: the Python arguments checked and converted, the render started through
//! the scene's session on the variant's renderer, its film returned as a `TensorXf`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBool;

use heliograph::render::{RenderArg, RenderOptions};
use heliograph::session::swap::Swap;

use crate::errors::{to_py, type_name};
use crate::film::{tensor_of, RenderedFilm};
use crate::params::SceneParameters;
use crate::scene::PyScene;
use crate::tensor::TensorXf;
use crate::variant::renderer;

/// `render(scene, params=None, spp=None, seed=0, sensor=0, integrator=None)`: starts the render
/// (on the CPU, or on the CUDA render stream under `cuda_rgb`) and returns its
/// `TensorXf` at once; reading the tensor waits for it.
#[pyfunction]
#[pyo3(signature = (scene, params=None, spp=None, seed=None, sensor=None, integrator=None))]
pub fn render(
    scene: &Bound<'_, PyAny>,
    params: Option<&Bound<'_, PyAny>>,
    spp: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    sensor: Option<&Bound<'_, PyAny>>,
    integrator: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorXf> {
    Ok(render_film(scene, params, spp, seed, sensor, integrator)?.0)
}

/// `render`, and the film of a CPU render (None on CUDA) for `Film.bitmap()`.
#[pyfunction]
#[pyo3(signature = (scene, params=None, spp=None, seed=None, sensor=None, integrator=None))]
pub fn _render(
    scene: &Bound<'_, PyAny>,
    params: Option<&Bound<'_, PyAny>>,
    spp: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    sensor: Option<&Bound<'_, PyAny>>,
    integrator: Option<&Bound<'_, PyAny>>,
) -> PyResult<(TensorXf, Option<RenderedFilm>)> {
    render_film(scene, params, spp, seed, sensor, integrator)
}

fn render_film(
    scene: &Bound<'_, PyAny>,
    params: Option<&Bound<'_, PyAny>>,
    spp: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    sensor: Option<&Bound<'_, PyAny>>,
    integrator: Option<&Bound<'_, PyAny>>,
) -> PyResult<(TensorXf, Option<RenderedFilm>)> {
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
    let spp = spp.filter(|s| !s.is_none());
    let spp = spp.map(|s| int_arg(s, RenderArg::Spp)).transpose()?;
    let seed = seed.map(|s| int_arg(s, RenderArg::Seed)).transpose()?;
    let py = scene.py();
    let swap = parse_swap(py, sensor, integrator)?;
    let opts = RenderOptions::new(spp.unwrap_or(0) as u32, seed.unwrap_or(0));
    crate::dlpack::sweep_parked(py);
    let renderer = renderer(py)?;
    let s: &PyScene = scene.get();
    let film = py
        .detach(|| s.lock_now().render(&*renderer, opts, &swap))
        .map_err(to_py)?;
    tensor_of(film)
}

/// An int argument of `render`, in its range (see [`RenderArg::check`]).
fn int_arg(v: &Bound<'_, PyAny>, arg: RenderArg) -> PyResult<u64> {
    let name = arg.name();
    if v.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "render(): '{name}' must be an int, got bool"
        )));
    }
    let x = v.extract::<i128>().map_err(|_| {
        let ty = type_name(v);
        PyTypeError::new_err(format!("render(): '{name}' must be an int, got {ty}"))
    })?;
    arg.check(x)
        .map_err(|m| PyValueError::new_err(format!("render(): {m}")))
}

/// The sensor and integrator given to `render` in place of the scene's own: `sensor`
/// None, 0 or a sensor object of `load_dict`; `integrator` None or an integrator object
/// of `load_dict`. Such an object holds the scene it was checked in (`_scene`), whose
/// sensor or integrator is taken.
fn parse_swap(
    py: Python<'_>,
    sensor: Option<&Bound<'_, PyAny>>,
    integrator: Option<&Bound<'_, PyAny>>,
) -> PyResult<Swap> {
    let mut swap = Swap::default();
    match sensor.filter(|s| !s.is_none()) {
        Some(s) if s.is_instance_of::<pyo3::types::PyInt>() || s.is_instance_of::<PyBool>() => {
            int_arg(s, RenderArg::Sensor)?;
        }
        Some(s) => {
            let host = holder(s, "sensor", "Sensor")?;
            swap.sensor = Some(host.get().with_state(py, |st| st.loaded().setup().sensor));
        }
        None => {}
    }
    if let Some(i) = integrator.filter(|i| !i.is_none()) {
        let host = holder(i, "integrator", "Integrator")?;
        swap.integrator = Some(host.get().with_state(py, |st| {
            let s = st.loaded().setup();
            (s.integrator, s.aov.clone())
        }));
    }
    Ok(swap)
}

/// The scene that a `load_dict` object of class `class` was checked in.
fn holder<'py>(obj: &Bound<'py, PyAny>, arg: &str, class: &str) -> PyResult<Bound<'py, PyScene>> {
    let given = type_name(obj);
    let wrong = || {
        PyTypeError::new_err(format!(
            "render(): '{arg}' must be {} {class} from load_dict(){}, got {given}",
            heliograph::error::a_or_an(class),
            if arg == "sensor" {
                " or the index 0"
            } else {
                ""
            }
        ))
    };
    if given != class {
        return Err(wrong());
    }
    obj.getattr("_scene")
        .ok()
        .and_then(|s| s.cast_into::<PyScene>().ok())
        .ok_or_else(wrong)
}
