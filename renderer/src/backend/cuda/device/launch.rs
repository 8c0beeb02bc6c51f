//! Renders of a [`DeviceScene`]: the render module compiled for the scene's plugin set
//! ([`Features`]), the megakernel wave by wave (each wave places its samples by filter
//! importance sampling and reduces every pixel's samples into the film accumulator
//! inside the kernel), then the develop kernel (kernels/render.cu, kernels/film.cuh);
//! or the `depth` kernel; all on the render stream. A render's host work is the
//! launches and two allocations from the pool: the scene is already on the device.

use cudarc::driver::{sys as dsys, CudaFunction, LaunchConfig, PushKernelArg};

use super::film::{CudaFilm, Timing};
use super::memory::DeviceBuffer;
use super::module::RenderKernels;
use super::plan::{chunks, threads_cfg, SampleArgs, SceneArgs, MAX_LAUNCH_THREADS};
use super::scene::{DeviceScene, FILM_RECORD_AT};
use super::tuning::RenderTuning;
use super::{drv, guarded, launching, CudaBackend};
use crate::backend::cuda::check_supported;
use crate::backend::cuda::features::Features;
use crate::error::{CudaError, Error, Result};
use crate::integrators::tag::{
    DEPTH as INTEGRATOR_DEPTH, PATH as INTEGRATOR_PATH, PTRACER as INTEGRATOR_PTRACER,
};
use crate::io::Image;
use crate::render::RenderOptions;
use crate::samplers::Sampler;
use crate::scene::RenderSetup;
use crate::shapes::tag::INSTANCE as SHAPE_INSTANCE;

/// Floats of the film accumulator per pixel (kernels/film.cuh `HG_FILM_ACC`).
const FILM_ACC: u64 = 5;

/// Floats of the `ptracer` accumulator per pixel (kernels/integrators/ptracer.cuh
/// `HG_PT_ACC`: the splatted r, g, b).
const PTRACER_ACC: u64 = 3;

/// Most light paths in one launch of hg_ptracer (it indexes its threads with 32 bits).
const MAX_PTRACER_PATHS: u64 = 1 << 30;

/// The launches of a `ptracer` render of `total` light paths: (first path, paths), at
/// most `max` paths each.
pub(crate) fn ptracer_launches(total: u64, max: u64) -> Vec<(u64, u32)> {
    (0..total.div_ceil(max))
        .map(|k| (k * max, (total - k * max).min(max) as u32))
        .collect()
}

impl CudaBackend {
    /// Renders `scene` (uploaded for this render) and returns the image once it is on
    /// the host.
    pub fn render(&self, setup: &RenderSetup, opts: &RenderOptions) -> Result<Image> {
        self.render_async(setup, opts)?.to_image()
    }

    /// Uploads `scene` and enqueues its render; for a scene rendered more than once,
    /// keep a [`DeviceScene`] ([`Self::upload_scene`]) and use [`Self::render_scene`].
    pub fn render_async(&self, setup: &RenderSetup, opts: &RenderOptions) -> Result<CudaFilm> {
        check_supported(setup)?;
        let s = self.upload_scene(setup, 0)?;
        // the scene's buffers are freed in stream order after the render's kernels
        self.render_scene(&s, opts, setup.sensor.sampler.sample_count)
    }

    /// Enqueues the render of device scene `s` on the render stream and returns at once:
    /// the film's ready event fences its pixels. `scene_spp` is the
    /// scene's own sample count (used when `opts.spp` is `None`).
    pub fn render_scene(
        &self,
        s: &DeviceScene,
        opts: &RenderOptions,
        scene_spp: u32,
    ) -> Result<CudaFilm> {
        let sampler = s.film.sampler;
        let spp = match opts.spp {
            None => scene_spp,
            Some(n) => crate::render::resolve_spp(Some(n), &Sampler::from_flat(&sampler))?,
        };
        guarded("CUDA render", || {
            if s.integrator.kind == INTEGRATOR_DEPTH {
                self.enqueue_depth(s, opts.seed, spp)
            } else {
                let tuning = self.render_tuning();
                let features = s.features(tuning.brute_force_max_records as usize);
                let k = self.render_kernels(&features, &tuning, false)?;
                self.enqueue_render(&k, &features, &tuning, s, opts.seed, spp)
            }
        })
    }

    /// (width, height, channels, pixels) of `s`'s film, with the size checks.
    fn film_size(s: &DeviceScene) -> Result<(u32, u32, usize, u64)> {
        let [w, h] = s.film.crop_size;
        let ch = if s.film.alpha != 0 { 4 } else { 3 };
        let pixels = w as u64 * h as u64;
        if pixels > u32::MAX as u64 {
            return Err(Error::Cuda(CudaError::FilmTooLarge {
                width: w,
                height: h,
                crops_hint: true,
            }));
        }
        Ok((w, h, ch, pixels))
    }

