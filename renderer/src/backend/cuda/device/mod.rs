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
//! | `tuning.rs` | [`RenderTuning`]: the render kernels' launch and compile settings |
//! | `plan.rs` | a render's waves and launch chunks, the kernels' scene and sample arguments |
//! | `launch.rs` | render launches (megakernel, depth, `ptracer`) and their film |
//! | `diagnostics.rs` | [`RenderKernelInfo`] and ray counts, for benchmarks |
//! | `wavefront.rs` | the wavefront `path` kernels |
//! | `film.rs` | [`CudaFilm`] |
//! | `tensor.rs` | [`DeviceTensor`]: films and imports, fences, host reads |
//! | `import.rs` | device-to-device imports of other frameworks' arrays |
//!
//! cudarc panics (instead of returning an error) when `libcuda.so` / `libnvrtc.so` or
//! one of their symbols is missing, so every entry point first checks that the
//! libraries load and runs the driver calls under `catch_unwind`: a machine without a
//! GPU gets `Error::CudaUnavailable`, and the process (and the CPU backend) carry on.
//!
//! CUDA does not support `fork`: a child forked from a process that initialised the
//! driver inherits the parent's memory (its backend, tensors, scenes, staging) but no
//! usable context, and a driver call there is undefined (an error or a hang). The
//! process that initialised the driver is recorded; in a forked child of it every entry
//! point ([`guarded`], which all driver calls go through) returns
//! `Error::CudaUnavailable` saying so ([`check_process`]), and every drop that would
//! call the driver leaks instead ([`release`], [`Owned`]): the handles are the
//! parent's, which still owns and frees them.

use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    sys as dsys, CudaContext, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::sys as nsys;

use super::{arch_for, check_nvrtc_targets, DeviceInfo};
use crate::error::{CudaError, Error, Result};
use crate::flat::LAYOUT;
use crate::scene::RenderSetup;

mod backward;
mod diagnostics;
mod elementwise;
mod event;
mod film;
mod foreign_stream;
mod import;
mod launch;
mod memory;
mod module;
mod plan;
mod scene;
mod tensor;
mod transfer;
mod tuning;
mod wavefront;

pub use diagnostics::RenderKernelInfo;
pub use film::CudaFilm;
pub use import::{ForeignArray, MAX_DIMS};
pub use module::nvrtc_compile_offline;
pub use scene::DeviceScene;
pub use tensor::{live_device_tensors, DeviceTensor};
pub use tuning::RenderTuning;

use event::Event;
use memory::{DeviceBuffer, Pool};
use module::Modules;
use tensor::{Readers, Reclaimer};
use transfer::Staging;

/// The process that initialised the CUDA driver (0 until one did).
static DRIVER_PID: AtomicU32 = AtomicU32::new(0);

/// Records this process as the one that initialised the driver (the first one only:
/// a forked child that inherited the record keeps it).
fn record_driver_process() {
    let _ = DRIVER_PID.compare_exchange(0, std::process::id(), Ordering::SeqCst, Ordering::SeqCst);
}

/// The id of the process that initialised CUDA, when this process is a forked child of
/// it (and so cannot use CUDA); `None` in that process itself, or where CUDA was not
/// initialised before the fork.
pub fn forked() -> Option<u32> {
    forked_from(DRIVER_PID.load(Ordering::SeqCst), std::process::id())
}

/// [`forked`] for the process `me` when `owner` initialised CUDA (0: nobody).
fn forked_from(owner: u32, me: u32) -> Option<u32> {
    (owner != 0 && owner != me).then_some(owner)
}

/// The error of a CUDA call in process `me`, a forked child of `owner`.
fn fork_error(owner: u32, me: u32) -> Error {
    Error::CudaUnavailable(format!(
        "CUDA was initialised in process {owner}; a forked child (this process, {me}) cannot \
         use it (CUDA does not support fork): use multiprocessing's 'spawn' start method \
         (or 'forkserver'), or create the processes before CUDA is first used"
    ))
}

/// `Ok` where CUDA may be used; in a forked child of the process that initialised CUDA,
/// the `Error::CudaUnavailable` that says so and what to do.
pub fn check_process() -> Result<()> {
    match forked() {
        None => Ok(()),
        Some(owner) => Err(fork_error(owner, std::process::id())),
    }
}

/// Runs the driver calls of a drop — except in a forked child of the process that
/// initialised CUDA, where they would be undefined: the object is left as it is (its
/// handles are the parent's, which frees them; the child has no context to free them in).
pub(crate) fn release(driver_calls: impl FnOnce()) {
    if forked().is_none() {
        driver_calls();
    }
}

