//! heliograph: a physically based path tracer that reads Mitsuba 3 scene files.
//!
//! Data flow: a scene file or dict becomes a [`desc::SceneDesc`]
//! (a tree of [`desc::Props`] with file:line), the builder turns it into a
//! [`scene::Scene`] of plain-data plugin records indexed by `u32` handles, and a
//! backend renders it into a film.

// The CLI module (moved from the binary) names the crate `heliograph::`; this alias keeps
// that code unchanged.
extern crate self as heliograph;

pub mod accel;
pub mod backend;
pub mod bsdfs;
pub mod catalog;
pub mod cli;
pub mod desc;
pub mod diff;
pub mod emitters;
pub mod error;
pub mod films;
pub mod flat;
pub mod integrators;
pub mod interop;
pub mod io;
pub mod math;
pub mod parallel;
pub mod plugin;
pub mod render;
pub mod rfilters;
pub mod samplers;
pub mod scene;
pub mod sensors;
pub mod session;
pub mod shapes;
pub mod tensor;
pub mod textures;
pub mod xla;

pub use error::{ArrayProblem, CudaError, Error, Loc, Result};

/// The crate version, as reported by the CLI and the Python package.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
