//! Renders of a [`DeviceScene`]: the render module compiled for the scene's plugin set
//! ([`Features`]), the megakernel wave by wave (each wave places its samples by filter
//! importance sampling and reduces every pixel's samples into the film accumulator
//! inside the kernel), then the develop kernel (kernels/render.cu, kernels/film.cuh);
//! or the `depth` kernel; all on the render stream. A render's host work is the
//! launches and two allocations from the pool: the scene is already on the device.

use cudarc::driver::{
    sys as dsys, CudaFunction, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg,
};

use super::film::{CudaFilm, Timing};
use super::memory::DeviceBuffer;
use super::module::RenderKernels;
use super::scene::{DeviceScene, FILM_RECORD_AT, SCENE_ARRAYS};
use super::{drv, guarded, launching, CudaBackend};
use crate::backend::cuda::check_supported;
use crate::backend::cuda::features::{Features, BRUTE_FORCE_MAX_RECORDS};
use crate::error::{CudaError, Error, Result};
use crate::flat::unit_prims::UNIT_RECORDS_MAX;
use crate::flat::{
    FlatCamera, FlatFilm, FlatIntegrator, FlatScene, INTEGRATOR_DEPTH, INTEGRATOR_PATH,
    INTEGRATOR_PTRACER, SHAPE_INSTANCE,
};
use crate::io::Image;
use crate::render::RenderOptions;
use crate::samplers::Sampler;
use crate::scene::RenderSetup;

// SAFETY: #[repr(C)] records of u32/f32 fields without padding (flat::LAYOUT's asserts),
// passed by value as the kernels' leading parameters, whose CUDA twins they are.
unsafe impl DeviceRepr for FlatCamera {}
// SAFETY: as above.
unsafe impl DeviceRepr for FlatFilm {}
// SAFETY: as above.
unsafe impl DeviceRepr for FlatIntegrator {}

/// Most samples per pixel in one megakernel wave: a pixel's samples of a wave share one
/// warp segment (kernels/film.cuh `segment_sum`).
pub(crate) const MAX_WAVE_SPP: u32 = 32;

/// Most threads in one launch of the megakernel: a wave larger than this is split into
/// launches over consecutive pixel ranges (hg_render indexes its threads with 32 bits).
pub(crate) const MAX_LAUNCH_THREADS: u64 = 1 << 31;

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

/// Launch and compile settings of the render kernels (the GPU benchmark sweeps them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RenderTuning {
    /// Threads per block: a multiple of 32 (warp segments stay aligned to pixels), at
    /// most 1024.
    pub block: u32,
    /// NVRTC's `--maxrregcount`; 0 lets ptxas choose.
    pub max_registers: u32,
    /// `path` through the wavefront kernels (kernels/wavefront.cuh) instead of the
    /// megakernel.
    pub wavefront: bool,
    /// Samples of a pixel each megakernel thread renders one after another (a power of
    /// two, 1..=32; a wave of fewer samples per pixel gives each thread all of them): a
    /// lane whose `path` ends early starts its next sample instead of idling until the
    /// longest path of its warp ends. 0: [`RenderTuning::lanes_for`].
    pub samples_per_lane: u32,
    /// Scenes of at most this many unit records skip the BVH: every ray tests every
    /// record with the unit-shape test (features::BRUTE_FORCE_MAX_RECORDS, at most
    /// flat::unit_prims::UNIT_RECORDS_MAX).
    pub brute_force_max_records: u32,
}

/// The default tuning, from the H200 sweeps recorded in tests/gpu/RESULTS.md: a 64
/// register cap beat ptxas's own choice (78 to 122 registers) on every module;
/// 256-thread blocks were best or within 1 % of best; the wavefront `path` was slower
/// than the megakernel on the Cornell box (its bounce kernels still ran ~10 of 32
/// lanes busy: the idle lanes were the BVH walk's, not the path lengths'), so the
/// megakernel stays the default; samples per lane and brute
/// force: see their fields.
impl Default for RenderTuning {
    fn default() -> Self {
        RenderTuning {
            block: 256,
            max_registers: 64,
            wavefront: false,
            samples_per_lane: 0,
            brute_force_max_records: BRUTE_FORCE_MAX_RECORDS as u32,
        }
    }
}

