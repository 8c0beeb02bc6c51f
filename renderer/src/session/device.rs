//! [`DeviceCopy`]: a session's scene on the GPU.

use std::sync::Arc;

use crate::backend::cuda::{CudaBackend, DeviceScene};
use crate::error::Result;
use crate::scene::loaded::Changes;
use crate::scene::RenderSetup;

/// A session's scene on the GPU, and the backend that holds it.
pub struct DeviceCopy {
    pub(crate) backend: Arc<CudaBackend>,
    pub(crate) scene: DeviceScene,
}

impl DeviceCopy {
    /// The backend that holds the copy.
    pub fn backend(&self) -> &Arc<CudaBackend> {
        &self.backend
    }

    /// Applies an update's `changes` (the scene now `setup`, at `version`) in place.
    pub fn patch(&mut self, setup: &RenderSetup, changes: &Changes, version: u64) -> Result<()> {
        self.backend
            .update_scene(&mut self.scene, setup, changes, version)
    }
}
