//! Rendering under XLA: two foreign-function targets (XLA's typed FFI),
//! `heliograph_render` and `heliograph_backward`, that JAX calls with its own buffers,
//! and on the GPU its own stream, through `jax.ffi.ffi_call`.
//!
//! A call carries one attribute, `target`: the id of a registered [`Target`] (the
//! scene's session, the keys and the sample counts and seeds of `render_fn`).
//! `heliograph_render(values...)` writes the values into the scene (as `traverse` +
//! `update`) and renders into the image buffer; `heliograph_backward(grad, values...)`
//! writes the values back and writes the gradient of `Σ grad · image` into one buffer
//! per key.
//!
//! On the GPU nothing waits on the host: the render stream waits for XLA's stream, the
//! values and the image's gradient are copied device to device, the render or backward
//! pass runs on the render stream, its results are copied into XLA's buffers there, and
//! XLA's stream waits for the render stream before the call returns. (A float or colour
//! parameter given on the GPU is read to the host, a wait for the few floats: scene
//! records take such values from the host, as `params[key] = x` does.) On the CPU the
//! call renders on all cores and returns when done. Either platform serves either
//! variant: JAX on the CPU with `cuda_rgb` uploads the values and reads the image back.
//!
//! The call frame's layout is XLA's C API (`xla/ffi/api/c_api.h`, which jaxlib ships):
//! versioned structs that begin with their size, so a newer XLA reads these.

mod call;
mod ffi;
mod targets;

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

use call::{execute, Pass, Platform};
use ffi::{
    error, field_size, internal, metadata, struct_size, CallFrame, ERROR_INTERNAL,
    EXTENSION_METADATA, STAGE_EXECUTE,
};

pub use targets::{register, unregister, Target, Variant};

static CALLS: AtomicU64 = AtomicU64::new(0);

/// `(target name, platform, handler address)` of each handler, for
/// `jax.ffi.register_ffi_target`.
pub fn handlers() -> Vec<(&'static str, &'static str, usize)> {
    vec![
        ("heliograph_render", "cpu", render_cpu as *const () as usize),
        (
            "heliograph_backward",
            "cpu",
            backward_cpu as *const () as usize,
        ),
        (
            "heliograph_render",
            "CUDA",
            render_cuda as *const () as usize,
        ),
        (
            "heliograph_backward",
            "CUDA",
            backward_cuda as *const () as usize,
        ),
    ]
}

/// How many XLA calls the handlers have executed.
pub fn calls() -> u64 {
    CALLS.load(Ordering::Relaxed)
}

unsafe extern "C" fn render_cpu(frame: *mut CallFrame) -> *mut c_void {
    // SAFETY: XLA passes a valid call frame for the duration of the call.
    unsafe { handle(frame, Pass::Render, Platform::Cpu) }
}

unsafe extern "C" fn backward_cpu(frame: *mut CallFrame) -> *mut c_void {
    // SAFETY: as above.
    unsafe { handle(frame, Pass::Backward, Platform::Cpu) }
}

unsafe extern "C" fn render_cuda(frame: *mut CallFrame) -> *mut c_void {
    // SAFETY: as above.
    unsafe { handle(frame, Pass::Render, Platform::Cuda) }
}

unsafe extern "C" fn backward_cuda(frame: *mut CallFrame) -> *mut c_void {
    // SAFETY: as above.
    unsafe { handle(frame, Pass::Backward, Platform::Cuda) }
}

/// One call: the metadata query, or the execution (never unwinds into XLA).
///
/// # Safety
/// `frame` is XLA's call frame, valid for the call.
unsafe fn handle(frame: *mut CallFrame, pass: Pass, platform: Platform) -> *mut c_void {
    // SAFETY: per the contract.
    let frame = unsafe { &*frame };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the frame's pointers are XLA's, valid for the call.
        unsafe {
            if frame.struct_size < struct_size!(CallFrame, attrs) {
                return Err(internal(
                    "the XLA call frame is older than heliograph's handlers expect",
                ));
            }
            if let Some(ext) = frame.extension_start.as_mut() {
                if ext.kind == EXTENSION_METADATA {
                    return metadata(ext);
                }
            }
            if frame.stage != STAGE_EXECUTE {
                return Ok(());
            }
            CALLS.fetch_add(1, Ordering::Relaxed);
            execute(frame, pass, platform)
        }
    }));
    let (code, msg) = match outcome {
        Ok(Ok(())) => return std::ptr::null_mut(),
        Ok(Err(f)) => f,
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            (
                ERROR_INTERNAL,
                format!("internal error in heliograph: {what}"),
            )
        }
    };
    // SAFETY: the frame's api is XLA's, valid for the call.
    unsafe { error(frame.api, code, &format!("heliograph: {msg}")) }
}
