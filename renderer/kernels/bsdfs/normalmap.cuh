// `normalmap` (renderer/src/bsdfs/normalmap.rs): an adapter. The nested BSDF queried in
// the frame of the map's normal, with Estevez et al.'s shadowing term.
#pragma once
#include "tilted.cuh"

struct NormalMapRecord {
    RecordRef nested;
    hg_u32 normalmap;
    hg_u32 flags;
};

#define HG_NORMALMAP_FLIP_INVALID 1u
#define HG_NORMALMAP_SHADOWING 2u

// NormalMap::frame
__device__ inline Frame normalmap_frame(const SceneData& s, const NormalMapRecord& r, const SurfacePoint& sp, V3 wi) {
    V3 c = tex_eval(s, r.normalmap, sp);
    V3 n = v3(2.0f * c.x - 1.0f, 2.0f * c.y - 1.0f, 2.0f * c.z - 1.0f);
    if ((r.flags & HG_NORMALMAP_FLIP_INVALID) != 0u && wi.z * dot(wi, n) <= 0.0f) n = v3(-n.x, -n.y, n.z);
    return tilted_frame(normalize_or(n, v3(0.0f, 0.0f, 1.0f)));
}

template <int L>
__device__ inline bool normalmap_is_delta(const SceneData& s, const NormalMapRecord& r) {
    return bsdf_nested_is_delta<L>(s, bsdf_ref_of(s, r.nested));
}

template <int L>
__device__ inline bool normalmap_sample(const SceneData& s, const NormalMapRecord& r, const SurfacePoint& sp, V3 wi,
                                        float u1, V2 u2, BsdfSample* out) {
    Frame f = normalmap_frame(s, r, sp, wi);
    return tilted_sample<L>(s, r.nested, f, (r.flags & HG_NORMALMAP_SHADOWING) != 0u, sp, wi, u1, u2, out);
}

template <int L>
__device__ inline V3 normalmap_eval(const SceneData& s, const NormalMapRecord& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    Frame f = normalmap_frame(s, r, sp, wi);
    return tilted_eval<L>(s, r.nested, f, (r.flags & HG_NORMALMAP_SHADOWING) != 0u, sp, wi, wo);
}

template <int L>
__device__ inline float normalmap_pdf(const SceneData& s, const NormalMapRecord& r, const SurfacePoint& sp, V3 wi,
                                      V3 wo) {
    return tilted_pdf<L>(s, r.nested, normalmap_frame(s, r, sp, wi), sp, wi, wo);
}
