// `mask` (renderer/src/bsdfs/mask.rs): an adapter. The nested BSDF scaled by the opacity,
// and a null lobe (straight through, weight 1) picked with probability 1 - opacity.
#pragma once
#include "bsdf.cuh"

struct MaskRecord {
    RecordRef nested;
    hg_u32 opacity;
    hg_u32 unused;
};

__device__ inline float mask_opacity(const SceneData& s, const MaskRecord& r, const SurfacePoint& sp) {
    return fminf(fmaxf(tex_eval_1(s, r.opacity, sp), 0.0f), 1.0f);
}

template <int L>
__device__ inline bool mask_is_delta(const SceneData& s, const MaskRecord& r) {
    return bsdf_nested_is_delta<L>(s, bsdf_ref_of(s, r.nested));
}

template <int L>
__device__ inline bool mask_sample(const SceneData& s, const MaskRecord& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2,
                                   BsdfSample* out) {
    float opacity = mask_opacity(s, r, sp);
    if (u1 < opacity) {
        float u = fminf(u1 / opacity, HG_ONE_MINUS_EPSILON);
        if (!bsdf_nested_sample<L>(s, bsdf_ref_of(s, r.nested), sp, wi, u, u2, out)) return false;
        out->pdf *= opacity;
        return true;
    }
    out->wo = v3(-wi.x, -wi.y, -wi.z);
    out->pdf = 1.0f - opacity;
    out->weight = v3(1.0f, 1.0f, 1.0f);
    out->eta = 1.0f;
    out->delta = true;
    return true;
}

template <int L>
__device__ inline V3 mask_eval(const SceneData& s, const MaskRecord& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    return bsdf_nested_eval<L>(s, bsdf_ref_of(s, r.nested), sp, wi, wo) * mask_opacity(s, r, sp);
}

template <int L>
__device__ inline float mask_pdf(const SceneData& s, const MaskRecord& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    return bsdf_nested_pdf<L>(s, bsdf_ref_of(s, r.nested), sp, wi, wo) * mask_opacity(s, r, sp);
}
