// `roughdielectric` (renderer/src/bsdfs/roughdielectric.rs): microfacet reflection and
// refraction between two dielectrics, two-sided by nature.
#pragma once
#include "microfacet.cuh"

struct RoughDielectric {
    MicrofacetParams distr;
    float eta;                      // int_ior / ext_ior (never 1)
    hg_u32 specular_reflectance;    // texture
    hg_u32 specular_transmittance;  // texture
};

// RoughDielectric::sampling_distr: without visible normals, widened by 1.2 - 0.2 sqrt|cos i|.
__device__ inline Microfacet roughdielectric_sampling(Microfacet mf, float cos_i) {
    if (mf.visible) return mf;
    float sc = 1.2f - 0.2f * sqrtf(fabsf(cos_i));
    mf.au = mf.au * sc;
    mf.av = mf.av * sc;
    return mf;
}

// RoughDielectric::half_vector: false at grazing incidence or a degenerate pair.
__device__ inline bool roughdielectric_half(float eta_rec, V3 wi, V3 wo, bool* refl, float* eta, V3* m) {
    if (wi.z == 0.0f) return false;
    *refl = wi.z * wo.z > 0.0f;
    *eta = wi.z > 0.0f ? eta_rec : 1.0f / eta_rec;
    V3 h = normalize(wi + wo * (*refl ? 1.0f : *eta));
    if (copysignf(1.0f, h.z) < 0.0f) h = -h;  // the sign bit, as Rust's is_sign_negative
    *m = h;
    return finite3(h);
}

__device__ inline bool roughdielectric_sample(const SceneData& s, const RoughDielectric& r, const SurfacePoint& sp, V3 wi, float u1,
                                              V2 u2, BsdfSample* out) {
    if (wi.z == 0.0f) return false;
    Microfacet mf = microfacet_at(s, r.distr, sp);
    Microfacet smf = roughdielectric_sampling(mf, wi.z);
    V3 wi_up = wi.z < 0.0f ? -wi : wi;
    V3 m = mf_sample(smf, wi_up, u2);
    float pdf_m = mf_pdf(smf, wi_up, m);
    if (!(pdf_m > 0.0f)) return false;
    float wi_m = dot(wi, m);
    DielectricFresnel f = fresnel_dielectric(wi_m, r.eta);
    V3 wo, factor;
    float lobe, eta, jacobian;
    if (u1 <= f.r) {
        wo = reflect(wi, m);
        factor = tex_eval(s, r.specular_reflectance, sp);
        lobe = f.r;
        eta = 1.0f;
        jacobian = 1.0f / (4.0f * dot(wo, m));
    } else {
        wo = m * (wi_m * f.eta_ti + f.cos_theta_t) - wi * f.eta_ti;
        float wo_m = dot(wo, m);
        float denom = wi_m + f.eta_it * wo_m;
        factor = tex_eval(s, r.specular_transmittance, sp) * (f.eta_ti * f.eta_ti);
        lobe = 1.0f - f.r;
        eta = f.eta_it;
        jacobian = f.eta_it * f.eta_it * wo_m / (denom * denom);
    }
    float g = mf.visible ? mf_g1(mf, wo, m)
                         : mf_d(mf, m) / mf_d(smf, m) * mf_g(mf, wi, wo, m) * fabsf(wi_m / (wi.z * m.z));
    float pdf = pdf_m * lobe * fabsf(jacobian);
    if (!(g > 0.0f && g <= 3.4028235e38f && pdf > 0.0f && pdf <= 3.4028235e38f)) return false;
    out->wo = wo;
    out->pdf = pdf;
    out->weight = factor * g;
    out->eta = eta;
    out->delta = false;
    return true;
}

__device__ inline V3 roughdielectric_eval(const SceneData& s, const RoughDielectric& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    bool refl;
    float eta;
    V3 m;
    if (!roughdielectric_half(r.eta, wi, wo, &refl, &eta, &m)) return v3(0.0f, 0.0f, 0.0f);
    Microfacet mf = microfacet_at(s, r.distr, sp);
    float dg = mf_d(mf, m) * mf_g(mf, wi, wo, m);
    if (dg == 0.0f) return v3(0.0f, 0.0f, 0.0f);
    float wi_m = dot(wi, m), wo_m = dot(wo, m);
    float f = fresnel_dielectric(wi_m, r.eta).r;
    if (refl) return tex_eval(s, r.specular_reflectance, sp) * (f * dg / (4.0f * fabsf(wi.z)));
    float denom = wi_m + eta * wo_m;
    float v = fabsf((1.0f - f) * dg * wi_m * wo_m / (wi.z * denom * denom));
    return tex_eval(s, r.specular_transmittance, sp) * v;
}

__device__ inline float roughdielectric_pdf(const SceneData& s, const RoughDielectric& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    bool refl;
    float eta;
    V3 m;
    if (!roughdielectric_half(r.eta, wi, wo, &refl, &eta, &m)) return 0.0f;
    float wi_m = dot(wi, m), wo_m = dot(wo, m);
    if (wi_m * wi.z <= 0.0f || wo_m * wo.z <= 0.0f) return 0.0f;
    float jacobian;
    if (refl) {
        jacobian = 1.0f / (4.0f * wo_m);
    } else {
        float denom = wi_m + eta * wo_m;
        jacobian = eta * eta * wo_m / (denom * denom);
    }
    Microfacet smf = roughdielectric_sampling(microfacet_at(s, r.distr, sp), wi.z);
    V3 wi_up = wi.z < 0.0f ? -wi : wi;
    float f = fresnel_dielectric(wi_m, r.eta).r;
    float p = mf_pdf(smf, wi_up, m) * (refl ? f : 1.0f - f) * fabsf(jacobian);
    return fabsf(p) <= 3.4028235e38f ? p : 0.0f;
}
