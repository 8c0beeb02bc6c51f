// `point` (renderer/src/emitters/point.rs): an isotropic point light (delta).
// Record: vec = position, tex = intensity.
#pragma once
#include "constant.cuh"

__device__ inline bool point_sample(const SceneData& s, const FlatEmitter& e, V3 p, EmitterSample* out) {
    V3 v = v3a(e.vec) - p;
    float dist2 = dot(v, v);
    if (!(dist2 > 0.0f)) return false;
    float dist = sqrtf(dist2);
    out->d = v / dist;
    out->dist = dist;
    out->pdf = 1.0f;
    out->radiance = tex_eval(s, e.tex, surface_point_uv(v2(0.0f, 0.0f))) / dist2;
    out->delta = true;
    return true;
}
