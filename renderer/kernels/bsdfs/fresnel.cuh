// Fresnel terms (renderer/src/bsdfs/fresnel.rs).
#pragma once
#include "bsdf.cuh"

struct DielectricFresnel {
    float r, cos_theta_t, eta_it, eta_ti;
};

__device__ inline DielectricFresnel fresnel_dielectric(float cos_theta_i, float eta) {
    bool outside = cos_theta_i >= 0.0f;
    float eta_it = outside ? eta : 1.0f / eta;
    float eta_ti = outside ? 1.0f / eta : eta;
    float cos_t2 = 1.0f - eta_ti * eta_ti * (1.0f - cos_theta_i * cos_theta_i);
    float ci = fabsf(cos_theta_i);
    float ct = safe_sqrt(cos_t2);
    float r;
    if (eta == 1.0f) {
        r = 0.0f;
    } else if (ci == 0.0f) {
        r = 1.0f;
    } else {
        float a_s = (ci - eta_it * ct) / (ci + eta_it * ct);
        float a_p = (ct - eta_it * ci) / (ct + eta_it * ci);
        r = 0.5f * (a_s * a_s + a_p * a_p);
    }
    DielectricFresnel f;
    f.r = r;
    f.cos_theta_t = outside ? -ct : ct;
    f.eta_it = eta_it;
    f.eta_ti = eta_ti;
    return f;
}

__device__ inline V3 refract_local(V3 wi, float cos_theta_t, float eta_ti) {
    return v3(-eta_ti * wi.x, -eta_ti * wi.y, cos_theta_t);
}

__device__ inline V3 reflect_local(V3 wi) { return v3(-wi.x, -wi.y, wi.z); }

// math::reflect: 2 (wi . m) m - wi
__device__ inline V3 reflect(V3 wi, V3 m) { return (2.0f * dot(wi, m)) * m - wi; }

__device__ inline float fresnel_conductor(float cos_theta_i, float eta, float k) {
    float c2 = cos_theta_i * cos_theta_i;
    float s2 = 1.0f - c2;
    float s4 = s2 * s2;
    float t1 = eta * eta - k * k - s2;
    float a2pb2 = safe_sqrt(t1 * t1 + 4.0f * eta * eta * k * k);
    float a = safe_sqrt(0.5f * (a2pb2 + t1));
    float term1 = a2pb2 + c2;
    float term2 = 2.0f * cos_theta_i * a;
    float rs = (term1 - term2) / (term1 + term2);
    float term3 = a2pb2 * c2 + s4;
    float term4 = term2 * s2;
    float rp = rs * (term3 - term4) / (term3 + term4);
    return 0.5f * (rs + rp);
}

__device__ inline V3 fresnel_conductor_rgb(float c, V3 eta, V3 k) {
    return v3(fresnel_conductor(c, eta.x, k.x), fresnel_conductor(c, eta.y, k.y),
              fresnel_conductor(c, eta.z, k.z));
}

// glam's normalize: v * (1 / |v|)
__device__ inline V3 normalize(V3 v) { return v * (1.0f / sqrtf(dot(v, v))); }
