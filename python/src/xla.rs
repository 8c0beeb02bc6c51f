//! The native side of `heliograph.jax` under XLA: two foreign-function targets (XLA's
//! typed FFI), `heliograph_render` and `heliograph_backward`, that JAX calls with its own
//! buffers, and on the GPU its own stream, through `jax.ffi.ffi_call`.
//!
//! A call carries one attribute, `target`: the id of an [`XlaTarget`] (the scene, the
//! keys and the sample counts and seeds of `render_fn`). `heliograph_render(values...)`
//! writes the values into the scene (as `traverse` + `update`) and renders into the
//! image buffer; `heliograph_backward(grad, values...)` writes the values back and
//! writes the gradient of `Σ grad · image` into one buffer per key.
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

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use heliograph::backend::cuda::{CudaBackend, DeviceTensor, ForeignArray};
use heliograph::backend::Renderer;
use heliograph::desc::params::shape_str;
use heliograph::desc::{ParamValue, SceneParams};
use heliograph::diff::resolve;
use heliograph::render::RenderOptions;
use heliograph::session::{Adjoint, Film, Gradients, Session, Swap};
use heliograph::tensor::dlpack::DLDataType;
use heliograph::tensor::strided::HostArray;
use pyo3::prelude::*;

use crate::params::{from_device, from_host};
use crate::scene::{renderer_now, PyScene};

// ---- XLA's C API (the parts these handlers read) --------------------------------

#[repr(C)]
struct ExtensionBase {
    struct_size: usize,
    kind: c_int,
    next: *mut ExtensionBase,
}

/// `XLA_FFI_Extension_Metadata`: XLA asks a handler for its API version and traits.
const EXTENSION_METADATA: c_int = 1;

#[repr(C)]
struct ApiVersion {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    major: c_int,
    minor: c_int,
}

/// The version of the C API these structs follow (`XLA_FFI_API_MAJOR/MINOR`).
const API_VERSION: (c_int, c_int) = (0, 3);

type ErrorCreate = unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut c_void;
type StreamGet = unsafe extern "C" fn(*mut StreamGetArgs) -> *mut c_void;
type DeviceOrdinalGet = unsafe extern "C" fn(*mut DeviceOrdinalGetArgs) -> *mut c_void;

#[repr(C)]
struct Api {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api_version: ApiVersion,
    internal_api: *const c_void,
    error_create: Option<ErrorCreate>,
    error_get_message: *const c_void,
    error_destroy: *const c_void,
    handler_register: *const c_void,
    stream_get: Option<StreamGet>,
    type_register: *const c_void,
    execution_context_get: *const c_void,
    state_set: *const c_void,
    state_get: *const c_void,
    device_memory_allocate: *const c_void,
    device_memory_free: *const c_void,
    thread_pool_schedule: *const c_void,
    thread_pool_num_threads: *const c_void,
    future_create: *const c_void,
    future_set_available: *const c_void,
    future_set_error: *const c_void,
    run_id_get: *const c_void,
    device_ordinal_get: Option<DeviceOrdinalGet>,
}

#[repr(C)]
struct ErrorCreateArgs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    message: *const c_char,
    errc: c_int,
}

const ERROR_INVALID_ARGUMENT: c_int = 3;
const ERROR_INTERNAL: c_int = 13;

#[repr(C)]
struct StreamGetArgs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    ctx: *mut c_void,
    stream: *mut c_void,
}

#[repr(C)]
struct DeviceOrdinalGetArgs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    ctx: *mut c_void,
    device_ordinal: i32,
}

/// `XLA_FFI_DataType_F32`.
const DTYPE_F32: c_int = 11;
/// `XLA_FFI_DataType_U64`, `S64`.
const DTYPE_U64: c_int = 9;
const DTYPE_S64: c_int = 5;

#[repr(C)]
struct Buffer {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    dtype: c_int,
    data: *mut c_void,
    rank: i64,
    dims: *const i64,
}

#[repr(C)]
struct List {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const c_int,
    items: *const *mut c_void,
}

