//! The render functions that XLA calls name: each `render_fn` registers its scene,
//! keys and sample counts, and a call's `target` attribute picks one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::ffi::{internal, invalid, Attrs, Failure, Scalar, ATTR_SCALAR, DTYPE_S64, DTYPE_U64};
use crate::backend::cuda::CudaBackend;
use crate::backend::renderer::Renderer;
use crate::render::RenderOptions;
use crate::session::Session;

/// What a `render_fn` renders: the scene's session, the keys, both passes' samples,
/// and where the variant's renderer is found.
pub struct Target {
    /// The scene's session, shared with its owner.
    pub session: Arc<Mutex<Session>>,
    /// The parameter keys, in the order of the call's values.
    pub keys: Vec<String>,
    /// The render pass's samples.
    pub render: RenderOptions,
    /// The backward pass's samples.
    pub grad: RenderOptions,
    /// The variant's renderer and CUDA backend.
    pub variant: Variant,
}

/// Where a call finds the variant selected when it runs (from a thread that holds no
/// lock of its owner): its renderer, and the CUDA backend when XLA runs on the GPU but
/// the variant renders on the CPU. Errors as text.
#[derive(Clone, Copy)]
pub struct Variant {
    /// The current variant's renderer.
    pub renderer: fn() -> Result<Box<dyn Renderer>, String>,
    /// The process's CUDA backend, opened on first use.
    pub cuda: fn() -> Result<Arc<CudaBackend>, String>,
}

static TARGETS: Mutex<Option<HashMap<u64, Arc<Target>>>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn targets() -> std::sync::MutexGuard<'static, Option<HashMap<u64, Arc<Target>>>> {
    TARGETS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Registers `target`; returns the id that a call's `target` attribute names it by.
pub fn register(target: Target) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    targets()
        .get_or_insert_with(HashMap::new)
        .insert(id, Arc::new(target));
    id
}

/// Unregisters the target `id` (a call that names it afterwards is an error).
pub fn unregister(id: u64) {
    if let Some(map) = targets().as_mut() {
        map.remove(&id);
    }
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
