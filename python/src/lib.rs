//! Python bindings for heliograph. The pyo3 module is built in the Python-package
//! issue; until then this crate only checks that the core links as a dependency.

pub use heliograph::VERSION;
