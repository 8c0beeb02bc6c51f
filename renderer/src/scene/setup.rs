//! What one render uses: the built [`Scene`] with the sensor that films it and the
//! integrator that renders it, as pbrt-v4's integrator holds its camera, sampler and
//! aggregate beside the scene. The integrators see only the scene; the backends render
//! a setup.

use std::sync::Arc;

use super::Scene;
use crate::integrators::{AnyIntegrator, Aov};
use crate::sensors::Sensor;

/// A scene with the sensor and integrator that render it (what `build_scene` makes).
#[derive(Clone, Debug)]
pub struct RenderSetup {
    /// The shapes, materials, textures and emitters.
    pub scene: Scene,
    /// The camera with its film, filter and sampler.
    pub sensor: Sensor,
    /// The integrator (for `aov`, the nested one, which renders the base channels).
    pub integrator: AnyIntegrator,
    /// The outputs of an `aov` integrator: extra film channels.
    pub aov: Option<Arc<Aov>>,
}

impl RenderSetup {
    /// Names of the film's channels after a render (Mitsuba's order): `R, G, B` (and `A`
    /// with an `rgba` film), then those of an `aov` integrator.
    pub fn film_channel_names(&self) -> Vec<String> {
        let alpha = self.sensor.film.alpha;
        match &self.aov {
            Some(a) => a.film_names(alpha),
            None => ["R", "G", "B", "A"][..self.sensor.film.channels()]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }

    /// The film channels that a render returns, as indices into
    /// [`Self::film_channel_names`]: all of them, except with an `aov` integrator (see
    /// [`Aov::output_channels`]).
    pub fn output_channels(&self) -> Vec<usize> {
        match &self.aov {
            Some(a) => a.output_channels(self.sensor.film.alpha),
            None => (0..self.sensor.film.channels()).collect(),
        }
    }
}
