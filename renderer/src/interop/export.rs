//! DLPack export of host and CUDA tensors, without Python: the rules of the
//! `__dlpack__(*, stream, max_version, dl_device, copy)` arguments ([`ExportArgs`]),
//! the fence that makes an exported CUDA tensor's memory safe to reuse ([`Fence`]),
//! and the managed-tensor records that a capsule holds ([`new_record`], [`Managed`]).
//!
//! Ownership: a record's `manager_ctx` holds an `Arc` of the memory, so it lives until
//! both heliograph and the consumer are done. The deleter needs no Python, so it may
//! run on any thread; [`live_exports`] counts the records whose deleter has not run.

use std::ffi::{c_void, CStr};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::thread::ThreadId;

use crate::backend::cuda::DeviceTensor;
use crate::error::{ArrayProblem, Error, Result};
use crate::interop::ops::Caller;
use crate::interop::Storage;
use crate::tensor::buffer::Buffer;
use crate::tensor::dlpack::{
    DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
    DEVICE_CPU, DEVICE_CUDA, FLAG_IS_COPIED,
};

/// The unconsumed name of a legacy capsule.
pub const NAME_LEGACY: &CStr = c"dltensor";
/// The unconsumed name of a versioned capsule.
pub const NAME_VERSIONED: &CStr = c"dltensor_versioned";
/// A legacy capsule's name once a consumer has taken it.
pub const USED_LEGACY: &CStr = c"used_dltensor";
/// A versioned capsule's name once a consumer has taken it.
pub const USED_VERSIONED: &CStr = c"used_dltensor_versioned";

/// Exports whose deleter has not run yet.
static LIVE_EXPORTS: AtomicIsize = AtomicIsize::new(0);

/// The number of exports whose deleter has not run yet (for leak and double-free tests).
pub fn live_exports() -> isize {
    LIVE_EXPORTS.load(Ordering::Relaxed)
}

/// What `stream` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamArg {
    /// `None`: the consumer did not say; the producer must make the data safe to use
    /// from anywhere (the host waits).
    Unspecified,
    /// `-1`: the consumer orders itself; no synchronisation.
    NoSync,
    /// A `CUstream` handle (1 = legacy default stream, 2 = per-thread default stream).
    Handle(usize),
}

impl StreamArg {
    /// The stream that `stream=v` names: `-1` none, `v >= 0` a handle; an error for
    /// other values.
    pub fn from_int(v: i128) -> Result<StreamArg> {
        match v {
            -1 => Ok(StreamArg::NoSync),
            v if v < -1 => Err(Error::array(
                ArrayProblem::Argument,
                format!(
                    "__dlpack__: stream {v} is not a valid stream: it must be >= -1 (None, -1, 1, \
                     2 or a stream handle)"
                ),
            )),
            v => usize::try_from(v).map(StreamArg::Handle).map_err(|_| {
                Error::array(
                    ArrayProblem::Argument,
                    format!("__dlpack__: stream {v} is too large"),
                )
            }),
        }
    }
}

/// Whether a consumer that reads DLPack up to `max_version=(major, minor)` gets a
/// versioned record; an error for a negative version.
pub fn versioned_for(major: i64, minor: i64) -> Result<bool> {
    if major < 0 || minor < 0 {
        return Err(Error::array(
            ArrayProblem::Argument,
            format!("__dlpack__: max_version ({major}, {minor}) is not a version"),
        ));
    }
    // A consumer of DLPack >= 1 gets a 1.1 capsule: the standard lets the producer
    // return an older version than max_version, and the consumer checks the version.
    Ok(major >= 1)
}

/// The arguments of an export, of the right types (the README's DLPack rules; the
/// Python array API standard names the error kinds: a disallowed value, or a request
/// this tensor cannot serve).
#[derive(Clone, Copy, Debug)]
pub struct ExportArgs {
    /// The consumer's stream.
    pub stream: StreamArg,
    /// Versioned (`dltensor_versioned`) rather than legacy (`dltensor`) record.
    pub versioned: bool,
    /// The device the consumer wants the data on, when it named one.
    pub dl_device: Option<(i32, i32)>,
    /// `copy`: `Some(true)` always copy, `Some(false)` never, `None` as needed.
    pub copy: Option<bool>,
}

/// A request this tensor cannot serve.
fn refused(msg: impl Into<String>) -> Error {
    Error::Array {
        problem: ArrayProblem::Device,
        msg: msg.into(),
    }
}

impl ExportArgs {
    /// The checks of a CPU tensor: `stream` must be None, `dl_device` the host.
    pub fn check_host(&self) -> Result<()> {
        if let StreamArg::Handle(h) = self.stream {
            return Err(refused(format!(
                "__dlpack__: a CPU tensor takes only stream=None, got stream={h}"
            )));
        }
        if self.stream == StreamArg::NoSync {
            return Err(refused(
                "__dlpack__: a CPU tensor takes only stream=None, got stream=-1",
            ));
        }
        match self.dl_device {
            None | Some((DEVICE_CPU, 0)) => Ok(()),
            Some((kind, id)) => Err(refused(format!(
                "__dlpack__: a CPU tensor cannot be exported to device ({kind}, {id}); \
                 it can be exported to (1, 0), the host"
            ))),
        }
    }

