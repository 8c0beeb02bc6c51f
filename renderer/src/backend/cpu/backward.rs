//! The backward pass on the CPU: every sample of the image traced again, with its
//! adjoint ([`crate::diff::adjoint`]), over the same tiles and random streams as a render.

use rayon::prelude::*;

use super::{filter_border, tile_samples, tiles, Streams, TILE};
use crate::diff::adjoint::{has_envmap_params, Adjoint, DEFER};
use crate::diff::probe::Probe;
use crate::diff::DiffParam;
use crate::error::{Error, Result};
use crate::films::block::{footprint, Block, FilterTable};
use crate::integrators::observe::{PathObserver, Unobserved};
use crate::integrators::{AnyIntegrator, Direct, Path};
use crate::math::{Color, Ray};
use crate::parallel::on_process_pool;
use crate::render::{Progress, RenderOptions};
use crate::samplers::SampleRng;
use crate::scene::RenderSetup;

/// Gradient buffers the groups of tiles may hold together.
const GROUP_BYTES: usize = 256 << 20;
/// Most groups of tiles (the parallelism of the backward pass).
const MAX_GROUPS: usize = 32;

/// The integrators the backward pass replays.
#[derive(Clone, Copy)]
enum Replayed<'a> {
    Path(&'a Path),
    Direct(&'a Direct),
}

impl Replayed<'_> {
    fn of(setup: &RenderSetup) -> Result<Replayed<'_>> {
        if setup.aov.is_some() {
            return Err(Error::Render(
                "differentiable rendering renders the `path` and `direct` integrators; this \
                 scene's is `aov`"
                    .into(),
            ));
        }
        match &setup.integrator {
            AnyIntegrator::Path(p) => Ok(Replayed::Path(p)),
            AnyIntegrator::Direct(d) => Ok(Replayed::Direct(d)),
            other => Err(Error::Render(format!(
                "differentiable rendering renders the `path` (`prb`) and `direct` \
                 integrators; this scene's is `{}`",
                match other {
                    AnyIntegrator::Depth(_) => "depth",
                    AnyIntegrator::Ptracer(_) => "ptracer",
                    _ => "another",
                }
            ))),
        }
    }

    #[inline(always)]
    fn trace<O: PathObserver>(
        self,
        setup: &RenderSetup,
        ray: &Ray,
        rng: &mut SampleRng,
        obs: &mut O,
    ) -> Color {
        match self {
            Replayed::Path(p) => p.trace(&setup.scene, ray, rng, obs).0,
            Replayed::Direct(d) => d.trace(&setup.scene, ray, rng, obs).0,
        }
    }
}

/// The gradients of `Σ adjoint · image` with respect to `params`, where `image` is the
/// render of `setup` with `opts` (its film's `height × width × channels` values, RGB or
/// RGBA: alpha does not depend on any parameter), one buffer per parameter in the
/// layout of its value. The render itself is not needed: the backward pass traces its
/// own samples with `opts.seed`.
pub fn backward(
    setup: &RenderSetup,
    params: &[DiffParam],
    adjoint: &[f32],
    opts: &RenderOptions,
    progress: &Progress,
) -> Result<Vec<Vec<f32>>> {
    backward_traced(setup, params, adjoint, opts, progress, true)
}

