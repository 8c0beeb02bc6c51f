//! A render session: one loaded scene, its copy on the GPU once rendered there, and the
//! verbs that the Python package and the XLA calls use: [`Session::update`],
//! [`Session::render`], [`Session::backward`].
//!
//! The backend is not chosen here: each verb takes the [`Renderer`] to run on, and the
//! renderer decides where the scene, the image and the gradients live.

pub mod film;
pub mod gradients;
pub mod swap;

use std::sync::Arc;

use crate::backend::cuda::renderer::DeviceCopy;
use crate::backend::cuda::{check_process, CudaBackend};
use crate::backend::Renderer;
use crate::desc::params::ParamTable;
use crate::desc::{ParamValue, SceneDesc};
use crate::diff::DiffParam;
use crate::error::{CudaError, Error, Result};
use crate::render::RenderOptions;
use crate::scene::LoadedScene;

pub use film::Film;
pub use gradients::{Adjoint, Gradients, HostBackward};
pub use swap::Swap;

/// A loaded scene and its device copy, changed together by updates.
pub struct Session {
    /// The description, the render-ready scene and the parameters.
    pub(crate) loaded: LoadedScene,
    /// The copy on the GPU, once rendered there.
    pub(crate) device: Option<DeviceCopy>,
}

impl Session {
    /// Builds the scene of `desc`.
    pub fn new(desc: SceneDesc) -> Result<Session> {
        Ok(Session {
            loaded: LoadedScene::new(desc)?,
            device: None,
        })
    }

    /// The loaded scene.
    pub fn loaded(&self) -> &LoadedScene {
        &self.loaded
    }

    /// The shape of the scene's image: (height, width, channels).
    pub fn film_shape(&self) -> Vec<usize> {
        let film = &self.loaded.setup().sensor.film;
        let [w, h] = film.crop_size;
        vec![h as usize, w as usize, film.channels()]
    }

    /// The GPU of the device copy, unless this process is a forked child of the one
    /// that made it (the copy is the parent's: only the host scene changes here).
    fn device_backend(&self) -> Option<&Arc<CudaBackend>> {
        let dev = self.device.as_ref()?;
        check_process().is_ok().then(|| dev.backend())
    }

    /// Applies staged parameter values: the host scene is rebuilt where they change
    /// it, then the device copy patched; returns the new parameter table.
    pub fn update(&mut self, staged: &[(usize, ParamValue)]) -> Result<Arc<ParamTable>> {
        let patch = self.device_backend().is_some();
        let changes = self.loaded.update(staged)?;
        let version = self.loaded.version();
        let scene = self.loaded.setup().clone();
        let table = self.loaded.params().clone();
        if let (true, Some(dev)) = (patch, self.device.as_mut()) {
            if let Err(e) = dev.patch(&scene, &changes, version) {
                // the next GPU render uploads the whole scene again
                self.device = None;
                return Err(Error::Cuda(CudaError::UpdatePatch { error: Box::new(e) }));
            }
        }
        Ok(table)
    }

    /// The GPU that a new host value for `key` should be uploaded to: the scene has a
    /// device copy and the value would stay on the device at update.
    pub fn upload_target(&self, key: &str) -> Option<Arc<CudaBackend>> {
        let be = self.device_backend()?;
        self.loaded.keeps_on_device(key).then(|| be.clone())
    }

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
