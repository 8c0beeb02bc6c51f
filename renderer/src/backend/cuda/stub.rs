//! The CUDA backend of a build without the `cuda` feature: the same API, and every
//! entry point says that CUDA is not compiled in (candle's pattern: no `#[cfg]`
//! anywhere else). No value of these types can exist, so every method body is
//! `match self.never {}`.

use std::convert::Infallible;

use super::cache::ModuleStats;
use super::DeviceInfo;
use crate::desc::params::DeviceValues;
use crate::error::{Error, Result};
use crate::io::Image;
use crate::render::RenderOptions;
use crate::scene::loaded::Changes;
use crate::scene::RenderSetup;
use crate::tensor::dlpack::DLDataType;

fn unavailable() -> Error {
    Error::CudaUnavailable(
        "built without the cuda feature (rebuild with `cargo build --features cuda`)".into(),
    )
}

/// Whether the CUDA driver and NVRTC libraries can be loaded: never, in this build.
pub fn libraries_present() -> Result<()> {
    Err(unavailable())
}

/// The number of CUDA devices: an error, in this build.
pub fn device_count() -> Result<usize> {
    Err(unavailable())
}

/// The process that initialised CUDA, when this process is a forked child of it: never,
/// in this build (nothing initialises CUDA).
pub fn forked() -> Option<u32> {
    None
}

/// `Ok`: in this build no process initialises CUDA, so no forked child inherits it.
pub fn check_process() -> Result<()> {
    Ok(())
}

/// NVRTC compile of a kernel module: an error, in this build.
pub fn nvrtc_compile_offline(
    _module: &str,
    _prelude: &str,
    _arch: &str,
    _extra: &[String],
) -> Result<(usize, f64)> {
    Err(unavailable())
}

/// Number and bytes of device tensors alive: none, in this build.
pub fn live_device_tensors() -> (usize, usize) {
    (0, 0)
}

/// Most dimensions an imported array may have.
pub const MAX_DIMS: usize = 8;

/// An array in device memory, as a DLPack tensor describes it.
#[derive(Clone, Debug)]
pub struct ForeignArray {
    /// The address of element (0, ..., 0).
    pub ptr: u64,
    /// Extents.
    pub shape: Vec<i64>,
    /// Strides in elements.
    pub strides: Vec<i64>,
    /// The element type.
    pub dtype: DLDataType,
}

/// The CUDA backend; it cannot be created in this build.
#[derive(Debug)]
pub struct CudaBackend {
    never: Infallible,
}

impl CudaBackend {
    /// Always `Error::CudaUnavailable` in this build.
    pub fn new(_ordinal: usize) -> Result<CudaBackend> {
        Err(unavailable())
    }

    /// The device.
    pub fn info(&self) -> &DeviceInfo {
        match self.never {}
    }

    /// How each kernel module was obtained.
    pub fn module_stats(&self) -> Vec<ModuleStats> {
        match self.never {}
    }

    /// The render stream's handle.
    pub fn stream_handle(&self) -> usize {
        match self.never {}
    }

    /// Bytes of scene data copied to the device so far.
    pub fn uploaded_bytes(&self) -> u64 {
        match self.never {}
    }

    /// Page-locked staging bytes held, and device bytes waiting for the reclaimer.
    pub fn held_bytes(&self) -> (usize, usize) {
        match self.never {}
    }

    /// Whether later renders record timing events.
    pub fn set_timing(&self, _on: bool) {
        match self.never {}
    }

    /// Uploads a scene.
    pub fn upload_scene(&self, _setup: &RenderSetup, _version: u64) -> Result<DeviceScene> {
        match self.never {}
    }

    /// Applies an update's changes to a device scene.
    pub fn update_scene(
        &self,
        _s: &mut DeviceScene,
        _setup: &RenderSetup,
        _changes: &Changes,
        _version: u64,
    ) -> Result<()> {
        match self.never {}
    }

    /// Enqueues the render of a device scene.
    pub fn render_scene(
        &self,
        _s: &DeviceScene,
        _opts: &RenderOptions,
        _scene_spp: u32,
    ) -> Result<CudaFilm> {
        match self.never {}
    }

    /// The backward pass of differentiable rendering on a device scene.
    pub fn backward(
        &self,
        _s: &DeviceScene,
        _params: &[crate::diff::DiffParam],
        _adjoint: &DeviceTensor,
        _opts: &RenderOptions,
        _scene_spp: u32,
    ) -> Result<Vec<DeviceTensor>> {
        match self.never {}
    }

    /// Enqueues the render of a device scene through another sensor or integrator.
    pub fn render_scene_as(
        &self,
        _s: &mut DeviceScene,
        _sensor: Option<&crate::sensors::Sensor>,
        _integrator: Option<&crate::integrators::AnyIntegrator>,
        _opts: &RenderOptions,
        _scene_spp: u32,
    ) -> Result<CudaFilm> {
        match self.never {}
    }

    /// Renders `scene`.
    pub fn render(&self, _setup: &RenderSetup, _opts: &RenderOptions) -> Result<Image> {
        match self.never {}
    }

    /// Uploads and enqueues a render.
    pub fn render_async(&self, _setup: &RenderSetup, _opts: &RenderOptions) -> Result<CudaFilm> {
        match self.never {}
    }

    /// Makes the render stream wait for another framework's stream.
    pub fn join_stream(&self, _stream: usize) -> Result<()> {
        match self.never {}
    }

    /// Makes another framework's stream wait for the render stream.
    pub fn join_render_stream(&self, _stream: usize) -> Result<()> {
        match self.never {}
    }