impl RenderTuning {
    /// An error unless the block size and register cap are usable.
    pub(crate) fn check(&self) -> Result<()> {
        if self.block == 0 || self.block % 32 != 0 || self.block > 1024 {
            return Err(Error::Cuda(CudaError::BlockSize { block: self.block }));
        }
        if self.samples_per_lane != 0
            && (!self.samples_per_lane.is_power_of_two() || self.samples_per_lane > MAX_WAVE_SPP)
        {
            return Err(Error::Cuda(CudaError::SamplesPerLane {
                samples: self.samples_per_lane,
                max: MAX_WAVE_SPP,
            }));
        }
        if self.brute_force_max_records as usize > UNIT_RECORDS_MAX {
            return Err(Error::Cuda(CudaError::BruteForceRecords {
                records: self.brute_force_max_records,
                max: UNIT_RECORDS_MAX,
            }));
        }
        if self.max_registers != 0 && !(16..=255).contains(&self.max_registers) {
            return Err(Error::Cuda(CudaError::RegisterCap {
                registers: self.max_registers,
            }));
        }
        Ok(())
    }

    /// The samples per lane a render with the module of `features` uses:
    /// `samples_per_lane`, or when that is 0, 8 for a brute-force `path` module, 4 for a
    /// brute-force `direct` one and 1 with the BVH (measured on the H200,
    /// tests/gpu/RESULTS.md): brute force tests every lane's ray against every primitive
    /// together, so a lane that starts its next path costs the others nothing, and
    /// `direct` sums 4 samples per lane before its warp reduction; lanes at different
    /// depths walk the BVH less coherently.
    pub fn lanes_for(&self, features: &Features) -> u32 {
        match self.samples_per_lane {
            0 if !features.brute_force => 1,
            0 if features.has_path() => 8,
            0 => 4,
            k => k,
        }
    }

    /// The plugin set of the module that renders `flat` under this tuning.
    pub fn features(&self, flat: &FlatScene) -> Features {
        Features::with_brute_force_max(flat, self.brute_force_max_records as usize)
    }

    /// The extra NVRTC options.
    pub(crate) fn options(&self) -> Vec<String> {
        match self.max_registers {
            0 => Vec::new(),
            n => vec![format!("--maxrregcount={n}")],
        }
    }
}

/// Resources of the main render kernel compiled for one scene ([`CudaBackend::render_kernel_info`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderKernelInfo {
    /// The plugin set's tag ([`Features::tag`]).
    pub module: String,
    /// Whether the sample path is inlined ([`Features::inline_all`]).
    pub inlined: bool,
    /// Registers per thread.
    pub registers: u32,
    /// Local memory (stack) bytes per thread.
    pub local_bytes: u32,
    /// Resident blocks per SM at `block` threads each.
    pub blocks_per_sm: u32,
    /// Threads per block.
    pub block: u32,
}

/// Samples per pixel of the wave that starts with `done` of `spp` samples rendered: the
/// largest power of two <= min(spp - done, 32), so that a pixel's samples of the wave fill
/// one aligned warp segment. The wave split is part of the determinism contract (the
/// summation order follows it), so it depends on `spp` only.
pub(crate) fn wave_spp(spp: u32, done: u32) -> u32 {
    let left = spp.saturating_sub(done).clamp(1, MAX_WAVE_SPP);
    1 << (31 - left.leading_zeros())
}

/// One launch's share of a render: samples [s0, s0 + n) (n = 1 << log2_n) of crop pixels
/// [p0, p0 + pixels); megakernel threads take k = 1 << log2_k samples each (k <= n).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub(crate) s0: u32,
    pub(crate) log2_n: u32,
    pub(crate) log2_k: u32,
    pub(crate) p0: u32,
    pub(crate) pixels: u32,
}

impl Chunk {
    /// Threads of the megakernel (hg_render) and of the wavefront reduction: n / k per
    /// pixel.
    pub(crate) fn lanes(&self) -> u32 {
        self.pixels << (self.log2_n - self.log2_k)
    }

    /// Samples of the chunk: the wavefront start kernel's threads and state slots.
    pub(crate) fn samples(&self) -> u32 {
        self.pixels << self.log2_n
    }
}

/// The chunks of a render of `spp` samples over `pixels` (<= 2^32 - 1) pixels with at most
/// `max_samples` (a power of two >= 32, < 2^32) samples each, `per_lane` (a power of two)
/// samples per megakernel thread: wave by wave ([`wave_spp`]), consecutive pixel ranges
/// within a wave.
pub(crate) fn chunks(spp: u32, pixels: u64, max_samples: u64, per_lane: u32) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut s0 = 0u32;
    while s0 < spp {
        let n = wave_spp(spp, s0);
        let log2_n = n.trailing_zeros();
        let per = max_samples >> log2_n; // pixels per chunk
        let mut p0 = 0u64;
        while p0 < pixels {
            let count = per.min(pixels - p0);
            out.push(Chunk {
                s0,
                log2_n,
                log2_k: per_lane.min(n).trailing_zeros(),
                p0: p0 as u32,
                pixels: count as u32,
            });
            p0 += count;
        }
        // s0 + n <= spp <= u32::MAX: no overflow
        s0 += n;
    }
    out
}

