//! `ptracer`: particle tracing (light tracing), as Mitsuba 3's `ptracer`. Paths start on
//! the emitters; every surface vertex is connected to the camera and its contribution
//! is splatted onto the pixel it projects to. Directly visible surface and environment
//! emitters are connected to the camera by a sample of their own. CPU and CUDA backends
//! (the CUDA kernel is `renderer/kernels/integrators/ptracer.cuh`, see below).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `max_depth` | integer | -1 | longest path (in segments, the one to the camera included); -1 = unbounded; 1 = only directly visible emitters |
//! | `rr_depth` | integer | 5 | depth after which Russian roulette starts (≥ 1) |
//! | `hide_emitters` | boolean | false | hide directly visible emitters |
//! | `samples_per_pass` | integer | — | accepted for compatibility (≥ 1): heliograph renders in one pass, and the image does not depend on it |
//!
//! The image is the same in expectation as the one of `path` with the same `max_depth`,
//! but noisier where light reaches the camera through long paths, and cleaner on caustics
//! seen directly. A light path cannot be connected to the pinhole through a smooth
//! (delta) surface, so a mirror or a smooth glass surface seen directly renders black,
//! as in Mitsuba (`path` shows what they reflect).
//!
//! The render draws `spp` × (crop window pixels) light paths (Mitsuba: `spp` × full film
//! pixels; the expectation is the same); each light path splats its
//! contributions with the film's reconstruction filter normalised to sum to 1 (Mitsuba's
//! `normalize` image block), scaled by 1 / `spp`. With the `box` filter a
//! pixel is an unbiased estimate of the mean radiance over it. The alpha channel of an
//! `rgba` film is 1 (light tracing estimates no coverage).
//!
//! Supported: `perspective` sensors (others are refused with the reason); every emitter
//! (light paths of `directional`, `constant` and `envmap` start on the disk of the
//! scene's bounding sphere that faces their direction); every BSDF, refraction carrying
//! importance (without the `1/η²` scaling of radiance), as Mitsuba's importance mode.
//! The image is the same for a given seed whatever the number of threads: light paths
//! are split into fixed chunks, each chunk accumulates into one of a fixed number of
//! film buffers in a fixed order, and the buffers are summed in order.
//!
//! On the CUDA backend one thread traces one light path, drawing the same random stream
//! as the CPU's path of that index, with the same weights, and splats with float
//! atomics into one accumulator: the image agrees with the CPU's in expectation (and a
//! host build of the kernel, run path after path, agrees value for value to rounding),
//! but the atomics add in the GPU's schedule order, so two GPU renders with the same
//! seed differ in the last bits. The same scenes and sensors are supported and refused
//! as on the CPU.
//!
//! ```xml
//! <integrator type="ptracer"><integer name="max_depth" value="8"/></integrator>
//! ```

// `!(x > 0.0)` is deliberate throughout: it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use rayon::prelude::*;

use super::{shading_frame, spawn_ray};
use crate::bsdfs::AnyBsdf;
use crate::desc::props::Props;
use crate::desc::ObjectDesc;
use crate::error::{Error, Loc, Result};
use crate::films::block::{Block, FilterTable};
use crate::io::Image;
use crate::math::{offset_origin, Color, Ray, Vec2, Vec3};
use crate::parallel::on_process_pool;
use crate::render::{Progress, RenderOptions};
use crate::samplers::SampleRng;
use crate::scene::Scene;
use crate::sensors::Sensor;

/// Builds a `ptracer` integrator object.
pub fn build(obj: &ObjectDesc) -> Result<super::Built> {
    Ok((
        super::AnyIntegrator::Ptracer(Ptracer::build(&obj.props)?),
        None,
    ))
}

/// The particle tracer.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Ptracer {
    /// Longest path depth; `u32::MAX` for unbounded.
    pub max_depth: u32,
    /// Depth after which Russian roulette starts.
    pub rr_depth: u32,
    /// Whether directly visible emitters are hidden.
    pub hide_emitters: bool,
}

