//! The `direct`/`path` launch (kernels/render.cu, kernels/film.cuh): the render module
//! compiled for the scene's plugin set ([`Features`]), scene arrays uploaded through a
//! per-array content cache, the megakernel wave by wave (each wave places its samples by
//! filter importance sampling and reduces every pixel's samples into the film
//! accumulator inside the kernel), then the develop kernel; all on the render stream.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use cudarc::driver::{
    sys as dsys, CudaFunction, CudaModule, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg,
};

use super::{drv, guarded, read_back, CudaBackend, CudaFilm, Inputs};
use crate::backend::cuda::features::{Features, BRUTE_FORCE_MAX_RECORDS};
use crate::backend::cuda::{check_supported, kernels, wavefront_bounce_launches};
use crate::backend::RenderOptions;
use crate::error::{Error, Result};
use crate::flat::unit_prims::{self, UNIT_RECORDS_MAX};
use crate::flat::{content_hash, FlatCamera, FlatFilm, FlatIntegrator, FlatScene, INTEGRATOR_PATH};
use crate::integrators::AnyIntegrator;
use crate::io::Image;
use crate::scene::Scene;

// SAFETY: #[repr(C)] records of u32/f32 fields without padding (flat::LAYOUT's asserts),
// passed by value as hg_render's first three parameters, whose CUDA twins they are.
unsafe impl DeviceRepr for FlatCamera {}
// SAFETY: as above.
unsafe impl DeviceRepr for FlatFilm {}
// SAFETY: as above.
unsafe impl DeviceRepr for FlatIntegrator {}

/// Most samples per pixel in one megakernel wave: a pixel's samples of a wave share one
/// warp segment (kernels/film.cuh `segment_sum`).
const MAX_WAVE_SPP: u32 = 32;

/// Most threads in one launch of the megakernel: a wave larger than this is split into
/// launches over consecutive pixel ranges (hg_render indexes its threads with 32 bits).
const MAX_LAUNCH_THREADS: u64 = 1 << 31;

/// Floats of path state per wavefront slot (kernels/wavefront.cuh `HG_PS_WORDS`).
const PATH_STATE_WORDS: u64 = 25;

/// Most samples in one wavefront chunk: their state takes 100 bytes each (400 MiB), and
/// a larger wave is rendered chunk after chunk through the same buffers.
const WAVEFRONT_CHUNK: u64 = 1 << 22;

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

/// The default tuning, from the H200 sweeps of 2026-12-02 and -03 (tests/gpu/RESULTS.md):
/// a 64 register cap beat ptxas's own choice (78 to 122 registers) on every module;
/// 256-thread blocks were best or within 1 % of best (Cornell box 1.300 vs 1.276
/// Gsamples/s with 512); the wavefront `path` was slower than the megakernel on the
/// Cornell box (its bounce kernels still ran ~10 of 32 lanes busy: the idle lanes were
/// the BVH walk's, not the path lengths'), so the megakernel stays the default, as
/// DESIGN.md §3 has it; samples per lane and brute force: see their fields.
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
    fn check(&self) -> Result<()> {
        if self.block == 0 || self.block % 32 != 0 || self.block > 1024 {
            return Err(Error::Cuda(format!(
                "render block size {} is not a multiple of 32 in 32..=1024",
                self.block
            )));
        }
        if self.samples_per_lane != 0
            && (!self.samples_per_lane.is_power_of_two() || self.samples_per_lane > MAX_WAVE_SPP)
        {
            return Err(Error::Cuda(format!(
                "samples per lane {} is not 0 (the default) or a power of two in 1..={MAX_WAVE_SPP}",
                self.samples_per_lane
            )));
        }
        if self.brute_force_max_records as usize > UNIT_RECORDS_MAX {
            return Err(Error::Cuda(format!(
                "brute force up to {} unit records: at most {UNIT_RECORDS_MAX} are supported",
                self.brute_force_max_records
            )));
        }
        if self.max_registers != 0 && !(16..=255).contains(&self.max_registers) {
            return Err(Error::Cuda(format!(
                "register cap {} is outside 16..=255 (0: no cap)",
                self.max_registers
            )));
        }
        Ok(())
    }

    /// The samples per lane a render with the module of `features` uses:
    /// `samples_per_lane`, or when that is 0, 8 for a brute-force `path` module, 4 for a
    /// brute-force `direct` one and 1 with the BVH. Measured on the H200 (tests/gpu/RESULTS.md, 2026-12-03): brute force tests
    /// every lane's ray against every primitive together, so a lane that starts its next
    /// path costs the others nothing (Cornell box 8.30 -> 7.23 ms with 8), and `direct`
    /// sums 4 samples per lane before its warp reduction (seed 0.392 -> 0.346 ms); lanes
    /// at different depths walk the BVH less coherently (1M-triangle diffuse pass 6.33 ->
    /// 8.51 ms with 4, showcase 13.6 -> 17.6 ms).
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
    fn options(&self) -> Vec<String> {
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

/// What a loaded render module is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct RenderModuleKey {
    features: Features,
    max_registers: u32,
    path_wavefront: bool,
    count_rays: bool,
}

