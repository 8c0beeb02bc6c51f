// `dielectric` (renderer/src/bsdfs/dielectric.rs): smooth glass, reflection or refraction
// picked by the Fresnel term. Record: tex[0] specular_reflectance, tex[1]
// specular_transmittance, f[0] eta.
#pragma once
#include "fresnel.cuh"

__device__ inline bool dielectric_sample(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, float u1,
                                         BsdfSample* out) {
    if (wi.z == 0.0f) return false;
    DielectricFresnel f = fresnel_dielectric(wi.z, b.f[0]);
    out->delta = true;
    if (u1 <= f.r) {
        out->wo = reflect_local(wi);
        out->pdf = f.r;
        out->weight = tex_eval(s, b.tex[0], uv);
        out->eta = 1.0f;
        return true;
    }
    V3 t = tex_eval(s, b.tex[1], uv);
    out->wo = refract_local(wi, f.cos_theta_t, f.eta_ti);
    out->pdf = 1.0f - f.r;
    out->weight = t * (f.eta_ti * f.eta_ti);
    out->eta = f.eta_it;
    return true;
}
