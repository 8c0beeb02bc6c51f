//! The CPU backend: rayon workers over image tiles run the per-sample loop.
//!
//! Each (pixel, sample index) pair draws from its own random stream and tile
//! blocks are merged in a fixed order, so the image is bitwise identical for
//! the same scene, spp and seed regardless of thread count or scheduling.
//! [`render_async`] runs the render in the background and returns a
//! [`RenderJob`] whose result can be waited on.
//!
//! Fork: a process forked from one that rendered inherits the parent's memory but only
//! the thread that called `fork`. Renders run on a pool of this process's own
//! ([`on_process_pool`]: a child builds a new one), and a render the parent started
//! before the fork, whose thread the child does not have, is an error in the child
//! ([`RenderJob::wait`]), never a wait that cannot end.

pub mod backward;
pub mod renderer;

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::films;
use crate::films::block::{Block, FilterTable};
use crate::io::Image;
use crate::math::{Color, Ray, Vec2};
use crate::parallel::on_process_pool;
use crate::render::{Progress, RenderOptions};
use crate::samplers::{PixelStreams, SampleRng};
use crate::scene::RenderSetup;

/// Tile edge length in pixels.
pub(crate) const TILE: i32 = 16;
/// Target number of samples per wave (bounds the time between progress updates).
const WAVE_SAMPLES: u64 = 1 << 21;
/// Tiles whose blocks a wave holds at once: their memory (about 8 KiB a tile) stays
/// at tens of MiB whatever the film size, instead of rivalling the accumulator.
const CHUNK_TILES: usize = 4096;

/// Renders `scene` on all cores and blocks until done.
pub fn render(setup: &RenderSetup, opts: &RenderOptions) -> Result<Image> {
    render_with_progress(setup, opts, &Progress::default())
}

/// Renders with a caller-owned progress/cancellation handle.
pub fn render_with_progress(
    setup: &RenderSetup,
    opts: &RenderOptions,
    progress: &Progress,
) -> Result<Image> {
    // an invalid HELIOGRAPH_SIMD stops the render here, with the choices
    crate::accel::simd::level()?;
    if let crate::integrators::AnyIntegrator::Ptracer(pt) = &setup.integrator {
        return crate::integrators::ptracer::render(
            &setup.scene,
            &setup.sensor,
            pt,
            opts,
            progress,
        );
    }
    let spp = opts.resolve_spp(&setup.sensor.sampler)?;
    let film = &setup.sensor.film;
    films::check_film_size(film, aov_channels(setup))?;
    let [cw, ch] = film.crop_size;
    let (cw, ch) = (cw as i32, ch as i32);
    let pixels = cw as u64 * ch as u64;
    progress.start(pixels * spp as u64);
    // wave size in samples per pixel
    let per_wave = ((WAVE_SAMPLES / pixels.max(1)).max(1) as u32).min(spp);
    let tiles = tiles(cw, ch);
    let mut acc = Block::try_new(0, 0, cw, ch, aov_channels(setup))?;
    let table = FilterTable::new(&film.rfilter);
    let streams = Streams {
        seed: opts.seed,
        sampler: setup.sensor.sampler.flat(spp),
    };
    on_process_pool(|| {
        for range in waves(spp, per_wave) {
            // merged in tile order, chunk after chunk: the same sums as all at once
            for chunk in tiles.chunks(CHUNK_TILES) {
                for b in &render_tiles(setup, &table, streams, chunk, range.clone(), progress)? {
                    acc.merge(b);
                }
            }
        }
        Ok(())
    })??;
    match &setup.aov {
        Some(aov) => acc.develop_aov(film.alpha, aov.nested.is_some()),
        None => acc.develop(film.alpha),
    }
}

/// The top-left corners of the tiles of a `cw` × `ch` crop window, row by row.
pub(crate) fn tiles(cw: i32, ch: i32) -> Vec<(i32, i32)> {
    (0..ch)
        .step_by(TILE as usize)
        .flat_map(|y| (0..cw).step_by(TILE as usize).map(move |x| (x, y)))
        .collect()
}

/// What a sample's random numbers depend on besides its pixel and index: the render's
/// seed and the sampler with the render's effective sample count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Streams {
    pub seed: u64,
    pub sampler: crate::samplers::FlatSampler,
}

/// Renders samples `range` of `tiles` in parallel, one block per tile, in order.
fn render_tiles(
    setup: &RenderSetup,
    table: &FilterTable,
    streams: Streams,
    tiles: &[(i32, i32)],
    range: std::ops::Range<u32>,
    progress: &Progress,
) -> Result<Vec<Block>> {
    let border = filter_border(setup);
    tiles
        .par_iter()
        .map(|&(tx, ty)| {
            if progress.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let b = render_tile(setup, table, streams, tx, ty, border, range.clone());
            progress.add(b.1);
            Ok(b.0)
        })
        .collect()
}

