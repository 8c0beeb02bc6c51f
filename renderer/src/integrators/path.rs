//! `path`: unidirectional path tracing with next-event estimation, multiple
//! importance sampling (power heuristic) and Russian roulette, following
//! Mitsuba 3's `path` integrator so that `max_depth` means the same thing.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `max_depth` | integer | -1 | longest path (in segments) that still contributes, emitter hits included; -1 = unbounded; 1 = only directly visible emitters |
//! | `rr_depth` | integer | 5 | depth at which Russian roulette starts |
//! | `hide_emitters` | boolean | false | hide directly visible emitters |
//!
//! Mitsuba's differentiable path tracers `prb` and `prb_basic` load as `path`: its
//! backward pass is path replay backpropagation (`heliograph.torch`, `heliograph.jax`).
//!
//! ```xml
//! <integrator type="path"><integer name="max_depth" value="8"/></integrator>
//! ```

use super::observe::{PathObserver, Seen, Unobserved, Vertex};
use super::{
    environment_emission, environment_radiance, mis_weight, sample_emitter, shading_frame,
    spawn_ray, surface_emission,
};
use super::{AnyIntegrator, Built};
use crate::desc::props::Props;
use crate::desc::ObjectDesc;
use crate::error::{Error, Result};
use crate::math::{Color, Ray};
use crate::samplers::SampleRng;
use crate::scene::Scene;

/// Builds a `path` integrator object.
pub fn build(obj: &ObjectDesc) -> Result<Built> {
    Ok((AnyIntegrator::Path(Path::build(&obj.props)?), None))
}

/// The path tracer.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Path {
    /// Longest path depth; `u32::MAX` for unbounded.
    pub max_depth: u32,
    /// Depth at which Russian roulette starts.
    pub rr_depth: u32,
    /// Whether directly visible emitters are hidden.
    pub hide_emitters: bool,
}

impl Default for Path {
    fn default() -> Self {
        Path {
            max_depth: u32::MAX,
            rr_depth: 5,
            hide_emitters: false,
        }
    }
}

impl Path {
    /// Reads the plugin's parameters.
    pub fn build(p: &Props) -> Result<Self> {
        let md = p.int_in("max_depth", -1, -1, i32::MAX as i64)?;
        let rr = p.int_in("rr_depth", 5, 0, i32::MAX as i64)?;
        if md == 0 {
            // Mitsuba accepts 0 and renders black; say so rather than silently doing it.
            return Err(Error::param(
                &p.entry_loc("max_depth"),
                "max_depth",
                "must be -1 (unbounded) or >= 1; 0 would render nothing",
            ));
        }
        let max_depth = if md < 0 { u32::MAX } else { md as u32 };
        Ok(Path {
            max_depth,
            rr_depth: rr as u32,
            hide_emitters: p.bool("hide_emitters", false)?,
        })
    }

    /// Radiance and alpha along `ray`.
    #[inline]
    pub fn sample(&self, scene: &Scene, ray: &Ray, rng: &mut SampleRng) -> (Color, f32) {
        self.trace(scene, ray, rng, &mut Unobserved)
    }

    /// [`Self::sample`], telling `obs` each step.
    #[inline(always)]
    pub fn trace<O: PathObserver>(
        &self,
        scene: &Scene,
        ray: &Ray,
        rng: &mut SampleRng,
        obs: &mut O,
    ) -> (Color, f32) {
        let mut ray = *ray;
        let mut throughput = Color::ONE;
        let mut result = Color::ZERO;
        let mut eta = 1.0f32;
        let mut depth = 0u32;
        let mut valid = !self.hide_emitters && !scene.env_emitters.is_empty();
        // state of the previous vertex, for MIS on emitters hit by BSDF sampling
        let mut prev_p = ray.o;
        let mut prev_pdf = 1.0f32;
        let mut prev_delta = true;
        loop {
            let hit = scene.intersect(&ray);
            let visible_emission = !(self.hide_emitters && depth == 0);
            let emitted = match &hit {
                Some(h) => surface_emission(scene, h, ray.d, prev_p),
                // the density only weighs what a non-delta scattering found
                None if prev_delta => Some((
                    environment_radiance(scene, &scene.emitter_ctx(), ray.d),
                    0.0,
                )),
                None => Some(environment_emission(scene, ray.d)),
            };
            if let (true, Some((le, em_pdf))) = (visible_emission, emitted) {
                if le != Color::ZERO {
                    let w = if prev_delta {
                        1.0
                    } else {
                        mis_weight(prev_pdf, em_pdf)
                    };
                    result += throughput * le * w;
                    let seen = match &hit {
                        Some(h) => Seen::Surface { hit: h, d: ray.d },
                        None => Seen::Environment { d: ray.d },
                    };
                    obs.emission(seen, throughput, w, le);
                }
            }
            let Some(hit) = hit else { break };
            if depth == 0 {
                valid = true;
            }
            if depth.saturating_add(1) >= self.max_depth {
                break;
            }
            let frame = shading_frame(&hit);
            let wi = frame.to_local(-ray.d);
            let bsdf = &scene.bsdfs[scene.geom.shapes[hit.shape as usize].bsdf as usize];
            let bctx = scene.bsdf_ctx(&hit, &frame);
            let v = Vertex {
                hit: &hit,
                frame,
                wi,
                bsdf,
                bctx: &bctx,
            };

            // next-event estimation
            let u_em = rng.next_2d();
            if !bsdf.is_delta(&bctx) {
                // borrowed where the callee left it: moving it out copies the whole struct,
                // reading it back before the callee's stores have landed
                if let Some(es) = &sample_emitter(scene, &hit, u_em) {
                    let wo = frame.to_local(es.d);
                    let f = bsdf.eval(&bctx, wi, wo);
                    if f != Color::ZERO && !scene.occluded(&es.shadow) {
                        let w = if es.delta {
                            1.0
                        } else {
                            mis_weight(es.pdf, bsdf.pdf(&bctx, wi, wo))
                        };
                        result += throughput * f * es.weight * w;
                        obs.next_event(&v, throughput, w, f, wo, es, u_em);
                    }
                }
            }

            // BSDF sampling
            let (u1, u2) = (rng.next_1d(), rng.next_2d());
            let Some(bs) = bsdf.sample(&bctx, wi, u1, u2) else {
                break;
            };
            obs.scatter(&v, &bs, u1, u2, None);
            throughput *= bs.weight;
            eta *= bs.eta;
            let d = frame.to_world(bs.wo);
            ray = spawn_ray(&hit, d);
            prev_p = hit.p;
            prev_pdf = bs.pdf;
            prev_delta = bs.delta;
            depth += 1;

            // Russian roulette on the throughput, compensating for refraction's radiance scaling
            // (one range test: the form with `is_finite` compiled to a float classification)
            let tmax = throughput.max_element();
            if !(tmax > 0.0 && tmax < f32::INFINITY) {
                break;
            }
            if depth >= self.rr_depth {
                let q = (tmax * eta * eta).min(0.95);
                if rng.next_1d() >= q {
                    break;
                }
                throughput /= q;
            }
        }
        (result, if valid { 1.0 } else { 0.0 })
    }
}
