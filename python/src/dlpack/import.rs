//! DLPack import: copies a host tensor out of any producer's capsule (NumPy,
//! PyTorch, JAX, ...) into float32, honouring strides and byte offsets, and
//! consumes the capsule as the protocol says (rename to `used_*`, call the deleter).

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};

use super::{
    DLDataType, DLManagedTensor, DLManagedTensorVersioned, DLTensor, CODE_BOOL, CODE_FLOAT,
    CODE_INT, CODE_UINT, DEVICE_CPU, DEVICE_CUDA, NAME_LEGACY, NAME_VERSIONED, USED_LEGACY,
    USED_VERSIONED,
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