/// The sample-index ranges of the waves: `per_wave` samples per pixel each, up to `spp`.
fn waves(spp: u32, per_wave: u32) -> impl Iterator<Item = std::ops::Range<u32>> {
    let mut s0 = 0u32;
    std::iter::from_fn(move || {
        if s0 >= spp {
            return None;
        }
        // in u64: near u32::MAX the sum wraps, and the loop would never end
        let s1 = (s0 as u64 + per_wave as u64).min(spp as u64) as u32;
        let r = s0..s1;
        s0 = s1;
        Some(r)
    })
}

/// The extra film channels of `scene`'s `aov` integrator (0 without one).
fn aov_channels(setup: &RenderSetup) -> usize {
    setup.aov.as_ref().map_or(0, |a| a.channel_count())
}

/// How far beyond its tile a tile's samples reach through the reconstruction filter,
/// in pixels: the border of the block that collects them.
pub(crate) fn filter_border(setup: &RenderSetup) -> i32 {
    (setup.sensor.film.rfilter.radius() - 0.5).ceil().max(0.0) as i32
}

/// Renders samples `range` of the pixels of one tile into a block that covers
/// the tile plus the filter border.
fn render_tile(
    setup: &RenderSetup,
    table: &FilterTable,
    streams: Streams,
    tx: i32,
    ty: i32,
    border: i32,
    range: std::ops::Range<u32>,
) -> (Block, u64) {
    let film = &setup.sensor.film;
    let [cw, ch] = film.crop_size;
    let (tw, th) = (TILE.min(cw as i32 - tx), TILE.min(ch as i32 - ty));
    let (x0, y0, bw, bh) = (tx - border, ty - border, tw + 2 * border, th + 2 * border);
    let tile = [tx, ty, tw, th];
    let Some(aov) = setup.aov.as_deref() else {
        let mut block = Block::new(x0, y0, bw, bh);
        let count = tile_samples(setup, streams, tile, range, |pos, ray, rng| {
            let (l, alpha) = setup.integrator.sample(&setup.scene, ray, rng);
            block.splat(table, pos, finite_or_zero(l), alpha);
        });
        return (block, count);
    };
    let mut block = Block::with_extra(x0, y0, bw, bh, aov.channel_count());
    let mut values = vec![0.0; aov.channel_count()];
    let count = tile_samples(setup, streams, tile, range, |pos, ray, rng| {
        // the nested integrator first: it draws the same numbers as in a render of its own
        let (l, alpha) = match aov.nested {
            Some(_) => setup.integrator.sample(&setup.scene, ray, rng),
            None => (Color::ZERO, 0.0),
        };
        aov.eval(&setup.scene, ray, &mut values);
        for v in values.iter_mut().filter(|v| !v.is_finite()) {
            *v = 0.0;
        }
        block.splat_extra(table, pos, finite_or_zero(l), alpha, &values);
    });
    // contributions outside the crop window are dropped by clipping the block at merge time
    (block, count)
}

/// A NaN/inf sample (numerical accident) is dropped rather than poisoning the pixel.
#[inline]
fn finite_or_zero(l: Color) -> Color {
    if l.is_finite() {
        l
    } else {
        Color::ZERO
    }
}

