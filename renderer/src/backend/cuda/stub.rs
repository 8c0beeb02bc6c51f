//! The CUDA backend of a build without the `cuda` feature: the same API, and every
//! entry point says that CUDA is not compiled in (candle's pattern: no `#[cfg]`
//! anywhere else).

use std::convert::Infallible;

use super::cache::ModuleStats;
use super::DeviceInfo;
use crate::backend::RenderOptions;
use crate::error::{Error, Result};
use crate::io::Image;
use crate::scene::Scene;

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

/// NVRTC compile of a kernel module: an error, in this build.
pub fn nvrtc_compile_offline(
    _module: &str,
    _prelude: &str,
    _arch: &str,
    _extra: &[String],
) -> Result<(usize, f64)> {
    Err(unavailable())
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

    /// The device (unreachable: no backend exists in this build).
    pub fn info(&self) -> &DeviceInfo {
        match self.never {}
    }

    /// How each kernel module was obtained.
    pub fn module_stats(&self) -> Vec<ModuleStats> {
        match self.never {}
    }

    /// Renders `scene`.
    pub fn render(&self, _scene: &Scene, _opts: &RenderOptions) -> Result<Image> {
        match self.never {}
    }

    /// Enqueues a render.
    pub fn render_async(&self, _scene: &Scene, _opts: &RenderOptions) -> Result<CudaFilm> {
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

    /// The render stream's handle.
    pub fn stream_handle(&self) -> usize {
        match self.never {}
    }

    /// Uploads `data` to a new device tensor.
    pub fn upload_tensor(&self, _data: &[f32]) -> Result<DeviceTensor> {
        match self.never {}
    }

    /// Copies foreign device memory to the host.
    pub fn read_device_bytes(&self, _ptr: u64, _bytes: usize) -> Result<Vec<u8>> {
        match self.never {}
    }

    /// A device-wide synchronise.
    pub fn sync_device(&self) -> Result<()> {
        match self.never {}
    }
}

/// Number and bytes of device tensors alive: none, in this build.
pub fn live_device_tensors() -> (usize, usize) {
    (0, 0)
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

    /// Waits for the tensor's writes.
    pub fn wait(&self) -> Result<()> {
        match self.never {}
    }

    /// Makes a consumer stream wait for the tensor's writes.
    pub fn order_stream(&self, _stream: usize) -> Result<()> {
        match self.never {}
    }

    /// Records a release fence on a consumer stream.
    pub fn fence_stream(&self, _stream: usize) -> bool {
        match self.never {}
    }

    /// Copies the values to the host.
    pub fn to_host(&self) -> Result<Vec<f32>> {
        match self.never {}
    }

    /// A device copy.
    pub fn duplicate(&self) -> Result<DeviceTensor> {
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

    /// The ready event's handle.
    pub fn ready_event_handle(&self) -> usize {
        match self.never {}
    }

    /// Milliseconds the kernel took.
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
