//! The record the kernels read of the integrator's settings ([`FlatIntegrator`], twin
//! of `FlatIntegrator` in `kernels/flat.cuh`).

use std::mem::size_of;

use super::AnyIntegrator;
use crate::plugin::record::Pod;

/// Integrator settings (32 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatIntegrator {
    /// The tag of its record kind ([`super::tag`]).
    pub kind: u32,
    /// `path`: longest path (`u32::MAX` = unbounded).
    pub max_depth: u32,
    /// `path`: depth at which Russian roulette starts.
    pub rr_depth: u32,
    /// 1 when directly visible emitters are hidden.
    pub hide_emitters: u32,
    /// `direct`: emitter samples per hit.
    pub emitter_samples: u32,
    /// `direct`: BSDF samples per hit.
    pub bsdf_samples: u32,
    /// Padding to 32 bytes.
    pub pad: [u32; 2],
}

// SAFETY: #[repr(C)], made of u32/f32 (arrays) only, and its size equals the sum of its
// fields (asserted by the layout table's macro, `crate::flat::LAYOUT`).
unsafe impl Pod for FlatIntegrator {}

// Size fixed by the CUDA twin.
const _: () = assert!(size_of::<FlatIntegrator>() == 32);

/// Flattens the integrator settings.
pub fn flatten_integrator(i: &AnyIntegrator) -> FlatIntegrator {
    let mut f = FlatIntegrator {
        kind: i.tag(),
        ..FlatIntegrator::default()
    };
    match i {
        AnyIntegrator::Direct(d) => {
            f.hide_emitters = u32::from(d.hide_emitters);
            f.emitter_samples = d.emitter_samples;
            f.bsdf_samples = d.bsdf_samples;
        }
        AnyIntegrator::Path(p) => {
            f.max_depth = p.max_depth;
            f.rr_depth = p.rr_depth;
            f.hide_emitters = u32::from(p.hide_emitters);
        }
        AnyIntegrator::Depth(_) => {}
        AnyIntegrator::Ptracer(p) => {
            f.max_depth = p.max_depth;
            f.rr_depth = p.rr_depth;
            f.hide_emitters = u32::from(p.hide_emitters);
        }
    }
    f
}