/// Runs `sample(pos, ray, rng)` for samples `range` of every pixel of `tile` (x, y,
/// width, height in crop pixels): `pos` is the sample's crop-space film position, `ray`
/// its camera ray and `rng` its random stream after the film position's two numbers (and
/// the aperture's two, for a camera that samples one).
/// Returns the number of samples.
pub(crate) fn tile_samples(
    setup: &RenderSetup,
    streams: Streams,
    [tx, ty, tw, th]: [i32; 4],
    range: std::ops::Range<u32>,
    mut sample: impl FnMut(Vec2, &Ray, &mut SampleRng),
) -> u64 {
    let film = &setup.sensor.film;
    let [ox, oy] = film.crop_offset;
    let cam = &setup.sensor.camera;
    let mut count = 0u64;
    for y in ty..ty + th {
        for x in tx..tx + tw {
            let (fx, fy) = (x as u32 + ox, y as u32 + oy);
            let pixel = PixelStreams::new(
                &streams.sampler,
                streams.seed,
                fy as u64 * film.width as u64 + fx as u64,
            );
            // the camera rays of a pixel's samples LANES at a time (the last batch
            // repeats its first sample's position in the lanes it does not use)
            let mut s0 = range.start;
            while s0 < range.end {
                let n = (range.end - s0).min(LANES as u32) as usize;
                let mut rngs: [SampleRng; LANES] =
                    std::array::from_fn(|k| pixel.sample((s0 + k.min(n - 1) as u32) as u64));
                let (mut pos, mut aperture) = ([Vec2::ZERO; LANES], [Vec2::ZERO; LANES]);
                for k in 0..n {
                    let jitter = rngs[k].next_2d();
                    if cam.needs_aperture_sample() {
                        aperture[k] = rngs[k].next_2d();
                    }
                    pos[k] = jitter;
                }
                for k in n..LANES {
                    (pos[k], aperture[k]) = (pos[0], aperture[0]);
                }
                let film_pos = pos.map(|j| Vec2::new(fx as f32 + j.x, fy as f32 + j.y));
                let rays = cam.sample_rays(&film_pos, &aperture, film);
                for k in 0..n {
                    let j = pos[k];
                    sample(
                        Vec2::new(x as f32 + j.x, y as f32 + j.y),
                        &rays[k],
                        &mut rngs[k],
                    );
                }
                count += n as u64;
                s0 += n as u32;
            }
        }
    }
    count
}

/// Samples of a pixel whose camera rays are computed together.
const LANES: usize = 8;

/// The end of a background render, for waiters that must wake at once (a Python read
/// waits on it with a timeout, to poll for Ctrl-C, instead of sleeping).
#[derive(Debug, Default)]
pub struct Completion {
    done: Mutex<bool>,
    cv: Condvar,
}

impl Completion {
    fn set(&self) {
        *self.done.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
    }

