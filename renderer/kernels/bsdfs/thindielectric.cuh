// `thindielectric` (renderer/src/bsdfs/thindielectric.rs): a thin glass sheet, reflection
// or straight transmission.
#pragma once
#include "fresnel.cuh"

struct ThinDielectric {
    float eta;                      // int_ior / ext_ior
    hg_u32 specular_reflectance;    // texture
    hg_u32 specular_transmittance;  // texture
};

__device__ inline bool thindielectric_sample(const SceneData& s, const ThinDielectric& r, const SurfacePoint& sp, V3 wi, float u1,
                                             V2 u2, BsdfSample* out) {
    (void)u2;
    if (wi.z == 0.0f) return false;
    float r0 = fresnel_dielectric(fabsf(wi.z), r.eta).r;
    float refl = 2.0f * r0 / (1.0f + r0);
    if (u1 <= refl) {
        out->wo = reflect_local(wi);
        out->pdf = refl;
        out->weight = tex_eval(s, r.specular_reflectance, sp);
    } else {
        out->wo = -wi;
        out->pdf = 1.0f - refl;
        out->weight = tex_eval(s, r.specular_transmittance, sp);
    }
    out->eta = 1.0f;
    out->delta = true;
    return true;
}
