//! `depth`: the distance to the first surface along each camera ray (0 on a
//! miss), for debugging geometry and cameras. No parameters.
//!
//! ```xml
//! <integrator type="depth"/>
//! ```

use crate::math::{Color, Ray};
use crate::scene::Scene;

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
