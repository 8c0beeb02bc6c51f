//! The GPU's [`Renderer`]: the session's device copy ([`DeviceCopy`]) is uploaded at the
//! first render, patched in place by every update and read by every render, so a
//! render only enqueues kernels; images and gradients stay on the device.

use std::sync::Arc;

use super::{check_supported, CudaBackend, DeviceScene};
use crate::backend::renderer::Renderer;
use crate::diff::DiffParam;
use crate::error::{Error, Result};
use crate::render::RenderOptions;
use crate::scene::RenderSetup;
use crate::session::device::DeviceCopy;
use crate::session::film::Film;
use crate::session::gradients::{Adjoint, Gradients};
use crate::session::swap::Swap;
use crate::session::Session;

/// The CUDA backend as a [`Renderer`].
pub struct CudaRenderer {
    be: Arc<CudaBackend>,
}

impl CudaRenderer {
    /// Renders on `be`.
    pub fn new(be: Arc<CudaBackend>) -> CudaRenderer {
        CudaRenderer { be }
    }

    /// `session`'s current device copy, uploaded first if it has none (the host copy
    /// of device-only textures is fetched first).
    fn current<'s>(&self, session: &'s mut Session) -> Result<&'s mut DeviceScene> {
        let version = session.loaded.version();
        if session
            .device
            .as_ref()
            .is_none_or(|d| d.scene.version() != version)
        {
            session.device = None;
            session.loaded.fetch_device_images()?;
            check_supported(session.loaded.setup())?;
            let scene = self.be.upload_scene(session.loaded.setup(), version)?;
            session.device = Some(DeviceCopy {
                backend: self.be.clone(),
                scene,
            });
        }
        Ok(&mut session.device.as_mut().expect("uploaded above").scene)
    }
}

impl Renderer for CudaRenderer {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn device_name(&self) -> String {
        self.be.info().name.clone()
    }

    fn device_backend(&self) -> Option<&Arc<CudaBackend>> {
        Some(&self.be)
    }

    fn check(&self, setup: &RenderSetup) -> Result<()> {
        check_supported(setup)
    }

    fn render(&self, setup: Arc<RenderSetup>, opts: RenderOptions) -> Result<Film> {
        Ok(Film::Device(self.be.render_async(&setup, &opts)?))
    }

    fn prepare(&self, session: &mut Session) -> Result<()> {
        self.current(session).map(drop)
    }

    fn render_session(
        &self,
        session: &mut Session,
        opts: RenderOptions,
        swap: &Swap,
    ) -> Result<Film> {
        if swap.is_some() {
            check_supported(&swap.apply(session.loaded.setup().clone()))?;
        }
        let spp = session.loaded.setup().sensor.sampler.sample_count;
        let dev = self.current(session)?;
        let film = if swap.is_some() {
            // an aov integrator was refused above: the swapped one renders radiance
            let (sensor, integrator) = (
                swap.sensor.as_ref(),
                swap.integrator.as_ref().map(|(i, _)| i),
            );
            self.be
                .render_scene_as(dev, sensor, integrator, &opts, spp)?
        } else {
            self.be.render_scene(dev, &opts, spp)?
        };
        Ok(Film::Device(film))
    }

    fn backward(
        &self,
        session: &mut Session,
        params: &[DiffParam],
        adjoint: Adjoint<'_>,
        opts: RenderOptions,
    ) -> Result<Gradients> {
        let Adjoint::Device(adjoint) = adjoint else {
            return Err(Error::Render(
                "the image's gradient is not on the GPU".into(),
            ));
        };
        let spp = session.loaded.setup().sensor.sampler.sample_count;
        let dev = self.current(session)?;
        let grads = self.be.backward(dev, params, adjoint, &opts, spp)?;
        Ok(Gradients::Device(grads))
    }
}
