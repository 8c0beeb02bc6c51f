//! Tensors on the host and the DLPack structs that share them: 64-byte aligned float
//! buffers ([`buffer`]), the DLPack C structs ([`dlpack`]), the rules and records of
//! an export ([`export`]), what an import accepts ([`import`]), reading any
//! producer's host tensor into float32 ([`strided`]), the views that basic indexing
//! names ([`index`]), host arithmetic with NumPy's results ([`ops`]) and the state of
//! a tensor's values: rendering, on the host or on a device ([`storage`]). The Python
//! binding keeps only the capsule glue and the Python protocol methods.

pub mod buffer;
pub mod dlpack;
pub mod export;
pub mod import;
pub mod index;
pub mod ops;
pub mod storage;
pub mod strided;

pub use buffer::{copy_parallel, Buffer};
pub use storage::Storage;
pub use strided::{
    check_dtype, host_layout, layout, read_host, read_host_buffer, read_host_into, HostArray,
    Layout,
};
