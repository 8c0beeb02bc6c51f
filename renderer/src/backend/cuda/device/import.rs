//! Imports of other frameworks' CUDA arrays (PyTorch, JAX, CuPy, ...), device to
//! device on the render stream: a contiguous float32 array is one copy; any other
//! layout (strides, negative or zero strides) or element type (bool, int, uint,
//! float16, float64) is gathered and converted by a kernel (kernels/convert.cu). The
//! host never waits.
//!
//! The producer orders its pending writes before the render stream's current point
//! (DLPack: `__dlpack__(stream=<render stream>)`) and keeps the memory alive until the
//! returned tensor is ready ([`DeviceTensor::is_ready`]): the caller releases the
//! producer's capsule only then.

use cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};

use super::event::Event;
use super::tensor::DeviceTensor;
use super::{guarded, launching, CudaBackend};
use crate::error::{CudaError, Error, Result};
use crate::tensor::check_dtype;
use crate::tensor::dlpack::DLDataType;

/// Most dimensions an imported array may have (kernels/convert.cu `HG_MAX_DIMS`).
pub const MAX_DIMS: usize = 8;

/// Most elements an imported array may have (a texture or image: 2^32 values is far
/// beyond any the kernels index).
pub const MAX_ELEMENTS: u64 = 1 << 32;

/// An array in device memory, as a DLPack tensor describes it.
#[derive(Clone, Debug)]
pub struct ForeignArray {
    /// The address of element (0, ..., 0) (the DLPack data pointer plus its byte offset).
    pub ptr: u64,
    /// Extents.
    pub shape: Vec<i64>,
    /// Strides in elements (C order when the producer gave none).
    pub strides: Vec<i64>,
    /// The element type (checked with [`crate::tensor::check_dtype`]).
    pub dtype: DLDataType,
}

/// The layout parameter of `hg_gather` (kernels/convert.cu `Strided`).
#[derive(Clone, Copy)]
#[repr(C)]
struct Strided {
    shape: [i64; MAX_DIMS],
    strides: [i64; MAX_DIMS],
    ndim: u32,
    dtype: u32,
}

// SAFETY: #[repr(C)] integers only, the twin of `Strided` in convert.cu (size 136,
// asserted there and below), passed by value.
unsafe impl DeviceRepr for Strided {}
const _: () = assert!(std::mem::size_of::<Strided>() == 136);

impl ForeignArray {
    /// The number of elements, checked: non-negative extents, at most [`MAX_DIMS`]
    /// dimensions and `MAX_ELEMENTS` elements, strides for every dimension.
    pub fn count(&self) -> Result<u64> {
        check_dtype(self.dtype)?;
        if self.shape.len() > MAX_DIMS {
            return Err(Error::Cuda(CudaError::ImportDims {
                dims: self.shape.len(),
                max: MAX_DIMS,
            }));
        }
        if self.strides.len() != self.shape.len() {
            return Err(Error::Cuda(CudaError::ImportStrides {
                extents: self.shape.len(),
                strides: self.strides.len(),
            }));
        }
        let mut n: u64 = 1;
        for &e in &self.shape {
            let e = u64::try_from(e)
                .map_err(|_| Error::Cuda(CudaError::NegativeExtent { extent: e }))?;
            n = n.saturating_mul(e);
        }
        if n > MAX_ELEMENTS {
            return Err(Error::Cuda(CudaError::ImportElements {
                elements: n,
                max: MAX_ELEMENTS,
            }));
        }
        Ok(n)
    }

    /// Whether the elements are contiguous in C order (extents of 1 excepted).
    fn is_compact(&self) -> bool {
        crate::tensor::strided::is_compact(&self.shape, &self.strides)
    }
}

impl CudaBackend {
    /// Copies `a` into a new float32 device tensor (C order) on the render stream,
    /// returning at once; the tensor's ready event fences the copy (see the module docs
    /// for what the producer must guarantee).
    pub fn import_device(&self, a: &ForeignArray) -> Result<DeviceTensor> {
        let n = a.count()?;
        guarded("importing a CUDA array", || {
            let bytes = (n * 4) as usize;
            let out = self.pool.alloc(bytes, &self.stream, "an imported array")?;
            if n > 0 {
                if a.dtype == DLDataType::F32 && a.is_compact() {
                    // SAFETY: the producer's memory holds n floats from ptr and stays
                    // valid until the tensor is ready (the caller's contract).
                    unsafe { out.copy_from_device(0, a.ptr, bytes) }?;
                } else {
                    self.gather(a, n, out.ptr())?;
                }
            }
            let ready = Event::recorded(&self.ctx, self.stream.cu_stream())?;
            Ok(self.tensor(out, n as usize, ready))
        })
    }

    fn gather(&self, a: &ForeignArray, n: u64, dst: u64) -> Result<()> {
        let module = self.convert_module()?;
        let f = self.function(&module, "hg_gather")?;
        let mut s = Strided {
            shape: [1; MAX_DIMS],
            strides: [0; MAX_DIMS],
            ndim: a.shape.len() as u32,
            dtype: (a.dtype.code as u32) << 8 | a.dtype.bits as u32,
        };
        s.shape[..a.shape.len()].copy_from_slice(&a.shape);
        s.strides[..a.strides.len()].copy_from_slice(&a.strides);
        let block = 256u32;
        let blocks = n.div_ceil(block as u64);
        if blocks > i32::MAX as u64 {
            return Err(Error::Cuda(CudaError::TooManyElements { elements: n }));
        }
        let src = a.ptr;
        let mut l = self.stream.launch_builder(&f);
        l.arg(&src).arg(&s).arg(&n).arg(&dst);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: matches hg_gather in convert.cu; every element the shape and strides
        // reach lies in the producer's tensor (DLPack's contract), `dst` holds n floats.
        unsafe { l.launch(cfg) }.map_err(launching("hg_gather"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(shape: &[i64], strides: &[i64]) -> ForeignArray {
        ForeignArray {
            ptr: 0,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            dtype: DLDataType::F32,
        }
    }

    #[test]
    fn layouts_are_checked_and_compact_ones_recognised() {
        assert!(arr(&[4, 6, 3], &[18, 3, 1]).is_compact());
        assert!(
            arr(&[4, 1, 3], &[3, 99, 1]).is_compact(),
            "extents of 1 have any stride"
        );
        assert!(!arr(&[4, 6, 3], &[1, 4, 24]).is_compact(), "Fortran order");
        assert!(!arr(&[4, 6, 3], &[-18, 3, 1]).is_compact(), "flipped rows");
        assert!(!arr(&[4, 6, 3], &[0, 3, 1]).is_compact(), "broadcast rows");
        assert_eq!(arr(&[4, 6, 3], &[18, 3, 1]).count().unwrap(), 72);
        assert_eq!(arr(&[0, 6], &[6, 1]).count().unwrap(), 0);
        let e = arr(&[-1, 3], &[3, 1]).count().unwrap_err().to_string();
        assert!(e.contains("negative"), "{e}");
        let e = arr(&[1 << 20, 1 << 20, 1 << 20], &[0, 0, 0])
            .count()
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most"), "{e}");
        let e = arr(&[1; 9], &[1; 9]).count().unwrap_err().to_string();
        assert!(e.contains("9 dimensions"), "{e}");
        assert!(arr(&[2, 2], &[1]).count().is_err());
        let mut bad = arr(&[2], &[1]);
        bad.dtype.bits = 8;
        assert!(bad.count().is_err(), "float8 is refused before a launch");
    }
}
