// `directional` (renderer/src/emitters/directional.rs): parallel light from infinity
// (delta).
#pragma once
#include "emitter.cuh"

struct DirectionalEmitter {
    V3 direction;       // of travel, unit
    hg_u32 irradiance;  // a constant texture
};

__device__ inline bool directional_sample(const SceneData& s, const DirectionalEmitter& e, V3 p, V2 u,
                                          EmitterSample* out) {
    (void)p, (void)u;
    out->d = -e.direction;
    out->dist = HG_INF;
    out->pdf = 1.0f;
    out->radiance = tex_eval(s, e.irradiance, surface_point_uv(v2(0.0f, 0.0f)));
    out->delta = true;
    return true;
}
