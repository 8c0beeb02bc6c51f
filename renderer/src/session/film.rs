//! [`Film`]: what a render returns, in whichever state its backend leaves it.

use std::sync::Arc;

use crate::backend::cpu::RenderJob;
use crate::backend::cuda::CudaFilm;
use crate::error::Result;
use crate::io::Image;
use crate::render::RenderOptions;
use crate::scene::RenderSetup;

/// The result of a render: still being rendered on the CPU, developed on the host, or
/// on the device behind its ready event.
pub enum Film {
    /// A CPU render running in the background, with the scene snapshot and options it
    /// renders (rendering them again gives the same image, bit for bit).
    Pending {
        /// The render.
        job: RenderJob,
        /// The scene it renders.
        setup: Arc<RenderSetup>,
        /// Its options.
        opts: RenderOptions,
    },
    /// A developed film on the host.
    Host(Image),
    /// A film on the GPU; its ready event fences the pixels.
    Device(CudaFilm),
}

impl Film {
    /// The background render of a pending film, to follow its progress.
    pub fn job(&self) -> Option<&RenderJob> {
        match self {
            Film::Pending { job, .. } => Some(job),
            _ => None,
        }
    }

    /// The developed film on the host, once the render has finished.
    pub fn into_image(self) -> Result<Image> {
        match self {
            Film::Pending { job, .. } => job.wait(),
            Film::Host(image) => Ok(image),
            Film::Device(film) => film.to_image(),
        }
    }
}
