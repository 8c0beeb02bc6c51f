// `conductor` (renderer/src/bsdfs/conductor.rs): a smooth metal, one delta lobe.
// Record: tex[0] eta, tex[1] k, tex[2] specular_reflectance.
#pragma once
#include "microfacet.cuh"

__device__ inline V3 conductor_fresnel(const SceneData& s, const FlatBsdf& b, V2 uv, float cos_i) {
    V3 eta = tex_eval(s, b.tex[0], uv), k = tex_eval(s, b.tex[1], uv);
    return mul(fresnel_conductor_rgb(cos_i, eta, k), tex_eval(s, b.tex[2], uv));
}

__device__ inline bool conductor_sample(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, BsdfSample* out) {
    if (wi.z <= 0.0f) return false;
    out->wo = reflect_local(wi);
    out->pdf = 1.0f;
    out->weight = conductor_fresnel(s, b, uv, wi.z);
    out->eta = 1.0f;
    out->delta = true;
    return true;
}