    /// Copies a tensor into another framework's device buffer.
    ///
    /// # Safety
    /// As the CUDA build's: `dst` holds the tensor's values until the copy ran.
    pub unsafe fn copy_to_foreign(&self, _t: &DeviceTensor, _dst: u64) -> Result<()> {
        match self.never {}
    }

    /// Copies a foreign device array into a new device tensor.
    pub fn import_device(&self, _a: &ForeignArray) -> Result<DeviceTensor> {
        match self.never {}
    }

    /// Elementwise arithmetic on device tensors.
    pub fn elementwise(
        &self,
        _op: &str,
        _args: &[crate::backend::cuda::elementwise::Operand<'_, DeviceTensor>],
    ) -> Result<(DeviceTensor, Vec<usize>)> {
        match self.never {}
    }

    /// An assignment into a copy of a device tensor.
    pub fn assign(
        &self,
        _target: &DeviceTensor,
        _plan: &crate::backend::cuda::elementwise::Plan,
        _args: &[crate::backend::cuda::elementwise::Operand<'_, DeviceTensor>],
    ) -> Result<DeviceTensor> {
        match self.never {}
    }

    /// Uploads `data` to a new device tensor.
    pub fn upload_tensor(&self, _data: &[f32]) -> Result<DeviceTensor> {
        match self.never {}
    }

    /// Uploads `len` values that `fill` writes into staging memory.
    pub fn upload_with(
        &self,
        _len: usize,
        _fill: impl FnOnce(&mut [f32]) -> Result<()>,
    ) -> Result<DeviceTensor> {
        match self.never {}
    }

    /// Compiles and loads a standalone CUDA C module.
    pub fn compile_module(&self, _name: &str, _source: &str) -> Result<ModuleStats> {
        match self.never {}
    }

    /// The record sizes and offsets NVRTC used.
    pub fn layout_table(&self) -> Result<Vec<u32>> {
        match self.never {}
    }

    /// See the CUDA backend.
    pub fn plugin_layout_table(&self) -> Result<Vec<u32>> {
        match self.never {}
    }

    /// A device-wide synchronise.
    pub fn sync_device(&self) -> Result<()> {
        match self.never {}
    }
}

/// A scene on the device; none exists in this build.
#[derive(Debug)]
pub struct DeviceScene {
    never: Infallible,
}

impl DeviceScene {
    /// The scene version it mirrors.
    pub fn version(&self) -> u64 {
        match self.never {}
    }

    /// Bytes of device memory held.
    pub fn bytes(&self) -> usize {
        match self.never {}
    }
}

/// Float32 values on the device; none exists in this build.
#[derive(Debug)]
pub struct DeviceTensor {
    never: Infallible,
}

impl DeviceTensor {
    /// The number of float32 values.
    pub fn len(&self) -> usize {
        match self.never {}
    }

    /// Whether the tensor holds no values.
    pub fn is_empty(&self) -> bool {
        match self.never {}
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        match self.never {}
    }

    /// The device address of the first value.
    pub fn device_ptr(&self) -> u64 {
        match self.never {}
    }

    /// Whether every write has finished.
    pub fn is_ready(&self) -> bool {
        match self.never {}
    }

    /// Whether every write has finished, or the error of that work.
    pub fn query(&self) -> Result<bool> {
        match self.never {}
    }

    /// Blocks until the writes are done.
    pub fn wait(&self) -> Result<()> {
        match self.never {}
    }

    /// Blocks until the writes are done or `keep_waiting` says no.
    pub fn wait_until(&self, _keep_waiting: impl FnMut() -> bool) -> Result<bool> {
        match self.never {}
    }

    /// The ready event's handle.
    pub fn ready_event_handle(&self) -> usize {
        match self.never {}
    }

    /// Makes a consumer stream wait for the writes.
    pub fn order_stream(&self, _stream: usize) -> Result<()> {
        match self.never {}
    }

    /// Records a release fence on a consumer stream.
    pub fn fence_stream(&self, _stream: usize) -> bool {
        match self.never {}
    }

    /// A consumer that could not be fenced has let go.
    pub fn mark_unfenced(&self) {
        match self.never {}
    }

    /// Number of release fences held.
    pub fn fence_count(&self) -> usize {
        match self.never {}
    }

    /// Copies the values to the host.
    pub fn to_host(&self) -> Result<Vec<f32>> {
        match self.never {}
    }

    /// Copies the values into `out`.
    pub fn read_into(&self, _out: &mut [f32]) -> Result<()> {
        match self.never {}
    }

    /// A device copy.
    pub fn duplicate(&self) -> Result<DeviceTensor> {
        match self.never {}
    }
}

impl DeviceValues for DeviceTensor {
    fn len(&self) -> usize {
        match self.never {}
    }
    fn to_host(&self) -> Result<Vec<f32>> {
        match self.never {}
    }
    fn as_any(&self) -> &dyn std::any::Any {
        match self.never {}
    }
}

/// A rendered film on the device; none exists in this build.
#[derive(Debug)]
pub struct CudaFilm {
    never: Infallible,
}

impl CudaFilm {
    /// (width, height, channels).
    pub fn shape(&self) -> (usize, usize, usize) {
        match self.never {}
    }

    /// Whether the render has finished.
    pub fn is_ready(&self) -> bool {
        match self.never {}
    }

    /// Milliseconds of the render's kernels.
    pub fn kernel_ms(&self) -> Result<f32> {
        match self.never {}
    }

    /// Copies the film to the host.
    pub fn to_image(&self) -> Result<Image> {
        match self.never {}
    }

    /// The film as a device tensor.
    pub fn into_tensor(self) -> DeviceTensor {
        match self.never {}
    }
}
