// renderer/src/bsdfs/tilted.rs: the nested BSDF queried in a tilted shading frame, with
// Estevez et al.'s shadowing term (normalmap and bumpmap).
#pragma once
#include "bsdf.cuh"

// tilted::frame: the frame of unit normal n whose tangent follows the shading x axis.
__device__ inline Frame tilted_frame(V3 n) {
    Frame f;
    f.s = normalize_or(v3(1.0f, 0.0f, 0.0f) - n * n.x, frame_from_normal(n).s);
    f.t = cross(n, f.s);
    f.n = n;
    return f;
}

__device__ inline float tilted_tan2(V3 v) { return fmaxf(1.0f - v.z * v.z, 0.0f) / (v.z * v.z); }

// tilted::shadow_terminator
__device__ inline float tilted_shadow(V3 n, V3 wo) {
    float alpha2 = fminf(0.125f * tilted_tan2(n), 1.0f);
    return 2.0f / (1.0f + sqrtf(1.0f + alpha2 * tilted_tan2(wo)));
}

// tilted::sample
template <int L>
__device__ inline bool tilted_sample(const SceneData& s, RecordRef nested, const Frame& f, bool shadowing,
                                     const SurfacePoint& sp, V3 wi, float u1, V2 u2, BsdfSample* out) {
    if (!bsdf_nested_sample<L>(s, bsdf_ref_of(s, nested), sp, to_local(f, wi), u1, u2, out)) return false;
    if (out->weight.x == 0.0f && out->weight.y == 0.0f && out->weight.z == 0.0f) return false;
    V3 wo = to_world(f, out->wo);
    if (!(out->wo.z * wo.z > 0.0f)) return false;
    out->wo = wo;
    if (shadowing) out->weight = out->weight * tilted_shadow(f.n, wo);
    return true;
}

// tilted::eval
template <int L>
__device__ inline V3 tilted_eval(const SceneData& s, RecordRef nested, const Frame& f, bool shadowing,
                                 const SurfacePoint& sp, V3 wi, V3 wo) {
    V3 wo_p = to_local(f, wo);
    if (!(wo.z * wo_p.z > 0.0f)) return v3(0.0f, 0.0f, 0.0f);
    V3 v = bsdf_nested_eval<L>(s, bsdf_ref_of(s, nested), sp, to_local(f, wi), wo_p);
    if (shadowing) v = v * tilted_shadow(f.n, wo);
    return v;
}

// tilted::pdf
template <int L>
__device__ inline float tilted_pdf(const SceneData& s, RecordRef nested, const Frame& f, const SurfacePoint& sp,
                                   V3 wi, V3 wo) {
    V3 wo_p = to_local(f, wo);
    if (!(wo.z * wo_p.z > 0.0f)) return 0.0f;
    return bsdf_nested_pdf<L>(s, bsdf_ref_of(s, nested), sp, to_local(f, wi), wo_p);
}
