// `point` (renderer/src/emitters/point.rs): an isotropic point light (delta).
#pragma once
#include "emitter.cuh"

struct PointEmitter {
    V3 position;
    hg_u32 intensity;  // a constant texture
};

__device__ inline bool point_sample(const SceneData& s, const PointEmitter& e, V3 p, V2 u, EmitterSample* out) {
    (void)u;
    V3 v = e.position - p;
    float dist2 = dot(v, v);
    if (!(dist2 > 0.0f)) return false;
    float dist = sqrtf(dist2);
    out->d = v / dist;
    out->dist = dist;
    out->pdf = 1.0f;
    out->radiance = tex_eval(s, e.intensity, surface_point_uv(v2(0.0f, 0.0f))) / dist2;
    out->delta = true;
    return true;
}

// PointEmitter::sample_ray: a uniform direction.
__device__ inline bool point_sample_ray(const SceneData& s, const PointEmitter& e, V2 u_pos, V2 u_dir,
                                        EmitterRay* out) {
    (void)u_pos;
    out->p = e.position;
    out->n = v3(0.0f, 0.0f, 0.0f);
    out->d = square_to_uniform_sphere(u_dir);
    out->weight = tex_eval(s, e.intensity, surface_point_uv(v2(0.0f, 0.0f))) / HG_INV_FOUR_PI;
    return true;
}
