// `plastic` (renderer/src/bsdfs/plastic.rs): a diffuse base under a smooth dielectric
// coating.
#pragma once
#include "fresnel.cuh"

struct Plastic {
    hg_u32 diffuse_reflectance;      // texture
    hg_u32 specular_reflectance;     // texture
    float eta;
    float inv_eta2;                  // 1 / eta^2
    float fdr_int;                   // diffuse Fresnel reflectance inside the coating
    float specular_sampling_weight;
    hg_u32 nonlinear;
};

// plastic.rs internal_scattering
__device__ inline V3 internal_scattering(V3 d, float f_int, hg_u32 nonlinear) {
    if (nonlinear) return v3(d.x / (1.0f - d.x * f_int), d.y / (1.0f - d.y * f_int), d.z / (1.0f - d.z * f_int));
    return d / (1.0f - f_int);
}

// plastic.rs coating_probability
__device__ inline float coating_probability(float coat, float base, float weight) {
    float ps = coat * weight, pd = base * (1.0f - weight);
    return ps + pd > 0.0f ? ps / (ps + pd) : 0.5f;
}

__device__ inline float plastic_prob_specular(const Plastic& r, float f_i) {
    return coating_probability(f_i, 1.0f - f_i, r.specular_sampling_weight);
}

__device__ inline V3 plastic_base(const SceneData& s, const Plastic& r, const SurfacePoint& sp) {
    return internal_scattering(tex_eval(s, r.diffuse_reflectance, sp), r.fdr_int, r.nonlinear);
}

__device__ inline bool plastic_sample(const SceneData& s, const Plastic& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2,
                                      BsdfSample* out) {
    if (wi.z <= 0.0f) return false;
    float f_i = fresnel_dielectric(wi.z, r.eta).r;
    float ps = plastic_prob_specular(r, f_i);
    out->eta = 1.0f;
    if (u1 < ps) {
        out->wo = reflect_local(wi);
        out->pdf = ps;
        out->weight = tex_eval(s, r.specular_reflectance, sp) * (f_i / ps);
        out->delta = true;
        return true;
    }
    V3 wo = square_to_cosine_hemisphere(u2);
    float pdf = (1.0f - ps) * cosine_hemisphere_pdf(wo);
    if (pdf != pdf || pdf <= 0.0f) return false;
    float f_o = fresnel_dielectric(wo.z, r.eta).r;
    out->wo = wo;
    out->pdf = pdf;
    out->weight = plastic_base(s, r, sp) * (r.inv_eta2 * (1.0f - f_i) * (1.0f - f_o) / (1.0f - ps));
    out->delta = false;
    return true;
}

__device__ inline V3 plastic_eval(const SceneData& s, const Plastic& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    if (wi.z <= 0.0f || wo.z <= 0.0f) return v3(0.0f, 0.0f, 0.0f);
    float f_i = fresnel_dielectric(wi.z, r.eta).r;
    float f_o = fresnel_dielectric(wo.z, r.eta).r;
    return plastic_base(s, r, sp) * (cosine_hemisphere_pdf(wo) * r.inv_eta2 * (1.0f - f_i) * (1.0f - f_o));
}

__device__ inline float plastic_pdf(const SceneData& s, const Plastic& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    (void)s, (void)sp;
    if (wi.z <= 0.0f || wo.z <= 0.0f) return 0.0f;
    float f_i = fresnel_dielectric(wi.z, r.eta).r;
    return (1.0f - plastic_prob_specular(r, f_i)) * cosine_hemisphere_pdf(wo);
}
