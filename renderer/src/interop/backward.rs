//! A backward pass's tensors: the image's gradient imported where the renderer reads
//! it ([`ImageGradient`]), and the parameters' gradients as new tensors
//! ([`gradient_tensors`]).

use std::sync::Arc;

use crate::backend::cuda::DeviceTensor;
use crate::backend::renderer::Renderer;
use crate::diff::DiffParam;
use crate::error::{Error, Result};
use crate::interop::import::{HostTo, Imported};
use crate::interop::Storage;
use crate::render::RenderOptions;
use crate::session::gradients::{Adjoint, Gradients};
use crate::session::Session;

/// The image's gradient where `renderer` reads it.
pub enum ImageGradient {
    /// On the host (C order).
    Host(Vec<f32>, Vec<usize>),
    /// On the renderer's GPU.
    Device(Arc<DeviceTensor>, Vec<usize>),
}

impl ImageGradient {
    /// Where the import of the image's gradient for `renderer` puts it, and the CUDA
    /// stream whose work writes a CUDA array (`stream`, for a GPU renderer only: a
    /// host renderer reads the array in the producer's own order).
    pub fn target(renderer: &dyn Renderer, stream: Option<usize>) -> (HostTo<'_>, Option<usize>) {
        match renderer.device_backend() {
            Some(be) => (HostTo::Device(be), stream),
            None => (HostTo::Vec, None),
        }
    }

    /// The imported gradient (imported where [`Self::target`] said), read to the host
    /// for a host renderer.
    pub fn new(imported: Imported, renderer: &dyn Renderer) -> Result<ImageGradient> {
        if renderer.device_backend().is_none() {
            let host = imported.into_host()?;
            return Ok(ImageGradient::Host(host.data, host.shape));
        }
        let Imported::Device { tensor, shape, .. } = imported else {
            return Err(Error::Render(
                "the image's gradient could not be placed on the GPU".into(),
            ));
        };
        Ok(ImageGradient::Device(tensor, shape))
    }

    /// The backward pass of a render of `session`'s scene with `opts` on `renderer`,
    /// once the gradient has the image's shape ([`Session::backward`]). A host
    /// gradient's values go to the pass; a device gradient stays held here.
    pub fn backward(
        &mut self,
        session: &mut Session,
        renderer: &dyn Renderer,
        params: &[DiffParam],
        opts: RenderOptions,
    ) -> Result<Gradients> {
        let adjoint = match self {
            ImageGradient::Host(data, shape) => {
                session.check_adjoint_shape(shape)?;
                Adjoint::Host(std::mem::take(data))
            }
            ImageGradient::Device(tensor, shape) => {
                session.check_adjoint_shape(shape)?;
                Adjoint::Device(tensor)
            }
        };
        session.backward(renderer, params, adjoint, opts)
    }
}

/// The parameters' gradients as new tensors, one per parameter in the shape of its
/// value: the GPU's stay on the device, the CPU's pass runs here (it reads a scene
/// snapshot: the caller holds no lock on the session).
pub fn gradient_tensors(grads: Gradients, params: &[DiffParam]) -> Result<Vec<Storage>> {
    match grads {
        Gradients::Device(grads) => Ok(params
            .iter()
            .zip(grads)
            .map(|(p, g)| Storage::device(p.shape(), Arc::new(g)))
            .collect()),
        Gradients::Host(pass) => {
            let grads = pass.run()?;
            params
                .iter()
                .zip(grads)
                .map(|(p, g)| Storage::from_values(p.shape(), &g))
                .collect()
        }
    }
}
