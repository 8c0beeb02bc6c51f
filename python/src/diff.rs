//! The native side of `heliograph.torch` and `heliograph.jax`: which parameters can be
//! differentiated, and the backward pass of a render (see `heliograph::diff`).

use heliograph::diff::resolve;
use heliograph::interop::backward::{gradient_tensors, ImageGradient};
use heliograph::render::RenderOptions;
use heliograph::session::gradients::Snapshot;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::scene::PyScene;
use crate::tensor::{import_any, TensorXf};
use crate::variant::{current_backend, renderer};

fn scene_of<'a, 'py>(
    scene: &'a Bound<'py, PyAny>,
    what: &str,
) -> PyResult<&'a Bound<'py, PyScene>> {
    scene
        .cast::<PyScene>()
        .map_err(|_| PyTypeError::new_err(format!("{what}: 'scene' must be a heliograph Scene")))
}

/// `_diff_params(scene, keys)`: each key's value shape, or an error naming the first
/// key that cannot be differentiated (checked before anything renders).
#[pyfunction]
pub fn _diff_params(scene: &Bound<'_, PyAny>, keys: Vec<String>) -> PyResult<Vec<Vec<usize>>> {
    let s = scene_of(scene, "differentiable render")?;
    let params = s
        .get()
        .with_state(scene.py(), |st| resolve(st.loaded(), &keys))
        .map_err(to_py)?;
    current_backend()
        .check_differentiable(&params)
        .map_err(to_py)?;
    Ok(params.iter().map(|p| p.shape()).collect())
}

/// `_film_shape(scene)`: the shape of the scene's image, (height, width, channels).
#[pyfunction]
pub fn _film_shape(scene: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let s = scene_of(scene, "_film_shape")?;
    Ok(s.get().with_state(scene.py(), |st| st.film_shape()))
}

/// The parameter values a render was made with, for its backward pass.
#[pyclass(module = "heliograph", frozen)]
pub struct DiffSnapshot(Snapshot);

#[pymethods]
impl DiffSnapshot {
    /// Whether `scene` has not been updated since the snapshot.
    fn is_current(&self, scene: &Bound<'_, PyAny>) -> PyResult<bool> {
        let s = scene_of(scene, "is_current")?;
        Ok(s.get().with_state(scene.py(), |st| st.is_current(&self.0)))
    }
}

/// `_diff_snapshot(scene)`: the scene's parameter values now.
#[pyfunction]
pub fn _diff_snapshot(scene: &Bound<'_, PyAny>) -> PyResult<DiffSnapshot> {
    let s = scene_of(scene, "_diff_snapshot")?;
    Ok(DiffSnapshot(
        s.get().with_state(scene.py(), |st| st.snapshot()),
    ))
}

/// `_render_backward(scene, keys, grad, spp, seed, snapshot)`: the gradients of
/// `Σ grad · image` with respect to `keys`, one `TensorXf` per key in the shape of its
/// value; the image is the render with `spp` (None: the scene's) and `seed`, which the
/// backward pass traces again. `snapshot` holds the parameter values the image was
/// rendered with (the caller has written the differentiated ones back): a scene whose
/// parameters differ from them is an error naming the first that does, not a gradient
/// of other values. Under `cuda_rgb` it runs on the GPU: `grad` is read where it lies
/// (a CUDA array in stream order, a host array uploaded) and the gradients stay on the
/// device. `stream`: for a CUDA `grad`, the CUDA stream whose queued work writes it
/// when the caller knows it (`heliograph.torch`: PyTorch's current stream); the render
/// stream then waits for that stream instead of asking the producer to synchronise.
#[pyfunction]
#[pyo3(signature = (scene, keys, grad, spp, seed, snapshot, stream=None))]
pub fn _render_backward(
    scene: &Bound<'_, PyAny>,
    keys: Vec<String>,
    grad: &Bound<'_, PyAny>,
    spp: Option<u32>,
    seed: u64,
    snapshot: &Bound<'_, DiffSnapshot>,
    stream: Option<usize>,
) -> PyResult<Vec<TensorXf>> {
    let py = scene.py();
    let s = scene_of(scene, "backward")?;
    let then = &snapshot.get().0;
    let params = s
        .get()
        .with_state(py, |st| st.backward_params(then, &keys))
        .map_err(to_py)?;
    let opts = RenderOptions { spp, seed };
    let renderer = renderer(py)?;
    // the image's gradient where the renderer reads it
    let (host_to, after) = ImageGradient::target(&*renderer, stream);
    let imported = import_any(py, grad, host_to, after)?;
    let mut image = py
        .detach(|| ImageGradient::new(imported, &*renderer))
        .map_err(to_py)?;
    let grads = s
        .get()
        .with_state(py, |st| image.backward(st, &*renderer, &params, opts))
        .map_err(to_py)?;
    // the CPU's pass reads a snapshot: it runs without the scene's lock
    let tensors = py
        .detach(|| gradient_tensors(grads, &params))
        .map_err(to_py)?;
    Ok(tensors.into_iter().map(TensorXf::from).collect())
}
