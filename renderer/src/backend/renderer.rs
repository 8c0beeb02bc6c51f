//! [`Renderer`]: one backend's side of a render. Both backends implement it, and
//! [`Session`]'s verbs and the CLI run through it.

use std::sync::Arc;

use crate::backend::cuda::CudaBackend;
use crate::diff::DiffParam;
use crate::error::Result;
use crate::render::RenderOptions;
use crate::scene::RenderSetup;
use crate::session::film::Film;
use crate::session::gradients::{Adjoint, Gradients};
use crate::session::swap::Swap;
use crate::session::Session;

/// One backend's side of a render (see the module docs).
pub trait Renderer: Send + Sync {
    /// The backend's name as the CLI reports it: `cpu` or `cuda`.
    fn name(&self) -> &'static str;

    /// What it renders on: `16 threads`, or the GPU's name.
    fn device_name(&self) -> String;

    /// The GPU that the renderer reads its inputs from (`None`: the host).
    fn device_backend(&self) -> Option<&Arc<CudaBackend>>;

    /// Refuses a scene this backend cannot render.
    fn check(&self, setup: &RenderSetup) -> Result<()>;

    /// Starts rendering the scene snapshot `setup` and returns its film at once.
    fn render(&self, setup: Arc<RenderSetup>, opts: RenderOptions) -> Result<Film>;

    /// Makes `session`'s scene current where this backend reads it.
    fn prepare(&self, session: &mut Session) -> Result<()>;

    /// Starts rendering `session`'s scene through `swap` ([`Session::render`]).
    fn render_session(
        &self,
        session: &mut Session,
        opts: RenderOptions,
        swap: &Swap,
    ) -> Result<Film>;

    /// The backward pass of a render of `session`'s scene ([`Session::backward`]).
    fn backward(
        &self,
        session: &mut Session,
        params: &[DiffParam],
        adjoint: Adjoint<'_>,
        opts: RenderOptions,
    ) -> Result<Gradients>;
}