/// Samples per pixel of the wave that starts with `done` of `spp` samples rendered: the
/// largest power of two <= min(spp - done, 32), so that a pixel's samples of the wave fill
/// one aligned warp segment. The wave split is part of the determinism contract (the
/// summation order follows it), so it depends on `spp` only.
fn wave_spp(spp: u32, done: u32) -> u32 {
    let left = spp.saturating_sub(done).clamp(1, MAX_WAVE_SPP);
    1 << (31 - left.leading_zeros())
}

/// One launch's share of a render: samples [s0, s0 + n) (n = 1 << log2_n) of crop pixels
/// [p0, p0 + pixels); megakernel threads take k = 1 << log2_k samples each (k <= n).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    s0: u32,
    log2_n: u32,
    log2_k: u32,
    p0: u32,
    pixels: u32,
}

impl Chunk {
    /// Threads of the megakernel (hg_render) and of the wavefront reduction: n / k per
    /// pixel.
    fn lanes(&self) -> u32 {
        self.pixels << (self.log2_n - self.log2_k)
    }

    /// Samples of the chunk: the wavefront start kernel's threads and state slots.
    fn samples(&self) -> u32 {
        self.pixels << self.log2_n
    }
}

/// The chunks of a render of `spp` samples over `pixels` (<= 2^32 - 1) pixels with at most
/// `max_samples` (a power of two >= 32, < 2^32) samples each, `per_lane` (a power of two)
/// samples per megakernel thread: wave by wave ([`wave_spp`]), consecutive pixel ranges
/// within a wave.
fn chunks(spp: u32, pixels: u64, max_samples: u64, per_lane: u32) -> Vec<Chunk> {
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
        s0 += n;
    }
    out
}

/// The leading parameters of the kernels that start samples (hg_render, hg_path_start:
/// kernels/render.cu `sample_start`): camera, film and integrator by value, the scene
/// arrays, the seed and the chunk (hg_render: with its samples per
/// lane and one thread per lane; hg_path_start: one thread per sample).
struct SampleArgs<'f> {
    flat: &'f FlatScene,
    seed: u64,
    chunk: Chunk,
    /// `Some(log2_k)` for hg_render.
    log2_k: Option<u32>,
    threads: u32,
}

impl<'f> SampleArgs<'f> {
    /// hg_render's: `chunk.lanes()` threads.
    fn megakernel(flat: &'f FlatScene, seed: u64, chunk: &Chunk) -> Self {
        SampleArgs {
            flat,
            seed,
            chunk: *chunk,
            log2_k: Some(chunk.log2_k),
            threads: chunk.lanes(),
        }
    }

    /// hg_path_start's: `chunk.samples()` threads.
    fn path_start(flat: &'f FlatScene, seed: u64, chunk: &Chunk) -> Self {
        SampleArgs {
            flat,
            seed,
            chunk: *chunk,
            log2_k: None,
            threads: chunk.samples(),
        }
    }

    /// Pushes them onto `l`, in the kernel's order.
    fn push<'l>(&'l self, l: &mut cudarc::driver::LaunchArgs<'l>, scene: &'l SceneArgs<'_>) {
        let (f, c) = (self.flat, &self.chunk);
        l.arg(&f.camera).arg(&f.film).arg(&f.integrator);
        scene.push(l);
        l.arg(&self.seed).arg(&c.s0).arg(&c.log2_n);
        if let Some(k) = &self.log2_k {
            l.arg(k);
        }
        l.arg(&c.p0).arg(&self.threads);
    }
}

