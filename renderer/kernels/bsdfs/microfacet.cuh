// GGX and Beckmann microfacet distributions with Smith shadowing and visible-normal
// sampling (renderer/src/bsdfs/microfacet.rs).
#pragma once
#include "fresnel.cuh"

#define HG_GGX 0u
#define HG_MIN_ALPHA 1e-4f

struct Microfacet {
    hg_u32 kind;
    float au, av;
    bool visible;
};

__device__ inline Microfacet microfacet(hg_u32 kind, float au, float av, bool visible) {
    Microfacet m;
    m.kind = kind;
    m.au = fmaxf(au, HG_MIN_ALPHA);
    m.av = fmaxf(av, HG_MIN_ALPHA);
    m.visible = visible;
    return m;
}

// microfacet.rs MicrofacetParams: the distribution block of a rough BSDF's record.
struct MicrofacetParams {
    hg_u32 kind;  // HG_GGX or Beckmann
    hg_u32 alpha_u;  // texture
    hg_u32 alpha_v;  // texture
    hg_u32 sample_visible;
};

// MicrofacetParams::at
__device__ inline Microfacet microfacet_at(const SceneData& s, const MicrofacetParams& d, const SurfacePoint& sp) {
    return microfacet(d.kind, tex_eval_1(s, d.alpha_u, sp), tex_eval_1(s, d.alpha_v, sp), d.sample_visible != 0u);
}

__device__ inline float mf_d(const Microfacet& mf, V3 m) {
    if (m.z <= 0.0f) return 0.0f;
    float x = m.x / mf.au, y = m.y / mf.av;
    float z2 = m.z * m.z;
    float r;
    if (mf.kind == HG_GGX) {
        float sm = x * x + y * y + z2;
        r = 1.0f / (HG_PI * mf.au * mf.av * sm * sm);
    } else {
        r = expf(-(x * x + y * y) / z2) / (HG_PI * mf.au * mf.av * z2 * z2);
    }
    return fabsf(r) <= 3.4028235e38f ? r : 0.0f;
}

__device__ inline float mf_g1(const Microfacet& mf, V3 v, V3 m) {
    if (dot(v, m) * v.z <= 0.0f) return 0.0f;
    float ax = mf.au * v.x, ay = mf.av * v.y;
    float xy2 = ax * ax + ay * ay;
    if (xy2 == 0.0f) return 1.0f;
    float tan2 = xy2 / (v.z * v.z);
    if (mf.kind == HG_GGX) return 2.0f / (1.0f + sqrtf(1.0f + tan2));
    float a = 1.0f / sqrtf(tan2);
    if (a >= 1.6f) return 1.0f;
    return (3.535f * a + 2.181f * a * a) / (1.0f + 2.276f * a + 2.577f * a * a);
}

__device__ inline float mf_g(const Microfacet& mf, V3 wi, V3 wo, V3 m) { return mf_g1(mf, wi, m) * mf_g1(mf, wo, m); }

__device__ inline float hg_erf(float x) {
    float t = 1.0f / (1.0f + 0.3275911f * fabsf(x));
    float poly = t * (0.2548296f + t * (-0.28449674f + t * (1.4214137f + t * (-1.4531521f + t * 1.0614054f))));
    float r = 1.0f - poly * expf(-x * x);
    return x < 0.0f ? -r : r;
}

__device__ inline float hg_erfinv(float x) {
    x = fminf(fmaxf(x, -1.0f + 1e-7f), 1.0f - 1e-7f);
    float w = -logf((1.0f - x) * (1.0f + x));
    float p;
    if (w < 5.0f) {
        w = w - 2.5f;
        const float c[9] = {2.8102264e-8f, 3.4327394e-7f, -3.5233877e-6f, -4.3915065e-6f, 2.1858087e-4f,
                            -1.253725e-3f, -4.1776816e-3f, 0.24664073f, 1.5014094f};
        p = 0.0f;
        for (int i = 0; i < 9; ++i) p = p * w + c[i];
    } else {
        w = sqrtf(w) - 3.0f;
        const float c[9] = {-2.0021426e-4f, 1.0095056e-4f, 1.3493432e-3f, -3.6734284e-3f, 5.7395077e-3f,
                            -7.622461e-3f, 9.4388705e-3f, 1.001674f, 2.8329768f};
        p = 0.0f;
        for (int i = 0; i < 9; ++i) p = p * w + c[i];
    }
    return p * x;
}

