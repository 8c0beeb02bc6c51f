//! The variant set by `set_variant`: its backend and the [`Renderer`] that a scene's
//! session runs on.

use std::sync::Mutex;

use heliograph::backend::renderer::Renderer;
use heliograph::backend::Backend;
use pyo3::prelude::*;

use crate::errors::VariantError;

/// The variant set by `set_variant`, as named there, and its backend (none until
/// then: the CPU).
static VARIANT: Mutex<Option<(Backend, String)>> = Mutex::new(None);

fn set_one(py: Python<'_>, name: &str) -> PyResult<Backend> {
    match Backend::from_variant(name) {
        Some(b) => b
            .renderer(|| crate::cuda::backend(py))
            .map(|_| b)
            .map_err(|e| {
                let why = e.value(py).to_string();
                let why = why.strip_prefix("CUDA unavailable: ").unwrap_or(&why);
                crate::errors::CudaUnavailableError::new_err(format!(
                    "CUDA unavailable: variant \"{name}\" needs the CUDA backend: {why}; use \"cpu_rgb\""
                ))
            }),
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
                *VARIANT.lock().unwrap_or_else(|p| p.into_inner()) = Some((v, n.clone()));
                return Ok(());
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The current variant, as `set_variant` was given it (a Mitsuba name stays one), or
/// None before `set_variant`.
#[pyfunction]
pub fn variant() -> Option<String> {
    VARIANT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|v| v.1.clone())
}

/// The backend of the current variant, or None before `set_variant`.
pub fn backend() -> Option<Backend> {
    VARIANT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|v| v.0)
}

/// The renderer of the current variant (the CPU's before `set_variant`), the GPU
/// opened on first use.
pub fn renderer(py: Python<'_>) -> PyResult<Box<dyn Renderer>> {
    current_backend().renderer(|| crate::cuda::backend(py))
}

/// As [`renderer`], from a thread that does not hold the GIL (an XLA custom call); the
/// error as text.
pub fn renderer_now() -> Result<Box<dyn Renderer>, String> {
    current_backend().renderer(crate::cuda::backend_now)
}

/// The backend of the current variant, the CPU before `set_variant`.
pub fn current_backend() -> Backend {
    backend().unwrap_or(Backend::Cpu)
}

/// The variants this build accepts: heliograph's (`cuda_rgb` needs a usable GPU when
/// selected), then the Mitsuba names that select them.
#[pyfunction]
pub fn variants() -> Vec<&'static str> {
    Backend::variant_names()
}