/// A one-dimensional launch of `threads` threads in blocks of `block`.
fn threads_cfg(threads: u32, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (threads.div_ceil(block), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The wavefront `path` kernels of a render module.
struct PathKernels {
    start: CudaFunction,
    bounce: CudaFunction,
    reduce: CudaFunction,
}

/// The wavefront's device buffers for chunks of up to `cap` samples.
struct PathBuffers {
    /// `PATH_STATE_WORDS` floats per slot.
    state: CudaSlice<f32>,
    /// Two queues of `cap` slots.
    queues: CudaSlice<u32>,
    /// The length of queue k, for the start and every bounce launch.
    counts: CudaSlice<u32>,
    cap: u32,
    /// Bounce launches after the start ([`wavefront_bounce_launches`]).
    bounces: u32,
    /// Blocks of the grid-stride bounce kernel: a full GPU.
    bounce_blocks: u32,
}

/// The flat arrays that every scene kernel takes, in the order of `HG_SCENE_PARAMS`
/// (kernels/scene.cuh); the counts sit between them as that list says, and a brute-force
/// module's unit records follow them by value. Camera, film and integrator travel by
/// value too.
const SCENE_ARRAYS: [&str; 18] = [
    "nodes",
    "leaf",
    "prims",
    "shapes",
    "positions",
    "normals",
    "uvs",
    "tris",
    "bsdfs",
    "tables",
    "textures",
    "texels",
    "emitters",
    "env",
    "dist1d",
    "dist2d",
    "dist_data",
    "bsphere",
];

/// The scene arguments of one launch, looked up once and pushed in kernel order.
struct SceneArgs<'a> {
    arrays: Vec<&'a CudaSlice<u8>>,
    node_count: u32,
    emitter_count: u32,
    env_count: u32,
    /// A brute-force module's `UnitPrims` parameter as words (empty otherwise).
    units: Vec<u32>,
}

impl<'a> SceneArgs<'a> {
    /// Looks up [`SCENE_ARRAYS`] with `b` (name → device array) for a module compiled
    /// for `features`.
    fn new(
        flat: &FlatScene,
        features: &Features,
        b: impl Fn(&str) -> Result<&'a CudaSlice<u8>>,
    ) -> Result<Self> {
        let units = if features.brute_force {
            unit_prims::kernel_param(&flat.unit_prims, features.unit_cap as usize).ok_or_else(
                || {
                    Error::Cuda(format!(
                        "the scene has {} unit records but its brute-force module holds {}",
                        flat.unit_prims.len(),
                        features.unit_cap
                    ))
                },
            )?
        } else {
            Vec::new()
        };
        Ok(SceneArgs {
            arrays: SCENE_ARRAYS.iter().map(|n| b(n)).collect::<Result<_>>()?,
            node_count: flat.nodes.len() as u32,
            emitter_count: flat.emitters.len() as u32,
            env_count: flat.env_emitters.len() as u32,
            units,
        })
    }

    /// Pushes `HG_SCENE_PARAMS` onto a launch.
    fn push<'l>(&'l self, l: &mut cudarc::driver::LaunchArgs<'l>)
    where
        'a: 'l,
    {
        let a = &self.arrays;
        l.arg(a[0]).arg(&self.node_count);
        for s in &a[1..13] {
            l.arg(*s); // leaf ..= emitters
        }
        l.arg(&self.emitter_count).arg(a[13]).arg(&self.env_count);
        for s in &a[14..18] {
            l.arg(*s);
        }
        if let Some(u) = self.units.first() {
            // The kernel's by-value `UnitPrims` parameter (flat.cuh) is these words: the
            // driver copies the parameter's size from this address, the vector's start.
            l.arg(u);
        }
    }
}

/// A flat scene array on the device, reused while its contents do not change.
pub(super) struct CachedArray {
    name: &'static str,
    len: usize,
    hash: u128,
    buf: Arc<CudaSlice<u8>>,
}

impl CudaBackend {
    /// The device copy of flat array `name` with contents `bytes`: the cached buffer
    /// when the contents are unchanged since the last render (same length and 128-bit
    /// content hash), else a fresh upload on the render stream. Cached buffers are never
    /// written, so films still reading an older copy keep it alive through their `Arc`.
    fn upload_cached(&self, name: &'static str, bytes: &[u8]) -> Result<Arc<CudaSlice<u8>>> {
        let hash = content_hash(bytes);
        let mut cache = self
            .scene_cache
            .lock()
            .map_err(|_| Error::Cuda("scene cache lock poisoned".into()))?;
        if let Some(c) = cache
            .iter()
            .find(|c| c.name == name && c.len == bytes.len() && c.hash == hash)
        {
            return Ok(c.buf.clone());
        }
        let buf = Arc::new(self.upload_bytes(bytes)?);
        self.uploaded
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        cache.retain(|c| c.name != name);
        cache.push(CachedArray {
            name,
            len: bytes.len(),
            hash,
            buf: buf.clone(),
        });
        Ok(buf)
    }

    /// Bytes of flat scene arrays uploaded by `direct`/`path` renders so far (unchanged
    /// arrays are reused, not uploaded again).
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded.load(Ordering::Relaxed)
    }

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
            .map_err(|_| Error::Cuda("tuning lock poisoned".into()))? = tuning;
        Ok(())
    }

    /// The render module for `features` under the current register cap (with the
    /// ray counter when `count_rays`), compiled through the program cache and loaded on
    /// first use.
    fn render_module(
        &self,
        features: &Features,
        tuning: &RenderTuning,
        count_rays: bool,
    ) -> Result<Arc<CudaModule>> {
        let path_wavefront = tuning.wavefront && features.has_path();
        let key = RenderModuleKey {
            features: *features,
            max_registers: tuning.max_registers,
            path_wavefront,
            count_rays,
        };
        let mut modules = self
            .render
            .lock()
            .map_err(|_| Error::Cuda("module lock poisoned".into()))?;
        if let Some(m) = modules.get(&key) {
            return Ok(m.clone());
        }
        let mut source = features.prelude(path_wavefront);
        if count_rays {
            source.push_str("#define HG_COUNT_RAYS 1\n");
        }
        source.push_str(&kernels::assemble(kernels::RENDER_MODULE)?);
        let name = format!(
            "{}[{}]{}{}",
            kernels::RENDER_MODULE,
            features.tag(),
            if path_wavefront { "+wavefront" } else { "" },
            if count_rays { "+HG_COUNT_RAYS" } else { "" }
        );
        let (module, stats) = self.load_source(&name, source, &tuning.options())?;
        self.record_stats(stats);
        modules.insert(key, module.clone());
        Ok(module)
    }

    /// What the megakernel compiled for `scene` under the current tuning uses: for the
    /// benchmark tables and the profile notes.
    pub fn render_kernel_info(&self, scene: &Scene) -> Result<RenderKernelInfo> {
        guarded("CUDA kernel info", || {
            let tuning = self.render_tuning();
            let features = tuning.features(&FlatScene::from_scene(scene)?);
            let module = self.render_module(&features, &tuning, false)?;
            // the kernel that does the work: the bounce kernel of a wavefront `path`
            let wavefront = tuning.wavefront && features.has_path();
            let f = self.function(
                &module,
                if wavefront {
                    "hg_path_bounce"
                } else {
                    "hg_render"
                },
            )?;
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

    /// Enqueues the `direct`/`path` megakernel wave by wave ([`wave_spp`] samples per
    /// pixel each), then the develop kernel (kernels/render.cu, kernels/film.cuh).
    pub(super) fn enqueue_render(&self, scene: &Scene, seed: u64, spp: u32) -> Result<CudaFilm> {
        let flat = FlatScene::from_scene(scene)?;
        let tuning = self.render_tuning();
        let features = tuning.features(&flat);
        let module = self.render_module(&features, &tuning, false)?;
        self.enqueue_render_in(&module, &features, &tuning, &flat, seed, spp)
    }

    /// Rays traced (closest-hit and shadow rays) by the `direct`/`path` render of `scene`
    /// with `opts`, and the film: renders once with a variant of the render module
    /// compiled with `HG_COUNT_RAYS` (kernels/scene.cuh: an atomic counter per traced ray,
    /// one atomic per warp and call site), so the count is the kernel's own, not a model
    /// of it. For benchmarks (rays per second); the variant is compiled through the same
    /// program cache and is never used for ordinary renders, whose timing it would skew.
    pub fn count_rays(&self, scene: &Scene, opts: &RenderOptions) -> Result<(u64, Image)> {
        let spp = opts.resolve_spp(scene)?;
        check_supported(scene)?;
        if matches!(scene.integrator, AnyIntegrator::Depth(_)) {
            return Err(Error::Cuda(
                "count_rays: the depth kernel traces one ray per sample; count those directly"
                    .into(),
            ));
        }
        guarded("CUDA ray count", || {
            let flat = FlatScene::from_scene(scene)?;
            let tuning = self.render_tuning();
            let features = tuning.features(&flat);
            let module = self.render_module(&features, &tuning, true)?;
            let mut counter = module
                .get_global("hg_ray_count", &self.stream)
                .map_err(drv("finding hg_ray_count"))?;
            self.stream
                .memcpy_htod(&[0u8; 8], &mut counter)
                .map_err(drv("zeroing hg_ray_count"))?;
            let film =
                self.enqueue_render_in(&module, &features, &tuning, &flat, opts.seed, spp)?;
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

    /// [`Self::enqueue_render`] of `flat` with the kernels of `module` (the render
    /// module or its ray-counting variant), compiled for `features`.
    fn enqueue_render_in(
        &self,
        module: &Arc<CudaModule>,
        features: &Features,
        tuning: &RenderTuning,
        flat: &FlatScene,
        seed: u64,
        spp: u32,
    ) -> Result<CudaFilm> {
        let (fr, fd) = (
            self.function(module, "hg_render")?,
            self.function(module, "hg_develop")?,
        );
        let block = tuning.block;
        let arrays: Vec<_> = flat
            .render_arrays()
            .into_iter()
            .filter(|(n, _)| SCENE_ARRAYS.contains(n))
            .collect();
        let mut bufs = Vec::with_capacity(arrays.len());
        for (name, bytes) in &arrays {
            bufs.push(self.upload_cached(name, bytes)?);
        }
        let b = |name: &str| -> Result<&CudaSlice<u8>> {
            arrays
                .iter()
                .position(|(n, _)| *n == name)
                .map(|i| &*bufs[i])
                .ok_or_else(|| Error::Cuda(format!("no flat array {name}")))
        };
        let [w, h] = flat.film.crop_size;
        let ch = if flat.film.alpha != 0 { 4 } else { 3 };
        let pixels = w as u64 * h as u64;
        if pixels > u32::MAX as u64 {
            return Err(Error::Cuda(format!(
                "a {w}x{h} film has more than 2^32 - 1 pixels, more than the CUDA kernels \
                 index; render it in crops (hdrfilm crop_offset_x/y, crop_width/height)"
            )));
        }
        let alloc = |n: u64, what: &str| {
            self.stream
                .alloc_zeros::<f32>((n as usize).max(1))
                .map_err(|e| super::mem_error(what, n as usize * 4, self.info.total_mem, e))
        };
        let mut accum = alloc(pixels * 5, "the film accumulator")?;
        let mut out = alloc(pixels * ch as u64, "the film")?;
        let scene_args = SceneArgs::new(flat, features, b)?;
        let per_lane = tuning.lanes_for(features);
        let px_cfg = LaunchConfig {
            grid_dim: (w.div_ceil(16), h.div_ceil(16), 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        let timing = Some(dsys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self
            .stream
            .record_event(timing)
            .map_err(drv("recording the start event"))?;
        let mut work = Vec::new();
        let mut queues = Vec::new();
        if tuning.wavefront && flat.integrator.kind == INTEGRATOR_PATH {
            // the module was compiled with the wavefront kernels (render_module)
            let cap = (pixels * wave_spp(spp, 0) as u64).min(WAVEFRONT_CHUNK);
            let kernels = PathKernels {
                start: self.function(module, "hg_path_start")?,
                bounce: self.function(module, "hg_path_bounce")?,
                reduce: self.function(module, "hg_path_reduce")?,
            };
            let mut paths = self.path_buffers(&kernels, cap, flat.integrator.max_depth, block)?;
            for c in chunks(spp, pixels, cap, per_lane) {
                self.launch_path_chunk(
                    &kernels,
                    &mut paths,
                    flat,
                    &scene_args,
                    seed,
                    &c,
                    block,
                    &mut accum,
                )?;
            }
            work.push(paths.state);
            queues.push(paths.queues);
            queues.push(paths.counts);
        } else {
            for c in chunks(spp, pixels, MAX_LAUNCH_THREADS, per_lane) {
                let mut l = self.stream.launch_builder(&fr);
                let sample = SampleArgs::megakernel(flat, seed, &c);
                sample.push(&mut l, &scene_args);
                l.arg(&mut accum);
                // SAFETY: the arguments match hg_render in render.cu one for one (the
                // three records by value); every array holds the records the kernel
                // indexes; `accum` has 5 floats per pixel and the chunk's pixels lie in
                // the crop; n and k are powers of two, k <= n <= 32, and the block a
                // multiple of 32 (RenderTuning::check), as the kernel's warp reduction
                // requires.
                unsafe { l.launch(threads_cfg(sample.threads, block)) }
                    .map_err(drv("launching hg_render"))?;
            }
        }
        // the film's own work is now only hg_develop (the reduction runs inside hg_render)
        let film_start = Some(
            self.stream
                .record_event(timing)
                .map_err(drv("recording the develop event"))?,
        );
        let mut d = self.stream.launch_builder(&fd);
        d.arg(&flat.film).arg(&accum).arg(&mut out);
        // SAFETY: matches hg_develop in film.cuh; `out` has pixels * ch floats.
        unsafe { d.launch(px_cfg) }.map_err(drv("launching hg_develop"))?;
        let ready = self
            .stream
            .record_event(timing)
            .map_err(drv("recording the film's ready event"))?;
        Ok(CudaFilm {
            data: out,
            start,
            film_start,
            ready,
            _inputs: Inputs {
                _depth: None,
                _arrays: bufs,
                _work: [vec![accum], work].concat(),
                _queues: queues,
            },
            ctx: self.ctx.clone(),
            stream: self.stream.clone(),
            width: w as usize,
            height: h as usize,
            channels: ch,
        })
    }

    /// The wavefront buffers for chunks of `cap` samples of paths of at most `max_depth`
    /// steps; `block` threads per block.
    fn path_buffers(
        &self,
        k: &PathKernels,
        cap: u64,
        max_depth: u32,
        block: u32,
    ) -> Result<PathBuffers> {
        let words = cap * PATH_STATE_WORDS;
        // SAFETY: uninitialised device floats; hg_path_start writes every field the later
        // kernels of a chunk read, of every slot they read, before they run.
        let state = unsafe { self.stream.alloc::<f32>(words as usize) }.map_err(|e| {
            super::mem_error(
                "the wavefront path state",
                words as usize * 4,
                self.info.total_mem,
                e,
            )
        })?;
        let queues = self
            .stream
            .alloc_zeros::<u32>(2 * cap as usize)
            .map_err(|e| {
                super::mem_error(
                    "the wavefront queues",
                    8 * cap as usize,
                    self.info.total_mem,
                    e,
                )
            })?;
        let bounces = wavefront_bounce_launches(max_depth);
        let counts = self
            .stream
            .alloc_zeros::<u32>(bounces as usize + 1)
            .map_err(drv("allocating the wavefront queue counts"))?;
        let per_sm = k
            .bounce
            .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
            .map_err(drv("reading the bounce kernel's occupancy"))?
            .max(1);
        let full = per_sm * self.info.sm_count.max(1) as u32;
        Ok(PathBuffers {
            state,
            queues,
            counts,
            cap: cap as u32,
            bounces,
            bounce_blocks: full.min((cap as u32).div_ceil(block)),
        })
    }

    /// Enqueues chunk `c` of a wavefront `path` render: the start kernel (first step),
    /// `bounces` bounce launches (the last one finishes every path), the reduction into
    /// `accum` (kernels/wavefront.cuh).
    fn launch_path_chunk(
        &self,
        k: &PathKernels,
        p: &mut PathBuffers,
        flat: &FlatScene,
        scene_args: &SceneArgs<'_>,
        seed: u64,
        c: &Chunk,
        block: u32,
        accum: &mut CudaSlice<f32>,
    ) -> Result<()> {
        self.stream
            .memset_zeros(&mut p.counts)
            .map_err(drv("clearing the wavefront queue counts"))?;
        let mut l = self.stream.launch_builder(&k.start);
        let sample = SampleArgs::path_start(flat, seed, c);
        sample.push(&mut l, scene_args);
        l.arg(&mut p.state)
            .arg(&p.cap)
            .arg(&mut p.queues)
            .arg(&mut p.counts);
        // SAFETY: the arguments match hg_path_start in wavefront.cuh one for one; the
        // state has PATH_STATE_WORDS * cap floats and each queue cap slots, cap >= the
        // chunk's threads; counts has bounces + 1 zeroed entries; the chunk's pixels lie
        // in the crop and the block is a multiple of 32 (warp-wide queue pushes).
        unsafe { l.launch(threads_cfg(sample.threads, block)) }
            .map_err(drv("launching hg_path_start"))?;
        let cfg = LaunchConfig {
            grid_dim: (p.bounce_blocks, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        for launch in 1..=p.bounces {
            let finish = u32::from(launch == p.bounces);
            let mut l = self.stream.launch_builder(&k.bounce);
            l.arg(&flat.integrator);
            scene_args.push(&mut l);
            l.arg(&mut p.state)
                .arg(&p.cap)
                .arg(&mut p.queues)
                .arg(&mut p.counts)
                .arg(&launch)
                .arg(&finish);
            // SAFETY: matches hg_path_bounce; launch k reads queue k - 1 and counts[k - 1]
            // (written by the launch before it on this stream) and writes queue k and
            // counts[k], k <= bounces.
            unsafe { l.launch(cfg) }.map_err(drv("launching hg_path_bounce"))?;
        }
        let mut l = self.stream.launch_builder(&k.reduce);
        let lanes = c.lanes();
        l.arg(&p.state)
            .arg(&p.cap)
            .arg(&c.s0)
            .arg(&c.log2_n)
            .arg(&c.log2_k)
            .arg(&c.p0)
            .arg(&lanes)
            .arg(accum);
        // SAFETY: matches hg_path_reduce; every slot of the chunk's samples has its
        // result, flags and weight written by the kernels above; `accum` has 5 floats per
        // pixel; k <= n, both powers of two.
        unsafe { l.launch(threads_cfg(lanes, block)) }.map_err(drv("launching hg_path_reduce"))?;
        Ok(())
    }

    /// Runs the per-plugin parity kernel (kernels/parity.cu) on `queries` (16 floats
    /// each) against `scene`'s plugins and returns the answers (16 floats each): the GPU
    /// half of the CPU/CUDA parity test of eval, pdf and sample.
    pub fn plugin_parity(&self, scene: &Scene, queries: &[f32]) -> Result<Vec<f32>> {
        guarded("parity kernel", || {
            let module = self.module(&self.parity, kernels::PARITY_MODULE)?;
            let f = self.function(&module, "hg_parity")?;
            let flat = FlatScene::from_scene(scene)?;
            let arrays = flat.render_arrays();
            let mut bufs = Vec::with_capacity(arrays.len());
            for (_, bytes) in &arrays {
                bufs.push(self.upload_bytes(bytes)?);
            }
            let b = |name: &str| -> Result<&CudaSlice<u8>> {
                arrays
                    .iter()
                    .position(|(n, _)| *n == name)
                    .map(|i| &bufs[i])
                    .ok_or_else(|| Error::Cuda(format!("no flat array {name}")))
            };
            let nq = (queries.len() / 16) as u32;
            let q = self
                .stream
                .clone_htod(&queries[..(nq as usize * 16).max(1).min(queries.len())])
                .map_err(drv("uploading the parity queries"))?;
            let mut out = self
                .stream
                .alloc_zeros::<f32>((nq as usize * 16).max(1))
                .map_err(drv("allocating the parity answers"))?;
            // the parity module is generic: every plugin, the BVH, no unit records
            let generic = Features {
                brute_force: false,
                unit_cap: 0,
                ..Features::of(&flat)
            };
            let scene_args = SceneArgs::new(&flat, &generic, b)?;
            let mut l = self.stream.launch_builder(&f);
            scene_args.push(&mut l);
            l.arg(&q).arg(&nq).arg(&mut out);
            let cfg = LaunchConfig {
                grid_dim: (nq.div_ceil(64).max(1), 1, 1),
                block_dim: (64, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: the arguments match hg_parity in parity.cu one for one; `q` holds
            // nq * 16 floats and `out` has room for as many.
            unsafe { l.launch(cfg) }.map_err(drv("launching hg_parity"))?;
            read_back(&self.ctx, &self.stream, &out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let (mut done, mut waves) = (0u32, Vec::new());
            while done < spp {
                let n = wave_spp(spp, done);
                assert!(
                    n.is_power_of_two() && n <= 32 && n <= spp - done,
                    "{spp}: {n}"
                );
                waves.push(n);
                done += n;
            }
            assert_eq!(done, spp);
            // greedy: full waves of 32, then the binary digits of the rest
            let rest = spp % 32;
            assert_eq!(
                waves.len() as u32,
                spp / 32 + rest.count_ones(),
                "{spp}: {waves:?}"
            );
        }
    }
}
