//! heliograph's Python bindings, compiled by maturin into the private module
//! `heliograph._native` and re-exported by the `heliograph` package
//! (`python/heliograph/__init__.py`). The files mirror the core's modules:
//! `scene` (variants, loaders, render), `film` (what a render left on the film), `dict`
//! (Mitsuba dicts), `params` (traverse/update), `transform` and `bitmap` (the package's
//! `ScalarTransform4f` and `Bitmap`), `tensor` (asynchronous TensorXf),
//! `tensor_ops` and `tensor_index` (its arithmetic and indexing), `progress` (the
//! progress line while a read waits) and `dlpack` (export/import).

pub mod bitmap;
pub mod cuda;
pub mod dict;
pub mod diff;
pub mod dlpack;
pub mod errors;
pub mod film;
pub mod params;
pub mod progress;
pub mod render;
pub mod scene;
pub mod tensor;
pub mod tensor_index;
pub mod tensor_methods;
pub mod tensor_ops;
pub mod transform;
pub mod variant;
pub mod xla;

use heliograph::backend::cuda::nvrtc_lib;
use heliograph::interop::image::{channels_of, image_of};
use heliograph::interop::Storage;
use heliograph::io::exr_channels::{read_exr_channels, write_exr_channels};
use heliograph::io::write_image;
use heliograph::Loc;
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::tensor::{to_host_array, TensorXf};