/// A one-dimensional launch of `threads` threads in blocks of `block`.
pub(crate) fn threads_cfg(threads: u32, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (threads.div_ceil(block), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The scene arguments of the kernels (`HG_SCENE_PARAMS`, kernels/scene.cuh), looked
/// up once per render and pushed in kernel order.
pub(crate) struct SceneArgs {
    ptrs: [u64; SCENE_ARRAYS.len()],
    node_count: u32,
    emitter_count: u32,
    env_count: u32,
    /// A brute-force module's `UnitPrims` parameter as words (empty otherwise).
    units: Vec<u32>,
}

impl SceneArgs {
    pub(crate) fn new(s: &DeviceScene, features: &Features) -> Result<SceneArgs> {
        Ok(SceneArgs {
            ptrs: SCENE_ARRAYS.map(|n| s.ptr(n)),
            node_count: s.node_count,
            emitter_count: s.emitter_count,
            env_count: s.env_count,
            units: s.unit_words(features)?,
        })
    }

    /// Pushes `HG_SCENE_PARAMS` onto a launch.
    pub(crate) fn push<'l>(&'l self, l: &mut LaunchArgs<'l>) {
        // each count follows the array it counts
        for (name, p) in SCENE_ARRAYS.iter().zip(&self.ptrs) {
            l.arg(p);
            let count = match *name {
                "nodes" => Some(&self.node_count),
                "emitter_data" => Some(&self.emitter_count),
                "env" => Some(&self.env_count),
                _ => None,
            };
            if let Some(c) = count {
                l.arg(c);
            }
        }
        if let Some(u) = self.units.first() {
            // The kernel's by-value `UnitPrims` parameter (flat.cuh) is these words: the
            // driver copies the parameter's size from this address, the vector's start.
            l.arg(u);
        }
    }
}

/// The leading parameters of the kernels that start samples (hg_render, hg_path_start:
/// kernels/render.cu `sample_start`): camera, film and integrator by value, the scene
/// arrays, the seed and the chunk.
pub(crate) struct SampleArgs<'s> {
    pub(crate) scene: &'s DeviceScene,
    /// The scene's film record with the render's effective sample count in its sampler.
    pub(crate) film: FlatFilm,
    pub(crate) seed: u64,
    pub(crate) chunk: Chunk,
    /// `Some(log2_k)` for hg_render.
    pub(crate) log2_k: Option<u32>,
    pub(crate) threads: u32,
}

impl SampleArgs<'_> {
    /// Pushes them onto `l`, in the kernel's order.
    pub(crate) fn push<'l>(&'l self, l: &mut LaunchArgs<'l>, args: &'l SceneArgs) {
        let (s, c) = (self.scene, &self.chunk);
        l.arg(&s.camera).arg(&self.film).arg(&s.integrator);
        args.push(l);
        l.arg(&self.seed).arg(&c.s0).arg(&c.log2_n);
        if let Some(k) = &self.log2_k {
            l.arg(k);
        }
        l.arg(&c.p0).arg(&self.threads);
    }
}

impl CudaBackend {
    /// The megakernel's launch and compile settings.
    pub fn render_tuning(&self) -> RenderTuning {
        self.tuning.lock().map(|t| *t).unwrap_or_default()
    }

    /// Changes the megakernel's block size and register cap for later renders (a
    /// benchmark knob: modules compiled under another cap are kept and reused).
    pub fn set_render_tuning(&self, tuning: RenderTuning) -> Result<()> {
        tuning.check()?;
        *self
            .tuning
            .lock()
            .map_err(|_| Error::Cuda(CudaError::Lock { what: "tuning" }))? = tuning;
        Ok(())
    }

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

