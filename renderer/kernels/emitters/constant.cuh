// `constant` (renderer/src/emitters/constant.rs): uniform radiance from every direction,
// sampled uniformly on the sphere.
#pragma once
#include "../textures.cuh"

// One direction sampled towards an emitter (emitters::EmitterSample).
struct EmitterSample {
    V3 d;
    float dist;
    float pdf;
    V3 radiance;
    bool delta;
};

__device__ inline V3 constant_eval(const SceneData& s, const FlatEmitter& e) {
    return tex_eval(s, e.tex, surface_point_uv(v2(0.0f, 0.0f)));
}

__device__ inline bool constant_sample(const SceneData& s, const FlatEmitter& e, V2 u, EmitterSample* out) {
    out->d = square_to_uniform_sphere(u);
    out->dist = HG_INF;
    out->pdf = HG_INV_FOUR_PI;
    out->radiance = constant_eval(s, e);
    out->delta = false;
    return true;
}