/// `XLA_FFI_ArgType_BUFFER` (= `XLA_FFI_RetType_BUFFER`).
const KIND_BUFFER: c_int = 1;

#[repr(C)]
struct ByteSpan {
    ptr: *const c_char,
    len: usize,
}

#[repr(C)]
struct Scalar {
    dtype: c_int,
    value: *const c_void,
}

#[repr(C)]
struct Attrs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const c_int,
    names: *const *const ByteSpan,
    attrs: *const *const c_void,
}

/// `XLA_FFI_AttrType_SCALAR`.
const ATTR_SCALAR: c_int = 3;

#[repr(C)]
struct CallFrame {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api: *const Api,
    ctx: *mut c_void,
    stage: c_int,
    args: List,
    rets: List,
    attrs: Attrs,
    future: *mut c_void,
}

/// `XLA_FFI_ExecutionStage_EXECUTE`.
const STAGE_EXECUTE: c_int = 3;

#[repr(C)]
struct Metadata {
    struct_size: usize,
    api_version: ApiVersion,
    traits: u32,
    state_type_id: i64,
}

#[repr(C)]
struct MetadataExtension {
    base: ExtensionBase,
    metadata: *mut Metadata,
}

/// `XLA_FFI_STRUCT_SIZE`: the size up to and including a struct's last declared field
/// (what a caller sets `struct_size` to).
macro_rules! struct_size {
    ($t:ty, $last:ident) => {
        std::mem::offset_of!($t, $last) + field_size(|s: &$t| &s.$last)
    };
}

fn field_size<T, F>(_: impl Fn(&T) -> &F) -> usize {
    std::mem::size_of::<F>()
}

// ---- the targets --------------------------------------------------------------

/// What a `render_fn` renders: the scene, the keys, and both passes' samples.
struct Target {
    scene: Py<PyScene>,
    keys: Vec<String>,
    render: RenderOptions,
    grad: RenderOptions,
}

static TARGETS: Mutex<Option<HashMap<u64, Arc<Target>>>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static CALLS: AtomicU64 = AtomicU64::new(0);

fn targets() -> std::sync::MutexGuard<'static, Option<HashMap<u64, Arc<Target>>>> {
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

