//! The adjoint of one camera sample: path replay backpropagation (Vicini et al. 2021).
//!
//! A `path` sample is traced twice with the same random numbers. The first trace gives
//! its radiance `L`; the second runs with an [`Adjoint`] observer, which starts with
//! `rest = L` and, at each step, takes off what the step added, so that at a scattering
//! vertex `rest` is exactly the radiance the rest of the path brought through it. When a
//! path is short (at most [`DEFER`] scatter terms), it is traced once instead: `rest`
//! starts at 0 (so at a vertex it is minus what came before), each scatter term is kept
//! as its derivative times `δ / f` ([`Deferred`]), and when the path ends with radiance
//! `L` each is completed with `L + rest`, the same number. A
//! `direct` sample is traced once: it tells each BSDF sample what came through it. With
//! `δ` the sample's share of the image's adjoint, each step adds to the gradient:
//!
//! - emission `β · Le · w`: `δ · β · w · ∂Le`;
//! - next-event estimation `β · f · (Le / p) · w`: `δ · β · w · (∂f · Le / p + f · ∂(Le / p))`;
//! - BSDF sampling, weight `f / p`: `δ · rest · ∂f / f` (for a Dirac lobe, whose `f` cannot
//!   be evaluated, `δ · rest · ∂weight / weight` at the same random numbers).
//!
//! Densities, MIS weights and Russian roulette are held fixed (detached), which keeps
//! the estimator unbiased: only what the integrand evaluates is differentiated. Memory is
//! the observer's few colours, whatever the path length. `∂` is taken with a [`Probe`].

use super::probe::{Probe, Probed};
use super::{DiffKind, DiffParam};
use crate::bsdfs::{AnyBsdf, BsdfCtx, BsdfSample};
use crate::emitters::AnyEmitter;
use crate::integrators::observe::{PathObserver, Seen, Vertex};
use crate::integrators::{environment_radiance, sample_emitter_in, EmitterSampleResult};
use crate::math::{Color, Vec2, Vec3};
use crate::plugin::gradient::TexelGradient;
use crate::scene::Scene;
use crate::shapes::NO_EMITTER;
use crate::textures::{AnyTexture, SurfacePoint};

/// The most scatter terms a path may defer to be traced once: `(max_depth - 1) ×`
/// parameters at most (longer paths are traced twice, whatever their length).
pub const DEFER: u64 = 16;

/// A scatter term waiting for its path's radiance (a path traced once).
#[derive(Clone, Copy, Debug)]
pub struct Deferred {
    /// The parameter (index into the parameters).
    param: usize,
    /// Where the BSDF read its textures.
    at: SurfacePoint,
    /// Minus the radiance the path had added before the vertex.
    rest: Color,
    /// Per channel of the parameter's value, the derivative of the BSDF's value times
    /// `δ / f` per colour channel.
    e: [Color; 3],
}

/// The adjoint state of one sample, and where its gradients go.
pub struct Adjoint<'a> {
    pub(crate) scene: &'a Scene,
    pub(crate) params: &'a [DiffParam],
    pub(crate) probe: &'a mut Probe,
    /// One gradient buffer per parameter.
    pub(crate) grads: &'a mut [Vec<f32>],
    /// The sample's adjoint radiance.
    pub(crate) delta: Color,
    /// The radiance the path has yet to add (traced twice), or minus what it has added
    /// (traced once).
    pub(crate) rest: Color,
    /// Traced once: the scatter terms waiting for the path's radiance.
    pub(crate) deferred: Option<&'a mut Vec<Deferred>>,
    /// Whether a parameter is an environment map's ([`has_envmap_params`]).
    pub(crate) envmap_params: bool,
}

/// Whether a parameter of `params` is an environment map's (texels or scale), whose
/// derivatives the adjoint adds without probes.
pub(crate) fn has_envmap_params(params: &[DiffParam]) -> bool {
    params.iter().any(|p| {
        matches!(
            p.kind,
            DiffKind::EnvmapData { .. } | DiffKind::EnvmapScale { .. }
        )
    })
}

/// Which kind of plugin a probed evaluation runs, and where it reads its textures.
#[derive(Clone, Copy)]
enum Reader {
    /// A BSDF (by handle) at a surface point: its `eval` (`true`; affine in the textures
    /// it declares linear), or another of its functions.
    Bsdf(SurfacePoint, u32, bool),
    /// An emitter, reading its radiance texture at a point (an area light's emitting
    /// point; any point for constant textures).
    Emitter(SurfacePoint),
}

/// `a / b` per channel, 0 where `b` is 0.
#[inline]
fn ratio(a: Color, b: Color) -> Color {
    let r = |x: f32, y: f32| if y != 0.0 { x / y } else { 0.0 };
    Color::new(r(a.x, b.x), r(a.y, b.y), r(a.z, b.z))
}

