//! The image's gradient going into a backward pass ([`Adjoint`]) and the parameters'
//! gradients coming out of it ([`Gradients`]).

use std::sync::Arc;

use crate::backend::cpu::backward::backward;
use crate::backend::cuda::DeviceTensor;
use crate::desc::params::{shape_str, ParamTable};
use crate::diff::{resolve, DiffParam};
use crate::error::{Error, Result};
use crate::render::{Progress, RenderOptions};
use crate::scene::RenderSetup;
use crate::session::Session;

/// The parameter values a render was made with, for its backward pass.
#[derive(Clone, Debug)]
pub struct Snapshot {
    table: Arc<ParamTable>,
    version: u64,
}

impl Session {
    /// The scene's parameter values now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            table: self.loaded.params().clone(),
            version: self.loaded.version(),
        }
    }

    /// Whether the scene has not been updated since `then`.
    pub fn is_current(&self, then: &Snapshot) -> bool {
        self.loaded.version() == then.version
    }

    /// That the scene's parameters are still those of `then`, the render a gradient
    /// belongs to: an error names the first that changed, rather than a gradient of
    /// other values being computed.
    pub fn check_snapshot(&self, then: &Snapshot) -> Result<()> {
        if self.is_current(then) {
            return Ok(());
        }
        let now = self.loaded.params();
        let changed = then
            .table
            .decls()
            .iter()
            .zip(now.decls())
            .find(|(a, b)| a.key != b.key || a.value != b.value);
        match changed {
            Some((a, _)) => Err(Error::Render(format!(
                "parameter \"{}\" changed after the render this gradient belongs to: \
                 render again, then call backward",
                a.key
            ))),
            None => Ok(()),
        }
    }

    /// The parameters `keys` of a backward pass of the render that `then` was taken
    /// for: an error if the scene changed since ([`Self::check_snapshot`]) or a key
    /// cannot be differentiated.
    pub fn backward_params(&self, then: &Snapshot, keys: &[String]) -> Result<Vec<DiffParam>> {
        self.check_snapshot(then)?;
        resolve(&self.loaded, keys)
    }

    /// That the image's gradient has the image's shape.
    pub fn check_adjoint_shape(&self, got: &[usize]) -> Result<()> {
        let want = self.film_shape();
        if got == want {
            return Ok(());
        }
        Err(Error::Render(format!(
            "the image's gradient must have the image's shape {}, got {}",
            shape_str(&want),
            shape_str(got)
        )))
    }
}

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