/// `_xla_handlers()`: `(target name, platform, handler address)` for
/// `jax.ffi.register_ffi_target`.
#[pyfunction]
pub fn _xla_handlers() -> Vec<(&'static str, &'static str, usize)> {
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

/// `_xla_calls()`: how many XLA calls the handlers have executed (tests: proof that a
/// jitted function went through them).
#[pyfunction]
pub fn _xla_calls() -> u64 {
    CALLS.load(Ordering::Relaxed)
}

#[derive(Clone, Copy, PartialEq)]
enum Pass {
    Render,
    Backward,
}

#[derive(Clone, Copy, PartialEq)]
enum Platform {
    Cpu,
    Cuda,
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

/// An error for XLA to raise: (code, message).
type Failure = (c_int, String);

fn invalid(msg: impl Into<String>) -> Failure {
    (ERROR_INVALID_ARGUMENT, msg.into())
}

fn internal(e: impl std::fmt::Display) -> Failure {
    (ERROR_INTERNAL, e.to_string())
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

/// Fills in the handler's metadata: the API version these structs follow, no traits
/// (not safe to capture into a CUDA graph: a call may upload the scene).
///
/// # Safety
/// `ext` is XLA's metadata extension.
unsafe fn metadata(ext: &mut ExtensionBase) -> Result<(), Failure> {
    if ext.struct_size < struct_size!(MetadataExtension, metadata) {
        return Err(internal("XLA's metadata extension is older than expected"));
    }
    // SAFETY: a metadata extension of at least our size (checked above).
    let ext = unsafe { &mut *(ext as *mut ExtensionBase as *mut MetadataExtension) };
    // SAFETY: XLA's metadata struct.
    let Some(md) = (unsafe { ext.metadata.as_mut() }) else {
        return Err(internal("XLA's metadata extension has no metadata"));
    };
    if md.struct_size < struct_size!(Metadata, traits) {
        return Err(internal("XLA's metadata struct is older than expected"));
    }
    md.api_version = ApiVersion {
        struct_size: struct_size!(ApiVersion, minor),
        extension_start: std::ptr::null_mut(),
        major: API_VERSION.0,
        minor: API_VERSION.1,
    };
    md.traits = 0;
    if md.struct_size >= struct_size!(Metadata, state_type_id) {
        md.state_type_id = 0; // no state
    }
    Ok(())
}

/// An `XLA_FFI_Error` carrying `msg`.
///
/// # Safety
/// `api` is XLA's API table.
unsafe fn error(api: *const Api, code: c_int, msg: &str) -> *mut c_void {
    // SAFETY: per the contract (a null table is left alone below).
    let Some(create) = (unsafe { api.as_ref() }).and_then(|a| a.error_create) else {
        // no way to report it: XLA's table is missing, which XLA never does
        std::process::abort();
    };
    let text = CString::new(msg.replace('\0', " ")).expect("no NUL left");
    let mut args = ErrorCreateArgs {
        struct_size: struct_size!(ErrorCreateArgs, errc),
        extension_start: std::ptr::null_mut(),
        message: text.as_ptr(),
        errc: code,
    };
    // SAFETY: valid args; XLA copies the message.
    unsafe { create(&mut args) }
}

/// A buffer of the call: element type, address, extents.
struct Buf {
    dtype: c_int,
    data: u64,
    dims: Vec<usize>,
}

impl Buf {
    fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// Checks a float32 buffer of `shape` (`what` names it in the error).
    fn check(&self, what: &str, shape: &[usize]) -> Result<(), Failure> {
        if self.dtype != DTYPE_F32 {
            return Err(invalid(format!(
                "{what}: expected float32 values (XLA type {DTYPE_F32}), got XLA type {}",
                self.dtype
            )));
        }
        if self.dims != shape {
            return Err(invalid(format!(
                "{what}: expected shape {}, got {}",
                shape_str(shape),
                shape_str(&self.dims)
            )));
        }
        Ok(())
    }

    /// The values of a host buffer.
    ///
    /// # Safety
    /// A host buffer of `len()` float32 values (checked by the caller).
    unsafe fn host(&self) -> Vec<f32> {
        if self.len() == 0 {
            return Vec::new();
        }
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts(self.data as *const f32, self.len()) }.to_vec()
    }
}

/// The buffers of an argument or result list.
///
/// # Safety
/// `list` is XLA's.
unsafe fn buffers(list: &List, what: &str) -> Result<Vec<Buf>, Failure> {
    let n = usize::try_from(list.size).map_err(internal)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: XLA's lists hold `size` types and items.
        let (kind, item) = unsafe { (*list.types.add(i), *list.items.add(i)) };
        if kind != KIND_BUFFER {
            return Err(internal(format!("{what} {i} is not a buffer")));
        }
        // SAFETY: a buffer item points at an XLA_FFI_Buffer.
        let b = unsafe { &*(item as *const Buffer) };
        let rank = usize::try_from(b.rank).map_err(internal)?;
        let dims = (0..rank)
            // SAFETY: `rank` extents.
            .map(|d| usize::try_from(unsafe { *b.dims.add(d) }).map_err(internal))
            .collect::<Result<Vec<_>, _>>()?;
        out.push(Buf {
            dtype: b.dtype,
            data: b.data as u64,
            dims,
        });
    }
    Ok(out)
}

/// The registered target the call's `target` attribute names.
///
/// # Safety
/// `attrs` is XLA's.
unsafe fn target_of(attrs: &Attrs) -> Result<Arc<Target>, Failure> {
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

/// XLA's stream for this call (a `CUstream`), checked to be on heliograph's GPU.
///
/// # Safety
/// `frame` is XLA's.
unsafe fn cuda_stream(frame: &CallFrame, be: &CudaBackend) -> Result<usize, Failure> {
    // SAFETY: XLA's table.
    let api = unsafe { &*frame.api };
    if api.struct_size >= struct_size!(Api, device_ordinal_get) {
        if let Some(get) = api.device_ordinal_get {
            let mut args = DeviceOrdinalGetArgs {
                struct_size: struct_size!(DeviceOrdinalGetArgs, device_ordinal),
                extension_start: std::ptr::null_mut(),
                ctx: frame.ctx,
                device_ordinal: -1,
            };
            // SAFETY: valid args for XLA's function.
            let err = unsafe { get(&mut args) };
            if err.is_null() && args.device_ordinal as usize != be.info().ordinal {
                return Err(invalid(format!(
                    "JAX runs this call on GPU {}, heliograph renders on GPU {}: put the \
                     arrays on that GPU (jax.device_put)",
                    args.device_ordinal,
                    be.info().ordinal
                )));
            }
        }
    }
    let get = api
        .stream_get
        .ok_or_else(|| internal("XLA's API has no stream query"))?;
    let mut args = StreamGetArgs {
        struct_size: struct_size!(StreamGetArgs, stream),
        extension_start: std::ptr::null_mut(),
        ctx: frame.ctx,
        stream: std::ptr::null_mut(),
    };
    // SAFETY: valid args for XLA's function.
    let err = unsafe { get(&mut args) };
    if !err.is_null() || args.stream.is_null() {
        return Err(internal("XLA gave no stream for this call"));
    }
    Ok(args.stream as usize)
}

/// Values on the host or on the device.
enum Values {
    Host(Vec<f32>),
    Device(Arc<DeviceTensor>),
}

/// How one call reaches the GPU: the backend, and XLA's stream when JAX runs the call
/// there.
struct Gpu {
    be: Arc<CudaBackend>,
    stream: Option<usize>,
}

/// Runs one call.
///
/// # Safety
/// `frame` is XLA's.
unsafe fn execute(frame: &CallFrame, pass: Pass, platform: Platform) -> Result<(), Failure> {
    // SAFETY: XLA's frame.
    let target = unsafe { target_of(&frame.attrs) }?;
    // SAFETY: XLA's frame.
    let args = unsafe { buffers(&frame.args, "argument") }?;
    // SAFETY: XLA's frame.
    let rets = unsafe { buffers(&frame.rets, "result") }?;
    let renderer = renderer_now().map_err(invalid)?;
    let on_gpu = renderer.device_backend().cloned();
    let gpu = if on_gpu.is_some() || platform == Platform::Cuda {
        let be = match on_gpu {
            Some(be) => be,
            None => crate::cuda::backend_now().map_err(invalid)?,
        };
        let stream = match platform {
            // SAFETY: XLA's frame.
            Platform::Cuda => Some(unsafe { cuda_stream(frame, &be) }?),
            Platform::Cpu => None,
        };
        Some(Gpu { be, stream })
    } else {
        None
    };
    if let Some(Gpu {
        be,
        stream: Some(s),
    }) = &gpu
    {
        be.join_stream(*s).map_err(internal)?;
    }
    let call = Call {
        target: &target,
        platform,
        gpu: gpu.as_ref(),
        renderer: &*renderer,
    };
    let result = call.run(pass, &args, &rets);
    if let Some(Gpu {
        be,
        stream: Some(s),
    }) = &gpu
    {
        // even after an error: what was queued may still read XLA's buffers
        be.join_render_stream(*s).map_err(internal)?;
    }
    result
}

/// One execution's context.
struct Call<'a> {
    target: &'a Target,
    platform: Platform,
    gpu: Option<&'a Gpu>,
    /// The variant's renderer.
    renderer: &'a dyn Renderer,
}

impl Call<'_> {
    fn gpu(&self) -> Result<&CudaBackend, Failure> {
        self.gpu
            .map(|g| &*g.be)
            .ok_or_else(|| internal("the CUDA backend is not open"))
    }

    /// Whether the renderer reads its inputs from the GPU.
    fn renders_on_gpu(&self) -> bool {
        self.renderer.device_backend().is_some()
    }

    fn run(&self, pass: Pass, args: &[Buf], rets: &[Buf]) -> Result<(), Failure> {
        let keys = &self.target.keys;
        let skip = usize::from(pass == Pass::Backward);
        if args.len() != keys.len() + skip {
            return Err(invalid(format!(
                "expected {} arguments ({}{} parameter values), got {}",
                keys.len() + skip,
                if skip == 1 {
                    "the image's gradient and "
                } else {
                    ""
                },
                keys.len(),
                args.len()
            )));
        }
        let want_rets = if pass == Pass::Render { 1 } else { keys.len() };
        if rets.len() != want_rets {
            return Err(invalid(format!(
                "expected {want_rets} results, got {}",
                rets.len()
            )));
        }
        let scene = self.target.scene.get();
        match pass {
            Pass::Render => self.render(scene, args, &rets[0]),
            Pass::Backward => self.backward(scene, &args[0], &args[1..], rets),
        }
    }

    /// The values of `b` where the render needs them (`texture`: a texture parameter,
    /// which the GPU takes from device memory).
    ///
    /// # Safety
    /// `b` is an input of the call of `b.len()` float32 values (checked).
    unsafe fn read(&self, b: &Buf, on_device: bool) -> Result<Values, Failure> {
        if self.platform == Platform::Cpu {
            // SAFETY: per the contract; a host buffer on the CPU platform.
            let data = unsafe { b.host() };
            return Ok(match on_device {
                true => Values::Device(Arc::new(
                    self.gpu()?.upload_tensor(&data).map_err(internal)?,
                )),
                false => Values::Host(data),
            });
        }
        let be = self.gpu()?;
        let a = ForeignArray {
            ptr: b.data,
            shape: b.dims.iter().map(|&d| d as i64).collect(),
            strides: c_strides(&b.dims),
            dtype: DLDataType::F32,
        };
        // ordered after XLA's stream (joined before the call ran)
        let t = be.import_device(&a).map_err(internal)?;
        Ok(match on_device {
            true => Values::Device(Arc::new(t)),
            // the host needs the values: a wait for this copy
            false => Values::Host(t.to_host().map_err(internal)?),
        })
    }

    /// Writes `v` into the result buffer `b` (of `v`'s length, checked).
    fn write(&self, b: &Buf, v: Values) -> Result<(), Failure> {
        match (self.platform, v) {
            (Platform::Cpu, Values::Host(data)) => {
                write_host(b, &data);
                Ok(())
            }
            (Platform::Cpu, Values::Device(t)) => {
                write_host(b, &t.to_host().map_err(internal)?);
                Ok(())
            }
            (Platform::Cuda, v) => {
                let be = self.gpu()?;
                let t = match v {
                    Values::Device(t) => t,
                    Values::Host(data) => Arc::new(be.upload_tensor(&data).map_err(internal)?),
                };
                // SAFETY: XLA's result buffer holds len floats (checked by the caller)
                // and stays valid until its stream (which waits for ours) has run.
                unsafe { be.copy_to_foreign(&t, b.data) }.map_err(internal)
            }
        }
    }

    /// Stages the values of the keys from `args` into `st`'s parameters.
    fn stage(&self, st: &Session, args: &[Buf]) -> Result<Vec<(usize, ParamValue)>, Failure> {
        let mut p = SceneParams::new(st.loaded().params());
        for (key, b) in self.target.keys.iter().zip(args) {
            let current = p.get(key).map_err(internal)?.clone();
            b.check(&format!("parameter \"{key}\""), &current.shape())?;
            let texture = matches!(current, ParamValue::Tensor(_));
            // SAFETY: a checked input buffer.
            let values = unsafe { self.read(b, texture && self.renders_on_gpu()) }?;
            let value = match values {
                Values::Host(data) => {
                    let a = HostArray {
                        shape: b.dims.clone(),
                        data,
                        dtype: DLDataType::F32,
                    };
                    from_host(key, &current, a)
                }
                Values::Device(t) => from_device(key, &current, t, &b.dims, DLDataType::F32, None),
            }
            .map_err(|e| invalid(e.to_string()))?;
            p.set(key, value).map_err(|e| invalid(e.to_string()))?;
        }
        Ok(p.staged())
    }

    /// Writes the values into the scene (the device copy patched).
    fn update(&self, st: &mut Session, args: &[Buf]) -> Result<(), Failure> {
        let staged = self.stage(st, args)?;
        st.update(&staged)
            .map(drop)
            .map_err(|e| invalid(e.to_string()))
    }

    fn render(&self, scene: &PyScene, args: &[Buf], ret: &Buf) -> Result<(), Failure> {
        let film = {
            let mut st = scene.lock_now();
            ret.check("the image", &st.film_shape())?;
            self.update(&mut st, args)?;
            st.render(self.renderer, self.target.render, &Swap::default())
                .map_err(internal)?
        };
        let image = match film {
            Film::Device(film) => Values::Device(Arc::new(film.into_tensor())),
            // a CPU render waits without the lock (it renders a snapshot)
            film => Values::Host(film.into_image().map_err(internal)?.data),
        };
        check_len("the image", ret, &image)?;
        self.write(ret, image)
    }

    fn backward(
        &self,
        scene: &PyScene,
        grad: &Buf,
        args: &[Buf],
        rets: &[Buf],
    ) -> Result<(), Failure> {
        let grads = {
            let mut st = scene.lock_now();
            grad.check("the image's gradient", &st.film_shape())?;
            self.update(&mut st, args)?;
            let params =
                resolve(st.loaded(), &self.target.keys).map_err(|e| invalid(e.to_string()))?;
            for (p, (r, key)) in params.iter().zip(rets.iter().zip(&self.target.keys)) {
                r.check(&format!("the gradient of \"{key}\""), &p.shape())?;
            }
            // SAFETY: a checked input buffer.
            let adjoint = unsafe { self.read(grad, self.renders_on_gpu()) }?;
            st.prepare(self.renderer).map_err(internal)?;
            let on_device;
            let adjoint = match adjoint {
                Values::Host(data) => Adjoint::Host(data),
                Values::Device(t) => {
                    on_device = t;
                    Adjoint::Device(&on_device)
                }
            };
            st.backward(self.renderer, &params, adjoint, self.target.grad)
                .map_err(|e| invalid(e.to_string()))?
        };
        let grads: Vec<Values> = match grads {
            Gradients::Device(g) => g.into_iter().map(|t| Values::Device(Arc::new(t))).collect(),
            // the CPU's backward pass runs without the lock (the scene is a snapshot)
            Gradients::Host(pass) => pass
                .run()
                .map_err(|e| invalid(e.to_string()))?
                .into_iter()
                .map(Values::Host)
                .collect(),
        };
        for ((r, g), key) in rets.iter().zip(grads).zip(&self.target.keys) {
            check_len(&format!("the gradient of \"{key}\""), r, &g)?;
            self.write(r, g)?;
        }
        Ok(())
    }
}

/// C-order strides (in elements) of `dims`.
fn c_strides(dims: &[usize]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1] as i64;
    }
    s
}

/// Checks that `v` fills the result buffer `b`.
fn check_len(what: &str, b: &Buf, v: &Values) -> Result<(), Failure> {
    let n = match v {
        Values::Host(d) => d.len(),
        Values::Device(t) => t.len(),
    };
    if n != b.len() {
        return Err(internal(format!(
            "{what} has {n} values, its buffer {} ({})",
            b.len(),
            shape_str(&b.dims)
        )));
    }
    Ok(())
}

/// Copies `data` into the host result buffer `b` (of `data.len()` floats, checked).
fn write_host(b: &Buf, data: &[f32]) {
    if data.is_empty() {
        return;
    }
    // SAFETY: a host result buffer of XLA's holding data.len() float32 values.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), b.data as *mut f32, data.len()) };
}

/// Registers the module's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_xla_target, m)?)?;
    m.add_function(wrap_pyfunction!(_xla_handlers, m)?)?;
    m.add_function(wrap_pyfunction!(_xla_calls, m)?)?;
    Ok(())
}