    fn enqueue_depth(&self, s: &DeviceScene, seed: u64, spp: u32) -> Result<CudaFilm> {
        let module = self.depth_module(s.basis.kinds.shapes & (1 << SHAPE_INSTANCE) != 0)?;
        let f = self.function(&module, "hg_depth")?;
        let (w, h, ch, pixels) = Self::film_size(s)?;
        let n = pixels as usize * ch;
        let out = self
            .pool
            .alloc(n * 4, &self.stream, &format!("a {w}x{h} film"))?;
        let timing = self.timing_start()?;
        let (cam, film) = (s.records_ptr(), s.records_ptr() + FILM_RECORD_AT);
        let (nodes, leaf, prims, shapes) = (
            s.ptr("nodes"),
            s.ptr("leaf"),
            s.ptr("prims"),
            s.ptr("shapes"),
        );
        let out_ptr = out.ptr();
        let mut launch = self.stream.launch_builder(&f);
        launch
            .arg(&cam)
            .arg(&film)
            .arg(&nodes)
            .arg(&s.node_count)
            .arg(&leaf)
            .arg(&prims)
            .arg(&shapes)
            .arg(&seed)
            .arg(&spp)
            .arg(&out_ptr);
        let cfg = LaunchConfig {
            grid_dim: (w.div_ceil(16), h.div_ceil(16), 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the argument list matches hg_depth's signature in depth.cu, every
        // array holds the records the kernel indexes, and `out` has w*h*ch floats.
        unsafe { launch.launch(cfg) }.map_err(launching("hg_depth"))?;
        self.finish_film(out, n, timing, None, w, h, ch)
    }

    /// Enqueues the megakernel wave by wave ([`wave_spp`] samples per pixel each) or the
    /// wavefront `path` kernels, then the develop kernel.
    pub(crate) fn enqueue_render(
        &self,
        k: &RenderKernels,
        features: &Features,
        tuning: &RenderTuning,
        s: &DeviceScene,
        seed: u64,
        spp: u32,
    ) -> Result<CudaFilm> {
        if s.integrator.kind == INTEGRATOR_PTRACER {
            return self.enqueue_ptracer(k, features, tuning, s, seed, spp);
        }
        let (w, h, ch, pixels) = Self::film_size(s)?;
        let accum = self.pool.alloc_zeros(
            (pixels * FILM_ACC * 4) as usize,
            &self.stream,
            "the film accumulator",
        )?;
        let n = pixels as usize * ch;
        let out = self
            .pool
            .alloc(n * 4, &self.stream, &format!("a {w}x{h} film"))?;
        let args = SceneArgs::new(s, features)?;
        let per_lane = tuning.lanes_for(features);
        let timing = self.timing_start()?;
        match &k.path {
            Some(path) if s.integrator.kind == INTEGRATOR_PATH => {
                self.enqueue_wavefront(
                    path,
                    s,
                    &args,
                    seed,
                    spp,
                    pixels,
                    per_lane,
                    tuning.block,
                    &accum,
                )?;
            }
            _ => {
                let accum_ptr = accum.ptr();
                for c in chunks(spp, pixels, MAX_LAUNCH_THREADS, per_lane) {
                    let mut l = self.stream.launch_builder(&k.render);
                    let sample = SampleArgs {
                        scene: s,
                        film: s.film_with_count(spp),
                        seed,
                        chunk: c,
                        log2_k: Some(c.log2_k),
                        threads: c.lanes(),
                    };
                    sample.push(&mut l, &args);
                    l.arg(&accum_ptr);
                    // SAFETY: the arguments match hg_render in render.cu one for one (the
                    // three records by value); every array holds the records the kernel
                    // indexes; `accum` has 5 floats per pixel and the chunk's pixels lie
                    // in the crop; n and k are powers of two, k <= n <= 32, and the block
                    // a multiple of 32 (RenderTuning::check), as the kernel's warp
                    // reduction requires.
                    unsafe { l.launch(threads_cfg(sample.threads, tuning.block)) }
                        .map_err(launching("hg_render"))?;
                }
            }
        }
        let film_start = match &timing {
            Some(_) => Some(self.timing_event()?),
            None => None,
        };
        self.develop(&k.develop, s, &accum, &out, w, h)?;
        // the accumulator is freed in stream order after hg_develop
        drop(accum);
        self.finish_film(out, n, timing, film_start, w, h, ch)
    }

    /// Enqueues a `ptracer` render: `spp` × (crop pixels) light paths, each splatted with
    /// float atomics into a zeroed accumulator (kernels/integrators/ptracer.cuh), in
    /// launches of at most [`MAX_PTRACER_PATHS`], then the develop kernel that writes the
    /// sums. Light path k draws the CPU backend's random stream for path k, so the image
    /// agrees with the CPU's in expectation; the atomics' order, and so a pixel's last
    /// bits, follow the GPU's schedule.
    fn enqueue_ptracer(
        &self,
        k: &RenderKernels,
        features: &Features,
        tuning: &RenderTuning,
        s: &DeviceScene,
        seed: u64,
        spp: u32,
    ) -> Result<CudaFilm> {
        let Some([trace, develop]) = &k.ptracer else {
            return Err(Error::Cuda(CudaError::MissingKernels {
                module: format!("render module {}", features.tag()),
                kernels: "ptracer",
            }));
        };
        let (w, h, ch, pixels) = Self::film_size(s)?;
        let accum = self.pool.alloc_zeros(
            (pixels * PTRACER_ACC * 4) as usize,
            &self.stream,
            "the film accumulator",
        )?;
        let n = pixels as usize * ch;
        let out = self
            .pool
            .alloc(n * 4, &self.stream, &format!("a {w}x{h} film"))?;
        let args = SceneArgs::new(s, features)?;
        let timing = self.timing_start()?;
        // the camera's importance integrates to 1 over the crop window (as the CPU)
        let scale = (1.0 / f64::from(spp)) as f32;
        let accum_ptr = accum.ptr();
        // the sampler's sequences run over the effective count, as the CPU's
        let film = s.film_with_count(spp);
        for (first, count) in ptracer_launches(pixels * u64::from(spp), MAX_PTRACER_PATHS) {
            let mut l = self.stream.launch_builder(trace);
            l.arg(&s.camera).arg(&film).arg(&s.integrator);
            args.push(&mut l);
            l.arg(&seed)
                .arg(&first)
                .arg(&count)
                .arg(&pixels)
                .arg(&scale)
                .arg(&accum_ptr);
            // SAFETY: the arguments match hg_ptracer in ptracer.cuh one for one (the three
            // records by value); every array holds the records the kernel indexes; `accum`
            // has 3 floats per crop pixel, and the kernel splats inside the crop only.
            unsafe { l.launch(threads_cfg(count, tuning.block)) }
                .map_err(launching("hg_ptracer"))?;
        }
        let film_start = match &timing {
            Some(_) => Some(self.timing_event()?),
            None => None,
        };
        self.develop(develop, s, &accum, &out, w, h)?;
        // the accumulator is freed in stream order after hg_ptracer_develop
        drop(accum);
        self.finish_film(out, n, timing, film_start, w, h, ch)
    }

    fn develop(
        &self,
        f: &CudaFunction,
        s: &DeviceScene,
        accum: &DeviceBuffer,
        out: &DeviceBuffer,
        w: u32,
        h: u32,
    ) -> Result<()> {
        let (a, o) = (accum.ptr(), out.ptr());
        let mut d = self.stream.launch_builder(f);
        d.arg(&s.film).arg(&a).arg(&o);
        let cfg = LaunchConfig {
            grid_dim: (w.div_ceil(16), h.div_ceil(16), 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: matches hg_develop in film.cuh (and hg_ptracer_develop in ptracer.cuh,
        // which takes the same arguments); `out` has pixels * channels floats and `accum`
        // 5 floats per pixel (3 for hg_ptracer_develop).
        unsafe { d.launch(cfg) }.map_err(launching("hg_develop"))?;
        Ok(())
    }

    /// The start event of a timed render (benchmarks: [`Self::set_timing`]).
    fn timing_start(&self) -> Result<Option<cudarc::driver::CudaEvent>> {
        if !self.timing.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(None);
        }
        self.timing_event().map(Some)
    }

    fn timing_event(&self) -> Result<cudarc::driver::CudaEvent> {
        self.stream
            .record_event(Some(dsys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(drv("recording a timing event"))
    }

    /// Records the film's ready event after the last write to `out`.
    #[allow(clippy::too_many_arguments)]
    fn finish_film(
        &self,
        out: DeviceBuffer,
        len: usize,
        start: Option<cudarc::driver::CudaEvent>,
        film_start: Option<cudarc::driver::CudaEvent>,
        w: u32,
        h: u32,
        ch: usize,
    ) -> Result<CudaFilm> {
        let timing = match start {
            Some(start) => Some(Timing {
                start,
                film_start,
                end: self.timing_event()?,
            }),
            None => None,
        };
        let ready = super::event::Event::recorded(&self.ctx, self.stream.cu_stream())?;
        let tensor = self.tensor(out, len, ready);
        Ok(CudaFilm::new(tensor, timing, w as usize, h as usize, ch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptracer_launches_cover_every_light_path_once() {
        assert!(ptracer_launches(0, 8).is_empty());
        assert_eq!(ptracer_launches(8, 8), vec![(0, 8)]);
        assert_eq!(ptracer_launches(19, 8), vec![(0, 8), (8, 8), (16, 3)]);
        // 2^32 pixels' worth of paths at 2 spp: 8 launches of 2^30
        let l = ptracer_launches(1 << 33, MAX_PTRACER_PATHS);
        assert_eq!(l.len(), 8);
        assert!(l.iter().all(|&(_, n)| n as u64 == MAX_PTRACER_PATHS));
        assert_eq!(l[7].0, 7 << 30);
    }
}