/// Validates an image array for a `Bitmap` (rank, channels, dtype, finite) and
/// returns it as a float32 (H, W, C) tensor; uint8 data is decoded from sRGB.
#[pyfunction]
fn _pixels(py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<TensorXf> {
    let a = to_host_array(py, array)?;
    let p = dict::pixels(a, &Loc::unknown("Bitmap"))?;
    let storage = Storage::from_values(vec![p.height, p.width, p.channels], &p.data);
    Ok(storage.map_err(to_py)?.into())
}

/// Reads an image file (EXR linear; PNG/JPEG decoded from sRGB, or as stored when
/// `raw`) as an (H, W, C) tensor.
#[pyfunction]
#[pyo3(signature = (path, raw=false))]
fn _read_image(py: Python<'_>, path: std::path::PathBuf, raw: bool) -> PyResult<TensorXf> {
    let img = py
        .detach(|| heliograph::io::read_image_with(&path, raw))
        .map_err(to_py)?;
    Ok(Storage::of_image(&img).map_err(to_py)?.into())
}

/// Reads every channel of an EXR file: an (H, W, C) tensor and the C channel names.
#[pyfunction]
fn _read_exr_channels(
    py: Python<'_>,
    path: std::path::PathBuf,
) -> PyResult<(TensorXf, Vec<String>)> {
    let img = py.detach(|| read_exr_channels(&path)).map_err(to_py)?;
    let shape = vec![img.height, img.width, img.names.len()];
    let t = Storage::from_values(shape, &img.data).map_err(to_py)?;
    Ok((t.into(), img.names))
}

/// Writes an (H, W, C) image as a float32 EXR whose channels have the C `names`.
#[pyfunction]
fn _write_exr_channels(
    py: Python<'_>,
    path: std::path::PathBuf,
    image: &Bound<'_, PyAny>,
    names: Vec<String>,
) -> PyResult<()> {
    let a = to_host_array(py, image)?;
    let img = channels_of(a, names, "Bitmap.write").map_err(to_py)?;
    py.detach(|| write_exr_channels(&path, &img)).map_err(to_py)
}

/// Writes an (H, W, C) or (H, W) image (EXR linear float; PNG sRGB 8-bit) by extension.
#[pyfunction]
fn _write_image(
    py: Python<'_>,
    path: std::path::PathBuf,
    image: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let a = to_host_array(py, image)?;
    let img = image_of(a, "write_bitmap").map_err(to_py)?;
    py.detach(|| write_image(&path, &img)).map_err(to_py)
}

/// The plugin names of each category (`load_dict` of a single plugin looks its
/// category up here).
#[pyfunction]
fn _plugins() -> Vec<(&'static str, Vec<&'static str>)> {
    heliograph::catalog::names_by_category()
}

/// Number of DLPack capsules whose memory has not been released yet (tests).
#[pyfunction]
fn _live_exports() -> isize {
    heliograph::interop::export::live_exports()
}

/// Runs the `heliograph` command line on `argv` (the program name first) in this process
/// and returns its exit code: the same program as the Rust binary (`heliograph::cli`).
#[pyfunction]
fn _cli_main(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> i32 {
    py.detach(|| heliograph::cli::main_with_args(argv))
}

/// Sets the folders searched, in order, for the `nvidia-cuda-nvrtc` wheel's NVRTC
/// (`<folder>/nvidia/cu13/lib/libnvrtc.so.13`); the package passes `sys.path` at import.
#[pyfunction]
fn _set_nvrtc_search_paths(paths: Vec<std::path::PathBuf>) {
    nvrtc_lib::set_python_paths(paths);
}

/// The NVRTC library file the CUDA backend uses, found now if the backend has not
/// opened yet (no GPU needed); `CudaUnavailableError` naming every place tried if none.
#[pyfunction]
fn _nvrtc_path(py: Python<'_>) -> PyResult<String> {
    py.detach(nvrtc_lib::load)
        .map(|n| n.path.display().to_string())
        .map_err(to_py)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", heliograph::VERSION)?;
    errors::register(m)?;
    m.add_class::<TensorXf>()?;
    m.add_class::<scene::PyScene>()?;
    m.add_class::<params::SceneParameters>()?;
    m.add_function(wrap_pyfunction!(variant::set_variant, m)?)?;
    m.add_function(wrap_pyfunction!(variant::variant, m)?)?;
    m.add_function(wrap_pyfunction!(variant::variants, m)?)?;
    m.add_function(wrap_pyfunction!(scene::load_dict, m)?)?;
    m.add_function(wrap_pyfunction!(scene::load_file, m)?)?;
    m.add_function(wrap_pyfunction!(scene::load_string, m)?)?;
    m.add_function(wrap_pyfunction!(render::render, m)?)?;
    m.add_function(wrap_pyfunction!(render::_render, m)?)?;
    m.add_class::<film::RenderedFilm>()?;
    m.add_function(wrap_pyfunction!(params::traverse, m)?)?;
    m.add_function(wrap_pyfunction!(diff::_diff_params, m)?)?;
    m.add_function(wrap_pyfunction!(diff::_diff_snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(diff::_film_shape, m)?)?;
    m.add_function(wrap_pyfunction!(diff::_render_backward, m)?)?;
    m.add_function(wrap_pyfunction!(progress::set_progress, m)?)?;
    m.add_function(wrap_pyfunction!(progress::progress, m)?)?;
    m.add_function(wrap_pyfunction!(_pixels, m)?)?;
    m.add_function(wrap_pyfunction!(_live_exports, m)?)?;
    m.add_function(wrap_pyfunction!(_plugins, m)?)?;
    m.add_function(wrap_pyfunction!(tensor_ops::_elementwise, m)?)?;
    m.add_function(wrap_pyfunction!(tensor_index::_cuda_getitem, m)?)?;
    m.add_function(wrap_pyfunction!(tensor_index::_cuda_setitem, m)?)?;
    m.add_function(wrap_pyfunction!(tensor_index::_index_view, m)?)?;
    m.add_function(wrap_pyfunction!(_read_exr_channels, m)?)?;
    m.add_function(wrap_pyfunction!(_write_exr_channels, m)?)?;
    m.add_function(wrap_pyfunction!(_read_image, m)?)?;
    m.add_function(wrap_pyfunction!(_write_image, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::sync_device, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::cuda_stream, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::_cuda_live_buffers, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::_cuda_held_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::_cuda_fence_count, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::_parked_imports, m)?)?;
    xla::register(m)?;
    transform::register(m)?;
    m.add_function(wrap_pyfunction!(bitmap::_bitmap_convert, m)?)?;
    m.add_function(wrap_pyfunction!(bitmap::_bitmap_resample, m)?)?;
    m.add_function(wrap_pyfunction!(_cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(_set_nvrtc_search_paths, m)?)?;
    m.add_function(wrap_pyfunction!(_nvrtc_path, m)?)?;
    Ok(())
}
