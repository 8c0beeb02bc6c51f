// The pieces of the Disney principled BSDF that `principled` and `principledthin` share
// (renderer/src/bsdfs/principledhelpers.rs).
#pragma once
#include "microfacet.cuh"

// principledhelpers::mulsign (by the sign bit)
__device__ inline V3 pr_mulsign(V3 v, float s) { return copysignf(1.0f, s) < 0.0f ? -v : v; }

__device__ inline bool pr_finite(float x) { return fabsf(x) <= 3.4028235e38f; }

// principledhelpers::schlick_weight
__device__ inline float pr_schlick_weight(float c) {
    float m = fminf(fmaxf(1.0f - c, 0.0f), 1.0f);
    float m2 = m * m;
    return m2 * m2 * m;
}

// principledhelpers::calc_schlick
__device__ inline V3 pr_calc_schlick(V3 r0, float cos_i, float eta) {
    bool outside = cos_i >= 0.0f;
    float eta_it = outside ? eta : 1.0f / eta;
    float eta_ti = outside ? 1.0f / eta : eta;
    float cos_t = safe_sqrt(1.0f - (1.0f - cos_i * cos_i) * (eta_ti * eta_ti));
    float w = eta_it > 1.0f ? pr_schlick_weight(fabsf(cos_i)) : pr_schlick_weight(cos_t);
    return r0 + (v3(1.0f, 1.0f, 1.0f) - r0) * w;
}

// principledhelpers::schlick_r0
__device__ inline float pr_schlick_r0(float eta) {
    float r = (eta - 1.0f) / (eta + 1.0f);
    return r * r;
}

// principledhelpers::tint_color (math::luminance in the Rust order)
__device__ inline V3 pr_tint_color(V3 base) {
    float lum = 0.212671f * base.x + 0.715160f * base.y + 0.072169f * base.z;
    return lum > 0.0f ? base / lum : v3(1.0f, 1.0f, 1.0f);
}

// principledhelpers::spec_distr (dist_params: GGX roughness from roughness and anisotropic)
__device__ inline Microfacet pr_spec_distr(float anisotropic, float roughness) {
    float r2 = roughness * roughness;
    float aspect = sqrtf(1.0f - 0.9f * anisotropic);
    return microfacet(HG_GGX, fmaxf(r2 / aspect, 0.001f), fmaxf(r2 * aspect, 0.001f), true);
}

// principledhelpers::compatible
__device__ inline bool pr_compatible(V3 m, V3 wi, V3 wo, float cos_i, bool reflection) {
    V3 ms = pr_mulsign(m, cos_i);
    V3 mo = reflection ? ms : -ms;
    return dot(wi, ms) > 0.0f && dot(wo, mo) > 0.0f;
}

// principledhelpers::diffuse_shape
__device__ inline float pr_diffuse_shape(float roughness, float flatness, float cos_i, float cos_o, float cos_d) {
    float fo = pr_schlick_weight(cos_o), fi = pr_schlick_weight(cos_i);
    float f_diff = (1.0f - 0.5f * fi) * (1.0f - 0.5f * fo);
    float rr = 2.0f * roughness * (cos_d * cos_d);
    float f_retro = rr * (fo + fi + fo * fi * (rr - 1.0f));
    float fss90 = rr / 2.0f;
    float fss = (1.0f - fo + fss90 * fo) * (1.0f - fi + fss90 * fi);
    float f_ss = 1.25f * (fss * (1.0f / (cos_o + cos_i) - 0.5f) + 0.5f);
    float a = f_diff + f_retro;
    return a * (1.0f - flatness) + f_ss * flatness;
}

// principledhelpers::sheen_color
__device__ inline V3 pr_sheen_color(V3 base, float sheen_tint) {
    return v3(1.0f, 1.0f, 1.0f) * (1.0f - sheen_tint) + pr_tint_color(base) * sheen_tint;
}
