// `bumpmap` (renderer/src/bsdfs/bumpmap.rs): an adapter. The nested BSDF queried in the
// frame of the normal tilted by the height texture's slope, with Estevez et al.'s
// shadowing term.
#pragma once
#include "tilted.cuh"

struct BumpMapRecord {
    RecordRef nested;
    hg_u32 height;
    hg_u32 flags;
    float scale;
    hg_u32 unused;
};

#define HG_BUMPMAP_FLIP_INVALID 1u
#define HG_BUMPMAP_SHADOWING 2u

// BumpMap::frame
__device__ inline Frame bumpmap_frame(const SceneData& s, const BumpMapRecord& r, const SurfacePoint& sp, V3 wi) {
    V2 g = tex_eval_1_grad(s, r.height, sp);
    V3 dpdu = v3(sp.dpdu.x, sp.dpdu.y, g.x * r.scale);
    V3 dpdv = v3(sp.dpdv.x, sp.dpdv.y, g.y * r.scale);
    V3 n = normalize_or(cross(dpdu, dpdv), v3(0.0f, 0.0f, 1.0f));
    if (dot(sp.ng, n) < 0.0f) n = -n;
    if ((r.flags & HG_BUMPMAP_FLIP_INVALID) != 0u && wi.z * dot(wi, n) <= 0.0f) n = v3(-n.x, -n.y, n.z);
    return tilted_frame(n);
}

template <int L>
__device__ inline bool bumpmap_is_delta(const SceneData& s, const BumpMapRecord& r) {
    return bsdf_nested_is_delta<L>(s, bsdf_ref_of(s, r.nested));
}

template <int L>
__device__ inline bool bumpmap_sample(const SceneData& s, const BumpMapRecord& r, const SurfacePoint& sp, V3 wi,
                                      float u1, V2 u2, BsdfSample* out) {
    Frame f = bumpmap_frame(s, r, sp, wi);
    return tilted_sample<L>(s, r.nested, f, (r.flags & HG_BUMPMAP_SHADOWING) != 0u, sp, wi, u1, u2, out);
}

template <int L>
__device__ inline V3 bumpmap_eval(const SceneData& s, const BumpMapRecord& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    Frame f = bumpmap_frame(s, r, sp, wi);
    return tilted_eval<L>(s, r.nested, f, (r.flags & HG_BUMPMAP_SHADOWING) != 0u, sp, wi, wo);
}

template <int L>
__device__ inline float bumpmap_pdf(const SceneData& s, const BumpMapRecord& r, const SurfacePoint& sp, V3 wi,
                                    V3 wo) {
    return tilted_pdf<L>(s, r.nested, bumpmap_frame(s, r, sp, wi), sp, wi, wo);
}
