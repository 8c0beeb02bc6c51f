// BSDF dispatch (renderer/src/bsdfs/mod.rs AnyBsdf): `switch (kind)` over the flat
// records, one file per plugin in bsdfs/. Kinds without a CUDA twin yet are black
// (check_supported refuses scenes that use them).
#pragma once
#include "bsdfs/diffuse.cuh"

__device__ inline bool bsdf_is_delta(const SceneData& s, hg_u32 bi, V2 uv) {
    (void)s;
    (void)bi;
    (void)uv;
    return false;
}

__device__ inline bool bsdf_sample(const SceneData& s, hg_u32 bi, V2 uv, V3 wi, float u1, V2 u2,
                                   BsdfSample* out) {
    const FlatBsdf& b = s.bsdfs[bi];
    switch (b.kind) {
        case HG_BSDF_DIFFUSE: return diffuse_sample(s, b, uv, wi, u1, u2, out);
        default: return false;
    }
}

__device__ inline V3 bsdf_eval(const SceneData& s, hg_u32 bi, V2 uv, V3 wi, V3 wo) {
    const FlatBsdf& b = s.bsdfs[bi];
    switch (b.kind) {
        case HG_BSDF_DIFFUSE: return diffuse_eval(s, b, uv, wi, wo);
        default: return v3(0.0f, 0.0f, 0.0f);
    }
}

__device__ inline float bsdf_pdf(const SceneData& s, hg_u32 bi, V2 uv, V3 wi, V3 wo) {
    const FlatBsdf& b = s.bsdfs[bi];
    switch (b.kind) {
        case HG_BSDF_DIFFUSE: return diffuse_pdf(wi, wo);
        default: return 0.0f;
    }
}
