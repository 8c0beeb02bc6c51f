// `diffuse` (renderer/src/bsdfs/diffuse.rs): the Lambertian reflector, cosine sampled.
#pragma once
#include "bsdf.cuh"

struct Diffuse {
    hg_u32 reflectance;  // texture
};

__device__ inline bool diffuse_sample(const SceneData& s, const Diffuse& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2,
                                      BsdfSample* out) {
    (void)u1;
    if (wi.z <= 0.0f) return false;
    V3 wo = square_to_cosine_hemisphere(u2);
    float pdf = cosine_hemisphere_pdf(wo);
    if (pdf <= 0.0f) return false;
    out->wo = wo;
    out->pdf = pdf;
    out->weight = tex_eval(s, r.reflectance, sp);
    out->eta = 1.0f;
    out->delta = false;
    return true;
}

__device__ inline V3 diffuse_eval(const SceneData& s, const Diffuse& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    if (wi.z <= 0.0f || wo.z <= 0.0f) return v3(0.0f, 0.0f, 0.0f);
    return tex_eval(s, r.reflectance, sp) * (HG_INV_PI * wo.z);
}

__device__ inline float diffuse_pdf(const SceneData& s, const Diffuse& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    (void)s, (void)r, (void)sp;
    if (wi.z <= 0.0f || wo.z <= 0.0f) return 0.0f;
    return cosine_hemisphere_pdf(wo);
}
