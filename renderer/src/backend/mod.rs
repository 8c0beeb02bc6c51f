//! Render backends. The CPU backend (rayon) is the reference; the CUDA backend
//! renders the same scenes and must agree within Monte Carlo noise.
//!
//! Renders are issued in waves: the sample budget is split into
//! passes so that progress can be reported and a render cancelled between them.

pub mod cpu;
pub mod cuda;
pub mod renderer;

use std::sync::Arc;

use crate::diff::DiffParam;
use crate::error::Result;

use cpu::renderer::CpuRenderer;
use cuda::renderer::CudaRenderer;
use cuda::CudaBackend;
use renderer::Renderer;

/// Where a render runs. The CLI's `--backend` and the Python package's variants both
/// name one of these ([`Backend::from_cli`], [`Backend::from_variant`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// CUDA when a usable GPU is present, otherwise the CPU (the CLI's default).
    Auto,
    /// Every CPU core (rayon); the reference.
    Cpu,
    /// An NVIDIA GPU.
    Cuda,
}

impl Backend {
    /// The backends a Python variant can select, by variant name.
    pub const VARIANTS: [(&'static str, Backend); 2] =
        [("cpu_rgb", Backend::Cpu), ("cuda_rgb", Backend::Cuda)];

    /// Mitsuba 3's variant names that heliograph accepts, and the backend each selects.
    pub const MITSUBA_VARIANTS: [(&'static str, Backend); 5] = [
        ("scalar_rgb", Backend::Cpu),
        ("scalar_ad_rgb", Backend::Cpu),
        ("llvm_rgb", Backend::Cpu),
        ("llvm_ad_rgb", Backend::Cpu),
        ("cuda_ad_rgb", Backend::Cuda),
    ];

    /// The backend a CLI `--backend` name selects: `auto`, `cpu` or `cuda`.
    pub fn from_cli(name: &str) -> Option<Backend> {
        match name {
            "auto" => Some(Backend::Auto),
            "cpu" => Some(Backend::Cpu),
            "cuda" => Some(Backend::Cuda),
            _ => None,
        }
    }

    /// The backend a Python variant selects: heliograph's `cpu_rgb` and `cuda_rgb`, and
    /// Mitsuba 3's names, whose CPU ones (`scalar_rgb`, `llvm_ad_rgb`, ...) mean the CPU
    /// and `cuda_ad_rgb` CUDA.
    pub fn from_variant(name: &str) -> Option<Backend> {
        Self::VARIANTS
            .iter()
            .chain(&Self::MITSUBA_VARIANTS)
            .find(|(n, _)| *n == name)
            .map(|(_, b)| *b)
    }

    /// Every variant name [`Backend::from_variant`] accepts: heliograph's, then
    /// Mitsuba's.
    pub fn variant_names() -> Vec<&'static str> {
        let all = Self::VARIANTS.iter().chain(&Self::MITSUBA_VARIANTS);
        all.map(|(name, _)| *name).collect()
    }

    /// The renderer of this backend; `cuda` opens the GPU when it is needed. `Auto`
    /// gives the GPU's (a caller that falls back on the CPU does so on its error).
    pub fn renderer<E>(
        self,
        cuda: impl FnOnce() -> std::result::Result<Arc<CudaBackend>, E>,
    ) -> std::result::Result<Box<dyn Renderer>, E> {
        Ok(match self {
            Backend::Cpu => Box::new(CpuRenderer),
            Backend::Cuda | Backend::Auto => Box::new(CudaRenderer::new(cuda()?)),
        })
    }

    /// Refuses, before anything renders, parameters that this backend's backward pass
    /// cannot differentiate at once (the GPU's: too many constants).
    pub fn check_differentiable(self, params: &[DiffParam]) -> Result<()> {
        match self {
            Backend::Cpu => Ok(()),
            Backend::Cuda | Backend::Auto => crate::diff::flat::flatten(params).map(drop),
        }
    }

    /// Whether a tensor made from host data lives on this backend's device, as
    /// Mitsuba's `TensorXf` is a GPU array under its CUDA variants.
    pub fn holds_tensors_on_device(self) -> bool {
        self == Backend::Cuda
    }

    /// The Python variant that selects this backend (`None` for `Auto`).
    pub fn variant(self) -> Option<&'static str> {
        Self::VARIANTS
            .iter()
            .find(|(_, b)| *b == self)
            .map(|(name, _)| *name)
    }
}

#[cfg(test)]
mod tests {
    use super::Backend;

    #[test]
    fn backend_names_follow_the_cli_heliograph_and_mitsuba() {
        for (name, b) in Backend::VARIANTS {
            assert_eq!(Backend::from_variant(name), Some(b));
            assert_eq!(b.variant(), Some(name));
        }
        assert_eq!(Backend::from_variant("llvm_ad_rgb"), Some(Backend::Cpu));
        assert_eq!(Backend::from_variant("cuda_ad_rgb"), Some(Backend::Cuda));
        assert_eq!(Backend::from_variant("cuda_spectral"), None);
        assert_eq!(
            Backend::from_variant("cpu"),
            None,
            "a CLI name, not a variant"
        );
        assert_eq!(Backend::from_cli("auto"), Some(Backend::Auto));
        assert_eq!(Backend::from_cli("cuda"), Some(Backend::Cuda));
        assert_eq!(Backend::from_cli("cuda_rgb"), None);
        assert_eq!(Backend::Auto.variant(), None);
    }
}
