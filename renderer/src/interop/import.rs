//! What an import of another producer's DLPack tensor accepts, checked before any of
//! its memory is read: the memory lives where the producer's `__dlpack_device__()`
//! said ([`check_device`]), and a CUDA tensor has an element type, a number of
//! dimensions and a layout the device copy reads (`cuda_array`). Host tensors are
//! checked by the strided reader ([`crate::tensor::strided`]).

use std::sync::Arc;

use crate::backend::cuda::{CudaBackend, DeviceTensor, ForeignArray, MAX_DIMS};
use crate::error::{ArrayProblem, Error, Result};
use crate::interop::Storage;
use crate::math::all_finite;
use crate::tensor::dlpack::{DLDataType, DLTensor, DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST};
use crate::tensor::strided::{check_dtype, layout};
use crate::tensor::{host_layout, read_host, read_host_buffer, read_host_into, Buffer, HostArray};

/// Where an import puts a host array.
#[derive(Clone, Copy)]
pub enum HostTo<'a> {
    /// Into a `Vec` ([`Imported::Host`]).
    Vec,
    /// Into a 64-byte aligned [`Buffer`] ([`Imported::Buffer`]), a host tensor's storage.
    Buffer,
    /// Into page-locked staging and on to a new tensor on this backend's device
    /// ([`Imported::Device`]).
    Device(&'a Arc<CudaBackend>),
    /// As `Device`, for a parameter of `len` values: scanned for non-finite values on
    /// the way; an array of another size is read into a `Vec` (for the caller's shape
    /// error) rather than uploaded.
    Param(&'a Arc<CudaBackend>, usize),
}

/// What an import produced.
pub enum Imported {
    /// A host array, converted to float32.
    Host(HostArray),
    /// A host array converted to float32 into a buffer.
    Buffer {
        /// The values.
        buf: Arc<Buffer>,
        /// Their shape.
        shape: Vec<usize>,
        /// The producer's element type.
        dtype: DLDataType,
    },
    /// A CUDA array copied (or a host array uploaded) into a new float32 device tensor
    /// (C order).
    Device {
        /// The copy (ready once its import has run).
        tensor: Arc<DeviceTensor>,
        /// Its shape.
        shape: Vec<usize>,
        /// The producer's element type.
        dtype: DLDataType,
        /// For a host array uploaded as a parameter, the index of its first non-finite
        /// value, if any (CUDA arrays are not scanned: that would wait for the copy).
        non_finite: Option<usize>,
    },
}

impl Imported {
    /// The storage of a new tensor holding the imported values, where they are.
    pub fn into_storage(self) -> Result<Storage> {
        Ok(match self {
            Imported::Host(a) => Storage::from_values(a.shape, &a.data)?,
            Imported::Buffer { buf, shape, .. } => Storage::from_buffer(shape, buf),
            Imported::Device { tensor, shape, .. } => Storage::device(shape, tensor),
        })
    }

    /// Makes the imported values `target`'s (an assignment's result; exports of the
    /// old values keep them): host values in a new buffer, device values shared.
    pub fn assign_to(self, target: &Storage) -> Result<()> {
        match self {
            Imported::Host(a) => target.set_buffer(Buffer::from_slice(&a.data)?),
            Imported::Buffer { buf, .. } => target.set_buffer(buf),
            Imported::Device { tensor, .. } => target.set_device(tensor),
        }
        Ok(())
    }

    /// The values in host memory: a device copy is read (waiting for it).
    pub fn into_host(self) -> Result<HostArray> {
        match self {
            Imported::Host(a) => Ok(a),
            Imported::Buffer { buf, shape, dtype } => Ok(HostArray {
                shape,
                data: buf.as_slice().to_vec(),
                dtype,
            }),
            Imported::Device {
                tensor,
                shape,
                dtype,
                ..
            } => {
                let data = tensor.to_host()?;
                Ok(HostArray { shape, data, dtype })
            }
        }
    }
}

/// The values of tensor `t` in CUDA memory, shared as they are (a tensor of
/// heliograph's own is ordered on the render stream already); `None` for host values,
/// which are read once their render has finished ([`import_values`]).
pub fn shared_device(t: &Storage) -> Option<Imported> {
    Some(Imported::Device {
        tensor: t.device_tensor()?,
        shape: t.shape().to_vec(),
        dtype: DLDataType::F32,
        non_finite: None,
    })
}

/// A host tensor's values (of `shape`) where `host_to` says; into a new buffer they
/// are a copy, since consumers of the original's exports may write to it.
pub fn import_values(values: &[f32], shape: Vec<usize>, host_to: HostTo<'_>) -> Result<Imported> {
    let dtype = DLDataType::F32;
    let (be, scan) = match host_to {
        HostTo::Device(be) => (be, false),
        HostTo::Param(be, len) if len == values.len() => (be, true),
        HostTo::Vec | HostTo::Param(..) => {
            let data = values.to_vec();
            return Ok(Imported::Host(HostArray { shape, data, dtype }));
        }
        HostTo::Buffer => {
            let buf = Buffer::from_slice(values)?;
            return Ok(Imported::Buffer { buf, shape, dtype });
        }
    };
    let tensor = Arc::new(upload(be, values)?);
    let non_finite = match scan && !all_finite(values) {
        true => values.iter().position(|v| !v.is_finite()),
        false => None,
    };
    Ok(Imported::Device {
        tensor,
        shape,
        dtype,
        non_finite,
    })
}

/// A new device tensor holding a copy of host `values`.
pub fn upload(be: &CudaBackend, values: &[f32]) -> Result<DeviceTensor> {
    be.upload_with(values.len(), |dst| {
        dst.copy_from_slice(values);
        Ok(())
    })
}

/// An error unless `t` lives where `__dlpack_device__` said (`claimed`; `None` for a
/// producer without it, which must hold host memory).
pub fn check_device(t: &DLTensor, claimed: Option<(i32, i32)>) -> Result<()> {
    let (kind, id) = (t.device.device_type, t.device.device_id);
    let host = |k| k == DEVICE_CPU || k == DEVICE_CUDA_HOST;
    let same = match claimed {
        None => host(kind),
        Some((k, i)) => (host(k) && host(kind)) || (k == kind && i == id),
    };
    if same {
        return Ok(());
    }
    Err(Error::array(
        ArrayProblem::Device,
        format!(
            "the producer's capsule holds memory of DLPack device ({kind}, {id}), but its \
             __dlpack_device__() said {}",
            claimed.map_or("nothing (a host array)".to_string(), |(k, i)| format!(
                "({k}, {i})"
            ))
        ),
    ))
}

/// The CUDA device that an array lives on by what its `__dlpack_device__()` said
/// (`claimed`); `None` for host memory (or a producer that said nothing), an error for
/// memory of another kind.
pub fn claimed_cuda(claimed: Option<(i32, i32)>) -> Result<Option<i32>> {
    match claimed {
        None | Some((DEVICE_CPU, _)) | Some((DEVICE_CUDA_HOST, _)) => Ok(None),
        Some((DEVICE_CUDA, id)) => Ok(Some(id)),
        Some((kind, id)) => Err(Error::array(
            ArrayProblem::Device,
            format!(
                "cannot import an array on DLPack device ({kind}, {id}): heliograph reads host \
                 memory (1) and CUDA memory (2) of the device it renders on"
            ),
        )),
    }
}

/// An error unless a CUDA array on device `id` is on the device heliograph renders on
/// (`ordinal`).
pub fn check_ordinal(id: i32, ordinal: usize) -> Result<()> {
    if id < 0 || id as usize != ordinal {
        return Err(Error::array(
            ArrayProblem::Device,
            format!(
                "the array is on CUDA device {id}, but heliograph renders on device {ordinal}: \
                 move it there first (e.g. x.to('cuda:{ordinal}'))"
            ),
        ));
    }
    Ok(())
}

/// Enqueues the device-to-device copy of a CUDA tensor on `be`'s render stream.
///
/// # Safety
/// `t` must describe live device memory of `be`'s device until the returned tensor is
/// ready.
pub unsafe fn import_cuda(be: &CudaBackend, t: &DLTensor) -> Result<Imported> {
    // SAFETY: the caller's contract.
    let (a, shape) = unsafe { cuda_array(t) }?;
    let tensor = be.import_device(&a)?;
    Ok(Imported::Device {
        tensor: Arc::new(tensor),
        shape,
        dtype: t.dtype,
        non_finite: None,
    })
}

/// The array the device copy of a CUDA tensor `t` reads, and its extents.
///
/// # Safety
/// `t`'s shape and strides have `ndim` entries (DLPack).
unsafe fn cuda_array(t: &DLTensor) -> Result<(ForeignArray, Vec<usize>)> {
    check_dtype(t.dtype)?;
    if t.ndim as usize > MAX_DIMS {
        return Err(Error::array(
            ArrayProblem::Layout,
            format!(
                "a CUDA array with {} dimensions cannot be imported (at most {MAX_DIMS})",
                t.ndim
            ),
        ));
    }
    let elem = (t.dtype.bits / 8) as usize;
    // SAFETY: the caller's contract.
    let l = unsafe { layout(t, elem) }?;
    let a = ForeignArray {
        ptr: (t.data as u64).wrapping_add(t.byte_offset),
        shape: l.shape.clone(),
        strides: l.strides.clone(),
        dtype: t.dtype,
    };
    if l.count > 0 && t.data.is_null() {
        return Err(Error::array(
            ArrayProblem::Layout,
            "the CUDA array's data pointer is null",
        ));
    }
    Ok((a, l.extents()))
}

/// Reads a host tensor where `host_to` says (an upload reads it once, into staging).
///
/// # Safety
/// `t` must describe live host memory (DLPack).
pub unsafe fn read_host_to(t: &DLTensor, host_to: HostTo<'_>) -> Result<Imported> {
    match host_to {
        // SAFETY: caller's contract.
        HostTo::Vec => unsafe { read_host(t) }.map(Imported::Host),
        HostTo::Buffer => {
            // SAFETY: caller's contract.
            let (buf, shape) = unsafe { read_host_buffer(t) }?;
            Ok(Imported::Buffer {
                buf: Arc::new(buf),
                shape,
                dtype: t.dtype,
            })
        }
        HostTo::Device(be) | HostTo::Param(be, _) => {
            // SAFETY: caller's contract.
            let l = unsafe { host_layout(t) }?;
            let scan = match host_to {
                HostTo::Param(_, len) if len != l.count => {
                    // SAFETY: caller's contract.
                    return unsafe { read_host(t) }.map(Imported::Host);
                }
                HostTo::Param(..) => true,
                _ => false,
            };
            let mut non_finite = None;
            let tensor = be.upload_with(l.count, |dst| {
                // SAFETY: caller's contract; dst has room for count values.
                unsafe { read_host_into(t, &l, dst) }?;
                if scan && !all_finite(dst) {
                    non_finite = dst.iter().position(|v| !v.is_finite());
                }
                Ok(())
            })?;
            Ok(Imported::Device {
                tensor: Arc::new(tensor),
                shape: l.extents(),
                dtype: t.dtype,
                non_finite,
            })
        }
    }
}
