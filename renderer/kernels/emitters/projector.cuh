// `projector` (renderer/src/emitters/projector.rs): a pinhole projector of an image
// (delta).
#pragma once
#include "emitter.cuh"

struct ProjectorEmitter {
    V3 position;
    float to_local[9];  // world -> projector frame, column-major
    V3 axis;            // to_world * (0, 0, 1), not normalised
    hg_u32 irradiance;  // texture
    float scale;
    V2 uv_scale;  // uv = 1/2 - uv_scale (x, y) / z
};

__device__ inline bool projector_sample(const SceneData& s, const ProjectorEmitter& e, V3 p, V2 u,
                                        EmitterSample* out) {
    (void)u;
    V3 local = mat3_mul(e.to_local, p - e.position);
    if (!(local.z > 0.0f)) return false;
    V2 uv = v2(0.5f - e.uv_scale.x * local.x / local.z, 0.5f - e.uv_scale.y * local.y / local.z);
    if (!(uv.x >= 0.0f && uv.x <= 1.0f && uv.y >= 0.0f && uv.y <= 1.0f)) return false;
    V3 v = e.position - p;
    float dist = sqrtf(dot(v, v));
    V3 d = v / dist;
    // Mitsuba's normalisation: irradiance at depth 1 (dist^2 cos^3 = z^2 cos)
    float cos_theta = -dot(e.axis, d);
    if (!(cos_theta > 0.0f)) return false;  // only under a sheared to_world
    float k = HG_PI * e.scale / (local.z * local.z * cos_theta);
    out->d = d;
    out->dist = dist;
    out->pdf = 1.0f;
    out->radiance = tex_eval(s, e.irradiance, surface_point_uv(uv)) * k;
    out->delta = true;
    return true;
}

// ProjectorEmitter::sample_ray: a direction through a uniform point of the image (on the
// plane at depth 1), weighted by the intensity towards it over its density.
__device__ inline bool projector_sample_ray(const SceneData& s, const ProjectorEmitter& e, V2 u_pos, V2 u_dir,
                                            EmitterRay* out) {
    // uv = 1/2 - uv_scale (x, y) at depth 1; area density on that plane to solid angle
    float x = (0.5f - u_dir.x) / e.uv_scale.x, y = (0.5f - u_dir.y) / e.uv_scale.y;
    V3 v = v3(x, y, 1.0f);
    float len = sqrtf(dot(v, v));
    float pdf_local = e.uv_scale.x * e.uv_scale.y * len * len * len;
    V3 d;
    float pdf;
    if (!local_direction_to_world(e.to_local, v / len, pdf_local, &d, &pdf)) return false;
    // emitters::intensity_towards: the radiance at distance 1 along d
    EmitterSample es;
    V3 i = projector_sample(s, e, e.position + d, u_pos, &es) ? es.radiance * (es.dist * es.dist)
                                                               : v3(0.0f, 0.0f, 0.0f);
    out->p = e.position;
    out->n = v3(0.0f, 0.0f, 0.0f);
    out->d = d;
    out->weight = i / pdf;
    return true;
}
