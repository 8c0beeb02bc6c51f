//! XLA's typed FFI as the handlers read it: the call frame's C structs
//! (`xla/ffi/api/c_api.h`, which jaxlib ships), the buffers and errors of a call, the
//! handler metadata, and XLA's CUDA stream.

use std::ffi::{c_char, c_int, c_void, CString};

use crate::backend::cuda::CudaBackend;
use crate::desc::params::shape_str;

#[repr(C)]
pub(super) struct ExtensionBase {
    pub(super) struct_size: usize,
    pub(super) kind: c_int,
    pub(super) next: *mut ExtensionBase,
}

/// `XLA_FFI_Extension_Metadata`: XLA asks a handler for its API version and traits.
pub(super) const EXTENSION_METADATA: c_int = 1;

#[repr(C)]
pub(super) struct ApiVersion {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) major: c_int,
    pub(super) minor: c_int,
}

/// The version of the C API these structs follow (`XLA_FFI_API_MAJOR/MINOR`).
pub(super) const API_VERSION: (c_int, c_int) = (0, 3);

pub(super) type ErrorCreate = unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut c_void;
pub(super) type StreamGet = unsafe extern "C" fn(*mut StreamGetArgs) -> *mut c_void;
pub(super) type DeviceOrdinalGet = unsafe extern "C" fn(*mut DeviceOrdinalGetArgs) -> *mut c_void;

#[repr(C)]
pub(super) struct Api {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) api_version: ApiVersion,
    pub(super) internal_api: *const c_void,
    pub(super) error_create: Option<ErrorCreate>,
    pub(super) error_get_message: *const c_void,
    pub(super) error_destroy: *const c_void,
    pub(super) handler_register: *const c_void,
    pub(super) stream_get: Option<StreamGet>,
    pub(super) type_register: *const c_void,
    pub(super) execution_context_get: *const c_void,
    pub(super) state_set: *const c_void,
    pub(super) state_get: *const c_void,
    pub(super) device_memory_allocate: *const c_void,
    pub(super) device_memory_free: *const c_void,
    pub(super) thread_pool_schedule: *const c_void,
    pub(super) thread_pool_num_threads: *const c_void,
    pub(super) future_create: *const c_void,
    pub(super) future_set_available: *const c_void,
    pub(super) future_set_error: *const c_void,
    pub(super) run_id_get: *const c_void,
    pub(super) device_ordinal_get: Option<DeviceOrdinalGet>,
}

#[repr(C)]
pub(super) struct ErrorCreateArgs {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) message: *const c_char,
    pub(super) errc: c_int,
}

pub(super) const ERROR_INVALID_ARGUMENT: c_int = 3;
pub(super) const ERROR_INTERNAL: c_int = 13;

#[repr(C)]
pub(super) struct StreamGetArgs {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) ctx: *mut c_void,
    pub(super) stream: *mut c_void,
}

#[repr(C)]
pub(super) struct DeviceOrdinalGetArgs {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) ctx: *mut c_void,
    pub(super) device_ordinal: i32,
}

/// `XLA_FFI_DataType_F32`.
pub(super) const DTYPE_F32: c_int = 11;
/// `XLA_FFI_DataType_U64`, `S64`.
pub(super) const DTYPE_U64: c_int = 9;
pub(super) const DTYPE_S64: c_int = 5;

#[repr(C)]
pub(super) struct Buffer {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) dtype: c_int,
    pub(super) data: *mut c_void,
    pub(super) rank: i64,
    pub(super) dims: *const i64,
}

#[repr(C)]
pub(super) struct List {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) size: i64,
    pub(super) types: *const c_int,
    pub(super) items: *const *mut c_void,
}

/// `XLA_FFI_ArgType_BUFFER` (= `XLA_FFI_RetType_BUFFER`).
pub(super) const KIND_BUFFER: c_int = 1;

#[repr(C)]
pub(super) struct ByteSpan {
    pub(super) ptr: *const c_char,
    pub(super) len: usize,
}

#[repr(C)]
pub(super) struct Scalar {
    pub(super) dtype: c_int,
    pub(super) value: *const c_void,
}

#[repr(C)]
pub(super) struct Attrs {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) size: i64,
    pub(super) types: *const c_int,
    pub(super) names: *const *const ByteSpan,
    pub(super) attrs: *const *const c_void,
}

/// `XLA_FFI_AttrType_SCALAR`.
pub(super) const ATTR_SCALAR: c_int = 3;

#[repr(C)]
pub(super) struct CallFrame {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) api: *const Api,
    pub(super) ctx: *mut c_void,
    pub(super) stage: c_int,
    pub(super) args: List,
    pub(super) rets: List,
    pub(super) attrs: Attrs,
    pub(super) future: *mut c_void,
}

/// `XLA_FFI_ExecutionStage_EXECUTE`.
pub(super) const STAGE_EXECUTE: c_int = 3;

#[repr(C)]
pub(super) struct Metadata {
    pub(super) struct_size: usize,
    pub(super) api_version: ApiVersion,
    pub(super) traits: u32,
    pub(super) state_type_id: i64,
}

#[repr(C)]
pub(super) struct MetadataExtension {
    pub(super) base: ExtensionBase,
    pub(super) metadata: *mut Metadata,
}

/// `XLA_FFI_STRUCT_SIZE`: the size up to and including a struct's last declared field
/// (what a caller sets `struct_size` to).
macro_rules! struct_size {
    ($t:ty, $last:ident) => {
        std::mem::offset_of!($t, $last) + field_size(|s: &$t| &s.$last)
    };
}

pub(super) fn field_size<T, F>(_: impl Fn(&T) -> &F) -> usize {
    std::mem::size_of::<F>()
}
pub(super) use struct_size;

/// An error for XLA to raise: (code, message).
pub(super) type Failure = (c_int, String);

pub(super) fn invalid(msg: impl Into<String>) -> Failure {
    (ERROR_INVALID_ARGUMENT, msg.into())
}

pub(super) fn internal(e: impl std::fmt::Display) -> Failure {
    (ERROR_INTERNAL, e.to_string())
}

/// Fills in the handler's metadata: the API version these structs follow, no traits
/// (not safe to capture into a CUDA graph: a call may upload the scene).
///
/// # Safety
/// `ext` is XLA's metadata extension.
pub(super) unsafe fn metadata(ext: &mut ExtensionBase) -> Result<(), Failure> {
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
pub(super) unsafe fn error(api: *const Api, code: c_int, msg: &str) -> *mut c_void {
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
pub(super) struct Buf {
    pub(super) dtype: c_int,
    pub(super) data: u64,
    pub(super) dims: Vec<usize>,
}

impl Buf {
    pub(super) fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// Checks a float32 buffer of `shape` (`what` names it in the error).
    pub(super) fn check(&self, what: &str, shape: &[usize]) -> Result<(), Failure> {
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
    pub(super) unsafe fn host(&self) -> Vec<f32> {
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
pub(super) unsafe fn buffers(list: &List, what: &str) -> Result<Vec<Buf>, Failure> {
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

/// XLA's stream for this call (a `CUstream`), checked to be on heliograph's GPU.
///
/// # Safety
/// `frame` is XLA's.
pub(super) unsafe fn cuda_stream(frame: &CallFrame, be: &CudaBackend) -> Result<usize, Failure> {
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
