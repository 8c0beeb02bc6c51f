//! The launch and compile settings of the render kernels ([`RenderTuning`]): their
//! defaults, their checks, and the backend's current ones.

use super::plan::MAX_WAVE_SPP;
use super::CudaBackend;
use crate::backend::cuda::features::{Features, BRUTE_FORCE_MAX_RECORDS};
use crate::error::{CudaError, Error, Result};
use crate::flat::unit_prims::UNIT_RECORDS_MAX;
use crate::flat::FlatScene;

/// Launch and compile settings of the render kernels (the GPU benchmark sweeps them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RenderTuning {
    /// Threads per block: a multiple of 32 (warp segments stay aligned to pixels), at
    /// most 1024.
    pub block: u32,
    /// NVRTC's `--maxrregcount`; 0 lets ptxas choose.
    pub max_registers: u32,
    /// `path` through the wavefront kernels (kernels/wavefront.cuh) instead of the
    /// megakernel.
    pub wavefront: bool,
    /// Samples of a pixel each megakernel thread renders one after another (a power of
    /// two, 1..=32; a wave of fewer samples per pixel gives each thread all of them): a
    /// lane whose `path` ends early starts its next sample instead of idling until the
    /// longest path of its warp ends. 0: [`RenderTuning::lanes_for`].
    pub samples_per_lane: u32,
    /// Scenes of at most this many unit records skip the BVH: every ray tests every
    /// record with the unit-shape test (features::BRUTE_FORCE_MAX_RECORDS, at most
    /// flat::unit_prims::UNIT_RECORDS_MAX).
    pub brute_force_max_records: u32,
}

/// The default tuning, from the H200 sweeps recorded in tests/gpu/RESULTS.md: a 64
/// register cap beat ptxas's own choice (78 to 122 registers) on every module;
/// 256-thread blocks were best or within 1 % of best; the wavefront `path` was slower
/// than the megakernel on the Cornell box (its bounce kernels still ran ~10 of 32
/// lanes busy: the idle lanes were the BVH walk's, not the path lengths'), so the
/// megakernel stays the default; samples per lane and brute
/// force: see their fields.
impl Default for RenderTuning {
    fn default() -> Self {
        RenderTuning {
            block: 256,
            max_registers: 64,
            wavefront: false,
            samples_per_lane: 0,
            brute_force_max_records: BRUTE_FORCE_MAX_RECORDS as u32,
        }
    }
}

impl RenderTuning {
    /// An error unless the block size and register cap are usable.
    pub(crate) fn check(&self) -> Result<()> {
        if self.block == 0 || self.block % 32 != 0 || self.block > 1024 {
            return Err(Error::Cuda(CudaError::BlockSize { block: self.block }));
        }
        if self.samples_per_lane != 0
            && (!self.samples_per_lane.is_power_of_two() || self.samples_per_lane > MAX_WAVE_SPP)
        {
            return Err(Error::Cuda(CudaError::SamplesPerLane {
                samples: self.samples_per_lane,
                max: MAX_WAVE_SPP,
            }));
        }
        if self.brute_force_max_records as usize > UNIT_RECORDS_MAX {
            return Err(Error::Cuda(CudaError::BruteForceRecords {
                records: self.brute_force_max_records,
                max: UNIT_RECORDS_MAX,
            }));
        }
        if self.max_registers != 0 && !(16..=255).contains(&self.max_registers) {
            return Err(Error::Cuda(CudaError::RegisterCap {
                registers: self.max_registers,
            }));
        }
        Ok(())
    }

    /// The samples per lane a render with the module of `features` uses:
    /// `samples_per_lane`, or when that is 0, 8 for a brute-force `path` module, 4 for a
    /// brute-force `direct` one and 1 with the BVH (measured on the H200,
    /// tests/gpu/RESULTS.md): brute force tests every lane's ray against every primitive
    /// together, so a lane that starts its next path costs the others nothing, and
    /// `direct` sums 4 samples per lane before its warp reduction; lanes at different
    /// depths walk the BVH less coherently.
    pub fn lanes_for(&self, features: &Features) -> u32 {
        match self.samples_per_lane {
            0 if !features.brute_force => 1,
            0 if features.has_path() => 8,
            0 => 4,
            k => k,
        }
    }

    /// The plugin set of the module that renders `flat` under this tuning.
    pub fn features(&self, flat: &FlatScene) -> Features {
        Features::with_brute_force_max(flat, self.brute_force_max_records as usize)
    }

    /// The extra NVRTC options.
    pub(crate) fn options(&self) -> Vec<String> {
        match self.max_registers {
            0 => Vec::new(),
            n => vec![format!("--maxrregcount={n}")],
        }
    }
}

impl CudaBackend {
    /// The megakernel's launch and compile settings.
    pub fn render_tuning(&self) -> RenderTuning {
        self.tuning.lock().map(|t| *t).unwrap_or_default()
    }

    /// Changes the megakernel's block size and register cap for later renders (a
    /// benchmark knob: modules compiled under another cap are kept and reused).
    pub fn set_render_tuning(&self, tuning: RenderTuning) -> Result<()> {
        tuning.check()?;
        *self
            .tuning
            .lock()
            .map_err(|_| Error::Cuda(CudaError::Lock { what: "tuning" }))? = tuning;
        Ok(())
    }
}
