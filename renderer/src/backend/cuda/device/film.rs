//! A rendered film on the device: a [`DeviceTensor`] (H, W, C) fenced by its ready
//! event, plus the render's timing events when the backend times renders
//! ([`CudaBackend::set_timing`], for benchmarks: timing events cost a little, so
//! ordinary renders record none).

use cudarc::driver::CudaEvent;

use super::tensor::DeviceTensor;
use super::{drv, guarded, CudaBackend, Owned};
use crate::error::{CudaError, Error, Result};
use crate::io::Image;

/// The timing events of a timed render.
pub(crate) struct Timing {
    pub(crate) start: CudaEvent,
    /// Before hg_develop (the per-pixel sums run inside hg_render).
    pub(crate) film_start: Option<CudaEvent>,
    pub(crate) end: CudaEvent,
}

/// A rendered film on the device (see the module docs).
pub struct CudaFilm {
    tensor: DeviceTensor,
    timing: Owned<Option<Timing>>,
    width: usize,
    height: usize,
    channels: usize,
}

impl CudaFilm {
    pub(crate) fn new(
        tensor: DeviceTensor,
        timing: Option<Timing>,
        width: usize,
        height: usize,
        channels: usize,
    ) -> CudaFilm {
        CudaFilm {
            tensor,
            timing: Owned::new(timing),
            width,
            height,
            channels,
        }
    }

    /// (width, height, channels).
    pub fn shape(&self) -> (usize, usize, usize) {
        (self.width, self.height, self.channels)
    }

    /// Whether the render has finished (queries the ready event, never blocks).
    pub fn is_ready(&self) -> bool {
        self.tensor.is_ready()
    }

    /// The ready event's handle (`CUevent`), for `cuStreamWaitEvent` on a consumer stream.
    pub fn ready_event_handle(&self) -> usize {
        self.tensor.ready_event_handle()
    }

    fn timing(&self) -> Result<&Timing> {
        self.timing.as_ref().ok_or(Error::Cuda(CudaError::NotTimed))
    }

    /// Milliseconds of the render's kernels, from events around them (waits for the
    /// render); an error for an untimed render.
    pub fn kernel_ms(&self) -> Result<f32> {
        let t = self.timing()?;
        guarded("kernel timing", || {
            t.start
                .elapsed_ms(&t.end)
                .map_err(drv("reading the kernel time"))
        })
    }

    /// Milliseconds of the develop kernel, for the benchmark's profile; `None` for the
    /// depth kernel (waits for the render).
    pub fn film_ms(&self) -> Result<Option<f32>> {
        let t = self.timing()?;
        let Some(e) = &t.film_start else {
            return Ok(None);
        };
        guarded("film timing", || {
            e.elapsed_ms(&t.end)
                .map(Some)
                .map_err(drv("reading the film time"))
        })
    }

    /// The film as a [`DeviceTensor`] (H, W, C values), fenced by its ready event.
    pub fn into_tensor(self) -> DeviceTensor {
        self.tensor
    }

    /// Copies the film to the host (after its ready event, through staging).
    pub fn to_image(&self) -> Result<Image> {
        let mut img = Image::new(self.width, self.height, self.channels);
        self.tensor.read_into(&mut img.data)?;
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

impl CudaBackend {
    /// Whether later renders record timing events (for [`CudaFilm::kernel_ms`]).
    pub fn set_timing(&self, on: bool) {
        self.timing.store(on, std::sync::atomic::Ordering::Relaxed);
    }
}
