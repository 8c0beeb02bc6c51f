//! The verbs of a [`Session`] that run on a renderer.

use crate::backend::renderer::Renderer;
use crate::diff::DiffParam;
use crate::error::Result;
use crate::render::RenderOptions;
use crate::session::film::Film;
use crate::session::gradients::{Adjoint, Gradients};
use crate::session::swap::Swap;
use crate::session::Session;

impl Session {
    /// Makes the scene current where `renderer` reads it (device-only images fetched
    /// for the CPU, the device copy uploaded or refreshed for the GPU).
    pub fn prepare(&mut self, renderer: &dyn Renderer) -> Result<()> {
        renderer.prepare(self)
    }

    /// Starts rendering the scene (through `swap`'s sensor or integrator where it has
    /// one) and returns its film at once.
    pub fn render(
        &mut self,
        renderer: &dyn Renderer,
        opts: RenderOptions,
        swap: &Swap,
    ) -> Result<Film> {
        renderer.render_session(self, opts, swap)
    }

    /// The backward pass of a render with `opts`: the gradients of `Σ adjoint · image`
    /// with respect to `params`.
    pub fn backward(
        &mut self,
        renderer: &dyn Renderer,
        params: &[DiffParam],
        adjoint: Adjoint<'_>,
        opts: RenderOptions,
    ) -> Result<Gradients> {
        renderer.backward(self, params, adjoint, opts)
    }
}
