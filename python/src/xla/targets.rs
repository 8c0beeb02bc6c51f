//! The render functions that XLA calls name: each `render_fn` registers its scene,
//! keys and sample counts, and a call's `target` attribute picks one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use heliograph::render::RenderOptions;
use pyo3::prelude::*;

use super::ffi::{internal, invalid, Attrs, Failure, Scalar, ATTR_SCALAR, DTYPE_S64, DTYPE_U64};
use crate::scene::PyScene;

/// What a `render_fn` renders: the scene, the keys, and both passes' samples.
pub(super) struct Target {
    pub(super) scene: Py<PyScene>,
    pub(super) keys: Vec<String>,
    pub(super) render: RenderOptions,
    pub(super) grad: RenderOptions,
}

pub(super) static TARGETS: Mutex<Option<HashMap<u64, Arc<Target>>>> = Mutex::new(None);
pub(super) static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(super) fn targets() -> std::sync::MutexGuard<'static, Option<HashMap<u64, Arc<Target>>>> {
    TARGETS.lock().unwrap_or_else(|p| p.into_inner())
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
        if let Some(map) = targets().as_mut() {
            map.remove(&self.id);
        }
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
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let target = Target {
        scene: scene.clone().unbind(),
        keys,
        render: RenderOptions {
            spp: (spp > 0).then_some(spp),
            seed,
        },
        grad: RenderOptions {
            spp: (spp_grad > 0).then_some(spp_grad),
            seed: seed_grad,
        },
    };
    targets()
        .get_or_insert_with(HashMap::new)
        .insert(id, Arc::new(target));
    XlaTarget { id }
}

/// The registered target the call's `target` attribute names.
///
/// # Safety
/// `attrs` is XLA's.
pub(super) unsafe fn target_of(attrs: &Attrs) -> Result<Arc<Target>, Failure> {
    let n = usize::try_from(attrs.size).map_err(internal)?;
    for i in 0..n {
        // SAFETY: XLA's attributes hold `size` types, names and values.
        let (kind, name, value) = unsafe {
            (
                *attrs.types.add(i),
                &**attrs.names.add(i),
                *attrs.attrs.add(i),
            )
        };
        // SAFETY: a byte span of XLA's.
        let name = unsafe { std::slice::from_raw_parts(name.ptr as *const u8, name.len) };
        if name != b"target" {
            continue;
        }
        if kind != ATTR_SCALAR {
            return Err(invalid("the 'target' attribute must be an integer"));
        }
        // SAFETY: a scalar attribute.
        let s = unsafe { &*(value as *const Scalar) };
        let id = match s.dtype {
            // SAFETY: the scalar's value has its dtype.
            DTYPE_U64 => unsafe { *(s.value as *const u64) },
            DTYPE_S64 => (unsafe { *(s.value as *const i64) }) as u64,
            _ => return Err(invalid("the 'target' attribute must be a 64-bit integer")),
        };
        return targets()
            .as_ref()
            .and_then(|m| m.get(&id).cloned())
            .ok_or_else(|| {
                invalid(format!(
                    "render function {id} no longer exists (its render_fn was deleted): \
                     make a new one with heliograph.jax.render_fn"
                ))
            });
    }
    Err(invalid(
        "the call has no 'target' attribute: call it through heliograph.jax.render_fn",
    ))
}
