// `roughplastic` (renderer/src/bsdfs/roughplastic.rs): a diffuse base under a rough
// dielectric coating, with the precomputed transmittance table. Record: tex[0] diffuse,
// tex[1] specular, f = alpha, eta, 1/eta², specular_sampling_weight,
// internal_reflectance; distr, sample_visible, nonlinear; table = offset in `tables`.
#pragma once
#include "microfacet.cuh"
#include "plastic.cuh"

#define HG_TABLE_RES 64

__device__ inline Microfacet roughplastic_distr(const FlatBsdf& b) {
    return microfacet(b.distr, b.f[0], b.f[0], b.sample_visible != 0u);
}

__device__ inline float roughplastic_transmittance(const SceneData& s, const FlatBsdf& b, float mu) {
    float x = fminf(fmaxf(mu, 0.0f), 1.0f) * (float)(HG_TABLE_RES - 1);
    int i = (int)x;
    if (i > HG_TABLE_RES - 2) i = HG_TABLE_RES - 2;
    float w = x - (float)i;
    const float* t = s.tables + b.table;
    return (1.0f - w) * t[i] + w * t[i + 1];
}

__device__ inline float roughplastic_prob_specular(const SceneData& s, const FlatBsdf& b, float cos_i) {
    float t_i = roughplastic_transmittance(s, b, cos_i);
    float w = b.f[3];
    float ps = (1.0f - t_i) * w, pd = t_i * (1.0f - w);
    return ps + pd > 0.0f ? ps / (ps + pd) : 0.5f;
}

__device__ inline V3 roughplastic_eval(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, V3 wo) {
    if (wi.z <= 0.0f || wo.z <= 0.0f) return v3(0.0f, 0.0f, 0.0f);
    Microfacet mf = roughplastic_distr(b);
    V3 h = normalize(wi + wo);
    float f = fresnel_dielectric(dot(wi, h), b.f[1]).r;
    V3 spec = tex_eval(s, b.tex[1], uv) * (f * mf_d(mf, h) * mf_g(mf, wi, wo, h) / (4.0f * wi.z));
    V3 base = internal_scattering(tex_eval(s, b.tex[0], uv), b.f[4], b.nonlinear);
    float t = roughplastic_transmittance(s, b, wi.z) * roughplastic_transmittance(s, b, wo.z);
    return spec + base * (cosine_hemisphere_pdf(wo) * b.f[2] * t);
}

__device__ inline float roughplastic_pdf(const SceneData& s, const FlatBsdf& b, V3 wi, V3 wo) {
    if (wi.z <= 0.0f || wo.z <= 0.0f) return 0.0f;
    float ps = roughplastic_prob_specular(s, b, wi.z);
    V3 h = normalize(wi + wo);
    float wo_h = dot(wo, h);
    float spec = wo_h > 0.0f ? mf_pdf(roughplastic_distr(b), wi, h) / (4.0f * wo_h) : 0.0f;
    return ps * spec + (1.0f - ps) * cosine_hemisphere_pdf(wo);
}

__device__ inline bool roughplastic_sample(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, float u1, V2 u2,
                                           BsdfSample* out) {
    if (wi.z <= 0.0f) return false;
    V3 wo = u1 < roughplastic_prob_specular(s, b, wi.z) ? reflect(wi, mf_sample(roughplastic_distr(b), wi, u2))
                                                         : square_to_cosine_hemisphere(u2);
    float pdf = roughplastic_pdf(s, b, wi, wo);
    if (!(pdf > 0.0f && pdf <= 3.4028235e38f)) return false;
    out->wo = wo;
    out->pdf = pdf;
    out->weight = roughplastic_eval(s, b, uv, wi, wo) / pdf;
    out->eta = 1.0f;
    out->delta = false;
    return true;
}
