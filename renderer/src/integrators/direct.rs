//! `direct`: direct illumination only, combining emitter sampling and BSDF
//! sampling with multiple importance sampling (power heuristic), as Mitsuba's
//! `direct` integrator.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `shading_samples` | integer | 1 | sets both sample counts below |
//! | `emitter_samples` | integer | `shading_samples` | emitter samples per shading point |
//! | `bsdf_samples` | integer | `shading_samples` | BSDF samples per shading point |
//! | `hide_emitters` | boolean | false | hide directly visible emitters |
//!
//! ```xml
//! <integrator type="direct"><integer name="emitter_samples" value="2"/></integrator>
//! ```

use super::observe::{PathObserver, Seen, Unobserved, Vertex};
use super::{
    environment_emission, environment_radiance, mis_weight, sample_emitter, shading_frame,
    spawn_ray, surface_emission,
};
use super::{AnyIntegrator, Built};
use crate::desc::props::Props;
use crate::desc::ObjectDesc;
use crate::error::Result;
use crate::math::{Color, Ray};
use crate::samplers::SampleRng;
use crate::scene::Scene;

/// Builds a `direct` integrator object.
pub fn build(obj: &ObjectDesc) -> Result<Built> {
    Ok((AnyIntegrator::Direct(Direct::build(&obj.props)?), None))
}

/// The direct-illumination integrator.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Direct {
    /// Emitter samples per shading point.
    pub emitter_samples: u32,
    /// BSDF samples per shading point.
    pub bsdf_samples: u32,
    /// Whether directly visible emitters are hidden.
    pub hide_emitters: bool,
}

impl Direct {
    /// Reads the plugin's parameters.
    pub fn build(p: &Props) -> Result<Self> {
        let shading = p.int_in("shading_samples", 1, 0, 1 << 20)?;
        let emitter_samples = p.int_in("emitter_samples", shading, 0, 1 << 20)? as u32;
        let bsdf_samples = p.int_in("bsdf_samples", shading, 0, 1 << 20)? as u32;
        Ok(Direct {
            emitter_samples,
            bsdf_samples,
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
        let has_env = !scene.env_emitters.is_empty();
        let Some(hit) = scene.intersect(ray) else {
            if self.hide_emitters {
                return (Color::ZERO, 0.0);
            }
            let le = environment_radiance(scene, &scene.emitter_ctx(), ray.d);
            if le != Color::ZERO {
                obs.emission(Seen::Environment { d: ray.d }, Color::ONE, 1.0, le);
            }
            return (le, if has_env { 1.0 } else { 0.0 });
        };
        let mut result = Color::ZERO;
        if !self.hide_emitters {
            if let Some((le, _)) = surface_emission(scene, &hit, ray.d, ray.o) {
                result += le;
                if le != Color::ZERO {
                    let seen = Seen::Surface {
                        hit: &hit,
                        d: ray.d,
                    };
                    obs.emission(seen, Color::ONE, 1.0, le);
                }
            }
        }
        let (ne, nb) = (self.emitter_samples as f32, self.bsdf_samples as f32);
        let total = ne + nb;
        if total == 0.0 {
            return (result, 1.0);
        }
        // Each strategy's density is scaled by its share of the samples (MIS with sample counts).
        let (frac_em, frac_bsdf) = (ne / total, nb / total);
        let frame = shading_frame(&hit);
        let wi = frame.to_local(-ray.d);
        let bsdf = &scene.bsdfs[scene.geom.shapes[hit.shape as usize].bsdf as usize];
        let bctx = scene.bsdf_ctx(&hit, &frame);
        let smooth = !bsdf.is_delta(&bctx);
        let v = Vertex {
            hit: &hit,
            frame,
            wi,
            bsdf,
            bctx: &bctx,
        };

        for _ in 0..self.emitter_samples {
            let u = rng.next_2d();
            if !smooth {
                continue;
            }
            // borrowed where the callee left it, as in the path tracer
            let Some(es) = &sample_emitter(scene, &hit, u) else {
                continue;
            };
            let wo = frame.to_local(es.d);
            let f = bsdf.eval(&bctx, wi, wo);
            if f == Color::ZERO || scene.occluded(&es.shadow) {
                continue;
            }
            let w = if es.delta {
                1.0
            } else {
                mis_weight(es.pdf * frac_em, bsdf.pdf(&bctx, wi, wo) * frac_bsdf)
            };
            result += f * es.weight * (w / ne);
            obs.next_event(&v, Color::splat(1.0 / ne), w, f, wo, es, u);
        }

        for _ in 0..self.bsdf_samples {
            let (u1, u2) = (rng.next_1d(), rng.next_2d());
            let Some(bs) = bsdf.sample(&bctx, wi, u1, u2) else {
                continue;
            };
            let d = frame.to_world(bs.wo);
            let next = spawn_ray(&hit, d);
            let found = scene.intersect(&next);
            let (le, em_pdf) = match &found {
                Some(h2) => match surface_emission(scene, h2, d, hit.p) {
                    Some(x) => x,
                    None => continue,
                },
                None => environment_emission(scene, d),
            };
            if le == Color::ZERO {
                continue;
            }
            let w = if bs.delta {
                1.0
            } else {
                mis_weight(bs.pdf * frac_bsdf, em_pdf * frac_em)
            };
            result += bs.weight * le * (w / nb);
            let beta = bs.weight / nb;
            let seen = match &found {
                Some(h2) => Seen::Surface { hit: h2, d },
                None => Seen::Environment { d },
            };
            obs.emission(seen, beta, w, le);
            obs.scatter(&v, &bs, u1, u2, Some(beta * le * w));
        }
        (result, 1.0)
    }
}