/// A cudarc object (context, stream, module, event) held by one of heliograph's: cudarc
/// drops it with driver calls, so it is dropped through [`release`] (kept in a forked
/// child). Every field that holds a cudarc object is one of these.
pub(crate) struct Owned<T>(ManuallyDrop<T>);

impl<T> Owned<T> {
    pub(crate) fn new(value: T) -> Owned<T> {
        Owned(ManuallyDrop::new(value))
    }
}

impl<T> std::ops::Deref for Owned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here; the field is never used again.
        release(|| unsafe { ManuallyDrop::drop(&mut self.0) });
    }
}

/// Runs `f`, turning a cudarc panic (missing library or symbol) into an error; in a
/// forked child of the process that initialised CUDA, returns [`check_process`]'s error
/// without calling anything.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    check_process()?;
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        Err(Error::CudaUnavailable(format!("{what}: {msg}")))
    })
}

/// The text of a driver or NVRTC error, taken when the call fails (see [`CudaError`]).
fn code(e: impl std::fmt::Debug) -> String {
    format!("{e:?}")
}

/// A driver error from `what`.
fn drv(what: &'static str) -> impl Fn(DriverError) -> Error {
    move |e| {
        Error::Cuda(CudaError::Driver {
            what: what.into(),
            error: code(e),
        })
    }
}

/// A driver error from launching `kernel`.
fn launching(kernel: &'static str) -> impl Fn(DriverError) -> Error {
    move |e| {
        Error::Cuda(CudaError::Launch {
            kernel: kernel.into(),
            error: code(e),
        })
    }
}

