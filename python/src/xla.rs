//! The native side of `heliograph.jax` under XLA: the handlers of
//! [`heliograph::xla`] handed to JAX by address, and the render functions they serve
//! registered from Python.

use heliograph::render::RenderOptions;
use heliograph::xla::{Target, Variant};
use pyo3::prelude::*;

use crate::scene::PyScene;

/// `_xla_handlers()`: `(target name, platform, handler address)` for
/// `jax.ffi.register_ffi_target`.
#[pyfunction]
pub fn _xla_handlers() -> Vec<(&'static str, &'static str, usize)> {
    heliograph::xla::handlers()
}

/// `_xla_calls()`: how many XLA calls the handlers have executed (tests: proof that a
/// jitted function went through them).
#[pyfunction]
pub fn _xla_calls() -> u64 {
    heliograph::xla::calls()
}

/// A registered render function; the XLA calls name it by [`XlaTarget::id`]. Dropping
/// it unregisters it (a call that names it afterwards is an error).
#[pyclass(module = "heliograph", frozen)]
pub struct XlaTarget {
    #[pyo3(get)]
    id: u64,
}

impl Drop for XlaTarget {
    fn drop(&mut self) {
        heliograph::xla::unregister(self.id);
    }
}

/// `_xla_target(scene, keys, spp, seed, spp_grad, seed_grad)`: registers what the XLA
/// calls of one `render_fn` render (`spp`/`spp_grad` 0: the scene's sample count).
#[pyfunction]
pub fn _xla_target(
    scene: &Bound<'_, PyScene>,
    keys: Vec<String>,
    spp: u32,
    seed: u64,
    spp_grad: u32,
    seed_grad: u64,
) -> XlaTarget {
    let target = Target {
        session: scene.get().session(),
        keys,
        render: RenderOptions::new(spp, seed),
        grad: RenderOptions::new(spp_grad, seed_grad),
        variant: Variant {
            renderer: crate::variant::renderer_now,
            cuda: crate::cuda::backend_now,
        },
    };
    XlaTarget {
        id: heliograph::xla::register(target),
    }
}

/// Registers the module's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_xla_target, m)?)?;
    m.add_function(wrap_pyfunction!(_xla_handlers, m)?)?;
    m.add_function(wrap_pyfunction!(_xla_calls, m)?)?;
    Ok(())
}
