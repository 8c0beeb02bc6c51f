//! A render session: one loaded scene, its copy on the GPU once rendered there, and the
//! verbs that the Python package and the XLA calls use: [`Session::update`],
//! [`Session::render`], [`Session::backward`].
//!
//! The backend is not chosen here: each verb takes the
//! [`Renderer`](crate::backend::renderer::Renderer) to run on, and the renderer decides
//! where the scene, the image and the gradients live.

pub mod device;
pub mod film;
pub mod gradients;
pub mod progress;
pub mod summary;
pub mod swap;
pub mod values;
mod verbs;

use std::sync::Arc;

use crate::backend::cuda::{check_process, CudaBackend};
use crate::desc::params::ParamTable;
use crate::desc::{ParamValue, SceneDesc};
use crate::error::{CudaError, Error, Result};
use crate::scene::LoadedScene;
use device::DeviceCopy;

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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::renderer::CpuRenderer;
    use crate::desc::xml;
    use crate::render::RenderOptions;
    use crate::session::swap::Swap;

    fn session() -> Session {
        let xml = r#"<scene version="3.0.0">
            <sensor type="perspective"><film type="hdrfilm">
                <integer name="width" value="24"/><integer name="height" value="16"/>
            </film></sensor>
            <emitter type="constant"/>
            <shape type="sphere"/>
        </scene>"#;
        Session::new(xml::load_string(xml, &[]).unwrap()).unwrap()
    }

    #[test]
    fn a_session_renders_what_the_cpu_backend_renders() {
        let mut s = session();
        let opts = RenderOptions {
            spp: Some(2),
            seed: 5,
        };
        let film = s.render(&CpuRenderer, opts, &Swap::default()).unwrap();
        assert!(film.job().is_some(), "a CPU render runs in the background");
        let a = film.into_image().unwrap();
        let b = crate::backend::cpu::render(s.loaded().setup(), &opts).unwrap();
        assert_eq!(a.data, b.data);
        assert_eq!(s.film_shape(), vec![b.height, b.width, b.channels]);
    }

    #[test]
    fn a_session_without_a_device_copy_updates_the_host_scene_only() {
        let mut s = session();
        let version = s.loaded().version();
        let table = s.update(&[]).unwrap();
        assert_eq!(table.decls().len(), s.loaded().params().decls().len());
        assert!(s.device.is_none());
        let key = table
            .decls()
            .first()
            .map(|d| d.key.clone())
            .unwrap_or_default();
        assert!(s.upload_target(&key).is_none());
        assert!(s.loaded().version() >= version);
    }
}
