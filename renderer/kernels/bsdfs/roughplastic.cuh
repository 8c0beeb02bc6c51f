// `roughplastic` (renderer/src/bsdfs/roughplastic.rs): a diffuse base under a rough
// dielectric coating, with the precomputed transmittance table in its record.
#pragma once
#include "microfacet.cuh"
#include "plastic.cuh"

#define HG_TABLE_RES 64

struct RoughPlastic {
    hg_u32 diffuse_reflectance;   // texture
    hg_u32 specular_reflectance;  // texture
    hg_u32 kind;                  // microfacet distribution
    hg_u32 sample_visible;
    float alpha;
    float eta;
    float inv_eta2;               // 1 / eta^2
    float specular_sampling_weight;
    float internal_reflectance;
    hg_u32 nonlinear;
    float transmittance[HG_TABLE_RES];  // T(mu) at mu = i / (HG_TABLE_RES - 1)
};

__device__ inline Microfacet roughplastic_distr(const RoughPlastic& r) {
    return microfacet(r.kind, r.alpha, r.alpha, r.sample_visible != 0u);
}

// RoughPlastic::transmittance_at
__device__ inline float roughplastic_transmittance(const RoughPlastic& r, float mu) {
    float x = fminf(fmaxf(mu, 0.0f), 1.0f) * (float)(HG_TABLE_RES - 1);
    int i = (int)x;
    if (i > HG_TABLE_RES - 2) i = HG_TABLE_RES - 2;
    float w = x - (float)i;
    return (1.0f - w) * r.transmittance[i] + w * r.transmittance[i + 1];
}

__device__ inline float roughplastic_prob_specular(const RoughPlastic& r, float cos_i) {
    float t_i = roughplastic_transmittance(r, cos_i);
    return coating_probability(1.0f - t_i, t_i, r.specular_sampling_weight);
}

__device__ inline V3 roughplastic_eval(const SceneData& s, const RoughPlastic& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    if (wi.z <= 0.0f || wo.z <= 0.0f) return v3(0.0f, 0.0f, 0.0f);
    Microfacet mf = roughplastic_distr(r);
    V3 h = normalize(wi + wo);
    float f = fresnel_dielectric(dot(wi, h), r.eta).r;
    V3 spec = tex_eval(s, r.specular_reflectance, sp) * (f * mf_d(mf, h) * mf_g(mf, wi, wo, h) / (4.0f * wi.z));
    V3 base = internal_scattering(tex_eval(s, r.diffuse_reflectance, sp), r.internal_reflectance, r.nonlinear);
    float t = roughplastic_transmittance(r, wi.z) * roughplastic_transmittance(r, wo.z);
    return spec + base * (cosine_hemisphere_pdf(wo) * r.inv_eta2 * t);
}

__device__ inline float roughplastic_pdf(const SceneData& s, const RoughPlastic& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    (void)s, (void)sp;
    if (wi.z <= 0.0f || wo.z <= 0.0f) return 0.0f;
    float ps = roughplastic_prob_specular(r, wi.z);
    V3 h = normalize(wi + wo);
    float wo_h = dot(wo, h);
    float spec = wo_h > 0.0f ? mf_pdf(roughplastic_distr(r), wi, h) / (4.0f * wo_h) : 0.0f;
    return ps * spec + (1.0f - ps) * cosine_hemisphere_pdf(wo);
}

__device__ inline bool roughplastic_sample(const SceneData& s, const RoughPlastic& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2,
                                           BsdfSample* out) {
    if (wi.z <= 0.0f) return false;
    V3 wo = u1 < roughplastic_prob_specular(r, wi.z) ? reflect(wi, mf_sample(roughplastic_distr(r), wi, u2))
                                                      : square_to_cosine_hemisphere(u2);
    float pdf = roughplastic_pdf(s, r, sp, wi, wo);
    if (!(pdf > 0.0f && pdf <= 3.4028235e38f)) return false;
    out->wo = wo;
    out->pdf = pdf;
    out->weight = roughplastic_eval(s, r, sp, wi, wo) / pdf;
    out->eta = 1.0f;
    out->delta = false;
    return true;
}
