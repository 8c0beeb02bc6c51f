// `blendbsdf` (renderer/src/bsdfs/blendbsdf.rs): an adapter. (1 - w) first + w second;
// a sample of either is weighed by the blend's eval and pdf.
#pragma once
#include "bsdf.cuh"

struct BlendBsdfRecord {
    RecordRef bsdf_0;
    RecordRef bsdf_1;
    hg_u32 weight;
    hg_u32 unused;
};

__device__ inline float blendbsdf_weight(const SceneData& s, const BlendBsdfRecord& r, const SurfacePoint& sp) {
    return fminf(fmaxf(tex_eval_1(s, r.weight, sp), 0.0f), 1.0f);
}

template <int L>
__device__ inline bool blendbsdf_is_delta(const SceneData& s, const BlendBsdfRecord& r) {
    return bsdf_nested_is_delta<L>(s, bsdf_ref_of(s, r.bsdf_0)) && bsdf_nested_is_delta<L>(s, bsdf_ref_of(s, r.bsdf_1));
}

template <int L>
__device__ inline bool blendbsdf_sample(const SceneData& s, const BlendBsdfRecord& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2,
                                        BsdfSample* out) {
    float w = blendbsdf_weight(s, r, sp);
    bool first = u1 > w;
    BsdfRef picked = bsdf_ref_of(s, first ? r.bsdf_0 : r.bsdf_1);
    BsdfRef other = bsdf_ref_of(s, first ? r.bsdf_1 : r.bsdf_0);
    float share = first ? 1.0f - w : w;
    float other_share = first ? w : 1.0f - w;
    float u = first ? (u1 - w) / (1.0f - w) : u1 / w;
    if (!bsdf_nested_sample<L>(s, picked, sp, wi, fminf(u, HG_ONE_MINUS_EPSILON), u2, out)) return false;
    float pdf = other_share * bsdf_nested_pdf<L>(s, other, sp, wi, out->wo) + share * out->pdf;
    if (!(pdf > 0.0f)) return false;
    V3 f = bsdf_nested_eval<L>(s, other, sp, wi, out->wo) * other_share + out->weight * (share * out->pdf);
    out->weight = f / pdf;
    out->pdf = pdf;
    return true;
}

template <int L>
__device__ inline V3 blendbsdf_eval(const SceneData& s, const BlendBsdfRecord& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    float w = blendbsdf_weight(s, r, sp);
    return bsdf_nested_eval<L>(s, bsdf_ref_of(s, r.bsdf_0), sp, wi, wo) * (1.0f - w) +
           bsdf_nested_eval<L>(s, bsdf_ref_of(s, r.bsdf_1), sp, wi, wo) * w;
}

template <int L>
__device__ inline float blendbsdf_pdf(const SceneData& s, const BlendBsdfRecord& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    float w = blendbsdf_weight(s, r, sp);
    return bsdf_nested_pdf<L>(s, bsdf_ref_of(s, r.bsdf_0), sp, wi, wo) * (1.0f - w) +
           bsdf_nested_pdf<L>(s, bsdf_ref_of(s, r.bsdf_1), sp, wi, wo) * w;
}
