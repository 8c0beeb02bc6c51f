//! Tensors on the host and the DLPack structs that share them: 64-byte aligned float
//! buffers ([`buffer`]), the DLPack C structs ([`dlpack`]), reading any producer's
//! host tensor into float32 ([`strided`]), the views that basic indexing names
//! ([`index`]) and host arithmetic with NumPy's results ([`ops`]). Exports, imports
//! and a tensor's storage on either backend are [`crate::interop`]'s; the Python
//! binding keeps only the capsule glue and the Python protocol methods.

pub mod buffer;
pub mod dlpack;
pub mod index;
pub mod ops;
pub mod strided;

pub use buffer::{copy_parallel, Buffer};
pub use strided::{
    check_dtype, host_layout, layout, read_host, read_host_buffer, read_host_into, HostArray,
    Layout,
};