impl Default for Ptracer {
    fn default() -> Self {
        Ptracer {
            max_depth: u32::MAX,
            rr_depth: 5,
            hide_emitters: false,
        }
    }
}

/// Light paths per chunk: the unit of work and of progress.
const CHUNK: u64 = 1 << 12;
/// Most film buffers a render holds (each the size of the crop window).
const MAX_BUFFERS: u64 = 64;
/// Memory budget of the film buffers.
const BUFFER_BYTES: u64 = 1 << 30;

impl Ptracer {
    /// Reads the plugin's parameters.
    pub fn build(p: &Props) -> Result<Self> {
        let md = p.int_in("max_depth", -1, -1, i32::MAX as i64)?;
        // Mitsuba rejects rr_depth <= 0 for the particle tracer
        let rr = p.int_in("rr_depth", 5, 1, i32::MAX as i64)?;
        if md == 0 {
            return Err(Error::param(
                &p.entry_loc("max_depth"),
                "max_depth",
                "must be -1 (unbounded) or >= 1; 0 would render nothing",
            ));
        }
        // Mitsuba's pass splitting changes nothing in the image: accept and check it
        if p.has("samples_per_pass") {
            p.int_in("samples_per_pass", 1, 1, u32::MAX as i64)?;
        }
        Ok(Ptracer {
            max_depth: if md < 0 { u32::MAX } else { md as u32 },
            rr_depth: rr as u32,
            hide_emitters: p.bool("hide_emitters", false)?,
        })
    }

    /// Refuses what the particle tracer does not support: a `sensor` that cannot be
    /// connected to, or nesting in an `aov` integrator (`in_aov`), naming it (`loc`:
    /// where the integrator was declared, when known).
    pub fn check_setup(sensor: &Sensor, in_aov: bool, loc: Option<&Loc>) -> Result<()> {
        let fail = |msg: String| {
            Err(match loc {
                Some(l) => Error::parse(l, msg),
                None => Error::Render(msg),
            })
        };
        if !sensor.camera.can_connect() {
            return fail(
                "the \"ptracer\" integrator needs a \"perspective\" sensor (light paths are \
                 connected to a pinhole); use the \"path\" integrator with this sensor"
                    .into(),
            );
        }
        if in_aov {
            return fail("the \"ptracer\" integrator cannot be nested in \"aov\"".into());
        }
        Ok(())
    }

