// `directional` (renderer/src/emitters/directional.rs): parallel light from infinity
// (delta). Record: vec = direction of travel, tex = irradiance.
#pragma once
#include "constant.cuh"

__device__ inline bool directional_sample(const SceneData& s, const FlatEmitter& e, EmitterSample* out) {
    out->d = -v3a(e.vec);
    out->dist = HG_INF;
    out->pdf = 1.0f;
    out->radiance = tex_eval(s, e.tex, surface_point_uv(v2(0.0f, 0.0f)));
    out->delta = true;
    return true;
}
