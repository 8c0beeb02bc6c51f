// `projector` (renderer/src/emitters/projector.rs): a pinhole projector of an image
// (delta). Record: vec = position, to_local = world -> projector frame,
// tex = irradiance, scale, params = uv scale (x, y), axis = to_world * (0, 0, 1).
#pragma once
#include "envmap.cuh"

__device__ inline bool projector_sample(const SceneData& s, const FlatEmitter& e, V3 p, EmitterSample* out) {
    V3 pos = v3a(e.vec);
    V3 local = mat3_mul(e.to_local, p - pos);
    if (!(local.z > 0.0f)) return false;
    V2 uv = v2(0.5f - e.params[0] * local.x / local.z, 0.5f - e.params[1] * local.y / local.z);
    if (!(uv.x >= 0.0f && uv.x <= 1.0f && uv.y >= 0.0f && uv.y <= 1.0f)) return false;
    V3 v = pos - p;
    float dist = sqrtf(dot(v, v));
    V3 d = v / dist;
    // Mitsuba's normalisation: irradiance at depth 1 (dist^2 cos^3 = z^2 cos)
    float cos_theta = -dot(v3a(e.params + 2), d);
    if (!(cos_theta > 0.0f)) return false;  // only under a sheared to_world
    float k = HG_PI * e.scale / (local.z * local.z * cos_theta);
    out->d = d;
    out->dist = dist;
    out->pdf = 1.0f;
    out->radiance = tex_eval(s, e.tex, surface_point_uv(uv)) * k;
    out->delta = true;
    return true;
}