    /// Whether the render has ended.
    pub fn is_set(&self) -> bool {
        *self.done.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until the render has ended or `timeout` has passed; whether it has ended.
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> bool {
        let done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        let (done, _) = self
            .cv
            .wait_timeout_while(done, timeout, |d| !*d)
            .unwrap_or_else(|p| p.into_inner());
        *done
    }
}

/// Sets a [`Completion`] when dropped: at the end of the render thread, panics included.
struct SetOnDrop(Arc<Completion>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// A render running in the background.
pub struct RenderJob {
    handle: Option<JoinHandle<Result<Image>>>,
    progress: Arc<Progress>,
    /// Set when the render thread ends.
    completion: Arc<Completion>,
    /// The process whose thread runs the render.
    pid: u32,
}

impl RenderJob {
    /// Progress and cancellation of this render.
    pub fn progress(&self) -> &Arc<Progress> {
        &self.progress
    }

    /// The end of the render, to wait on without holding the job (never set in a
    /// process forked from the one that started the render: see [`Self::is_finished`]).
    pub fn completion(&self) -> &Arc<Completion> {
        &self.completion
    }

    /// Whether this process was forked from the one that started the render: the thread
    /// that runs it does not exist here.
    fn forked(&self) -> bool {
        self.pid != std::process::id()
    }

    /// Whether the render has finished (successfully or not); in a forked child always
    /// (it can never finish there, and [`Self::wait`] says so at once).
    pub fn is_finished(&self) -> bool {
        // the completion is set as the render's closure returns, a moment before the
        // thread itself has exited (what the handle reports): either means done, and a
        // `wait` after it returns at once
        self.forked()
            || self.completion.is_set()
            || self.handle.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Blocks until the render is done and returns the image. In a process forked from
    /// the one that started it, an error at once: the render's thread is not there.
    pub fn wait(mut self) -> Result<Image> {
        let h = self
            .handle
            .take()
            .ok_or_else(|| Error::Render("render result already taken".into()))?;
        if self.forked() {
            // joining (or detaching) a thread of the parent is undefined here
            std::mem::forget(h);
            return Err(Error::Render(format!(
                "this render was started in process {}, on threads of that process; this \
                 process ({}) was forked from it and has none of them, so the render cannot \
                 finish here: read renders before forking, or render again in this process",
                self.pid,
                std::process::id()
            )));
        }
        h.join()
            .map_err(|_| Error::Render("render thread panicked".into()))?
    }
}

impl Drop for RenderJob {
    fn drop(&mut self) {
        let Some(h) = self.handle.take() else {
            return;
        };
        if self.forked() {
            // the parent's thread: nothing to cancel or join here
            std::mem::forget(h);
            return;
        }
        // an abandoned render is cancelled rather than left burning cores
        self.progress.cancel();
        let _ = h.join();
    }
}

/// Starts rendering in the background and returns at once. Invalid requests
/// (e.g. spp = 0) fail here, before anything runs.
pub fn render_async(setup: Arc<RenderSetup>, opts: RenderOptions) -> Result<RenderJob> {
    crate::accel::simd::level()?;
    opts.resolve_spp(&setup.sensor.sampler)?;
    films::check_film_size(&setup.sensor.film, aov_channels(&setup))?;
    let progress = Arc::new(Progress::default());
    let completion = Arc::new(Completion::default());
    let (p, c) = (progress.clone(), completion.clone());
    let handle = std::thread::Builder::new()
        .name("heliograph-render".into())
        .spawn(move || {
            let _done = SetOnDrop(c);
            render_with_progress(&setup, &opts, &p)
        })
        .map_err(|e| Error::Render(format!("cannot start render thread: {e}")))?;
    Ok(RenderJob {
        handle: Some(handle),
        progress,
        completion,
        pid: std::process::id(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desc::xml;
    use crate::scene::build_scene;

    #[test]
    fn waves_cover_every_sample_once_up_to_u32_max() {
        for (spp, per_wave) in [(1, 1), (10, 3), (u32::MAX, 1 << 21), (u32::MAX, u32::MAX)] {
            let expected = spp.div_ceil(per_wave) as usize;
            let mut next = 0u64;
            for r in waves(spp, per_wave).take(expected + 1) {
                assert_eq!(r.start as u64, next, "spp {spp} per wave {per_wave}: {r:?}");
                assert!(r.end > r.start);
                next = r.end as u64;
            }
            assert_eq!(next, spp as u64, "spp {spp} per wave {per_wave}");
        }
    }

    fn film_scene(w: u32, h: u32) -> Arc<RenderSetup> {
        let xml = format!(
            r#"<scene version="3.0.0"><sensor type="perspective"><film type="hdrfilm">
               <integer name="width" value="{w}"/><integer name="height" value="{h}"/>
               </film></sensor></scene>"#
        );
        let desc = xml::load_string(&xml, &[]).unwrap();
        Arc::new(build_scene(&desc).unwrap())
    }

    #[test]
    fn a_film_too_large_for_memory_is_refused_before_anything_is_allocated() {
        let opts = RenderOptions {
            spp: Some(1),
            seed: 0,
        };
        let e = match render_async(film_scene(32768, 32768), opts) {
            Ok(_) => panic!("a 32768 x 32768 render was started"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("32768 x 32768") && e.contains("36.0 GiB") && e.contains("268435456"),
            "{e}"
        );
        let ok = render(&film_scene(64, 1), &opts).unwrap();
        assert_eq!((ok.width, ok.height, ok.channels), (64, 1, 4));
    }

    #[test]
    fn a_render_of_another_process_is_an_error_and_is_never_joined() {
        // what a forked child sees of a render its parent started: a job whose thread
        // belongs to another process (here one that never finishes)
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let handle = std::thread::spawn(move || {
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(Error::Cancelled)
        });
        let job = RenderJob {
            handle: Some(handle),
            progress: Arc::new(Progress::default()),
            completion: Arc::default(),
            pid: std::process::id().wrapping_add(1),
        };
        assert!(
            job.is_finished(),
            "it can never finish here: a read must not wait"
        );
        let e = job.wait().unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "started in process {}",
                std::process::id().wrapping_add(1)
            )) && e.contains("forked"),
            "{e}"
        );
        let dropped = RenderJob {
            handle: Some(std::thread::spawn(|| Err(Error::Cancelled))),
            progress: Arc::new(Progress::default()),
            completion: Arc::default(),
            pid: std::process::id().wrapping_add(1),
        };
        drop(dropped); // returns without joining (the thread would never end in a child)
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    #[test]
    fn the_completion_is_set_when_the_render_ends() {
        let opts = RenderOptions {
            spp: Some(1),
            seed: 0,
        };
        let job = render_async(film_scene(16, 16), opts).unwrap();
        let c = job.completion().clone();
        while !c.wait_timeout(std::time::Duration::from_millis(50)) {}
        assert!(job.is_finished());
        assert!(c.wait_timeout(std::time::Duration::ZERO), "it stays set");
        job.wait().unwrap();
    }

    #[test]
    fn renders_run_on_the_process_pool_or_on_the_callers_pool() {
        let opts = RenderOptions {
            spp: Some(2),
            seed: 3,
        };
        let scene = film_scene(40, 24);
        let a = render(&scene, &opts).unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let (b, threads) = one.install(|| {
            let img = render(&scene, &opts).unwrap();
            (img, on_process_pool(rayon::current_num_threads).unwrap())
        });
        assert_eq!(threads, 1, "inside a caller's pool, renders use that pool");
        assert_eq!(a.data, b.data);
    }
}
