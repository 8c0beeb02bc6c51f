// `roughconductor` (renderer/src/bsdfs/roughconductor.rs): a microfacet metal.
#pragma once
#include "conductor.cuh"
#include "microfacet.cuh"

struct RoughConductor {
    MicrofacetParams distr;
    hg_u32 eta;                   // texture
    hg_u32 k;                     // texture
    hg_u32 specular_reflectance;  // texture
};

__device__ inline V3 roughconductor_fresnel(const SceneData& s, const RoughConductor& r, const SurfacePoint& sp, float cos_i) {
    return conductor_fresnel(s, r.eta, r.k, r.specular_reflectance, sp, cos_i);
}

__device__ inline bool roughconductor_sample(const SceneData& s, const RoughConductor& r, const SurfacePoint& sp, V3 wi, float u1,
                                             V2 u2, BsdfSample* out) {
    (void)u1;
    if (wi.z <= 0.0f) return false;
    Microfacet mf = microfacet_at(s, r.distr, sp);
    V3 m = mf_sample(mf, wi, u2);
    V3 wo = reflect(wi, m);
    float wo_m = dot(wo, m);
    if (wo.z <= 0.0f || wo_m <= 0.0f) return false;
    float pdf = mf_pdf(mf, wi, m) / (4.0f * wo_m);
    if (!(pdf > 0.0f && pdf <= 3.4028235e38f)) return false;
    V3 f = roughconductor_fresnel(s, r, sp, dot(wi, m));
    float g = mf.visible ? mf_g1(mf, wo, m) : mf_g(mf, wi, wo, m) * wo_m / (wi.z * m.z);
    out->wo = wo;
    out->pdf = pdf;
    out->weight = f * g;
    out->eta = 1.0f;
    out->delta = false;
    return true;
}

__device__ inline V3 roughconductor_eval(const SceneData& s, const RoughConductor& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    if (wi.z <= 0.0f || wo.z <= 0.0f) return v3(0.0f, 0.0f, 0.0f);
    Microfacet mf = microfacet_at(s, r.distr, sp);
    V3 h = normalize(wi + wo);
    float v = mf_d(mf, h) * mf_g(mf, wi, wo, h) / (4.0f * wi.z);
    return roughconductor_fresnel(s, r, sp, dot(wi, h)) * v;
}

__device__ inline float roughconductor_pdf(const SceneData& s, const RoughConductor& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    if (wi.z <= 0.0f || wo.z <= 0.0f) return 0.0f;
    Microfacet mf = microfacet_at(s, r.distr, sp);
    V3 h = normalize(wi + wo);
    float wo_h = dot(wo, h);
    if (wo_h <= 0.0f) return 0.0f;
    return mf_pdf(mf, wi, h) / (4.0f * wo_h);
}
