//! Tensors as the Python package holds and shares them, on either backend: the state
//! of a tensor's values, rendering, on the host or on a device ([`storage`]), the
//! rules and records of a DLPack export ([`export`]), what an import accepts
//! ([`import`]), the consumed tensors it keeps until their copy has run
//! ([`consumed`]), indexing on the device ([`index`]), elementwise arithmetic of
//! tensors and numbers on either backend ([`ops`]), scene parameters read as tensors
//! and written from imports ([`param`]), a backward pass's image gradient and
//! parameter gradients ([`backward`]), and arrays checked as images to write
//! ([`image`]). The host buffers, DLPack
//! structs, strided reads and index rules they build on are [`crate::tensor`]'s.

pub mod backward;
pub mod consumed;
pub mod export;
pub mod image;
pub mod import;
pub mod index;
pub mod ops;
pub mod param;
pub mod storage;

pub use storage::Storage;
