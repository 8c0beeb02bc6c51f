//! Integrators: `direct`, `path`, `depth`.

use crate::error::{Error, Result};
use crate::scene::desc::ObjectDesc;

/// Every integrator.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, u32)]
pub enum AnyIntegrator {
    /// `path`.
    Path {
        /// Longest path depth (-1 = unbounded).
        max_depth: i32,
        /// Depth at which Russian roulette starts.
        rr_depth: u32,
        /// Whether directly visible emitters are hidden.
        hide_emitters: bool,
    },
}

impl Default for AnyIntegrator {
    fn default() -> Self {
        AnyIntegrator::Path {
            max_depth: -1,
            rr_depth: 5,
            hide_emitters: false,
        }
    }
}

/// Names of the integrator plugins.
pub const KNOWN: &[&str] = &["direct", "path", "depth"];

/// Builds an `<integrator>`.
pub fn build(obj: &ObjectDesc) -> Result<AnyIntegrator> {
    Err(Error::UnknownPlugin {
        loc: obj.loc.clone(),
        category: "integrator",
        name: obj.kind.clone(),
        known: KNOWN.join(", "),
    })
}
