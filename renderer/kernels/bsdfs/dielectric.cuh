// `dielectric` (renderer/src/bsdfs/dielectric.rs): smooth glass, reflection or refraction
// picked by the Fresnel term.
#pragma once
#include "fresnel.cuh"

struct Dielectric {
    float eta;                      // int_ior / ext_ior
    hg_u32 specular_reflectance;    // texture
    hg_u32 specular_transmittance;  // texture
};

__device__ inline bool dielectric_sample(const SceneData& s, const Dielectric& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2,
                                         BsdfSample* out) {
    (void)u2;
    if (wi.z == 0.0f) return false;
    DielectricFresnel f = fresnel_dielectric(wi.z, r.eta);
    out->delta = true;
    if (u1 <= f.r) {
        out->wo = reflect_local(wi);
        out->pdf = f.r;
        out->weight = tex_eval(s, r.specular_reflectance, sp);
        out->eta = 1.0f;
        return true;
    }
    V3 t = tex_eval(s, r.specular_transmittance, sp);
    out->wo = refract_local(wi, f.cos_theta_t, f.eta_ti);
    out->pdf = 1.0f - f.r;
    out->weight = t * (f.eta_ti * f.eta_ti);
    out->eta = f.eta_it;
    return true;
}
