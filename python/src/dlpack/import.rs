//! DLPack import: copies a host or CUDA tensor out of any producer's capsule (NumPy,
//! PyTorch, JAX, CuPy, ...) into float32 on the host, honouring strides and byte
//! offsets, and consumes the capsule as the protocol says (rename to `used_*`, call
//! the deleter).

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};

use std::sync::Arc;

use heliograph::backend::cuda::CudaBackend;

use super::{
    DLDataType, DLManagedTensor, DLManagedTensorVersioned, DLTensor, CODE_BOOL, CODE_FLOAT,
    CODE_INT, CODE_UINT, DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST, NAME_LEGACY, NAME_VERSIONED,
    USED_LEGACY, USED_VERSIONED,
};

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
/// `max_version`) and copies the tensor out of the capsule, converted to float32.
///
/// A CUDA producer is asked for its tensor with `stream=<heliograph's render stream>`,
/// so that it orders its pending writes before our copy, which runs on that stream; the
/// capsule is released only once the copy has finished.
pub fn import(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<HostArray> {
    let device = match obj.call_method0("__dlpack_device__") {
        Ok(d) => Some(d.extract::<(i32, i32)>().map_err(|_| {
            PyTypeError::new_err("__dlpack_device__() must return a (device_type, device_id) tuple")
        })?),
        Err(_) => None,
    };
    let cuda = match device {
        None | Some((DEVICE_CPU, _)) | Some((DEVICE_CUDA_HOST, _)) => None,
        Some((DEVICE_CUDA, id)) => Some(cuda_backend_for(py, id)?),
        Some((kind, id)) => {
            return Err(PyBufferError::new_err(format!(
                "cannot import an array on DLPack device ({kind}, {id}): heliograph reads host \
                 memory (1) and CUDA memory (2) of the device it renders on"
            )))
        }
    };
    let kwargs = PyDict::new(py);
    if let Some(be) = &cuda {
        kwargs.set_item("stream", be.stream_handle())?;
    }
    kwargs.set_item("max_version", PyTuple::new(py, [1u32, 1u32])?)?;
    let cap = match obj.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(c) => c,
        Err(e) if e.is_instance_of::<PyTypeError>(py) => {
            kwargs.del_item("max_version")?;
            obj.call_method("__dlpack__", (), Some(&kwargs))?
        }
        Err(e) => return Err(e),
    };
    let cap = cap
        .cast_into::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err("__dlpack__ did not return a capsule"))?;
    consume(&cap, |t| match &cuda {
        // SAFETY: the producer keeps `t` alive until consume() calls its deleter.
        Some(be) => unsafe { read_cuda_tensor(py, be, t) },
        // SAFETY: as above.
        None => unsafe { read_tensor(t) },
    })
}

/// The CUDA backend, for an array on CUDA device `id`.
fn cuda_backend_for(py: Python<'_>, id: i32) -> PyResult<Arc<CudaBackend>> {
    let be = crate::cuda::backend(py).map_err(|e| {
        PyBufferError::new_err(format!(
            "a CUDA array cannot be imported without the CUDA backend: {}",
            e.value(py)
        ))
    })?;
    if id < 0 || id as usize != be.info().ordinal {
        return Err(PyBufferError::new_err(format!(
            "the array is on CUDA device {id}, but heliograph renders on device {}: move it \
             there first (e.g. x.to('cuda:{}'))",
            be.info().ordinal,
            be.info().ordinal
        )));
    }
    Ok(be)
}

