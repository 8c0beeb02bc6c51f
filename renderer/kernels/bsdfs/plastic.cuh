// `plastic` (renderer/src/bsdfs/plastic.rs): a diffuse base under a smooth dielectric
// coating. Record: tex[0] diffuse, tex[1] specular, f = eta, 1/eta², fdr_int,
// specular_sampling_weight; nonlinear.
#pragma once
#include "fresnel.cuh"

// plastic.rs internal_scattering
__device__ inline V3 internal_scattering(V3 d, float f_int, hg_u32 nonlinear) {
    if (nonlinear) return v3(d.x / (1.0f - d.x * f_int), d.y / (1.0f - d.y * f_int), d.z / (1.0f - d.z * f_int));
    return d / (1.0f - f_int);
}

__device__ inline float plastic_prob_specular(const FlatBsdf& b, float f_i) {
    float w = b.f[3];
    float ps = f_i * w, pd = (1.0f - f_i) * (1.0f - w);
    return ps + pd > 0.0f ? ps / (ps + pd) : 0.5f;
}

__device__ inline V3 plastic_base(const SceneData& s, const FlatBsdf& b, V2 uv) {
    return internal_scattering(tex_eval(s, b.tex[0], uv), b.f[2], b.nonlinear);
}

__device__ inline bool plastic_sample(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, float u1, V2 u2,
                                      BsdfSample* out) {
    if (wi.z <= 0.0f) return false;
    float f_i = fresnel_dielectric(wi.z, b.f[0]).r;
    float ps = plastic_prob_specular(b, f_i);
    out->eta = 1.0f;
    if (u1 < ps) {
        out->wo = reflect_local(wi);
        out->pdf = ps;
        out->weight = tex_eval(s, b.tex[1], uv) * (f_i / ps);
        out->delta = true;
        return true;
    }
    V3 wo = square_to_cosine_hemisphere(u2);
    float pdf = (1.0f - ps) * cosine_hemisphere_pdf(wo);
    if (pdf != pdf || pdf <= 0.0f) return false;
    float f_o = fresnel_dielectric(wo.z, b.f[0]).r;
    out->wo = wo;
    out->pdf = pdf;
    out->weight = plastic_base(s, b, uv) * (b.f[1] * (1.0f - f_i) * (1.0f - f_o) / (1.0f - ps));
    out->delta = false;
    return true;
}

__device__ inline V3 plastic_eval(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, V3 wo) {
    if (wi.z <= 0.0f || wo.z <= 0.0f) return v3(0.0f, 0.0f, 0.0f);
    float f_i = fresnel_dielectric(wi.z, b.f[0]).r;
    float f_o = fresnel_dielectric(wo.z, b.f[0]).r;
    return plastic_base(s, b, uv) * (cosine_hemisphere_pdf(wo) * b.f[1] * (1.0f - f_i) * (1.0f - f_o));
}

__device__ inline float plastic_pdf(const FlatBsdf& b, V3 wi, V3 wo) {
    if (wi.z <= 0.0f || wo.z <= 0.0f) return 0.0f;
    float f_i = fresnel_dielectric(wi.z, b.f[0]).r;
    return (1.0f - plastic_prob_specular(b, f_i)) * cosine_hemisphere_pdf(wo);
}
