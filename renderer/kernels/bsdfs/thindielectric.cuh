// `thindielectric` (renderer/src/bsdfs/thindielectric.rs): a thin glass sheet, reflection
// or straight transmission. Record as `dielectric`.
#pragma once
#include "fresnel.cuh"

__device__ inline bool thindielectric_sample(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, float u1,
                                             BsdfSample* out) {
    if (wi.z == 0.0f) return false;
    float r0 = fresnel_dielectric(fabsf(wi.z), b.f[0]).r;
    float r = 2.0f * r0 / (1.0f + r0);
    if (u1 <= r) {
        out->wo = reflect_local(wi);
        out->pdf = r;
        out->weight = tex_eval(s, b.tex[0], uv);
    } else {
        out->wo = -wi;
        out->pdf = 1.0f - r;
        out->weight = tex_eval(s, b.tex[1], uv);
    }
    out->eta = 1.0f;
    out->delta = true;
    return true;
}
