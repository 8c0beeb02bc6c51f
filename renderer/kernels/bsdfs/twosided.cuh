// `twosided` (renderer/src/bsdfs/twosided.rs): an adapter. It picks its front or back
// BSDF by the side of wi and mirrors the directions for the back. Its record holds the
// nested BSDFs' RecordRefs (not their handles), so a nested record is one load away.
// Like every adapter's twin it is a template over the adapter levels `L` below it and
// calls bsdf_nested_*<L> (declared before the twins in bsdfs/registry.cuh), so the
// dispatch never recurses.
#pragma once
#include "bsdf.cuh"

struct TwoSidedRecord {
    RecordRef front;
    RecordRef back;
};

__device__ inline V3 flip_z(V3 v) { return v3(v.x, v.y, -v.z); }

template <int L>
__device__ inline bool twosided_is_delta(const SceneData& s, const TwoSidedRecord& r) {
    return bsdf_nested_is_delta<L>(s, bsdf_ref_of(s, r.front)) && bsdf_nested_is_delta<L>(s, bsdf_ref_of(s, r.back));
}

template <int L>
__device__ inline bool twosided_sample(const SceneData& s, const TwoSidedRecord& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2,
                                       BsdfSample* out) {
    if (wi.z == 0.0f) return false;
    if (!(wi.z < 0.0f)) return bsdf_nested_sample<L>(s, bsdf_ref_of(s, r.front), sp, wi, u1, u2, out);
    if (!bsdf_nested_sample<L>(s, bsdf_ref_of(s, r.back), sp, flip_z(wi), u1, u2, out)) return false;
    out->wo = flip_z(out->wo);
    return true;
}

template <int L>
__device__ inline V3 twosided_eval(const SceneData& s, const TwoSidedRecord& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    if (wi.z == 0.0f) return v3(0.0f, 0.0f, 0.0f);
    if (wi.z < 0.0f) return bsdf_nested_eval<L>(s, bsdf_ref_of(s, r.back), sp, flip_z(wi), flip_z(wo));
    return bsdf_nested_eval<L>(s, bsdf_ref_of(s, r.front), sp, wi, wo);
}

template <int L>
__device__ inline float twosided_pdf(const SceneData& s, const TwoSidedRecord& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    if (wi.z == 0.0f) return 0.0f;
    if (wi.z < 0.0f) return bsdf_nested_pdf<L>(s, bsdf_ref_of(s, r.back), sp, flip_z(wi), flip_z(wo));
    return bsdf_nested_pdf<L>(s, bsdf_ref_of(s, r.front), sp, wi, wo);
}
