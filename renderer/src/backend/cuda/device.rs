//! The CUDA backend proper (feature `cuda`): context, render stream, NVRTC → CUBIN,
//! upload, launch and event-fenced read-back.
//!
//! cudarc panics (instead of returning an error) when `libcuda.so` / `libnvrtc.so` or
//! one of their symbols is missing, so every entry point first checks that the
//! libraries load and runs the driver calls under `catch_unwind`: a machine without a
//! GPU gets `Error::CudaUnavailable`, and the process (and the CPU backend) carry on.

use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    sys as dsys, CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream,
    DeviceRepr, DriverError, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use cudarc::nvrtc::{result as nres, sys as nsys, Ptx};

use super::cache::{CacheKey, ModuleStats, ProgramCache};
use super::{arch_for, check_nvrtc_targets, check_supported, compile_options, kernels, DeviceInfo};
use crate::backend::RenderOptions;
use crate::error::{Error, Result};
use crate::flat::{as_bytes, FlatScene, Pod, LAYOUT};
use crate::integrators::AnyIntegrator;
use crate::io::Image;
use crate::scene::Scene;

mod render;
mod tensor;

use render::{CachedArray, RenderModuleKey};
pub use render::{RenderKernelInfo, RenderTuning};
pub use tensor::{live_device_tensors, DeviceTensor};

/// Runs `f`, turning a cudarc panic (missing library or symbol) into an error.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        Err(Error::CudaUnavailable(format!("{what}: {msg}")))
    })
}

/// A driver error from `what`.
fn drv(what: &'static str) -> impl Fn(DriverError) -> Error {
    move |e| Error::Cuda(format!("{what}: {e:?}"))
}

/// An allocation or upload error of `bytes` bytes for `what`: running out of device
/// memory gets a message with the sizes and what to do; anything else the driver's code.
fn mem_error(what: &str, bytes: usize, total: usize, e: DriverError) -> Error {
    let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
    if e.0 == dsys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
        Error::Cuda(format!(
            "out of GPU memory: {what} needs {:.2} GiB and the device has {:.1} GiB in all \
             (other processes and live tensors use some); reduce the film resolution or \
             the scene, or free tensors you no longer need",
            gib(bytes),
            gib(total)
        ))
    } else {
        Error::Cuda(format!("{what} ({bytes} bytes): {e:?}"))
    }
}

/// Checks that the driver and NVRTC libraries can be loaded (before any cudarc call).
pub fn libraries_present() -> Result<()> {
    // SAFETY: only tries to dlopen the libraries; no symbol is called.
    if !unsafe { dsys::is_culib_present() } {
        return Err(Error::CudaUnavailable(
            "no NVIDIA driver found (libcuda.so could not be loaded)".into(),
        ));
    }
    // Before any other driver call: an older driver lacks entry points of the CUDA 13
    // bindings, on whose first use cudarc would panic.
    let mut version = 0;
    guarded("cuDriverGetVersion", || {
        // SAFETY: writes one int; needs no cuInit.
        unsafe { dsys::cuDriverGetVersion(&mut version) }
            .result()
            .map_err(drv("cuDriverGetVersion"))
    })?;
    super::check_driver_version(version)?;
    super::nvrtc_lib::load().map(|_| ())
}

/// The number of CUDA devices (0 when the driver reports none).
pub fn device_count() -> Result<usize> {
    libraries_present()?;
    guarded(
        "counting CUDA devices",
        || match CudaContext::device_count() {
            Ok(n) => Ok(n.max(0) as usize),
            Err(DriverError(dsys::cudaError_enum::CUDA_ERROR_NO_DEVICE)) => Ok(0),
            Err(e) => Err(Error::CudaUnavailable(format!(
                "the CUDA driver failed to initialise: {e:?}"
            ))),
        },
    )
}

/// The architectures NVRTC can target (empty when it cannot say).
fn nvrtc_archs() -> Vec<i32> {
    let mut n = 0;
    // SAFETY: writes one int.
    if unsafe { nsys::nvrtcGetNumSupportedArchs(&mut n) }
        .result()
        .is_err()
        || n <= 0
    {
        return Vec::new();
    }
    let mut v = vec![0; n as usize];
    // SAFETY: `v` has room for the `n` entries NVRTC writes.
    match unsafe { nsys::nvrtcGetSupportedArchs(v.as_mut_ptr()) }.result() {
        Ok(()) => v,
        Err(_) => Vec::new(),
    }
}

