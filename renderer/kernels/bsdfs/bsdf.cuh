// What every BSDF twin needs (renderer/src/bsdfs/mod.rs): the scene with its textures,
// and the sample record. A twin (bsdfs/<name>.cuh) defines its record, with the Rust
// record's name and fields, and <name>_sample, <name>_eval, <name>_pdf with the
// signatures of the generated dispatch (bsdfs/registry.cuh, from bsdfs/registry.rs):
//   bool  <name>_sample(const SceneData&, const Record&, const SurfacePoint& sp, V3 wi, float u1, V2 u2, BsdfSample*)
//   V3    <name>_eval(const SceneData&, const Record&, const SurfacePoint& sp, V3 wi, V3 wo)
//   float <name>_pdf(const SceneData&, const Record&, const SurfacePoint& sp, V3 wi, V3 wo)
// (a plugin whose lobes are all deltas has only _sample). An adapter's (twosided, mask)
// are templates over the adapter levels below it, `template <int L>`, and call
// bsdf_nested_*<L> for the BSDFs it wraps.
#pragma once
#include "../textures.cuh"

// bsdfs::BsdfSample
struct BsdfSample {
    V3 wo;
    float pdf;
    V3 weight;
    float eta;
    bool delta;
};
