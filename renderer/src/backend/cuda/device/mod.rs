//! The CUDA backend proper (feature `cuda`): context, streams, memory, modules, the
//! persistent device scene, renders, transfers and imports, one file per concern:
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`CudaBackend`]: opening the device, shared helpers, test tools |
//! | `memory.rs` | the stream-ordered memory pool and its buffers |
//! | `event.rs` | events and host waits (poll briefly, then block) |
//! | `transfer.rs` | page-locked staging for uploads and host reads |
//! | `module.rs` | NVRTC, the program cache, loaded modules and kernels |
//! | `scene.rs` | [`DeviceScene`]: the uploaded scene and its patches |
//! | `launch.rs` | render launches (megakernel, depth), tuning |
//! | `wavefront.rs` | the wavefront `path` kernels |
//! | `film.rs` | [`CudaFilm`] |
//! | `tensor.rs` | [`DeviceTensor`]: films and imports, fences, host reads |
//! | `import.rs` | device-to-device imports of other frameworks' arrays |
//!
//! cudarc panics (instead of returning an error) when `libcuda.so` / `libnvrtc.so` or
//! one of their symbols is missing, so every entry point first checks that the
//! libraries load and runs the driver calls under `catch_unwind`: a machine without a
//! GPU gets `Error::CudaUnavailable`, and the process (and the CPU backend) carry on.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    sys as dsys, CudaContext, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::sys as nsys;

use super::{arch_for, check_nvrtc_targets, DeviceInfo};
use crate::error::{Error, Result};
use crate::flat::LAYOUT;
use crate::scene::Scene;

mod event;
mod film;
mod import;
mod launch;
mod memory;
mod module;
mod scene;
mod tensor;
mod transfer;
mod wavefront;

pub use film::CudaFilm;
pub use import::{ForeignArray, MAX_DIMS};
pub use launch::{RenderKernelInfo, RenderTuning};
pub use module::nvrtc_compile_offline;
pub use scene::DeviceScene;
pub use tensor::{live_device_tensors, DeviceTensor};

use event::Event;
use memory::{DeviceBuffer, Pool};
use module::Modules;
use tensor::{Readers, Reclaimer};
use transfer::Staging;

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