    /// The checks of a CUDA tensor on device `ordinal`; returns whether the consumer
    /// wants a host copy (`dl_device=(1, 0)`).
    pub fn check_cuda(&self, ordinal: usize) -> Result<bool> {
        if self.stream == StreamArg::Handle(0) {
            return Err(Error::Array {
                problem: ArrayProblem::Argument,
                msg: "__dlpack__: stream=0 is ambiguous and disallowed by the DLPack standard; \
                 pass 1 for the legacy default stream, 2 for the per-thread default stream, \
                 or the stream's handle"
                    .into(),
            });
        }
        match self.dl_device {
            None => Ok(false),
            Some((DEVICE_CUDA, id)) if id as usize == ordinal && id >= 0 => Ok(false),
            Some((DEVICE_CPU, 0)) if self.copy == Some(false) => Err(refused(
                "__dlpack__: dl_device=(1, 0) needs a copy of this CUDA tensor to the host, \
                 but copy=False",
            )),
            Some((DEVICE_CPU, 0)) => Ok(true),
            Some((kind, id)) => Err(refused(format!(
                "__dlpack__: this tensor lives on CUDA device {ordinal}; it can be exported to \
                 ({DEVICE_CUDA}, {ordinal}) or copied to the host (1, 0), not to ({kind}, {id})"
            ))),
        }
    }

    /// Orders the consumer's stream after `tensor`'s ready event and returns the fence
    /// for its release; `None` when the consumer named no stream (`stream=None`): the
    /// caller waits on the host first, then uses [`Fence::Unknown`].
    pub fn order_consumer(&self, tensor: &DeviceTensor) -> Result<Option<Fence>> {
        match self.stream {
            StreamArg::Unspecified => Ok(None),
            StreamArg::NoSync => Ok(Some(Fence::Unknown)),
            StreamArg::Handle(h) => {
                tensor
                    .order_stream(h)
                    .map_err(|e| refused(format!("__dlpack__(stream={h}): {e}")))?;
                // the per-thread default stream (2) is the exporting thread's: the
                // deleter can fence it only from this thread
                Ok(Some(if h == 2 {
                    Fence::PerThread(std::thread::current().id())
                } else {
                    Fence::Stream(h)
                }))
            }
        }
    }
}

/// What exporting tensor `t` under `args` shares, and whether it is a copy: a host
/// tensor's buffer once its render has finished (a new buffer for `copy=True`); for a
/// CUDA tensor, a host copy when `dl_device` asks for the host, else its device memory
/// (a device copy for `copy=True`), which the consumer's stream waits for, or, for
/// `stream=None`, the host waits for first.
pub fn export_owner<C: Caller>(
    c: &C,
    t: &Storage,
    args: &ExportArgs,
) -> Result<(Owner, bool), C::Error> {
    let copied = args.copy == Some(true);
    let Some(d) = t.device_tensor() else {
        args.check_host().map_err(|e| c.error(e))?;
        let mut buf = c.read(t)?;
        if copied {
            buf = Buffer::from_slice(buf.as_slice()).map_err(|e| c.error(e))?;
        }
        return Ok((Owner::Host(buf), copied));
    };
    if args.check_cuda(d.ordinal()).map_err(|e| c.error(e))? {
        // dl_device=(1, 0): a host copy, finished before the consumer gets it.
        return Ok((Owner::Host(c.read(t)?), true));
    }
    let d = match copied {
        true => Arc::new(d.duplicate().map_err(|e| c.error(e))?),
        false => d,
    };
    let fence = match args.order_consumer(&d).map_err(|e| c.error(e))? {
        Some(fence) => fence,
        None => {
            c.wait(&d)?;
            Fence::Unknown
        }
    };
    Ok((Owner::Device { tensor: d, fence }, copied))
}

/// How the memory of a CUDA export is made safe to reuse once the consumer lets go
/// (see "After the consumer drops its tensor" in the README).
#[derive(Clone, Copy, Debug)]
pub enum Fence {
    /// A stream the deleter can fence from any thread (1 or a pointer > 2).
    Stream(usize),
    /// The per-thread default stream (2) of the exporting thread: fenced there if the
    /// deleter runs on that thread, otherwise like `Unknown`.
    PerThread(ThreadId),
    /// The consumer named no stream (`None`, `-1`): the reclaimer frees the memory
    /// after a device-wide synchronise on its own thread.
    Unknown,
}

/// What an export shares: host memory, or device memory plus how to fence it when the
/// consumer is done.
pub enum Owner {
    /// A host buffer.
    Host(Arc<Buffer>),
    /// A CUDA tensor.
    Device {
        /// The tensor.
        tensor: Arc<DeviceTensor>,
        /// How its reuse is made safe after the consumer's queued work.
        fence: Fence,
    },
}

