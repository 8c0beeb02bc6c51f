// `spot` (renderer/src/emitters/spot.rs): a point light shining into a cone (delta),
// optionally projecting a texture.
#pragma once
#include "emitter.cuh"

#define HG_SPOT_NO_TEXTURE 0xffffffffu

struct SpotEmitter {
    V3 position;
    float to_local[9];  // world -> light frame, column-major
    hg_u32 intensity;   // a constant texture
    hg_u32 texture;     // the projected texture, or HG_SPOT_NO_TEXTURE
    float cutoff;       // radians
    float cos_cutoff;
    float cos_beam;
    float inv_transition;
    float uv_factor;  // tan cutoff
};

// SpotEmitter::falloff
__device__ inline float spot_falloff(const SpotEmitter& e, V3 local) {
    float cos_theta = normalize_or_zero(local).z;
    if (!(cos_theta > e.cos_cutoff)) return 0.0f;
    if (cos_theta >= e.cos_beam) return 1.0f;
    return (e.cutoff - acosf(cos_theta)) * e.inv_transition;
}

__device__ inline bool spot_sample(const SceneData& s, const SpotEmitter& e, V3 p, V2 u, EmitterSample* out) {
    (void)u;
    V3 v = e.position - p;
    float dist2 = dot(v, v);
    if (!(dist2 > 0.0f)) return false;
    float dist = sqrtf(dist2);
    V3 d = v / dist;
    V3 local = mat3_mul(e.to_local, -d);
    float falloff = spot_falloff(e, local);
    if (!(falloff > 0.0f)) return false;
    V3 radiance = tex_eval(s, e.intensity, surface_point_uv(v2(0.0f, 0.0f)));
    if (e.texture != HG_SPOT_NO_TEXTURE) {
        float k = local.z * e.uv_factor;
        V2 uv = v2(0.5f + 0.5f * local.x / k, 0.5f + 0.5f * local.y / k);
        radiance = mul(radiance, tex_eval(s, e.texture, surface_point_uv(uv)));
    }
    float inv_dist = 1.0f / dist;
    out->d = d;
    out->dist = dist;
    out->pdf = 1.0f;
    out->radiance = radiance * (falloff * (inv_dist * inv_dist));
    out->delta = true;
    return true;
}

// SpotEmitter::sample_ray: a direction uniformly in the cone (square_to_uniform_cone and
// its density), weighted by the intensity towards it over its density.
__device__ inline bool spot_sample_ray(const SceneData& s, const SpotEmitter& e, V2 u_pos, V2 u_dir,
                                       EmitterRay* out) {
    float cos_max = e.cos_cutoff;
    float z = 1.0f - u_dir.y * (1.0f - cos_max);
    float rr = safe_sqrt(1.0f - z * z);
    float sn, cs;
    __sincosf(2.0f * HG_PI * u_dir.x, &sn, &cs);
    V3 local = v3(rr * cs, rr * sn, z);
    V3 d;
    float pdf;
    if (!local_direction_to_world(e.to_local, local, HG_INV_TWO_PI / (1.0f - cos_max), &d, &pdf)) return false;
    // emitters::intensity_towards: the radiance at distance 1 along d
    EmitterSample es;
    V3 i = spot_sample(s, e, e.position + d, u_pos, &es) ? es.radiance * (es.dist * es.dist) : v3(0.0f, 0.0f, 0.0f);
    out->p = e.position;
    out->n = v3(0.0f, 0.0f, 0.0f);
    out->d = d;
    out->weight = i / pdf;
    return true;
}