__device__ inline V2 beckmann_slope_11(float cos_i, V2 u) {
    const float INV_SQRT_PI = 0.5641896f;
    float tan_i = sqrtf(fmaxf(1.0f - cos_i * cos_i, 0.0f)) / cos_i;
    float cot_i = 1.0f / tan_i;
    float maxval = hg_erf(cot_i);
    float ux = fminf(fmaxf(u.x, 1e-6f), 1.0f - 1e-6f), uy = fminf(fmaxf(u.y, 1e-6f), 1.0f - 1e-6f);
    float x = maxval - (maxval + 1.0f) * hg_erf(sqrtf(-logf(ux)));
    float target = ux * (1.0f + maxval + INV_SQRT_PI * tan_i * expf(-cot_i * cot_i));
    for (int i = 0; i < 3; ++i) {
        float slope = hg_erfinv(x);
        float value = 1.0f + x + INV_SQRT_PI * tan_i * expf(-slope * slope) - target;
        x -= value / (1.0f - slope * tan_i);
    }
    return v2(hg_erfinv(x), hg_erfinv(2.0f * uy - 1.0f));
}

__device__ inline V3 mf_sample_ggx_visible(const Microfacet& mf, V3 wi, V2 u) {
    V3 vh = normalize(v3(mf.au * wi.x, mf.av * wi.y, wi.z));
    float len2 = vh.x * vh.x + vh.y * vh.y;
    V3 t1 = len2 > 0.0f ? v3(-vh.y, vh.x, 0.0f) / sqrtf(len2) : v3(1.0f, 0.0f, 0.0f);
    V3 t2 = cross(vh, t1);
    float r = sqrtf(u.x);
    float phi = 2.0f * HG_PI * u.y;
    float p1 = r * cosf(phi);
    float sv = 0.5f * (1.0f + vh.z);
    float p2 = (1.0f - sv) * sqrtf(fmaxf(1.0f - p1 * p1, 0.0f)) + sv * r * sinf(phi);
    V3 nh = (p1 * t1 + p2 * t2) + sqrtf(fmaxf(1.0f - p1 * p1 - p2 * p2, 0.0f)) * vh;
    return normalize(v3(mf.au * nh.x, mf.av * nh.y, fmaxf(nh.z, 1e-7f)));
}

__device__ inline V3 mf_sample_beckmann_visible(const Microfacet& mf, V3 wi, V2 u) {
    V3 w = normalize(v3(mf.au * wi.x, mf.av * wi.y, wi.z));
    float sin_t = sqrtf(fmaxf(1.0f - w.z * w.z, 0.0f));
    float cos_p = 1.0f, sin_p = 0.0f;
    if (sin_t > 1e-7f) {
        cos_p = w.x / sin_t;
        sin_p = w.y / sin_t;
    }
    V2 sl = beckmann_slope_11(w.z, u);
    float x = (cos_p * sl.x - sin_p * sl.y) * mf.au;
    float y = (sin_p * sl.x + cos_p * sl.y) * mf.av;
    return normalize(v3(-x, -y, 1.0f));
}

__device__ inline V3 mf_sample_all(const Microfacet& mf, V2 u) {
    float t = 2.0f * HG_PI * u.y;
    float phi = atan2f(mf.av * sinf(t), mf.au * cosf(t));
    float sp = sinf(phi), cp = cosf(phi);
    float a = cp / mf.au, b = sp / mf.av;
    float a2 = 1.0f / (a * a + b * b);
    float tan2 = mf.kind == HG_GGX ? a2 * u.x / fmaxf(1.0f - u.x, 1e-12f) : -a2 * logf(fmaxf(1.0f - u.x, 1e-12f));
    float cos_t = 1.0f / sqrtf(1.0f + tan2);
    float sin_t = sqrtf(fmaxf(1.0f - cos_t * cos_t, 0.0f));
    return v3(sin_t * cp, sin_t * sp, cos_t);
}

__device__ inline V3 mf_sample(const Microfacet& mf, V3 wi, V2 u) {
    if (mf.visible) return mf.kind == HG_GGX ? mf_sample_ggx_visible(mf, wi, u) : mf_sample_beckmann_visible(mf, wi, u);
    return mf_sample_all(mf, u);
}

__device__ inline float mf_pdf(const Microfacet& mf, V3 wi, V3 m) {
    if (mf.visible) {
        if (wi.z <= 0.0f) return 0.0f;
        return mf_g1(mf, wi, m) * fmaxf(dot(wi, m), 0.0f) * mf_d(mf, m) / wi.z;
    }
    return mf_d(mf, m) * fmaxf(m.z, 0.0f);
}