/// [`backward`]; `may_trace_once`: whether a short `path` may be traced once (tests
/// compare it with the two traces).
pub(crate) fn backward_traced(
    setup: &RenderSetup,
    params: &[DiffParam],
    adjoint: &[f32],
    opts: &RenderOptions,
    progress: &Progress,
    may_trace_once: bool,
) -> Result<Vec<Vec<f32>>> {
    crate::accel::simd::level()?;
    let integrator = Replayed::of(setup)?;
    let spp = opts.resolve_spp(&setup.sensor.sampler)?;
    let film = &setup.sensor.film;
    let [cw, ch] = film.crop_size;
    let channels = film.channels();
    let pixels = cw as usize * ch as usize;
    if adjoint.len() != pixels * channels {
        return Err(Error::Render(format!(
            "the image's gradient has {} values; the film's is {ch} x {cw} x {channels} \
             ({} values)",
            adjoint.len(),
            pixels * channels
        )));
    }
    if let Some(i) = adjoint.iter().position(|x| !x.is_finite()) {
        return Err(Error::Render(format!(
            "the image's gradient contains NaN or infinite values (the first at row {}, \
             column {}, channel {})",
            i / channels / cw as usize,
            i / channels % cw as usize,
            i % channels
        )));
    }
    let (cw, ch) = (cw as i32, ch as i32);
    let table = FilterTable::new(&film.rfilter);
    let streams = Streams {
        seed: opts.seed,
        sampler: setup.sensor.sampler.flat(spp),
    };
    let tiles = tiles(cw, ch);
    progress.start(2 * pixels as u64 * spp as u64);

    // the filter weights each pixel receives (the image is Σ w L / Σ w): a sample's
    // adjoint is Σ over its footprint of adjoint · w / Σ w
    let sums = on_process_pool(|| weight_sums(setup, &table, streams, &tiles, spp, progress))??;
    let scaled: Vec<Color> = sums
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let a = &adjoint[i * channels..i * channels + 3];
            if w > 0.0 {
                Color::new(a[0], a[1], a[2]) / w
            } else {
                Color::ZERO
            }
        })
        .collect();

    let bytes: usize = params.iter().map(|p| 4 * p.len()).sum::<usize>().max(1);
    let groups = (GROUP_BYTES / bytes).clamp(1, MAX_GROUPS);
    let per_group = tiles.len().div_ceil(groups).max(1);
    let crop = [0, 0, cw, ch];
    let envmap_params = has_envmap_params(params);
    // a short path is traced once, its scatter terms completed at its end
    let once = match integrator {
        Replayed::Path(p) => {
            may_trace_once
                && p.max_depth != u32::MAX
                && u64::from(p.max_depth.saturating_sub(1)) * params.len() as u64 <= DEFER
        }
        Replayed::Direct(_) => false,
    };
    let parts = on_process_pool(|| {
        tiles
            .par_chunks(per_group)
            .map(|group| {
                let mut grads: Vec<Vec<f32>> = params.iter().map(|p| vec![0.0; p.len()]).collect();
                let mut probe = Probe::new(&setup.scene.textures, &setup.scene.bsdfs);
                let mut deferred = Vec::new();
                for &(tx, ty) in group {
                    if progress.is_cancelled() {
                        return Err(Error::Cancelled);
                    }
                    let tile = [tx, ty, TILE.min(cw - tx), TILE.min(ch - ty)];
                    let n = tile_samples(setup, streams, tile, 0..spp, |pos, ray, rng| {
                        let mut delta = Color::ZERO;
                        footprint(crop, &table, pos, |i, w| delta += scaled[i] * w);
                        if delta == Color::ZERO {
                            return;
                        }
                        // the radiance the path carries: `path` needs it at every vertex
                        // (`direct` knows what each of its samples carries)
                        let l = match integrator {
                            Replayed::Path(_) if !once => {
                                let mut replay = rng.clone();
                                integrator.trace(setup, ray, &mut replay, &mut Unobserved)
                            }
                            _ => Color::ZERO,
                        };
                        if !l.is_finite() {
                            return; // the render drops such a sample
                        }
                        let mut adj = Adjoint {
                            scene: &setup.scene,
                            params,
                            probe: &mut probe,
                            grads: &mut grads,
                            delta,
                            rest: l,
                            deferred: once.then_some(&mut deferred),
                            envmap_params,
                        };
                        let l = integrator.trace(setup, ray, rng, &mut adj);
                        // a path traced once whose radiance overflowed (the render drops
                        // it) keeps the terms added on the way: a numerical accident
                        if l.is_finite() {
                            adj.resolve(l);
                        }
                        deferred.clear();
                    });
                    progress.add(n);
                }
                Ok(grads)
            })
            .collect::<Result<Vec<_>>>()
    })??;
    let mut total: Vec<Vec<f32>> = params.iter().map(|p| vec![0.0; p.len()]).collect();
    for part in &parts {
        for (t, g) in total.iter_mut().zip(part) {
            for (a, b) in t.iter_mut().zip(g) {
                *a += b;
            }
        }
    }
    if let Some((p, _)) = params
        .iter()
        .zip(&total)
        .find(|(_, g)| g.iter().any(|x| !x.is_finite()))
    {
        return Err(Error::Render(format!(
            "the gradient of \"{}\" is not finite: a sample's derivative overflowed",
            p.key
        )));
    }
    Ok(total)
}

/// Each crop pixel's sum of filter weights over the samples `0..spp`: channel 4 of
/// the render's accumulator, computed the same way (tile blocks merged in order).
fn weight_sums(
    setup: &RenderSetup,
    table: &FilterTable,
    streams: Streams,
    tiles: &[(i32, i32)],
    spp: u32,
    progress: &Progress,
) -> Result<Vec<f32>> {
    let [cw, ch] = setup.sensor.film.crop_size;
    let (cw, ch) = (cw as i32, ch as i32);
    let border = filter_border(setup);
    let blocks = tiles
        .par_iter()
        .map(|&(tx, ty)| {
            if progress.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let (tw, th) = (TILE.min(cw - tx), TILE.min(ch - ty));
            let mut b = Block::new(tx - border, ty - border, tw + 2 * border, th + 2 * border);
            let n = tile_samples(setup, streams, [tx, ty, tw, th], 0..spp, |pos, _, _| {
                b.splat(table, pos, Color::ZERO, 0.0)
            });
            progress.add(n);
            Ok(b)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut acc = Block::try_new(0, 0, cw, ch, 0)?;
    for b in &blocks {
        acc.merge(b);
    }
    Ok(acc.data.iter().map(|v| v[4]).collect())
}
