//! The CPU backend: rayon workers over image tiles run the per-sample loop.
//!
//! Each (pixel, sample index) pair draws from its own random stream and tile
//! blocks are merged in a fixed order, so the image is bitwise identical for
//! the same scene, spp and seed regardless of thread count or scheduling.
//! [`render_async`] runs the render in the background and returns a
//! [`RenderJob`] whose result can be waited on (DESIGN.md §4).

use std::sync::Arc;
use std::thread::JoinHandle;

use rayon::prelude::*;

use super::{Progress, RenderOptions};
use crate::error::{Error, Result};
use crate::films::block::{Block, FilterTable};
use crate::io::Image;
use crate::math::{Color, Vec2};
use crate::samplers::SampleRng;
use crate::scene::Scene;

/// Tile edge length in pixels.
const TILE: i32 = 16;
/// Target number of samples per wave (bounds the time between progress updates).
const WAVE_SAMPLES: u64 = 1 << 21;

/// Renders `scene` on all cores and blocks until done.
pub fn render(scene: &Scene, opts: &RenderOptions) -> Result<Image> {
    render_with_progress(scene, opts, &Progress::default())
}

/// Renders with a caller-owned progress/cancellation handle.
pub fn render_with_progress(
    scene: &Scene,
    opts: &RenderOptions,
    progress: &Progress,
) -> Result<Image> {
    let spp = opts.resolve_spp(scene)?;
    let film = &scene.sensor.film;
    let [cw, ch] = film.crop_size;
    let (cw, ch) = (cw as i32, ch as i32);
    let pixels = cw as u64 * ch as u64;
    progress.start(pixels * spp as u64);
    // wave size in samples per pixel
    let per_wave = ((WAVE_SAMPLES / pixels.max(1)).max(1) as u32).min(spp);
    let border = (film.rfilter.radius() - 0.5).ceil().max(0.0) as i32;
    let tiles: Vec<(i32, i32)> = (0..ch)
        .step_by(TILE as usize)
        .flat_map(|y| (0..cw).step_by(TILE as usize).map(move |x| (x, y)))
        .collect();
    let mut acc = Block::new(0, 0, cw, ch);
    let table = FilterTable::new(&film.rfilter);
    let mut s0 = 0u32;
    while s0 < spp {
        let s1 = (s0 + per_wave).min(spp);
        let blocks: Result<Vec<Block>> = tiles
            .par_iter()
            .map(|&(tx, ty)| {
                if progress.is_cancelled() {
                    return Err(Error::Cancelled);
                }
                let b = render_tile(scene, &table, opts.seed, tx, ty, border, s0..s1);
                progress.add(b.1);
                Ok(b.0)
            })
            .collect();
        for b in &blocks? {
            acc.merge(b);
        }
        s0 = s1;
    }
    Ok(acc.develop(film.alpha))
}

/// Renders samples `range` of the pixels of one tile into a block that covers
/// the tile plus the filter border.
fn render_tile(
    scene: &Scene,
    table: &FilterTable,
    seed: u64,
    tx: i32,
    ty: i32,
    border: i32,
    range: std::ops::Range<u32>,
) -> (Block, u64) {
    let film = &scene.sensor.film;
    let [cw, ch] = film.crop_size;
    let [ox, oy] = film.crop_offset;
    let (tw, th) = (TILE.min(cw as i32 - tx), TILE.min(ch as i32 - ty));
    let mut block = Block::new(tx - border, ty - border, tw + 2 * border, th + 2 * border);
    let cam = &scene.sensor.camera;
    let mut count = 0u64;
    for y in ty..ty + th {
        for x in tx..tx + tw {
            let (fx, fy) = (x as u32 + ox, y as u32 + oy);
            let pixel_index = fy as u64 * film.width as u64 + fx as u64;
            for s in range.clone() {
                let mut rng = SampleRng::new(seed, pixel_index, s as u64);
                let jitter = rng.next_2d();
                let ray =
                    cam.sample_ray(Vec2::new(fx as f32 + jitter.x, fy as f32 + jitter.y), film);
                let (l, alpha) = scene.integrator.sample(scene, &ray, &mut rng);
                // a NaN/inf sample (numerical accident) is dropped rather than poisoning the pixel
                let l = if l.is_finite() { l } else { Color::ZERO };
                block.splat(
                    table,
                    Vec2::new(x as f32 + jitter.x, y as f32 + jitter.y),
                    l,
                    alpha,
                );
                count += 1;
            }
        }
    }
    // contributions outside the crop window are dropped by clipping the block at merge time
    (block, count)
}

/// A render running in the background.
pub struct RenderJob {
    handle: Option<JoinHandle<Result<Image>>>,
    progress: Arc<Progress>,
}

impl RenderJob {
    /// Progress and cancellation of this render.
    pub fn progress(&self) -> &Arc<Progress> {
        &self.progress
    }

    /// Whether the render has finished (successfully or not).
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Blocks until the render is done and returns the image.
    pub fn wait(mut self) -> Result<Image> {
        let h = self
            .handle
            .take()
            .ok_or_else(|| Error::Render("render result already taken".into()))?;
        h.join()
            .map_err(|_| Error::Render("render thread panicked".into()))?
    }
}

impl Drop for RenderJob {
    fn drop(&mut self) {
        // an abandoned render is cancelled rather than left burning cores
        if let Some(h) = self.handle.take() {
            self.progress.cancel();
            let _ = h.join();
        }
    }
}

/// Starts rendering in the background and returns at once. Invalid requests
/// (e.g. spp = 0) fail here, before anything runs.
pub fn render_async(scene: Arc<Scene>, opts: RenderOptions) -> Result<RenderJob> {
    opts.resolve_spp(&scene)?;
    let progress = Arc::new(Progress::default());
    let p = progress.clone();
    let handle = std::thread::Builder::new()
        .name("heliograph-render".into())
        .spawn(move || render_with_progress(&scene, &opts, &p))
        .map_err(|e| Error::Render(format!("cannot start render thread: {e}")))?;
    Ok(RenderJob {
        handle: Some(handle),
        progress,
    })
}