    /// Traces one light path (and one connection of a directly visible emitter) and
    /// splats its contributions, times `scale`, into `block`.
    fn sample(
        &self,
        scene: &Scene,
        sensor: &Sensor,
        rng: &mut SampleRng,
        block: &mut Block,
        table: &FilterTable,
        scale: f32,
    ) {
        let n = scene.emitters.len();
        if n == 0 {
            return;
        }
        let ctx = scene.emitter_ctx();
        let cam = &sensor.camera;
        let film = &sensor.film;
        let pick = |u: f32| ((u * n as f32) as usize).min(n - 1);

        // directly visible surface and environment emitters (delta emitters cannot be seen)
        if !self.hide_emitters {
            let em = &scene.emitters[pick(rng.next_1d())];
            let u = rng.next_2d();
            if em.is_environment() {
                // a direction from the camera, seen if nothing is in the way
                let o = cam.to_world.point(Vec3::ZERO);
                if let Some(s) = em.sample_direction(&ctx, o, u) {
                    if let Some((pos, importance)) = cam.connect_direction(s.d, film) {
                        if s.pdf > 0.0 && !scene.occluded(&Ray::new(o, s.d)) {
                            let l = s.radiance * (n as f32 * importance * scale / s.pdf);
                            splat(block, table, pos, l, 0.0);
                        }
                    }
                }
            } else if let Some((ps, w)) = em.sample_position(&ctx, u) {
                if let Some(c) = cam.sample_direction(ps.p, film) {
                    let to = c.p - ps.p;
                    let d = to.normalize_or_zero();
                    let cos = ps.n.dot(d);
                    if cos > 0.0 && !scene.occluded(&shadow_ray(ps.p, ps.n, c.p)) {
                        let l = w * (n as f32 * c.weight * cos * scale);
                        splat(block, table, c.pos, l, 0.0);
                    }
                }
            }
        }

        let em = &scene.emitters[pick(rng.next_1d())];
        let (u_pos, u_dir) = (rng.next_2d(), rng.next_2d());
        let Some(er) = em.sample_ray(&ctx, u_pos, u_dir) else {
            return;
        };
        let mut throughput = er.weight * n as f32;
        if !(throughput.max_element() > 0.0) || !throughput.is_finite() {
            return;
        }
        let mut ray = if er.n == Vec3::ZERO {
            Ray::new(er.p, er.d)
        } else {
            Ray::new(offset_origin(er.p, er.n, er.d), er.d)
        };
        let mut depth = 1u32;
        let mut eta = 1.0f32;
        while depth < self.max_depth {
            let Some(hit) = scene.intersect(&ray) else {
                break;
            };
            let frame = shading_frame(&hit);
            let wi_world = -ray.d;
            let wi = frame.to_local(wi_world);
            let bsdf = &scene.bsdfs[scene.geom.shapes[hit.shape as usize].bsdf as usize];
            let bctx = scene.bsdf_ctx(&hit, &frame);

            // connect to the camera
            if !bsdf.is_delta(&bctx) {
                if let Some(c) = cam.sample_direction(hit.p, film) {
                    let d = (c.p - hit.p).normalize_or_zero();
                    let wo = frame.to_local(d);
                    let corr = adjoint_correction(hit.ng, wi_world, wi, d, wo);
                    if corr > 0.0 {
                        let mut f = bsdf.eval(&bctx, wi, wo);
                        if wi.z * wo.z < 0.0 {
                            f *= transmitted_importance_scale(bsdf, wi);
                        }
                        if f != Color::ZERO && !scene.occluded(&shadow_ray(hit.p, hit.ng, c.p)) {
                            let l = throughput * f * (corr * c.weight * scale);
                            splat(block, table, c.pos, l, 1.0);
                        }
                    }
                }
            }

            // continue the light path by BSDF sampling
            let (u1, u2) = (rng.next_1d(), rng.next_2d());
            let Some(bs) = bsdf.sample(&bctx, wi, u1, u2) else {
                break;
            };
            let wo_world = frame.to_world(bs.wo);
            let corr = adjoint_correction(hit.ng, wi_world, wi, wo_world, bs.wo);
            if !(corr > 0.0) {
                break;
            }
            let mut weight = bs.weight * corr;
            if bs.wo.z * wi.z < 0.0 && bs.eta != 1.0 {
                // BSDFs scale refracted radiance by 1/η²; importance is not scaled
                weight *= bs.eta * bs.eta;
            }
            throughput *= weight;
            eta *= bs.eta;
            if !(throughput.max_element() > 0.0) || !throughput.is_finite() {
                break;
            }
            depth += 1;
            if depth >= self.max_depth {
                break;
            }
            if depth > self.rr_depth {
                let q = (throughput.max_element() * eta * eta).min(0.95);
                if !(rng.next_1d() < q) {
                    break;
                }
                throughput /= q;
            }
            ray = spawn_ray(&hit, wo_world);
        }
    }
}

/// The factor that turns a BSDF's transmission value, which includes the radiance
/// scaling `1/η²` of refraction, into its value for importance (no scaling): `η²`, with
/// `η` the index of the side of `wo` over the side of `wi`. Only `roughdielectric`
/// refracts in `eval` (smooth dielectrics are deltas, `thindielectric` does not bend).
#[inline]
fn transmitted_importance_scale(bsdf: &AnyBsdf, wi: Vec3) -> f32 {
    match bsdf {
        AnyBsdf::RoughDielectric(r) => {
            let eta = if wi.z > 0.0 { r.eta } else { 1.0 / r.eta };
            eta * eta
        }
        _ => 1.0,
    }
}