/// Device buffers of one uploaded flat scene.
struct DeviceScene {
    camera: CudaSlice<u8>,
    film: CudaSlice<u8>,
    nodes: CudaSlice<u8>,
    node_count: u32,
    leaf: CudaSlice<u8>,
    prims: CudaSlice<u8>,
    shapes: CudaSlice<u8>,
}

/// The device buffers a film's kernels read, kept alive with the film.
struct Inputs {
    /// The depth kernel's scene.
    _depth: Option<Box<DeviceScene>>,
    /// The flat scene arrays (direct/path).
    _arrays: Vec<Arc<CudaSlice<u8>>>,
    /// The film accumulator (direct/path).
    _work: Vec<CudaSlice<f32>>,
    /// Queues and counters (wavefront path).
    _queues: Vec<CudaSlice<u32>>,
}

/// The CUDA backend: one device, its primary context and one render stream.
pub struct CudaBackend {
    info: DeviceInfo,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    cache: ProgramCache,
    depth: Mutex<Option<Arc<CudaModule>>>,
    /// The render modules loaded so far, one per plugin set and tuning.
    render: Mutex<HashMap<RenderModuleKey, Arc<CudaModule>>>,
    tuning: Mutex<RenderTuning>,
    parity: Mutex<Option<Arc<CudaModule>>>,
    scene_cache: Mutex<Vec<CachedArray>>,
    uploaded: std::sync::atomic::AtomicU64,
    stats: Mutex<Vec<ModuleStats>>,
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("info", &self.info)
            .finish()
    }
}

impl CudaBackend {
    /// Opens device `ordinal`: checks driver, NVRTC, device and architecture, binds the
    /// primary context and creates the non-blocking render stream.
    pub fn new(ordinal: usize) -> Result<CudaBackend> {
        let count = device_count()?;
        if count == 0 {
            return Err(Error::CudaUnavailable(
                "the NVIDIA driver reports no CUDA device".into(),
            ));
        }
        if ordinal >= count {
            return Err(Error::CudaUnavailable(format!(
                "CUDA device {ordinal} requested, but there are only {count}"
            )));
        }
        guarded("opening the CUDA device", || Self::open(ordinal))
    }