/// The CUDA backend: one device, its primary context, one non-blocking render stream
/// (every upload, patch and kernel, in order), a copy stream for host reads, a memory
/// pool and page-locked staging.
pub struct CudaBackend {
    info: DeviceInfo,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pool: Arc<Pool>,
    readers: Arc<Readers>,
    modules: Modules,
    tuning: Mutex<RenderTuning>,
    uploaded: AtomicU64,
    timing: AtomicBool,
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
    /// primary context and creates the non-blocking render and copy streams.
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
        // heliograph orders its streams with explicit events: cudarc's
        // per-buffer event tracking would add waits and records to every launch
        // SAFETY: no CudaSlice made before this point is used across streams.
        unsafe { ctx.disable_event_tracking() };
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
        let copy_stream = ctx.new_stream().map_err(drv("creating the copy stream"))?;
        let pool = Pool::new(ordinal, info.total_mem)?;
        let readers = Arc::new(Readers {
            ctx: ctx.clone(),
            stream: stream.clone(),
            pool: pool.clone(),
            copy_stream,
            staging: Staging::new(&ctx),
            reclaimer: Reclaimer::new(&ctx),
        });
        Ok(CudaBackend {
            info,
            ctx,
            stream,
            pool,
            readers,
            modules: Modules::new(),
            tuning: Mutex::new(RenderTuning::default()),
            uploaded: AtomicU64::new(0),
            timing: AtomicBool::new(false),
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

    /// Bytes of scene data copied to the device so far (uploads and patches).
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded.load(Ordering::Relaxed)
    }

    /// Bytes of page-locked staging memory held, and bytes of device memory waiting for
    /// the reclaimer (memory-growth tests).
    pub fn held_bytes(&self) -> (usize, usize) {
        (
            self.readers.staging.held(),
            self.readers.reclaimer.pending(),
        )
    }

    /// Wraps a buffer written on the render stream before `ready`.
    fn tensor(&self, data: DeviceBuffer, len: usize, ready: Event) -> DeviceTensor {
        DeviceTensor::new(data, len, ready, self.readers.clone(), self.info.ordinal)
    }

    /// Uploads `data` to a new device tensor (through page-locked staging, an
    /// asynchronous DMA on the render stream).
    pub fn upload_tensor(&self, data: &[f32]) -> Result<DeviceTensor> {
        self.upload_with(data.len(), |dst| {
            dst.copy_from_slice(data);
            Ok(())
        })
    }

    /// Uploads `len` values that `fill` writes straight into page-locked staging (the
    /// one host copy of an upload: a DLPack reader converts into it), then copies them
    /// to a new device tensor with an asynchronous DMA on the render stream. The host
    /// does not wait for the DMA; the staging is reused once it has run.
    pub fn upload_with(
        &self,
        len: usize,
        fill: impl FnOnce(&mut [f32]) -> Result<()>,
    ) -> Result<DeviceTensor> {
        let what = format!("a tensor of {len} floats");
        let bytes = len
            .checked_mul(4)
            .ok_or_else(|| Error::Cuda(format!("{what} has more bytes than an address holds")))?;
        let mut lease = self.readers.staging.lease(bytes)?;
        fill(lease.floats_mut())?;
        guarded("uploading a tensor", || {
            let buf = self.pool.alloc(bytes, &self.stream, &what)?;
            // SAFETY: the lease is held until the DMA's event below completed.
            unsafe { buf.write(0, lease.as_slice()) }?;
            let ready = Event::recorded(&self.ctx, self.stream.cu_stream())?;
            lease.release_after(Event::recorded(&self.ctx, self.stream.cu_stream())?);
            Ok(self.tensor(buf, len, ready))
        })
    }

    /// A new device tensor of `len` zeros (filled on the render stream).
    pub fn zeros(&self, len: usize) -> Result<DeviceTensor> {
        guarded("allocating a tensor", || {
            let what = format!("a tensor of {len} floats");
            let bytes = len.checked_mul(4).ok_or_else(|| {
                Error::Cuda(format!("{what} has more bytes than an address holds"))
            })?;
            let buf = self.pool.alloc_zeros(bytes, &self.stream, &what)?;
            let ready = Event::recorded(&self.ctx, self.stream.cu_stream())?;
            Ok(self.tensor(buf, len, ready))
        })
    }

    /// A device-wide synchronise (`cuCtxSynchronize`): waits for every stream of the
    /// context, other frameworks' included. Never used by heliograph on the caller's
    /// thread; it is the blunt baseline the seed reproduction compares the stream-aware
    /// export with.
    pub fn sync_device(&self) -> Result<()> {
        guarded("synchronising the device", || {
            self.ctx.synchronize().map_err(drv("cuCtxSynchronize"))
        })
    }

    /// The record sizes and offsets NVRTC used, in [`LAYOUT`] order (GPU parity test).
    pub fn layout_table(&self) -> Result<Vec<u32>> {
        guarded("layout table", || {
            let module = self.depth_module()?;
            let f = self.function(&module, "hg_layout_table")?;
            let out = self
                .pool
                .alloc_zeros(LAYOUT.len() * 4, &self.stream, "the layout table")?;
            let ready = self.run_and_fence(|| {
                let p = out.ptr();
                let mut launch = self.stream.launch_builder(&f);
                launch.arg(&p);
                // SAFETY: hg_layout_table writes exactly LAYOUT.len() u32 (HG_LAYOUT entries).
                unsafe { launch.launch(LaunchConfig::for_num_elems(1)) }
                    .map_err(drv("launching hg_layout_table"))
                    .map(drop)
            })?;
            let floats = self.tensor(out, LAYOUT.len(), ready).to_host()?;
            Ok(floats.iter().map(|f| f.to_bits()).collect())
        })
    }

    /// Runs `launch` on the render stream and returns an event after it.
    fn run_and_fence(&self, launch: impl FnOnce() -> Result<()>) -> Result<Event> {
        launch()?;
        Event::recorded(&self.ctx, self.stream.cu_stream())
    }

    /// Runs the per-plugin parity kernel (kernels/parity.cu) on `queries` (16 floats
    /// each) against `scene`'s plugins and returns the answers (16 floats each): the GPU
    /// half of the CPU/CUDA parity test of eval, pdf and sample.
    pub fn plugin_parity(&self, scene: &Scene, queries: &[f32]) -> Result<Vec<f32>> {
        guarded("parity kernel", || {
            let module = self.parity_module()?;
            let f = self.function(&module, "hg_parity")?;
            let s = self.upload_scene(scene, 0)?;
            let nq = (queries.len() / 16) as u32;
            let q = self.upload_tensor(&queries[..nq as usize * 16])?;
            let out = self.pool.alloc_zeros(
                (nq as usize * 16).max(1) * 4,
                &self.stream,
                "the parity answers",
            )?;
            // the parity module is generic: every plugin, the BVH, no unit records
            let mut generic = s.features(0);
            generic.brute_force = false;
            generic.unit_cap = 0;
            let args = launch::SceneArgs::new(&s, &generic)?;
            let ready = self.run_and_fence(|| {
                let (qp, op) = (q.device_ptr(), out.ptr());
                let mut l = self.stream.launch_builder(&f);
                args.push(&mut l);
                l.arg(&qp).arg(&nq).arg(&op);
                let cfg = LaunchConfig {
                    grid_dim: (nq.div_ceil(64).max(1), 1, 1),
                    block_dim: (64, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: the arguments match hg_parity in parity.cu one for one; `q`
                // holds nq * 16 floats and `out` has room for as many.
                unsafe { l.launch(cfg) }
                    .map_err(drv("launching hg_parity"))
                    .map(drop)
            })?;
            self.tensor(out, nq as usize * 16, ready).to_host()
        })
    }
}