impl Owner {
    fn data_and_device(&self) -> (*mut c_void, DLDevice) {
        match self {
            Owner::Host(b) => (
                b.as_ptr() as *mut c_void,
                DLDevice {
                    device_type: DEVICE_CPU,
                    device_id: 0,
                },
            ),
            Owner::Device { tensor, .. } => (
                tensor.device_ptr() as usize as *mut c_void,
                DLDevice {
                    device_type: DEVICE_CUDA,
                    device_id: tensor.ordinal() as i32,
                },
            ),
        }
    }

    /// Drops the share; a device share first leaves its release fence (or hands the
    /// memory to the reclaimer when no stream can be fenced).
    fn release(self) {
        let Owner::Device { tensor, fence } = &self else {
            return;
        };
        match *fence {
            Fence::Stream(s) => {
                tensor.fence_stream(s);
            }
            Fence::PerThread(t) if t == std::thread::current().id() => {
                tensor.fence_stream(2);
            }
            Fence::PerThread(_) | Fence::Unknown => tensor.mark_unfenced(),
        }
    }
}

/// What a record's context owns: the managed tensor record plus the memory and the
/// shape/strides arrays it points into.
struct Export<M> {
    managed: M,
    owner: Option<Owner>,
    _shape: Box<[i64]>,
    _strides: Box<[i64]>,
}

/// The two managed-tensor records, so one code path builds both kinds.
pub trait Managed: Sized {
    /// The unconsumed capsule name.
    const NAME: &'static CStr;
    /// A record for `tensor` with `flags` (ignored by the legacy record) and no context yet.
    fn new(tensor: DLTensor, flags: u64) -> Self;
    /// The record's `manager_ctx`.
    fn ctx(&self) -> *mut c_void;
    /// Sets the record's `manager_ctx`.
    fn set_ctx(&mut self, ctx: *mut c_void);
    /// The record's deleter.
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)>;
}

impl Managed for DLManagedTensor {
    const NAME: &'static CStr = NAME_LEGACY;
    fn new(dl_tensor: DLTensor, _flags: u64) -> Self {
        DLManagedTensor {
            dl_tensor,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete::<DLManagedTensor>),
        }
    }
    fn ctx(&self) -> *mut c_void {
        self.manager_ctx
    }
    fn set_ctx(&mut self, ctx: *mut c_void) {
        self.manager_ctx = ctx;
    }
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)> {
        self.deleter
    }
}

impl Managed for DLManagedTensorVersioned {
    const NAME: &'static CStr = NAME_VERSIONED;
    fn new(dl_tensor: DLTensor, flags: u64) -> Self {
        DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 1 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete::<DLManagedTensorVersioned>),
            flags,
            dl_tensor,
        }
    }
    fn ctx(&self) -> *mut c_void {
        self.manager_ctx
    }
    fn set_ctx(&mut self, ctx: *mut c_void) {
        self.manager_ctx = ctx;
    }
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)> {
        self.deleter
    }
}

/// The DLPack deleter: frees the export and drops its share of the memory. Needs no
/// Python and may run on any thread; a panic must not cross the C boundary.
///
/// # Safety
/// `m` is null or a record made by [`new_record`] whose deleter has not run.
pub unsafe extern "C" fn delete<M: Managed>(m: *mut M) {
    if m.is_null() {
        return;
    }
    // SAFETY: manager_ctx is the Box<Export<M>> this record lives in (see new_record()).
    let mut export = unsafe { Box::from_raw((*m).ctx() as *mut Export<M>) };
    let owner = export.owner.take();
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        if let Some(o) = owner {
            o.release();
        }
        drop(export);
    }));
    LIVE_EXPORTS.fetch_sub(1, Ordering::Relaxed);
}

/// A new managed record sharing `owner`'s memory with `shape` (float32, C order),
/// with IS_COPIED when `copied` (versioned records only). It lives until its deleter
/// runs ([`delete`]), which the consumer, or whoever holds it unconsumed, calls.
pub fn new_record<M: Managed>(owner: Owner, shape: &[usize], copied: bool) -> NonNull<M> {
    let flags = if copied { FLAG_IS_COPIED } else { 0 };
    LIVE_EXPORTS.fetch_add(1, Ordering::Relaxed);
    let mut shape_arr: Box<[i64]> = shape.iter().map(|&n| n as i64).collect();
    let mut strides: Box<[i64]> = vec![0; shape.len()].into_boxed_slice();
    let mut s = 1i64;
    for i in (0..shape.len()).rev() {
        strides[i] = s;
        s *= shape_arr[i].max(1);
    }
    let (data, device) = owner.data_and_device();
    let tensor = DLTensor {
        data,
        device,
        ndim: shape.len() as i32,
        dtype: DLDataType::F32,
        shape: shape_arr.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    let ctx = Box::into_raw(Box::new(Export {
        managed: M::new(tensor, flags),
        owner: Some(owner),
        _shape: shape_arr,
        _strides: strides,
    }));
    // SAFETY: ctx is a live Box; the record points back at it for the deleter.
    unsafe {
        (*ctx).managed.set_ctx(ctx as *mut c_void);
        NonNull::from(&mut (*ctx).managed)
    }
}
