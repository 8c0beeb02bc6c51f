// `constant` (renderer/src/emitters/constant.rs): uniform radiance from every direction,
// sampled uniformly on the sphere.
#pragma once
#include "emitter.cuh"

struct ConstantEmitter {
    hg_u32 radiance;  // a constant texture
};

__device__ inline V3 constant_eval_env(const SceneData& s, const ConstantEmitter& e, V3 d, float* pdf) {
    (void)d;
    *pdf = HG_INV_FOUR_PI;
    return tex_eval(s, e.radiance, surface_point_uv(v2(0.0f, 0.0f)));
}

__device__ inline bool constant_sample(const SceneData& s, const ConstantEmitter& e, V3 p, V2 u, EmitterSample* out) {
    (void)p;
    out->d = square_to_uniform_sphere(u);
    out->dist = HG_INF;
    out->pdf = HG_INV_FOUR_PI;
    out->radiance = tex_eval(s, e.radiance, surface_point_uv(v2(0.0f, 0.0f)));
    out->delta = false;
    return true;
}