    fn open(ordinal: usize) -> Result<CudaBackend> {
        let ctx = CudaContext::new(ordinal).map_err(drv("creating the primary context"))?;
        let cc = ctx
            .compute_capability()
            .map_err(drv("reading the compute capability"))?;
        let arch = arch_for(cc)?;
        let sm_count = ctx
            .attribute(dsys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(drv("reading the SM count"))?;
        let mut driver_version = 0;
        // SAFETY: writes one int; the driver is initialised by CudaContext::new.
        unsafe { dsys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .map_err(drv("cuDriverGetVersion"))?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes two ints.
        unsafe { nsys::nvrtcVersion(&mut major, &mut minor) }
            .result()
            .map_err(|e| Error::CudaUnavailable(format!("nvrtcVersion failed: {e:?}")))?;
        check_nvrtc_targets(cc, &nvrtc_archs(), (major, minor))?;
        let info = DeviceInfo {
            ordinal,
            name: ctx.name().map_err(drv("reading the device name"))?,
            compute_capability: cc,
            arch,
            sm_count,
            total_mem: ctx.total_mem().map_err(drv("reading the memory size"))?,
            driver_version,
            nvrtc_version: (major, minor),
        };
        let stream = ctx
            .new_stream()
            .map_err(drv("creating the render stream"))?;
        Ok(CudaBackend {
            info,
            ctx,
            stream,
            cache: ProgramCache::new(),
            depth: Mutex::new(None),
            render: Mutex::new(HashMap::new()),
            tuning: Mutex::new(RenderTuning::default()),
            parity: Mutex::new(None),
            scene_cache: Mutex::new(Vec::new()),
            uploaded: std::sync::atomic::AtomicU64::new(0),
            stats: Mutex::new(Vec::new()),
        })
    }

    /// The device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The render stream's handle (for DLPack producers: `__dlpack__(stream=...)`).
    pub fn stream_handle(&self) -> usize {
        self.stream.cu_stream() as usize
    }

    /// How each kernel module was obtained so far (compiled, disk or memory cache, time).
    pub fn module_stats(&self) -> Vec<ModuleStats> {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The depth module, compiled (or fetched from the cache) and loaded on first use.
    fn depth_module(&self) -> Result<Arc<CudaModule>> {
        self.module(&self.depth, kernels::DEPTH_MODULE)
    }

    fn module(&self, slot: &Mutex<Option<Arc<CudaModule>>>, name: &str) -> Result<Arc<CudaModule>> {
        let mut slot = slot
            .lock()
            .map_err(|_| Error::Cuda("module lock poisoned".into()))?;
        if let Some(m) = slot.as_ref() {
            return Ok(m.clone());
        }
        let (module, stats) = self.load_source(name, kernels::assemble(name)?, &[])?;
        self.record_stats(stats);
        *slot = Some(module.clone());
        Ok(module)
    }

    /// Remembers how a module was obtained (for [`Self::module_stats`]).
    fn record_stats(&self, stats: ModuleStats) {
        if let Ok(mut s) = self.stats.lock() {
            s.push(stats);
        }
    }

    /// Compiles (through the cache) and loads CUDA C `source` as module `name`, with
    /// `extra` NVRTC options after the backend's own.
    fn load_source(
        &self,
        name: &str,
        source: String,
        extra: &[String],
    ) -> Result<(Arc<CudaModule>, ModuleStats)> {
        let mut options = compile_options(&self.info.arch, name);
        options.extend_from_slice(extra);
        let key = CacheKey {
            module: name.into(),
            source,
            arch: self.info.arch.clone(),
            driver_version: self.info.driver_version,
            nvrtc_version: self.info.nvrtc_version,
            options,
        };
        let (cubin, stats) = self.cache.get_or_compile(&key, || {
            guarded("NVRTC", || compile_cubin(name, &key.source, &key.options))
        })?;
        let module = guarded("loading a CUBIN", || {
            self.ctx
                .load_module(Ptx::from_binary(cubin.to_vec()))
                .map_err(|e| Error::Cuda(format!("loading the CUBIN of {name}: {e:?}")))
        })?;
        Ok((module, stats))
    }

    /// Compiles and loads a standalone CUDA C module (tests and tools: e.g. that a
    /// compile error comes back with NVRTC's log and the file name).
    pub fn compile_module(&self, name: &str, source: &str) -> Result<ModuleStats> {
        guarded("NVRTC", || {
            self.load_source(name, source.to_string(), &[])
                .map(|(_, s)| s)
        })
    }

    fn function(&self, module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction> {
        module
            .load_function(name)
            .map_err(|e| Error::Cuda(format!("kernel {name} not found in its module: {e:?}")))
    }

    /// Copies POD records to a new device buffer on the render stream (never empty:
    /// an empty array becomes 16 zero bytes, so every kernel pointer is valid).
    fn upload<T: Pod>(&self, v: &[T]) -> Result<CudaSlice<u8>> {
        self.upload_bytes(as_bytes(v))
    }

    fn upload_bytes(&self, bytes: &[u8]) -> Result<CudaSlice<u8>> {
        let r = if bytes.is_empty() {
            self.stream.alloc_zeros::<u8>(16)
        } else {
            self.stream.clone_htod(bytes)
        };
        r.map_err(|e| {
            mem_error(
                "uploading a scene array",
                bytes.len(),
                self.info.total_mem,
                e,
            )
        })
    }

    fn upload_scene(&self, flat: &FlatScene) -> Result<DeviceScene> {
        Ok(DeviceScene {
            camera: self.upload(std::slice::from_ref(&flat.camera))?,
            film: self.upload(std::slice::from_ref(&flat.film))?,
            nodes: self.upload(&flat.nodes)?,
            node_count: flat.nodes.len() as u32,
            leaf: self.upload(&flat.leaf_prims)?,
            prims: self.upload(&flat.prims)?,
            shapes: self.upload(&flat.shapes)?,
        })
    }

    /// Renders `scene` (so far: the `depth` integrator with a box filter, see
    /// [`check_supported`]) and returns the image once it is on the host.
    pub fn render(&self, scene: &Scene, opts: &RenderOptions) -> Result<Image> {
        self.render_async(scene, opts)?.to_image()
    }

    /// Enqueues the render on the render stream and returns at once: the film's
    /// `ready` event fences its pixels (DESIGN.md §4).
    pub fn render_async(&self, scene: &Scene, opts: &RenderOptions) -> Result<CudaFilm> {
        let spp = opts.resolve_spp(scene)?;
        check_supported(scene)?;
        if matches!(scene.integrator, AnyIntegrator::Depth(_)) {
            guarded("CUDA render", || self.enqueue_depth(scene, opts.seed, spp))
        } else {
            guarded("CUDA render", || self.enqueue_render(scene, opts.seed, spp))
        }
    }

    fn enqueue_depth(&self, scene: &Scene, seed: u64, spp: u32) -> Result<CudaFilm> {
        let module = self.depth_module()?;
        let f = self.function(&module, "hg_depth")?;
        let flat = FlatScene::from_scene(scene)?;
        let dev = self.upload_scene(&flat)?;
        let [w, h] = flat.film.crop_size;
        let ch = if flat.film.alpha != 0 { 4 } else { 3 };
        let n = w as usize * h as usize * ch;
        let mut out = self
            .stream
            .alloc_zeros::<f32>(n.max(1))
            .map_err(|e| mem_error(&format!("a {w}x{h} film"), n * 4, self.info.total_mem, e))?;
        let cfg = LaunchConfig {
            grid_dim: (w.div_ceil(16), h.div_ceil(16), 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        let timing = Some(dsys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self
            .stream
            .record_event(timing)
            .map_err(drv("recording the start event"))?;
        let mut launch = self.stream.launch_builder(&f);
        launch
            .arg(&dev.camera)
            .arg(&dev.film)
            .arg(&dev.nodes)
            .arg(&dev.node_count)
            .arg(&dev.leaf)
            .arg(&dev.prims)
            .arg(&dev.shapes)
            .arg(&seed)
            .arg(&spp)
            .arg(&mut out);
        // SAFETY: the argument list matches hg_depth's signature in depth.cu, every
        // buffer holds the records the kernel indexes, and `out` has w*h*ch floats.
        unsafe { launch.launch(cfg) }.map_err(drv("launching hg_depth"))?;
        let ready = self
            .stream
            .record_event(timing)
            .map_err(drv("recording the film's ready event"))?;
        Ok(CudaFilm {
            data: out,
            start,
            film_start: None,
            ready,
            _inputs: Inputs {
                _depth: Some(Box::new(dev)),
                _arrays: Vec::new(),
                _work: Vec::new(),
                _queues: Vec::new(),
            },
            ctx: self.ctx.clone(),
            stream: self.stream.clone(),
            width: w as usize,
            height: h as usize,
            channels: ch,
        })
    }

    /// The record sizes and offsets NVRTC used, in [`LAYOUT`] order (GPU parity test).
    pub fn layout_table(&self) -> Result<Vec<u32>> {
        guarded("layout table", || {
            let module = self.depth_module()?;
            let f = self.function(&module, "hg_layout_table")?;
            let mut out = self
                .stream
                .alloc_zeros::<u32>(LAYOUT.len())
                .map_err(drv("allocating the layout table"))?;
            let mut launch = self.stream.launch_builder(&f);
            launch.arg(&mut out);
            // SAFETY: hg_layout_table writes exactly LAYOUT.len() u32 (HG_LAYOUT entries).
            unsafe { launch.launch(LaunchConfig::for_num_elems(1)) }
                .map_err(drv("launching hg_layout_table"))?;
            read_back(&self.ctx, &self.stream, &out)
        })
    }
}

/// Copies `buf` to the host: enqueued on `stream` after the work that wrote it, then
/// the host waits on an event recorded after the copy — that event only, never the
/// device. The destination is ordinary (pageable) memory on purpose: allocating or
/// freeing page-locked memory is one of CUDA's implicit synchronisation points, which
/// would make a host read wait for other streams' (other frameworks') work too.
fn read_back<T: DeviceRepr + ValidAsZeroBits + Clone>(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    buf: &CudaSlice<T>,
) -> Result<Vec<T>> {
    ctx.bind_to_thread().map_err(drv("binding the context"))?;
    // SAFETY: T is ValidAsZeroBits.
    let zero: T = unsafe { std::mem::zeroed() };
    let mut host: Vec<T> = vec![zero; buf.len()];
    stream
        .memcpy_dtoh(buf, &mut host)
        .map_err(drv("copying the result to the host"))?;
    let copied = stream
        .record_event(None)
        .map_err(drv("recording the copy's event"))?;
    copied
        .synchronize()
        .map_err(drv("waiting for the result"))?;
    Ok(host)
}

/// A rendered film on the device. Its buffer (and the scene buffers the kernel
/// reads) live as long as this value; `ready` is recorded on the render stream
/// after the last write to the film (DESIGN.md §4).
pub struct CudaFilm {
    data: CudaSlice<f32>,
    start: CudaEvent,
    film_start: Option<CudaEvent>,
    ready: CudaEvent,
    _inputs: Inputs,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    width: usize,
    height: usize,
    channels: usize,
}

impl CudaFilm {
    /// (width, height, channels).
    pub fn shape(&self) -> (usize, usize, usize) {
        (self.width, self.height, self.channels)
    }

    /// Whether the render has finished (queries the ready event, never blocks).
    pub fn is_ready(&self) -> bool {
        self.ready.is_complete()
    }

    /// The ready event's handle (`CUevent`), for `cuStreamWaitEvent` on a consumer stream.
    pub fn ready_event_handle(&self) -> usize {
        self.ready.cu_event() as usize
    }

    /// Milliseconds between the events around the kernel launch (waits for the render).
    pub fn kernel_ms(&self) -> Result<f32> {
        guarded("kernel timing", || {
            self.start
                .elapsed_ms(&self.ready)
                .map_err(drv("reading the kernel time"))
        })
    }

    /// Milliseconds of the develop kernel (the per-pixel sums run inside hg_render), for the
    /// benchmark's profile; `None` for the depth kernel (waits for the render).
    pub fn film_ms(&self) -> Result<Option<f32>> {
        let Some(e) = &self.film_start else {
            return Ok(None);
        };
        guarded("film timing", || {
            e.elapsed_ms(&self.ready)
                .map(Some)
                .map_err(drv("reading the film time"))
        })
    }

    /// The film as a [`DeviceTensor`] (H, W, C values), fenced by its ready event. The
    /// kernels' other buffers are released here: their frees are stream-ordered after
    /// the kernels that read them.
    pub fn into_tensor(self) -> DeviceTensor {
        let n = self.width * self.height * self.channels;
        let ordinal = self.ctx.ordinal();
        DeviceTensor::new(self.data, n, self.ready, self.ctx, self.stream, ordinal)
    }

    /// Copies the film to the host (on the render stream, waiting on that copy's event).
    pub fn to_image(&self) -> Result<Image> {
        let n = self.width * self.height * self.channels;
        let data = guarded("reading a film", || {
            read_back(&self.ctx, &self.stream, &self.data)
        })?;
        let mut img = Image::new(self.width, self.height, self.channels);
        img.data.copy_from_slice(&data[..n]);
        Ok(img)
    }
}

impl std::fmt::Debug for CudaFilm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CudaFilm({}x{}x{})",
            self.width, self.height, self.channels
        )
    }
}

/// Compiles embedded kernel module `module` after `prelude` (a render module's
/// [`super::features::Features::prelude`], or "") with NVRTC for `arch` (e.g. `sm_90`)
/// with the backend's options and then `extra` (a render module's register cap), without a
/// GPU or driver (NVRTC only): returns the CUBIN size and the compile time in seconds.
/// For build-machine checks of the NVRTC dialect.
pub fn nvrtc_compile_offline(
    module: &str,
    prelude: &str,
    arch: &str,
    extra: &[String],
) -> Result<(usize, f64)> {
    super::nvrtc_lib::load()?;
    let source = format!("{prelude}{}", kernels::assemble(module)?);
    let mut options = compile_options(arch, module);
    options.extend_from_slice(extra);
    let t = std::time::Instant::now();
    let cubin = guarded("NVRTC", || compile_cubin(module, &source, &options))?;
    Ok((cubin.len(), t.elapsed().as_secs_f64()))
}

/// Compiles `source` with NVRTC to a CUBIN; a failure carries NVRTC's log, which
/// names the kernel file and line (the assembled source has `#line` directives).
fn compile_cubin(module: &str, source: &str, options: &[String]) -> Result<Vec<u8>> {
    let nul = |what: &str| Error::Cuda(format!("{what} of {module} contains a NUL byte"));
    let src = CString::new(source).map_err(|_| nul("the source"))?;
    let name = CString::new(module).map_err(|_| nul("the name"))?;
    let prog = nres::create_program(&src, Some(&name))
        .map_err(|e| Error::Cuda(format!("nvrtcCreateProgram for {module}: {e:?}")))?;
    // SAFETY: `prog` is live until destroy_program below; the buffers are sized by NVRTC.
    let result = unsafe {
        let compiled = nres::compile_program(prog, options);
        let log = nres::get_program_log(prog)
            .map(|l| {
                let bytes: Vec<u8> = l
                    .iter()
                    .take_while(|&&c| c != 0)
                    .map(|&c| c as u8)
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .unwrap_or_default();
        match compiled {
            Err(e) => Err(Error::Cuda(format!(
                "NVRTC could not compile {module} ({e:?}; options {options:?}):\n{log}"
            ))),
            Ok(()) => {
                let mut size = 0usize;
                nsys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .and_then(|()| {
                        let mut cubin = vec![0u8; size];
                        nsys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut c_char)
                            .result()
                            .map(|()| cubin)
                    })
                    .map_err(|e| {
                        Error::Cuda(format!("no CUBIN for {module} ({e:?}); NVRTC log:\n{log}"))
                    })
            }
        }
    };
    // SAFETY: created above and not yet destroyed.
    let _ = unsafe { nres::destroy_program(prog) };
    result
}
