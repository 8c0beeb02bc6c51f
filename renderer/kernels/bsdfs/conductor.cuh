// `conductor` (renderer/src/bsdfs/conductor.rs): a smooth metal, one delta lobe.
#pragma once
#include "fresnel.cuh"

struct Conductor {
    hg_u32 eta;                   // texture
    hg_u32 k;                     // texture
    hg_u32 specular_reflectance;  // texture
};

// Fresnel reflectance times specular_reflectance (Conductor::reflectance); shared with
// roughconductor.
__device__ inline V3 conductor_fresnel(const SceneData& s, hg_u32 eta_t, hg_u32 k_t, hg_u32 spec_t, const SurfacePoint& sp,
                                       float cos_i) {
    V3 eta = tex_eval(s, eta_t, sp), k = tex_eval(s, k_t, sp);
    return mul(fresnel_conductor_rgb(cos_i, eta, k), tex_eval(s, spec_t, sp));
}

__device__ inline bool conductor_sample(const SceneData& s, const Conductor& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2,
                                        BsdfSample* out) {
    (void)u1, (void)u2;
    if (wi.z <= 0.0f) return false;
    out->wo = reflect_local(wi);
    out->pdf = 1.0f;
    out->weight = conductor_fresnel(s, r.eta, r.k, r.specular_reflectance, sp, wi.z);
    out->eta = 1.0f;
    out->delta = true;
    return true;
}