    /// What the megakernel compiled for `scene` under the current tuning uses: for the
    /// benchmark tables and the profile notes.
    pub fn render_kernel_info(&self, setup: &RenderSetup) -> Result<RenderKernelInfo> {
        guarded("CUDA kernel info", || {
            let tuning = self.render_tuning();
            let features = tuning.features(&FlatScene::from_scene_with(setup, false)?);
            let k = self.render_kernels(&features, &tuning, false)?;
            // the kernel that does the work: the bounce kernel of a wavefront `path`, the
            // light tracing kernel of `ptracer`
            let f = match (&k.path, &k.ptracer) {
                (Some([_, bounce, _]), _) => bounce,
                (None, Some([trace, _])) => trace,
                (None, None) => &k.render,
            };
            let attr = |a, what: &'static str| f.get_attribute(a).map_err(drv(what));
            use dsys::CUfunction_attribute_enum as A;
            let block = tuning.block;
            Ok(RenderKernelInfo {
                module: features.tag(),
                inlined: features.inline_all(),
                registers: attr(A::CU_FUNC_ATTRIBUTE_NUM_REGS, "reading the register count")?
                    as u32,
                local_bytes: attr(
                    A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                    "reading the stack size",
                )? as u32,
                blocks_per_sm: f
                    .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
                    .map_err(drv("reading the occupancy"))?,
                block,
            })
        })
    }

    /// Rays traced (closest-hit and shadow rays) by the `direct`/`path` render of `scene`
    /// with `opts`, and the film: renders once with a variant of the render module
    /// compiled with `HG_COUNT_RAYS` (kernels/scene.cuh: an atomic counter per traced ray,
    /// one atomic per warp and call site), so the count is the kernel's own, not a model
    /// of it. For benchmarks (rays per second); the variant is compiled through the same
    /// program cache and is never used for ordinary renders, whose timing it would skew.
    pub fn count_rays(&self, setup: &RenderSetup, opts: &RenderOptions) -> Result<(u64, Image)> {
        let spp = opts.resolve_spp(&setup.sensor.sampler)?;
        check_supported(setup)?;
        let s = self.upload_scene(setup, 0)?;
        if s.integrator.kind == INTEGRATOR_DEPTH {
            return Err(Error::Cuda(CudaError::CountRaysDepth));
        }
        guarded("CUDA ray count", || {
            let tuning = self.render_tuning();
            let features = s.features(tuning.brute_force_max_records as usize);
            let k = self.render_kernels(&features, &tuning, true)?;
            let mut counter = k
                .module
                .get_global("hg_ray_count", &self.stream)
                .map_err(drv("finding hg_ray_count"))?;
            self.stream
                .memcpy_htod(&[0u8; 8], &mut counter)
                .map_err(drv("zeroing hg_ray_count"))?;
            let film = self.enqueue_render(&k, &features, &tuning, &s, opts.seed, spp)?;
            let image = film.to_image()?;
            let mut bytes = [0u8; 8];
            self.stream
                .memcpy_dtoh(&counter, &mut bytes)
                .map_err(drv("reading hg_ray_count"))?;
            self.stream
                .synchronize()
                .map_err(drv("waiting for the ray count"))?;
            Ok((u64::from_le_bytes(bytes), image))
        })
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

    #[test]
    fn chunks_cover_every_sample_of_every_pixel_once_in_bounded_launches() {
        for (spp, pixels, max) in [
            (1, 7, 32),
            (3, 1000, 64),
            (32, 512 * 512, 1 << 22),
            (45, 333, 256),
        ] {
            let mut seen = vec![0u32; pixels as usize];
            for c in chunks(spp, pixels, max, 4) {
                assert!(c.samples() as u64 <= max && c.log2_k <= c.log2_n.min(2));
                assert_eq!(c.lanes() << c.log2_k, c.samples());
                for px in c.p0..c.p0 + c.pixels {
                    assert_eq!(seen[px as usize], c.s0, "{spp} {pixels} {max}: pixel {px}");
                    seen[px as usize] += 1 << c.log2_n;
                }
            }
            assert!(seen.iter().all(|&s| s == spp), "{spp} {pixels} {max}");
        }
    }

    #[test]
    fn waves_are_powers_of_two_up_to_32_and_cover_spp() {
        for spp in 1..=200u32 {
            let (mut done, mut waves) = (0u64, 0u64);
            while done < spp as u64 {
                let n = wave_spp(spp, done as u32);
                assert!(
                    n.is_power_of_two() && n <= 32 && n as u64 <= spp as u64 - done,
                    "{spp}: {n}"
                );
                waves += 1;
                done += n as u64;
            }
            assert_eq!(done, spp as u64);
            // greedy: full waves of 32, then the binary digits of the rest
            let rest = spp % 32;
            assert_eq!(waves, (spp / 32) as u64 + rest.count_ones() as u64, "{spp}");
        }
        // the last waves of the largest sample count end exactly at it (no overflow)
        let spp = u32::MAX;
        let done = spp - 31;
        assert_eq!(wave_spp(spp, done), 16);
        assert_eq!(wave_spp(spp, spp - 1), 1);
    }
}
