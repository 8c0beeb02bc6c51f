//! The DLPack C structs (`dlpack.h`, version 1.1), written out by hand: they are small,
//! and the DLPack crates pin other pyo3 versions or pull in cudarc's default features.
//! The binding builds and consumes capsules around them; this crate never touches
//! Python.

use std::ffi::c_void;

/// `kDLCPU`.
pub const DEVICE_CPU: i32 = 1;
/// `kDLCUDA`.
pub const DEVICE_CUDA: i32 = 2;
/// `kDLCUDAHost` (pinned host memory, readable by the host).
pub const DEVICE_CUDA_HOST: i32 = 3;
/// `kDLInt`.
pub const CODE_INT: u8 = 0;
/// `kDLUInt`.
pub const CODE_UINT: u8 = 1;
/// `kDLFloat`.
pub const CODE_FLOAT: u8 = 2;
/// `kDLBool`.
pub const CODE_BOOL: u8 = 6;
/// `DLPACK_FLAG_BITMASK_READ_ONLY`.
pub const FLAG_READ_ONLY: u64 = 1;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`.
pub const FLAG_IS_COPIED: u64 = 2;

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

impl DLDataType {
    /// float32.
    pub const F32: DLDataType = DLDataType {
        code: CODE_FLOAT,
        bits: 32,
        lanes: 1,
    };

    /// The element type as NumPy names it, for messages.
    pub fn name(&self) -> String {
        let kind = match self.code {
            CODE_INT => "int",
            CODE_UINT => "uint",
            CODE_FLOAT => "float",
            CODE_BOOL => return "bool".into(),
            c => return format!("dlpack type code {c}"),
        };
        if self.lanes != 1 {
            return format!("{kind}{}x{}", self.bits, self.lanes);
        }
        format!("{kind}{}", self.bits)
    }
}

/// `DLTensor`.
#[repr(C)]
#[derive(Debug)]
pub struct DLTensor {
    /// The data pointer (plus `byte_offset`: element (0, ..., 0)).
    pub data: *mut c_void,
    /// Where the data lives.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or null for compact C order.
    pub strides: *mut i64,
    /// Bytes from `data` to element (0, ..., 0).
    pub byte_offset: u64,
}

/// `DLManagedTensor` (legacy capsules).
#[repr(C)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Frees the producer's share.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
pub struct DLPackVersion {
    /// Major version (1).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// `DLManagedTensorVersioned` (versioned capsules).
#[repr(C)]
pub struct DLManagedTensorVersioned {
    /// The producer's DLPack version.
    pub version: DLPackVersion,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Frees the producer's share.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `FLAG_*` bits.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

// dlpack.h on 64-bit targets
const _: () = assert!(std::mem::size_of::<DLTensor>() == 48);
const _: () = assert!(std::mem::size_of::<DLManagedTensor>() == 64);
const _: () = assert!(std::mem::size_of::<DLManagedTensorVersioned>() == 80);
const _: () = assert!(std::mem::offset_of!(DLManagedTensorVersioned, dl_tensor) == 32);