impl Adjoint<'_> {
    /// Adds `weight ⊙ ∂eval` (per channel, summed over RGB) to the gradient of each
    /// parameter that what `eval` evaluates may read: `eval` evaluates with a texture
    /// store (and BSDF records) in which parameters are swapped; `reader` says which
    /// kind of plugin evaluates and where it reads its textures.
    fn accumulate(
        &mut self,
        reader: Reader,
        weight: Color,
        defer: bool,
        mut eval: impl FnMut(&Probed) -> Color,
    ) {
        if weight == Color::ZERO {
            return;
        }
        let at = match reader {
            Reader::Bsdf(at, ..) | Reader::Emitter(at) => at,
        };
        for (i, p) in self.params.iter().enumerate() {
            let read = match reader {
                // a vertex whose BSDF does not read the parameter needs no derivative
                Reader::Bsdf(_, b, _) => p.read_by_bsdf(b),
                Reader::Emitter(_) => p.read_by_emitters,
            };
            if !read {
                continue;
            }
            let d = match (&p.kind, reader) {
                (DiffKind::BsdfFloat { probe }, _) => [
                    self.probe.record_derivative(probe, &mut eval),
                    Color::ZERO,
                    Color::ZERO,
                ],
                (_, Reader::Bsdf(_, b, true)) if p.read_linearly_by(b) => self
                    .probe
                    .linear_derivative(p.texture, p.channels(), &mut eval),
                _ => self
                    .probe
                    .derivative(p.texture, &at, p.channels(), &mut eval),
            };
            if defer {
                if let Some(q) = self.deferred.as_mut() {
                    q.push(Deferred {
                        param: i,
                        at,
                        rest: self.rest,
                        e: d.map(|dc| weight * dc),
                    });
                    continue;
                }
            }
            self.add(i, &at, d.map(|dc| weight.dot(dc)));
        }
    }

    /// Adds `s` (per channel of parameter `i`'s value, read at `at`) to its gradient.
    fn add(&mut self, i: usize, at: &SurfacePoint, s: [f32; 3]) {
        let (p, grad) = (&self.params[i], &mut self.grads[i]);
        // a numerical accident (an overflowing sample) is dropped, as the render drops it
        if s.iter().all(|&x| x == 0.0) || !s.iter().all(|x| x.is_finite()) {
            return;
        }
        match p.kind {
            DiffKind::Constant { channels } => {
                for c in 0..channels {
                    grad[c] += s[c];
                }
            }
            DiffKind::BsdfFloat { .. } => grad[0] += s[0],
            DiffKind::EnvmapData { .. } | DiffKind::EnvmapScale { .. } => {}
            DiffKind::Bitmap { channels, .. } => {
                let AnyTexture::Bitmap(b) = &self.probe.store().records[p.texture as usize] else {
                    return;
                };
                b.add_texel_gradient(at.uv, s, channels, grad);
            }
        }
    }

    /// Completes the deferred scatter terms of a path traced once, whose radiance is
    /// `l`: the radiance that came after a vertex is `l + rest` there.
    pub(crate) fn resolve(&mut self, l: Color) {
        let Some(q) = self.deferred.as_mut() else {
            return;
        };
        let terms: Vec<Deferred> = std::mem::take(*q);
        for t in &terms {
            let after = l + t.rest;
            self.add(t.param, &t.at, t.e.map(|e| after.dot(e)));
        }
        if let Some(q) = self.deferred.as_mut() {
            // keep the buffer's capacity for the next path
            **q = terms;
            q.clear();
        }
    }

    /// Adds `weight ⊙ ∂Le` for the radiance environment map `emitter` sends along world
    /// direction `d`, to its parameters' gradients (the radiance is linear in the texels
    /// and in the scale).
    fn envmap(&mut self, emitter: u32, d: Vec3, weight: Color) {
        if weight == Color::ZERO {
            return;
        }
        let AnyEmitter::EnvmapEmitter(e) = &self.scene.emitters[emitter as usize] else {
            return;
        };
        let texels = self.scene.textures.image(e.image);
        for (p, grad) in self.params.iter().zip(self.grads.iter_mut()) {
            match p.kind {
                DiffKind::EnvmapData { emitter: pe, .. } if pe == emitter => {
                    e.add_texel_gradient(d, [weight[0], weight[1], weight[2]], 3, grad);
                }
                DiffKind::EnvmapScale { emitter: pe } if pe == emitter => {
                    grad[0] += weight.dot(e.scale_derivative(texels, d));
                }
                _ => {}
            }
        }
    }

    /// The handle of `v`'s BSDF.
    fn bsdf_of(scene: &Scene, v: &Vertex) -> u32 {
        scene.geom.shapes[v.hit.shape as usize].bsdf
    }

    /// `v`'s BSDF and its context, reading records and textures from `pr`.
    fn probed_bsdf<'s>(scene: &Scene, v: &Vertex, pr: &'s Probed) -> (&'s AnyBsdf, BsdfCtx<'s>) {
        let i = Self::bsdf_of(scene, v) as usize;
        let ctx = BsdfCtx {
            bsdfs: pr.bsdfs,
            tex: pr.tex,
            at: v.bctx.at,
        };
        (&pr.bsdfs[i], ctx)
    }
}