/// Runs `read` on the capsule's tensor, then consumes the capsule as the protocol says
/// (rename to `used_*`, call the deleter), whatever `read` returned.
fn consume<T>(
    cap: &Bound<'_, PyCapsule>,
    read: impl FnOnce(&DLTensor) -> PyResult<T>,
) -> PyResult<T> {
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
        let major = unsafe { (*m).version.major };
        let res = if major != 1 {
            Err(PyBufferError::new_err(format!(
                "the producer returned a DLPack {major}.x capsule; heliograph reads 1.x"
            )))
        } else {
            // SAFETY: as above.
            read(unsafe { &(*m).dl_tensor })
        };
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
        let res = read(unsafe { &(*m).dl_tensor });
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

/// Copies a CUDA `DLTensor` to the host (the span its strides cover, on the render
/// stream, waiting for that copy only) and converts it like a host tensor.
///
/// # Safety
/// `t` must describe live device memory of `be`'s context as the DLPack spec requires.
unsafe fn read_cuda_tensor(py: Python<'_>, be: &CudaBackend, t: &DLTensor) -> PyResult<HostArray> {
    check_dtype(t.dtype)?;
    let nd = t.ndim.max(0) as usize;
    // SAFETY: shape has ndim entries (caller's contract).
    let shape: Vec<i64> = (0..nd).map(|i| unsafe { *t.shape.add(i) }).collect();
    let strides = strides_of(t, &shape);
    let elem = (t.dtype.bits / 8) as i64;
    let (mut lo, mut hi) = (0i64, 0i64);
    let empty = shape.iter().any(|&n| n <= 0);
    for (&n, &s) in shape.iter().zip(&strides) {
        let reach = (n.max(1) - 1).saturating_mul(s);
        lo += reach.min(0);
        hi += reach.max(0);
    }
    let bytes = if empty {
        0
    } else {
        ((hi - lo + 1) * elem) as usize
    };
    let start = (t.data as u64)
        .wrapping_add(t.byte_offset)
        .wrapping_add((lo * elem) as u64);
    let host = py
        .detach(|| be.read_device_bytes(start, bytes))
        .map_err(crate::errors::to_py)?;
    let view = DLTensor {
        data: host.as_ptr() as *mut std::ffi::c_void,
        device: super::DLDevice {
            device_type: DEVICE_CPU,
            device_id: 0,
        },
        ndim: t.ndim,
        dtype: t.dtype,
        shape: t.shape,
        strides: t.strides,
        byte_offset: (-lo * elem) as u64,
    };
    // SAFETY: `host` holds every element the strides reach, shifted by -lo elements.
    unsafe { read_tensor(&view) }
}

/// The element strides of `t` (compact C order when the producer gives none).
fn strides_of(t: &DLTensor, shape: &[i64]) -> Vec<i64> {
    let nd = shape.len();
    if t.strides.is_null() {
        let mut s = vec![1i64; nd];
        for i in (0..nd.saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1];
        }
        s
    } else {
        // SAFETY: strides has ndim entries when non-null (DLPack).
        (0..nd).map(|i| unsafe { *t.strides.add(i) }).collect()
    }
}

/// Refuses element types heliograph cannot convert to float32.
fn check_dtype(dt: DLDataType) -> PyResult<()> {
    let supported = dt.lanes == 1
        && match dt.code {
            CODE_FLOAT => matches!(dt.bits, 16 | 32 | 64),
            CODE_INT | CODE_UINT => matches!(dt.bits, 8 | 16 | 32 | 64),
            CODE_BOOL => dt.bits == 8,
            _ => false,
        };
    if supported {
        Ok(())
    } else {
        Err(PyTypeError::new_err(format!(
            "unsupported DLPack element type (code {}, {} bits, {} lanes); heliograph converts \
             bool, int, uint and float arrays to float32",
            dt.code, dt.bits, dt.lanes
        )))
    }
}

/// Copies a host `DLTensor` into a float32 array.
///
/// # Safety
/// `t` must describe live memory as the DLPack spec requires.
unsafe fn read_tensor(t: &DLTensor) -> PyResult<HostArray> {
    if t.device.device_type != DEVICE_CPU && t.device.device_type != DEVICE_CUDA_HOST {
        return Err(PyBufferError::new_err(format!(
            "only host arrays can be imported (DLPack device type {})",
            t.device.device_type
        )));
    }
    let dt = t.dtype;
    check_dtype(dt)?;
    let nd = t.ndim.max(0) as usize;
    // SAFETY: shape has ndim entries (caller's contract).
    let shape: Vec<i64> = (0..nd).map(|i| unsafe { *t.shape.add(i) }).collect();
    if shape.iter().any(|&n| n < 0) {
        return Err(PyValueError::new_err(
            "DLPack tensor with a negative extent",
        ));
    }
    let strides = strides_of(t, &shape);
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n as usize))
        .filter(|&c| c <= isize::MAX as usize / 8)
        .ok_or_else(|| {
            PyValueError::new_err(format!("DLPack tensor too large: shape {shape:?}"))
        })?;
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
    fn half_floats_decode_exactly() {
        assert_eq!(half_to_f32(0x3c00), 1.0);
        assert_eq!(half_to_f32(0xc000), -2.0);
        assert_eq!(half_to_f32(0x3555), 0.333_251_95);
        assert_eq!(half_to_f32(0x0001), 5.960_464_5e-8);
        assert!(half_to_f32(0x7c00).is_infinite());
        assert!(half_to_f32(0x7e00).is_nan());
    }
}
