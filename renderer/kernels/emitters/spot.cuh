// `spot` (renderer/src/emitters/spot.rs): a point light shining into a cone (delta).
// Record: vec = position, to_local = world -> light frame, tex = intensity,
// tex2 = projected texture (HG_SPOT_NO_TEXTURE: none), params = cutoff (radians),
// cos cutoff, cos beam width, 1 / transition width, tan cutoff.
#pragma once
#include "envmap.cuh"

#define HG_SPOT_NO_TEXTURE 0xffffffffu

// SpotEmitter::falloff
__device__ inline float spot_falloff(const FlatEmitter& e, V3 local) {
    float cos_theta = normalize_or_zero(local).z;
    if (!(cos_theta > e.params[1])) return 0.0f;
    if (cos_theta >= e.params[2]) return 1.0f;
    return (e.params[0] - acosf(cos_theta)) * e.params[3];
}

__device__ inline bool spot_sample(const SceneData& s, const FlatEmitter& e, V3 p, EmitterSample* out) {
    V3 v = v3a(e.vec) - p;
    float dist2 = dot(v, v);
    if (!(dist2 > 0.0f)) return false;
    float dist = sqrtf(dist2);
    V3 d = v / dist;
    V3 local = mat3_mul(e.to_local, -d);
    float falloff = spot_falloff(e, local);
    if (!(falloff > 0.0f)) return false;
    V3 radiance = tex_eval(s, e.tex, surface_point_uv(v2(0.0f, 0.0f)));
    if (e.tex2 != HG_SPOT_NO_TEXTURE) {
        float k = local.z * e.params[4];
        V2 uv = v2(0.5f + 0.5f * local.x / k, 0.5f + 0.5f * local.y / k);
        radiance = mul(radiance, tex_eval(s, e.tex2, surface_point_uv(uv)));
    }
    float inv_dist = 1.0f / dist;
    out->d = d;
    out->dist = dist;
    out->pdf = 1.0f;
    out->radiance = radiance * (falloff * (inv_dist * inv_dist));
    out->delta = true;
    return true;
}
