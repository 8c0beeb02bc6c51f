// `normalmap` (renderer/src/bsdfs/normalmap.rs): an adapter. The nested BSDF queried in
// the frame of the map's normal, with Estevez et al.'s shadowing term.
#pragma once
#include "bsdf.cuh"

struct NormalMapRecord {
    RecordRef nested;
    hg_u32 normalmap;
    hg_u32 flags;
};

#define HG_NORMALMAP_FLIP_INVALID 1u
#define HG_NORMALMAP_SHADOWING 2u

// NormalMap::frame
__device__ inline Frame normalmap_frame(const SceneData& s, const NormalMapRecord& r, V2 uv, V3 wi) {
    V3 c = tex_eval(s, r.normalmap, uv);
    V3 n = v3(2.0f * c.x - 1.0f, 2.0f * c.y - 1.0f, 2.0f * c.z - 1.0f);
    if ((r.flags & HG_NORMALMAP_FLIP_INVALID) != 0u && wi.z * dot(wi, n) <= 0.0f) n = v3(-n.x, -n.y, n.z);
    n = normalize_or(n, v3(0.0f, 0.0f, 1.0f));
    Frame f;
    f.s = normalize_or(v3(1.0f, 0.0f, 0.0f) - n * n.x, frame_from_normal(n).s);
    f.t = cross(n, f.s);
    f.n = n;
    return f;
}

__device__ inline float normalmap_tan2(V3 v) { return fmaxf(1.0f - v.z * v.z, 0.0f) / (v.z * v.z); }

// normalmap::shadow_terminator
__device__ inline float normalmap_shadow(V3 n, V3 wo) {
    float alpha2 = fminf(0.125f * normalmap_tan2(n), 1.0f);
    return 2.0f / (1.0f + sqrtf(1.0f + alpha2 * normalmap_tan2(wo)));
}

template <int L>
__device__ inline bool normalmap_is_delta(const SceneData& s, const NormalMapRecord& r) {
    return bsdf_nested_is_delta<L>(s, bsdf_ref_of(s, r.nested));
}

template <int L>
__device__ inline bool normalmap_sample(const SceneData& s, const NormalMapRecord& r, V2 uv, V3 wi, float u1, V2 u2,
                                        BsdfSample* out) {
    Frame f = normalmap_frame(s, r, uv, wi);
    if (!bsdf_nested_sample<L>(s, bsdf_ref_of(s, r.nested), uv, to_local(f, wi), u1, u2, out)) return false;
    if (out->weight.x == 0.0f && out->weight.y == 0.0f && out->weight.z == 0.0f) return false;
    V3 wo = to_world(f, out->wo);
    if (!(out->wo.z * wo.z > 0.0f)) return false;
    out->wo = wo;
    if ((r.flags & HG_NORMALMAP_SHADOWING) != 0u) out->weight = out->weight * normalmap_shadow(f.n, wo);
    return true;
}

template <int L>
__device__ inline V3 normalmap_eval(const SceneData& s, const NormalMapRecord& r, V2 uv, V3 wi, V3 wo) {
    Frame f = normalmap_frame(s, r, uv, wi);
    V3 wo_p = to_local(f, wo);
    if (!(wo.z * wo_p.z > 0.0f)) return v3(0.0f, 0.0f, 0.0f);
    V3 v = bsdf_nested_eval<L>(s, bsdf_ref_of(s, r.nested), uv, to_local(f, wi), wo_p);
    if ((r.flags & HG_NORMALMAP_SHADOWING) != 0u) v = v * normalmap_shadow(f.n, wo);
    return v;
}

template <int L>
__device__ inline float normalmap_pdf(const SceneData& s, const NormalMapRecord& r, V2 uv, V3 wi, V3 wo) {
    Frame f = normalmap_frame(s, r, uv, wi);
    V3 wo_p = to_local(f, wo);
    if (!(wo.z * wo_p.z > 0.0f)) return 0.0f;
    return bsdf_nested_pdf<L>(s, bsdf_ref_of(s, r.nested), uv, to_local(f, wi), wo_p);
}
