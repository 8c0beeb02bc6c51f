// `area` (renderer/src/emitters/area.rs): diffuse emission from the front of a shape,
// sampled uniformly by area and converted to solid angle.
#pragma once
#include "constant.cuh"
#include "../shapes/sample.cuh"

// area.rs `towards`
__device__ inline bool area_towards(V3 p, const PositionSample& ps, V3* d, float* dist, float* pdf) {
    V3 v = ps.p - p;
    float dist2 = dot(v, v);
    if (!(ps.pdf > 0.0f) || !(dist2 > 0.0f)) return false;
    *dist = sqrtf(dist2);
    *d = v / *dist;
    float cos_light = -dot(*d, ps.n);
    if (!(cos_light > 0.0f)) return false;
    *pdf = ps.pdf * dist2 / cos_light;
    return fabsf(*pdf) <= 3.4028235e38f;
}

// area.rs `solid_angle_pdf`
__device__ inline float solid_angle_pdf(V3 p, V3 q, V3 n, float pdf_area) {
    V3 v = q - p;
    float dist2 = dot(v, v);
    if (!(dist2 > 0.0f)) return 0.0f;
    float cos_light = -dot(v / sqrtf(dist2), n);
    if (!(cos_light > 0.0f)) return 0.0f;
    return pdf_area * dist2 / cos_light;
}

__device__ inline bool area_sample(const SceneData& s, const FlatEmitter& e, V3 p, V2 u, EmitterSample* out) {
    PositionSample ps = sample_position(s, e.shape, u);
    if (!area_towards(p, ps, &out->d, &out->dist, &out->pdf)) return false;
    out->radiance = tex_eval(s, e.tex, surface_point_uv(ps.uv));
    out->delta = false;
    return true;
}

__device__ inline float area_pdf_hit(const SceneData& s, const FlatEmitter& e, V3 p, const Hit& h) {
    float area = s.g.shapes[e.shape].area;
    if (!(area > 0.0f)) return 0.0f;
    return solid_angle_pdf(p, h.p, h.n, 1.0f / area);
}

__device__ inline V3 area_eval_hit(const SceneData& s, const FlatEmitter& e, const Hit& h, V3 d) {
    return dot(h.n, d) < 0.0f ? tex_eval(s, e.tex, surface_point_uv(h.uv)) : v3(0.0f, 0.0f, 0.0f);
}