/// Veach's adjoint correction for shading normals, `|cos_s(wi) · cos_g(wo)| /
/// |cos_s(wo) · cos_g(wi)|`, or 0 when a direction lies on different sides of the
/// geometric and the shading surface (a light leak).
#[inline]
fn adjoint_correction(ng: Vec3, wi_world: Vec3, wi: Vec3, wo_world: Vec3, wo: Vec3) -> f32 {
    let (gi, go) = (ng.dot(wi_world), ng.dot(wo_world));
    if !(gi * wi.z > 0.0 && go * wo.z > 0.0) {
        return 0.0;
    }
    let c = ((wi.z * go) / (wo.z * gi)).abs();
    if c.is_finite() {
        c
    } else {
        0.0
    }
}

/// The shadow ray from surface point `p` (normal `n`) to `target`.
#[inline]
fn shadow_ray(p: Vec3, n: Vec3, target: Vec3) -> Ray {
    let o = offset_origin(p, n, target - p);
    let to = target - o;
    let len = to.length();
    Ray {
        o,
        d: to / len,
        tmax: len * (1.0 - 1e-3),
    }
}

#[inline]
fn splat(block: &mut Block, table: &FilterTable, pos: Vec2, l: Color, alpha: f32) {
    // a NaN/inf contribution (numerical accident) is dropped rather than poisoning pixels
    if l.is_finite() {
        block.splat_normalized(table, pos, l, alpha);
    }
}

/// Renders `scene` through `sensor` with the `ptracer` integrator `pt` on the CPU: `spp` × (crop pixels)
/// light paths in chunks of `CHUNK`; chunk `k` goes to film buffer `k mod B` (`B`
/// depends on the film size only), whose chunks run in order on one thread, and the
/// buffers are summed in order: the image depends on the seed, not on the thread count.
pub fn render(
    scene: &Scene,
    sensor: &Sensor,
    pt: &Ptracer,
    opts: &RenderOptions,
    progress: &Progress,
) -> Result<Image> {
    Ptracer::check_setup(sensor, false, None)?;
    let spp = opts.resolve_spp(&sensor.sampler)?;
    let film = &sensor.film;
    crate::films::check_film_size(film, 0)?;
    let [cw, ch] = film.crop_size;
    let (cw, ch) = (cw as i32, ch as i32);
    let pixels = cw as u64 * ch as u64;
    let total = pixels * spp as u64;
    progress.start(total);
    let table = FilterTable::new(&film.rfilter);
    let mut acc = Block::try_new(0, 0, cw, ch, 0)?;
    let chunks = total.div_ceil(CHUNK);
    let buffer_bytes = pixels * std::mem::size_of::<[f32; 5]>() as u64;
    let buffers = (BUFFER_BYTES / buffer_bytes.max(1))
        .clamp(1, MAX_BUFFERS)
        .min(chunks);
    // the camera's importance integrates to 1 over the crop window: a pixel's share of
    // the `spp · pixels` paths, times `pixels`
    let scale = 1.0 / spp as f64;
    let seed = opts.seed;
    // light path i is sample i / pixels of stream i % pixels
    let sampler = sensor.sampler.flat(spp);
    let run_buffer = |b: u64| -> Result<Block> {
        let mut block = Block::try_new(0, 0, cw, ch, 0)?;
        let mut k = b;
        while k < chunks {
            if progress.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let end = ((k + 1) * CHUNK).min(total);
            for i in k * CHUNK..end {
                let mut rng = SampleRng::new(&sampler, seed, i % pixels, i / pixels);
                pt.sample(scene, sensor, &mut rng, &mut block, &table, scale as f32);
            }
            progress.add(end - k * CHUNK);
            k += buffers;
        }
        Ok(block)
    };
    on_process_pool(|| -> Result<()> {
        let blocks: Vec<Result<Block>> = (0..buffers).into_par_iter().map(run_buffer).collect();
        for b in blocks {
            acc.merge(&b?);
        }
        Ok(())
    })??;
    acc.develop_sums(film.alpha)
}

#[cfg(test)]
mod tests;
