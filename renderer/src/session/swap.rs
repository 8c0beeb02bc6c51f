//! [`Swap`]: a sensor or integrator that a render uses in place of the scene's own.

use std::sync::Arc;

use crate::integrators::{AnyIntegrator, Aov};
use crate::scene::RenderSetup;
use crate::sensors::Sensor;

/// A sensor or integrator (with the outputs of an `aov` one) rendered in place of the
/// scene's own.
#[derive(Default)]
pub struct Swap {
    /// The sensor, if swapped.
    pub sensor: Option<Sensor>,
    /// The integrator and its `aov` outputs, if swapped.
    pub integrator: Option<(AnyIntegrator, Option<Arc<Aov>>)>,
}

impl Swap {
    /// Whether anything is swapped.
    pub fn is_some(&self) -> bool {
        self.sensor.is_some() || self.integrator.is_some()
    }

    /// `scene` with the swapped sensor and integrator (`scene` itself when none is).
    pub fn apply(&self, scene: Arc<RenderSetup>) -> Arc<RenderSetup> {
        if !self.is_some() {
            return scene;
        }
        let mut s = (*scene).clone();
        if let Some(x) = self.sensor {
            s.sensor = x;
        }
        if let Some((integrator, aov)) = &self.integrator {
            s.integrator = *integrator;
            s.aov = aov.clone();
        }
        Arc::new(s)
    }
}
