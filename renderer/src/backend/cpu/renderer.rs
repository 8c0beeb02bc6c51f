//! The CPU's [`Renderer`]: renders in the background on every core, reads and writes
//! everything on the host.

use std::sync::Arc;

use super::render_async;
use crate::backend::cuda::CudaBackend;
use crate::backend::renderer::Renderer;
use crate::diff::DiffParam;
use crate::error::{Error, Result};
use crate::render::RenderOptions;
use crate::scene::RenderSetup;
use crate::session::film::Film;
use crate::session::gradients::{Adjoint, Gradients, HostBackward};
use crate::session::swap::Swap;
use crate::session::Session;

/// The CPU backend as a [`Renderer`].
pub struct CpuRenderer;

impl Renderer for CpuRenderer {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn device_name(&self) -> String {
        format!("{} threads", rayon::current_num_threads())
    }

    fn device_backend(&self) -> Option<&Arc<CudaBackend>> {
        None
    }

    fn check(&self, _setup: &RenderSetup) -> Result<()> {
        Ok(())
    }

    fn render(&self, setup: Arc<RenderSetup>, opts: RenderOptions) -> Result<Film> {
        let job = render_async(setup.clone(), opts)?;
        Ok(Film::Pending { job, setup, opts })
    }

    fn prepare(&self, session: &mut Session) -> Result<()> {
        session.loaded.fetch_device_images()
    }

    fn render_session(
        &self,
        session: &mut Session,
        opts: RenderOptions,
        swap: &Swap,
    ) -> Result<Film> {
        self.prepare(session)?;
        // the render reads a snapshot: later updates do not reach it
        self.render(swap.apply(session.loaded.setup().clone()), opts)
    }

    fn backward(
        &self,
        session: &mut Session,
        params: &[DiffParam],
        adjoint: Adjoint<'_>,
        opts: RenderOptions,
    ) -> Result<Gradients> {
        let Adjoint::Host(adjoint) = adjoint else {
            return Err(Error::Render(
                "the image's gradient is not on the host".into(),
            ));
        };
        self.prepare(session)?;
        Ok(Gradients::Host(HostBackward {
            setup: session.loaded.setup().clone(),
            params: params.to_vec(),
            adjoint,
            opts,
        }))
    }
}
