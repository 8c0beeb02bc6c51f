// BSDF dispatch (renderer/src/bsdfs/mod.rs AnyBsdf): bsdf_sample, bsdf_eval, bsdf_pdf and
// bsdf_is_delta by BSDF handle. They are generated from the BSDF registry
// (bsdfs/registry.rs) as the kernel file bsdfs/registry.cuh: the HG_BSDF_* tags, the twin
// of every registered plugin (bsdfs/<name>.cuh), the checks of their records against the
// Rust ones, and a `switch (kind)` compiled for the kinds in HG_BSDF_SET (features.cuh,
// HG_CASE): adapters (`twosided`) first, then the base kinds. A BSDF's record is read
// where it lies in bsdf_data (its RecordRef's offset).
#pragma once
#include "bsdfs/registry.cuh"