impl PathObserver for Adjoint<'_> {
    fn emission(&mut self, seen: Seen, beta: Color, w: f32, le: Color) {
        self.rest -= beta * le * w;
        let scene = self.scene;
        let weight = self.delta * beta * w;
        match seen {
            Seen::Surface { hit, d } => {
                let e = scene.geom.shapes[hit.shape as usize].emitter;
                if e == NO_EMITTER {
                    return;
                }
                let em = &scene.emitters[e as usize];
                let at = SurfacePoint::at_uv(hit.uv);
                self.accumulate(Reader::Emitter(at), weight, false, |pr| {
                    em.eval_hit(&scene.emitter_ctx_with(pr.tex), hit, d)
                });
            }
            Seen::Environment { d } => {
                if self.envmap_params {
                    for &e in &scene.env_emitters {
                        self.envmap(e, d, weight);
                    }
                }
                let nowhere = SurfacePoint::at_uv(Vec2::ZERO);
                self.accumulate(Reader::Emitter(nowhere), weight, false, |pr| {
                    environment_radiance(scene, &scene.emitter_ctx_with(pr.tex), d)
                });
            }
        }
    }

    fn next_event(
        &mut self,
        v: &Vertex,
        beta: Color,
        w: f32,
        f: Color,
        wo: Vec3,
        es: &EmitterSampleResult,
        u: Vec2,
    ) {
        self.rest -= beta * f * es.weight * w;
        let scene = self.scene;
        let common = self.delta * beta * w;
        // the BSDF's value towards the light
        self.accumulate(
            Reader::Bsdf(v.bctx.at, Self::bsdf_of(scene, v), true),
            common * es.weight,
            false,
            |pr| {
                let (bsdf, ctx) = Self::probed_bsdf(scene, v, pr);
                bsdf.eval(&ctx, v.wi, wo)
            },
        );
        // the light's radiance over its density, sampled again with the same numbers
        let at = SurfacePoint::at_uv(es.uv);
        self.accumulate(Reader::Emitter(at), common * f, false, |pr| {
            let ctx = scene.emitter_ctx_with(pr.tex);
            sample_emitter_in(scene, &ctx, v.hit, u).map_or(Color::ZERO, |s| s.weight)
        });
        if self.envmap_params {
            self.envmap(es.emitter, es.d, common * f / es.pdf);
        }
    }

    fn scatter(&mut self, v: &Vertex, bs: &BsdfSample, u1: f32, u2: Vec2, carried: Option<Color>) {
        // what came through the BSDF: given (`direct`), the rest of the path's radiance
        // (traced twice), or not known yet (traced once: the factor 1 here, the term
        // completed when the path ends)
        let defer = carried.is_none() && self.deferred.is_some();
        let through = match carried {
            Some(c) => c,
            None if defer => Color::ONE,
            None => self.rest,
        };
        if through == Color::ZERO {
            return;
        }
        let scene = self.scene;
        if bs.delta {
            let weight = self.delta * ratio(through, bs.weight);
            self.accumulate(
                Reader::Bsdf(v.bctx.at, Self::bsdf_of(scene, v), false),
                weight,
                defer,
                |pr| {
                    let (bsdf, ctx) = Self::probed_bsdf(scene, v, pr);
                    bsdf.sample(&ctx, v.wi, u1, u2)
                        .map_or(Color::ZERO, |s| s.weight)
                },
            );
        } else {
            // the BSDF's value towards the sampled direction: the sample's weight is
            // eval / pdf, so no evaluation (kernels/backward.cuh likewise)
            let f = bs.weight * bs.pdf;
            let weight = self.delta * ratio(through, f);
            self.accumulate(
                Reader::Bsdf(v.bctx.at, Self::bsdf_of(scene, v), true),
                weight,
                defer,
                |pr| {
                    let (bsdf, ctx) = Self::probed_bsdf(scene, v, pr);
                    bsdf.eval(&ctx, v.wi, bs.wo)
                },
            );
        }
    }
}