/// An allocation or upload error of `bytes` bytes for `what`: running out of device
/// memory gets a message with the sizes and what to do (a request too large for the
/// device, not a CUDA failure); anything else the driver's code.
fn mem_error(what: &str, bytes: usize, total: usize, e: DriverError) -> Error {
    let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
    if e.0 == dsys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
        Error::Render(format!(
            "out of GPU memory: {what} needs {:.2} GiB and the device has {:.1} GiB in all \
             (other processes and live tensors use some); reduce the film resolution or \
             the scene, or free tensors you no longer need",
            gib(bytes),
            gib(total)
        ))
    } else {
        Error::Cuda(CudaError::Alloc {
            what: what.into(),
            bytes,
            error: code(e),
        })
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

/// The number of CUDA devices (0 when the driver reports none). Initialises the driver:
/// this process is then the only one that can use CUDA ([`forked`]).
pub fn device_count() -> Result<usize> {
    libraries_present()?;
    record_driver_process();
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
    ctx: Owned<Arc<CudaContext>>,
    stream: Owned<Arc<CudaStream>>,
    pool: Arc<Pool>,
    readers: Arc<Readers>,
    modules: Owned<Modules>,
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
            ctx: Owned::new(ctx.clone()),
            stream: Owned::new(stream.clone()),
            pool: pool.clone(),
            copy_stream: Owned::new(copy_stream),
            staging: Staging::new(&ctx),
            reclaimer: Reclaimer::new(&ctx),
        });
        Ok(CudaBackend {
            info,
            ctx: Owned::new(ctx),
            stream: Owned::new(stream),
            pool,
            readers,
            modules: Owned::new(Modules::new()),
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
        self.upload_staged(len, |_, dst| fill(dst))
    }

    /// As [`Self::upload_with`], `fill` also given the device address the values will
    /// have (for a table that points into itself).
    pub(crate) fn upload_staged(
        &self,
        len: usize,
        fill: impl FnOnce(u64, &mut [f32]) -> Result<()>,
    ) -> Result<DeviceTensor> {
        // the staging lease comes before the guarded driver calls
        check_process()?;
        let what = format!("a tensor of {len} floats");
        let bytes = len
            .checked_mul(4)
            .ok_or_else(|| Error::Cuda(CudaError::AddressOverflow { what: what.clone() }))?;
        let mut lease = self.readers.staging.lease(bytes)?;
        let buf = guarded("allocating an upload", || {
            self.pool.alloc(bytes, &self.stream, &what)
        })?;
        fill(buf.ptr(), lease.floats_mut())?;
        guarded("uploading a tensor", || {
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
            let bytes = len
                .checked_mul(4)
                .ok_or_else(|| Error::Cuda(CudaError::AddressOverflow { what: what.clone() }))?;
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
            let module = self.depth_module(false)?;
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
                    .map_err(launching("hg_layout_table"))
                    .map(drop)
            })?;
            let floats = self.tensor(out, LAYOUT.len(), ready).to_host()?;
            Ok(floats.iter().map(|f| f.to_bits()).collect())
        })
    }

    /// The sizes and offsets NVRTC used for the plugins' own records, in the order of
    /// [`crate::flat::plugin_layout`] (`hg_plugin_layout_table`, parity.cu; GPU layout
    /// test).
    pub fn plugin_layout_table(&self) -> Result<Vec<u32>> {
        guarded("plugin layout table", || {
            let n = crate::flat::plugin_layout().len();
            let module = self.parity_module()?;
            let f = self.function(&module, "hg_plugin_layout_table")?;
            let out = self
                .pool
                .alloc_zeros(n * 4, &self.stream, "the plugin layout table")?;
            let ready = self.run_and_fence(|| {
                let p = out.ptr();
                let mut launch = self.stream.launch_builder(&f);
                launch.arg(&p);
                // SAFETY: hg_plugin_layout_table writes exactly n u32 (HG_BSDF_LAYOUT and
                // HG_TEXTURE_LAYOUT and HG_EMITTER_LAYOUT, generated from the layouts
                // plugin_layout() joins).
                unsafe { launch.launch(LaunchConfig::for_num_elems(1)) }
                    .map_err(launching("hg_plugin_layout_table"))
                    .map(drop)
            })?;
            let floats = self.tensor(out, n, ready).to_host()?;
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
    pub fn plugin_parity(&self, setup: &RenderSetup, queries: &[f32]) -> Result<Vec<f32>> {
        guarded("parity kernel", || {
            let module = self.parity_module()?;
            let f = self.function(&module, "hg_parity")?;
            let s = self.upload_scene(setup, 0)?;
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
            let args = plan::SceneArgs::new(&s, &generic)?;
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
                    .map_err(launching("hg_parity"))
                    .map(drop)
            })?;
            self.tensor(out, nq as usize * 16, ready).to_host()
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::atomic::Ordering::SeqCst;

    use super::*;

    #[test]
    fn a_forked_child_is_told_apart_by_process_ids() {
        assert_eq!(forked_from(0, 7), None, "nobody initialised CUDA");
        assert_eq!(forked_from(7, 7), None, "the process that did");
        assert_eq!(forked_from(7, 8), Some(7), "a child forked from it");
        let e = fork_error(7, 8).to_string();
        assert!(
            e.starts_with("CUDA unavailable: CUDA was initialised in process 7;")
                && e.contains("(this process, 8)")
                && e.contains("does not support fork")
                && e.contains("'spawn'"),
            "{e}"
        );
    }

    /// Counts the drops of the values it is part of.
    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    /// What a child forked from `parent` must see; the exit code names the check that
    /// failed.
    fn child_checks(parent: u32, inherited: Owned<Counted>, drops: &AtomicUsize) -> i32 {
        if forked() != Some(parent) {
            return 1;
        }
        match check_process() {
            Err(Error::CudaUnavailable(m)) if m.contains(&format!("process {parent};")) => {}
            _ => return 2,
        }
        let mut called = false;
        let r = guarded("a driver call", || {
            called = true;
            Ok(())
        });
        if r.is_ok() || called {
            return 3;
        }
        release(|| called = true);
        if called {
            return 4;
        }
        drop(inherited);
        if drops.load(SeqCst) != 1 {
            return 5;
        }
        0
    }

    #[test]
    fn in_a_forked_child_driver_calls_are_refused_and_drops_leak() {
        // what initialising the driver records: this test process is the one that did
        record_driver_process();
        let parent = std::process::id();
        assert_eq!(forked(), None);
        assert!(check_process().is_ok());
        let drops = Arc::new(AtomicUsize::new(0));
        drop(Owned::new(Counted(drops.clone())));
        assert_eq!(drops.load(SeqCst), 1, "the process that made it drops it");
        let inherited = Owned::new(Counted(drops.clone()));
        // SAFETY: the child only reads atomics, formats a message and calls _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = child_checks(parent, inherited, &drops);
            // SAFETY: ends the child at once, running nothing of the parent's.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the child's check {} failed",
            libc::WEXITSTATUS(status)
        );
        drop(inherited);
        assert_eq!(drops.load(SeqCst), 2, "the parent still drops its own");
    }
}
