//! The image's gradient going into a backward pass ([`Adjoint`]) and the parameters'
//! gradients coming out of it ([`Gradients`]).

use std::sync::Arc;

use crate::backend::cpu::backward::backward;
use crate::backend::cuda::DeviceTensor;
use crate::diff::DiffParam;
use crate::error::Result;
use crate::render::{Progress, RenderOptions};
use crate::scene::RenderSetup;

/// The gradient of the image, where the renderer reads it
/// ([`Renderer::device_backend`](crate::backend::renderer::Renderer::device_backend)).
pub enum Adjoint<'a> {
    /// On the host (C order, the image's shape).
    Host(Vec<f32>),
    /// On the renderer's GPU.
    Device(&'a DeviceTensor),
}

/// The gradients of a backward pass, one per parameter.
pub enum Gradients {
    /// The CPU's pass, to run without the session's lock ([`HostBackward::run`]).
    Host(HostBackward),
    /// On the GPU, queued on the render stream.
    Device(Vec<DeviceTensor>),
}

/// A CPU backward pass over a scene snapshot.
pub struct HostBackward {
    pub(crate) setup: Arc<RenderSetup>,
    pub(crate) params: Vec<DiffParam>,
    pub(crate) adjoint: Vec<f32>,
    pub(crate) opts: RenderOptions,
}

impl HostBackward {
    /// Runs the pass on every core: one gradient per parameter, in the parameter's shape.
    pub fn run(self) -> Result<Vec<Vec<f32>>> {
        backward(
            &self.setup,
            &self.params,
            &self.adjoint,
            &self.opts,
            &Progress::default(),
        )
    }
}
