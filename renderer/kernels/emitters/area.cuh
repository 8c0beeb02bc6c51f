// `area` (renderer/src/emitters/area.rs): diffuse emission from the front of a shape,
// sampled uniformly by area and converted to solid angle. The radiance is looked up at
// the surface point: its uv, and on meshes its triangle and barycentrics.
#pragma once
#include "emitter.cuh"

struct AreaEmitter {
    hg_u32 shape;
    hg_u32 radiance;  // texture
};

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

// AreaEmitter::radiance_at
__device__ inline V3 area_radiance(const SceneData& s, const AreaEmitter& e, V2 uv, hg_u32 prim, V2 bary) {
    SurfacePoint sp = surface_point_uv(uv);
    sp.shape = e.shape;
    sp.prim = prim;
    sp.bary = bary;
    return tex_eval(s, e.radiance, sp);
}

__device__ inline bool area_sample(const SceneData& s, const AreaEmitter& e, V3 p, V2 u, EmitterSample* out) {
    PositionSample ps = sample_position(s, e.shape, u);
    if (!area_towards(p, ps, &out->d, &out->dist, &out->pdf)) return false;
    out->radiance = area_radiance(s, e, ps.uv, ps.prim, ps.bary);
    out->delta = false;
    out->uv = ps.uv;
    return true;
}

// AreaEmitter::sample_position: a point uniform by area, its radiance over the density.
__device__ inline bool area_sample_position(const SceneData& s, const AreaEmitter& e, V2 u, PositionSample* ps,
                                            V3* w) {
    *ps = sample_position(s, e.shape, u);
    if (!(ps->pdf > 0.0f)) return false;
    *w = area_radiance(s, e, ps->uv, ps->prim, ps->bary) / ps->pdf;
    return finite3(*w);
}

// AreaEmitter::sample_ray: a point uniform by area, a cosine-weighted direction.
__device__ inline bool area_sample_ray(const SceneData& s, const AreaEmitter& e, V2 u_pos, V2 u_dir,
                                       EmitterRay* out) {
    PositionSample ps;
    V3 w;
    if (!area_sample_position(s, e, u_pos, &ps, &w)) return false;
    out->p = ps.p;
    out->n = ps.n;
    out->d = to_world(frame_from_normal(ps.n), square_to_cosine_hemisphere(u_dir));
    out->weight = w * HG_PI;  // L cos / (pdf_area cos / pi)
    return true;
}

__device__ inline float area_pdf_hit(const SceneData& s, const AreaEmitter& e, V3 p, const Hit& h) {
    float area = s.g.shapes[e.shape].area;
    if (!(area > 0.0f)) return 0.0f;
    return solid_angle_pdf(p, h.p, h.n, 1.0f / area);
}

__device__ inline V3 area_eval_hit(const SceneData& s, const AreaEmitter& e, const Hit& h, V3 d) {
    return dot(h.n, d) < 0.0f ? area_radiance(s, e, h.uv, h.prim, h.bary) : v3(0.0f, 0.0f, 0.0f);
}
