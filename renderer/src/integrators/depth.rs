//! `depth`: the distance to the first surface along each camera ray (0 on a
//! miss), for debugging geometry and cameras, as Mitsuba's `depth`.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | (none) | — | — | the depth integrator has no parameters |
//!
//! ```xml
//! <integrator type="depth"/>
//! ```

use super::{AnyIntegrator, Built};
use crate::desc::ObjectDesc;
use crate::error::Result;
use crate::math::{Color, Ray};
use crate::scene::Scene;

/// Builds a `depth` integrator object.
pub fn build(_obj: &ObjectDesc) -> Result<Built> {
    Ok((AnyIntegrator::Depth(Depth), None))
}

/// The depth integrator.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[repr(C)]
pub struct Depth;

impl Depth {
    /// Hit distance in every channel; alpha 1 on hits.
    pub fn sample(&self, scene: &Scene, ray: &Ray) -> (Color, f32) {
        match scene.intersect(ray) {
            Some(h) => (Color::splat(h.t), 1.0),
            None => (Color::ZERO, 0.0),
        }
    }
}
