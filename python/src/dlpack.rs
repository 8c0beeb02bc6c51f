//! DLPack on the host (../shared/DLPACK.md): the FFI structs, a 64-byte-aligned
//! float buffer, export as legacy (`dltensor`) or versioned (`dltensor_versioned`)
//! capsules, and import (copy) of any host DLPack producer.
//!
//! Ownership: a capsule's `manager_ctx` holds an `Arc` of the buffer, so the
//! memory lives until both heliograph and the consumer are done. The capsule
//! destructor calls the deleter only while the capsule still has its unconsumed
//! name (a consumer renames it to `used_*` and calls the deleter itself), and the
//! deleter needs no Python, so it may run on any thread.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::{c_void, CStr};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};

/// `kDLCPU`.
pub const DEVICE_CPU: i32 = 1;
/// `kDLCUDA`.
pub const DEVICE_CUDA: i32 = 2;
const CODE_INT: u8 = 0;
const CODE_UINT: u8 = 1;
const CODE_FLOAT: u8 = 2;
const CODE_BOOL: u8 = 6;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`.
const FLAG_IS_COPIED: u64 = 2;

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLDevice {
    /// Device type (1 = CPU, 2 = CUDA).
    pub device_type: i32,
    /// Device ordinal.
    pub device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDataType {
    /// Type code (0 int, 1 uint, 2 float, 6 bool, ...).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for scalars).
    pub lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
pub struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

/// `DLManagedTensor` (legacy capsules).
#[repr(C)]
pub struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
pub struct DLPackVersion {
    major: u32,
    minor: u32,
}

/// `DLManagedTensorVersioned` (versioned capsules).
#[repr(C)]
pub struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

/// Capsule exports whose deleter has not run yet (for leak and double-free tests).
pub static LIVE_EXPORTS: AtomicIsize = AtomicIsize::new(0);

/// A float32 buffer aligned to 64 bytes (XLA:CPU copies unaligned buffers).
pub struct Buffer {
    ptr: NonNull<f32>,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this struct; sharing happens through Arc.
unsafe impl Send for Buffer {}
// SAFETY: see above; readers only read, and writers are DLPack consumers by contract.
unsafe impl Sync for Buffer {}

impl Buffer {
    fn layout(len: usize) -> Layout {
        // never zero-sized, so that the pointer is a real allocation
        Layout::from_size_align((len * 4).max(64), 64).expect("buffer size overflows")
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[f32]) -> Arc<Buffer> {
        let layout = Self::layout(data.len());
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) } as *mut f32;
        let Some(ptr) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        // SAFETY: the allocation holds at least `data.len()` floats and does not overlap `data`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.as_ptr(), data.len()) };
        Arc::new(Buffer {
            ptr,
            len: data.len(),
        })
    }

    /// The values.
    pub fn as_slice(&self) -> &[f32] {
        // SAFETY: ptr/len describe a live allocation owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The data pointer (for DLPack).
    pub fn as_ptr(&self) -> *mut f32 {
        self.ptr.as_ptr()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated in from_slice with the same layout.
        unsafe { dealloc(self.ptr.as_ptr() as *mut u8, Self::layout(self.len)) }
    }
}

/// What a capsule owns: the managed tensor record plus the buffer and the
/// shape/strides arrays it points into.
struct Export<M> {
    managed: M,
    _owner: Arc<Buffer>,
    _shape: Box<[i64]>,
    _strides: Box<[i64]>,
}

unsafe extern "C" fn delete_legacy(m: *mut DLManagedTensor) {
    if !m.is_null() {
        // SAFETY: manager_ctx is the Box<Export> this record lives in (see export()).
        unsafe {
            drop(Box::from_raw(
                (*m).manager_ctx as *mut Export<DLManagedTensor>,
            ))
        };
        LIVE_EXPORTS.fetch_sub(1, Ordering::Relaxed);
    }
}

unsafe extern "C" fn delete_versioned(m: *mut DLManagedTensorVersioned) {
    if !m.is_null() {
        // SAFETY: as delete_legacy.
        unsafe {
            drop(Box::from_raw(
                (*m).manager_ctx as *mut Export<DLManagedTensorVersioned>,
            ))
        };
        LIVE_EXPORTS.fetch_sub(1, Ordering::Relaxed);
    }
}

const NAME_LEGACY: &CStr = c"dltensor";
const NAME_VERSIONED: &CStr = c"dltensor_versioned";
const USED_LEGACY: &CStr = c"used_dltensor";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";

unsafe extern "C" fn capsule_destructor_legacy(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with a live capsule; IsValid sets no error.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, NAME_LEGACY.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, NAME_LEGACY.as_ptr()) as *mut DLManagedTensor;
            if let Some(d) = m.as_ref().and_then(|m| m.deleter) {
                d(m);
            }
        }
    }
}

unsafe extern "C" fn capsule_destructor_versioned(cap: *mut ffi::PyObject) {
    // SAFETY: as capsule_destructor_legacy.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, NAME_VERSIONED.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, NAME_VERSIONED.as_ptr())
                as *mut DLManagedTensorVersioned;
            if let Some(d) = m.as_ref().and_then(|m| m.deleter) {
                d(m);
            }
        }
    }
}

/// Exports `buf` with `shape` (C order) as a capsule; `versioned` picks the
/// capsule kind, `copied` sets the IS_COPIED flag (versioned only).
pub fn export<'py>(
    py: Python<'py>,
    buf: Arc<Buffer>,
    shape: &[usize],
    versioned: bool,
    copied: bool,
) -> PyResult<Bound<'py, PyCapsule>> {
    LIVE_EXPORTS.fetch_add(1, Ordering::Relaxed);
    let mut shape_arr: Box<[i64]> = shape.iter().map(|&n| n as i64).collect();
    let mut strides: Box<[i64]> = vec![0; shape.len()].into_boxed_slice();
    let mut s = 1i64;
    for i in (0..shape.len()).rev() {
        strides[i] = s;
        s *= shape_arr[i].max(1);
    }
    let tensor = DLTensor {
        data: buf.as_ptr() as *mut c_void,
        device: DLDevice {
            device_type: DEVICE_CPU,
            device_id: 0,
        },
        ndim: shape.len() as i32,
        dtype: DLDataType {
            code: CODE_FLOAT,
            bits: 32,
            lanes: 1,
        },
        shape: shape_arr.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    if versioned {
        let managed = DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 1 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_versioned),
            flags: if copied { FLAG_IS_COPIED } else { 0 },
            dl_tensor: tensor,
        };
        let ctx = Box::into_raw(Box::new(Export {
            managed,
            _owner: buf,
            _shape: shape_arr,
            _strides: strides,
        }));
        // SAFETY: ctx is a live Box; the record points back at it for the deleter.
        let m = unsafe {
            (*ctx).managed.manager_ctx = ctx as *mut c_void;
            NonNull::from(&mut (*ctx).managed).cast::<c_void>()
        };
        // SAFETY: m stays valid until the deleter runs; the destructor checks the name.
        let cap = unsafe {
            PyCapsule::new_with_pointer_and_destructor(
                py,
                m,
                NAME_VERSIONED,
                Some(capsule_destructor_versioned),
            )
        };
        if cap.is_err() {
            // SAFETY: the capsule was not created, so nobody else owns ctx.
            unsafe { delete_versioned(m.as_ptr() as *mut DLManagedTensorVersioned) };
        }
        cap
    } else {
        let managed = DLManagedTensor {
            dl_tensor: tensor,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_legacy),
        };
        let ctx = Box::into_raw(Box::new(Export {
            managed,
            _owner: buf,
            _shape: shape_arr,
            _strides: strides,
        }));
        // SAFETY: as above.
        let m = unsafe {
            (*ctx).managed.manager_ctx = ctx as *mut c_void;
            NonNull::from(&mut (*ctx).managed).cast::<c_void>()
        };
        // SAFETY: as above.
        let cap = unsafe {
            PyCapsule::new_with_pointer_and_destructor(
                py,
                m,
                NAME_LEGACY,
                Some(capsule_destructor_legacy),
            )
        };
        if cap.is_err() {
            // SAFETY: as above.
            unsafe { delete_legacy(m.as_ptr() as *mut DLManagedTensor) };
        }
        cap
    }
}

/// Checks the arguments of `__dlpack__` for a host tensor (DLPACK.md table) and
/// returns `(versioned, copy)`.
pub fn check_export_args(
    stream: Option<&Bound<'_, PyAny>>,
    max_version: Option<&Bound<'_, PyAny>>,
    dl_device: Option<&Bound<'_, PyAny>>,
    copy: Option<&Bound<'_, PyAny>>,
) -> PyResult<(bool, bool)> {
    if let Some(s) = stream.filter(|s| !s.is_none()) {
        if s.is_instance_of::<pyo3::types::PyBool>() || !s.is_instance_of::<pyo3::types::PyInt>() {
            return Err(PyTypeError::new_err(format!(
                "__dlpack__: stream must be None or an int, got {}",
                s.get_type().name()?
            )));
        }
        let v: i64 = s.extract()?;
        if v < -1 {
            return Err(PyValueError::new_err(format!(
                "__dlpack__: stream {v} is not a valid stream (must be >= -1)"
            )));
        }
        return Err(PyBufferError::new_err(format!(
            "__dlpack__: a CPU tensor takes only stream=None, got stream={v}"
        )));
    }
    let versioned = match max_version.filter(|m| !m.is_none()) {
        None => false,
        Some(m) => {
            let (major, _minor): (i64, i64) = m.extract().map_err(|_| {
                PyTypeError::new_err("__dlpack__: max_version must be a (major, minor) tuple")
            })?;
            major >= 1
        }
    };
    if let Some(d) = dl_device.filter(|d| !d.is_none()) {
        let (kind, id): (i32, i32) = d.extract().map_err(|_| {
            PyTypeError::new_err("__dlpack__: dl_device must be a (device_type, device_id) tuple")
        })?;
        if kind != DEVICE_CPU || id != 0 {
            return Err(PyBufferError::new_err(format!(
                "__dlpack__: a CPU tensor cannot be exported to device ({kind}, {id})"
            )));
        }
    }
    let copy = match copy.filter(|c| !c.is_none()) {
        None => false,
        Some(c) => c
            .extract::<bool>()
            .map_err(|_| PyTypeError::new_err("__dlpack__: copy must be None, True or False"))?,
    };
    Ok((versioned, copy))
}

/// A host array copied out of a DLPack producer, converted to float32.
pub struct HostArray {
    /// C-order shape.
    pub shape: Vec<usize>,
    /// The values, as float32.
    pub data: Vec<f32>,
    /// The producer's element type.
    pub dtype: DLDataType,
}

impl HostArray {
    /// The element type as NumPy names it, for messages.
    pub fn dtype_name(&self) -> String {
        let kind = match self.dtype.code {
            CODE_INT => "int",
            CODE_UINT => "uint",
            CODE_FLOAT => "float",
            CODE_BOOL => return "bool".into(),
            c => return format!("dlpack type code {c}"),
        };
        format!("{kind}{}", self.dtype.bits)
    }

    /// Whether the producer's elements were floating point.
    pub fn is_float(&self) -> bool {
        self.dtype.code == CODE_FLOAT
    }

    /// Whether the producer's elements were 8-bit unsigned.
    pub fn is_u8(&self) -> bool {
        self.dtype.code == CODE_UINT && self.dtype.bits == 8
    }
}

/// Calls `obj.__dlpack__` (versioned first, legacy when the producer refuses
/// `max_version`) and copies the host tensor out of the capsule.
pub fn import(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<HostArray> {
    if let Ok(dev) = obj.call_method0("__dlpack_device__") {
        let (kind, _id): (i32, i32) = dev.extract()?;
        if kind == DEVICE_CUDA {
            return Err(PyBufferError::new_err(
                "a CUDA array cannot be imported by the cpu_rgb variant: move it to the host first",
            ));
        }
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("max_version", PyTuple::new(py, [1u32, 1u32])?)?;
    let cap = match obj.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(c) => c,
        Err(e) if e.is_instance_of::<PyTypeError>(py) => obj.call_method0("__dlpack__")?,
        Err(e) => return Err(e),
    };
    let cap = cap
        .cast_into::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err("__dlpack__ did not return a capsule"))?;
    let ptr = cap.as_ptr();
    // SAFETY: ptr is a live capsule; IsValid sets no error.
    let versioned = unsafe { ffi::PyCapsule_IsValid(ptr, NAME_VERSIONED.as_ptr()) } == 1;
    // SAFETY: as above.
    let legacy = unsafe { ffi::PyCapsule_IsValid(ptr, NAME_LEGACY.as_ptr()) } == 1;
    if versioned {
        // SAFETY: a valid versioned capsule holds a DLManagedTensorVersioned.
        let m = unsafe { ffi::PyCapsule_GetPointer(ptr, NAME_VERSIONED.as_ptr()) }
            as *mut DLManagedTensorVersioned;
        // SAFETY: m is live until we call its deleter.
        let res = unsafe { read_tensor(&(*m).dl_tensor) };
        // SAFETY: consume the capsule (rename) then release the producer's memory.
        unsafe {
            ffi::PyCapsule_SetName(ptr, USED_VERSIONED.as_ptr());
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
        res
    } else if legacy {
        // SAFETY: a valid legacy capsule holds a DLManagedTensor.
        let m =
            unsafe { ffi::PyCapsule_GetPointer(ptr, NAME_LEGACY.as_ptr()) } as *mut DLManagedTensor;
        // SAFETY: as above.
        let res = unsafe { read_tensor(&(*m).dl_tensor) };
        // SAFETY: as above.
        unsafe {
            ffi::PyCapsule_SetName(ptr, USED_LEGACY.as_ptr());
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
        res
    } else {
        Err(PyValueError::new_err(
            "__dlpack__ returned a capsule that is not an unconsumed DLPack tensor",
        ))
    }
}

/// Copies a host `DLTensor` into a float32 array.
///
/// # Safety
/// `t` must describe live memory as the DLPack spec requires.
unsafe fn read_tensor(t: &DLTensor) -> PyResult<HostArray> {
    if t.device.device_type != DEVICE_CPU && t.device.device_type != 3 {
        return Err(PyBufferError::new_err(format!(
            "only host arrays can be imported (DLPack device type {})",
            t.device.device_type
        )));
    }
    let dt = t.dtype;
    let supported = dt.lanes == 1
        && match dt.code {
            CODE_FLOAT => matches!(dt.bits, 16 | 32 | 64),
            CODE_INT | CODE_UINT => matches!(dt.bits, 8 | 16 | 32 | 64),
            CODE_BOOL => dt.bits == 8,
            _ => false,
        };
    if !supported {
        return Err(PyTypeError::new_err(format!(
            "unsupported DLPack element type (code {}, {} bits, {} lanes)",
            dt.code, dt.bits, dt.lanes
        )));
    }
    let nd = t.ndim.max(0) as usize;
    // SAFETY: shape has ndim entries (caller's contract).
    let shape: Vec<i64> = (0..nd).map(|i| unsafe { *t.shape.add(i) }).collect();
    if shape.iter().any(|&n| n < 0) {
        return Err(PyValueError::new_err(
            "DLPack tensor with a negative extent",
        ));
    }
    let strides: Vec<i64> = if t.strides.is_null() {
        let mut s = vec![1i64; nd];
        for i in (0..nd.saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1];
        }
        s
    } else {
        // SAFETY: strides has ndim entries when non-null.
        (0..nd).map(|i| unsafe { *t.strides.add(i) }).collect()
    };
    let count: usize = shape.iter().map(|&n| n as usize).product();
    let mut data = Vec::with_capacity(count);
    let base = (t.data as *const u8).wrapping_add(t.byte_offset as usize);
    let elem = (dt.bits / 8) as isize;
    let mut idx = vec![0i64; nd];
    for _ in 0..count {
        let off: i64 = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
        let p = base.wrapping_offset(off as isize * elem);
        // SAFETY: p is inside the producer's tensor (index within shape, stride layout).
        data.push(unsafe { load(p, dt) });
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(HostArray {
        shape: shape.iter().map(|&n| n as usize).collect(),
        data,
        dtype: dt,
    })
}

/// Reads one element as f32.
///
/// # Safety
/// `p` must point at a readable element of type `dt`.
unsafe fn load(p: *const u8, dt: DLDataType) -> f32 {
    // SAFETY: caller's contract; unaligned reads tolerate any producer alignment.
    unsafe {
        match (dt.code, dt.bits) {
            (CODE_FLOAT, 16) => half_to_f32((p as *const u16).read_unaligned()),
            (CODE_FLOAT, 32) => (p as *const f32).read_unaligned(),
            (CODE_FLOAT, 64) => (p as *const f64).read_unaligned() as f32,
            (CODE_INT, 8) => (p as *const i8).read_unaligned() as f32,
            (CODE_INT, 16) => (p as *const i16).read_unaligned() as f32,
            (CODE_INT, 32) => (p as *const i32).read_unaligned() as f32,
            (CODE_INT, 64) => (p as *const i64).read_unaligned() as f32,
            (CODE_UINT, 8) | (CODE_BOOL, 8) => p.read_unaligned() as f32,
            (CODE_UINT, 16) => (p as *const u16).read_unaligned() as f32,
            (CODE_UINT, 32) => (p as *const u32).read_unaligned() as f32,
            (CODE_UINT, 64) => (p as *const u64).read_unaligned() as f32,
            _ => f32::NAN,
        }
    }
}

/// IEEE binary16 → f32.
fn half_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if frac == 0 => sign,
        0 => {
            // subnormal: value = frac * 2^-24
            let v = frac as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        0x1f => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_64_byte_aligned_and_hold_their_data() {
        for n in [0usize, 1, 3, 1000] {
            let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let b = Buffer::from_slice(&data);
            assert_eq!(b.as_ptr() as usize % 64, 0);
            assert_eq!(b.as_slice(), &data[..]);
        }
    }

    #[test]
    fn half_floats_decode_exactly() {
        assert_eq!(half_to_f32(0x3c00), 1.0);
        assert_eq!(half_to_f32(0xc000), -2.0);
        assert_eq!(half_to_f32(0x3555), 0.333_251_95);
        assert_eq!(half_to_f32(0x0001), 5.960_464_5e-8);
        assert!(half_to_f32(0x7c00).is_infinite());
        assert!(half_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn record_layouts_match_dlpack_h() {
        // dlpack.h on 64-bit: DLTensor 48 bytes, DLManagedTensor 64, DLManagedTensorVersioned 80
        assert_eq!(std::mem::size_of::<DLTensor>(), 48);
        assert_eq!(std::mem::size_of::<DLManagedTensor>(), 64);
        assert_eq!(std::mem::size_of::<DLManagedTensorVersioned>(), 80);
        assert_eq!(
            std::mem::offset_of!(DLManagedTensorVersioned, dl_tensor),
            32
        );
    }
}
