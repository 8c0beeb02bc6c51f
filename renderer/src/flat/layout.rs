//! The layout table: every (record, field, offset) shared with CUDA, plus each
//! record's size (field name `sizeof`). `renderer/kernels/flat.cuh` holds the same
//! list as its `HG_LAYOUT` X-macro; the CPU test compares the two lists, the GPU
//! test compares this table with the offsets NVRTC used (`hg_layout_table`).
//!
//! Plugin records are not listed here: each plugin declares its own
//! ([`crate::device_record!`]) and its category's registry generates the CUDA checks
//! (e.g. [`crate::bsdfs::registry::layout`]); [`plugin_layout`] lists them all.

use std::mem::{offset_of, size_of};

use super::FlatSampler;
use super::{FlatBvhNode, FlatUnitPrim};
use super::{FlatDist1D, FlatDist2D};
use crate::accel::LeafPrim;
use crate::films::record::FlatFilm;
use crate::integrators::record::FlatIntegrator;
use crate::plugin::record::{field_size, LayoutEntry, RecordRef};
use crate::sensors::record::FlatCamera;
use crate::shapes::record::FlatShape;
use crate::shapes::Prim;

macro_rules! layout {
    ($($rec:ident { $($field:ident),* $(,)? })*) => {{
        // no implicit padding: the fields' sizes add up to the record's size
        $(const _: () = assert!(
            size_of::<$rec>() == 0 $(+ field_size(|r: &$rec| &r.$field))*,
            concat!(stringify!($rec), " has padding or a field missing from the table")
        );)*
        &[$(
            LayoutEntry { record: stringify!($rec), field: "sizeof", offset: size_of::<$rec>() },
            $(LayoutEntry {
                record: stringify!($rec),
                field: stringify!($field),
                offset: offset_of!($rec, $field),
            },)*
        )*]
    }};
}

/// The layout entries of the plugins' own records, in the order `hg_plugin_layout_table`
/// (parity.cu) writes the offsets the CUDA compiler used: the BSDFs'
/// ([`crate::bsdfs::registry::layout`]), the textures'
/// ([`crate::textures::registry::layout`]), then the emitters'
/// ([`crate::emitters::registry::layout`]).
pub fn plugin_layout() -> Vec<LayoutEntry> {
    let mut all = crate::bsdfs::registry::layout();
    all.extend(crate::textures::registry::layout());
    all.extend(crate::emitters::registry::layout());
    all
}

/// Sizes and field offsets of every shared record, in `HG_LAYOUT` order.
pub const LAYOUT: &[LayoutEntry] = layout! {
    FlatBvhNode { a_min, a_child, a_max, a_pad, b_min, b_child, b_max, b_pad }
    LeafPrim { p0, prim, p1, is_tri, p2, shape }
    FlatUnitPrim { rows, prim, prim_b, kind, roles }
    Prim { shape, index }
    FlatShape {
        kind, flags, bsdf, emitter, first_tri, tri_count, area, radius,
        center, area_dist, normal, pad1, to_world, to_local
    }
    FlatCamera {
        origin, tan_half_x, lin, aspect, near_clip, far_clip, kind, aperture_radius,
        focus_distance, pad
    }
    FlatFilm {
        width, height, crop_offset, crop_size, alpha, filter, filter_radius,
        filter_stddev, filter_k, pad, sampler
    }
    FlatSampler { kind, sample_count, jitter, seed }
    FlatIntegrator {
        kind, max_depth, rr_depth, hide_emitters, emitter_samples, bsdf_samples, pad
    }
    RecordRef { kind, offset }
    FlatDist1D { offset, n, sum, pad }
    FlatDist2D { rows, h, marginal, pad }
};
