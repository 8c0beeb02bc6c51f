// `twosided` (renderer/src/bsdfs/twosided.rs): an adapter. It picks its front or back
// BSDF by the side of wi and mirrors the directions for the back. Its record holds the
// nested BSDFs' RecordRefs (not their handles), so a nested record is one load away. It
// calls the dispatch over the base kinds (bsdf_base_*, declared before the twins in
// bsdfs/registry.cuh): it never wraps another adapter, so the dispatch does not recurse.
#pragma once
#include "bsdf.cuh"

struct TwoSidedRecord {
    RecordRef front;
    RecordRef back;
};

__device__ inline V3 flip_z(V3 v) { return v3(v.x, v.y, -v.z); }

__device__ inline bool twosided_is_delta(const SceneData& s, const TwoSidedRecord& r) {
    (void)s;
    return bsdf_base_is_delta(r.front.kind) && bsdf_base_is_delta(r.back.kind);
}

__device__ inline bool twosided_sample(const SceneData& s, const TwoSidedRecord& r, V2 uv, V3 wi, float u1, V2 u2,
                                       BsdfSample* out) {
    if (wi.z == 0.0f) return false;
    if (!(wi.z < 0.0f)) return bsdf_base_sample(s, bsdf_ref_of(s, r.front), uv, wi, u1, u2, out);
    if (!bsdf_base_sample(s, bsdf_ref_of(s, r.back), uv, flip_z(wi), u1, u2, out)) return false;
    out->wo = flip_z(out->wo);
    return true;
}

__device__ inline V3 twosided_eval(const SceneData& s, const TwoSidedRecord& r, V2 uv, V3 wi, V3 wo) {
    if (wi.z == 0.0f) return v3(0.0f, 0.0f, 0.0f);
    if (wi.z < 0.0f) return bsdf_base_eval(s, bsdf_ref_of(s, r.back), uv, flip_z(wi), flip_z(wo));
    return bsdf_base_eval(s, bsdf_ref_of(s, r.front), uv, wi, wo);
}

__device__ inline float twosided_pdf(const SceneData& s, const TwoSidedRecord& r, V2 uv, V3 wi, V3 wo) {
    if (wi.z == 0.0f) return 0.0f;
    if (wi.z < 0.0f) return bsdf_base_pdf(s, bsdf_ref_of(s, r.back), uv, flip_z(wi), flip_z(wo));
    return bsdf_base_pdf(s, bsdf_ref_of(s, r.front), uv, wi, wo);
}
