// Emitter dispatch and the integrators' shared emitter helpers
// (renderer/src/emitters/mod.rs AnyEmitter, renderer/src/integrators/mod.rs).
#pragma once
#include "emitters/area.cuh"
#include "emitters/point.cuh"
#include "emitters/directional.cuh"
#include "emitters/envmap.cuh"
#include "emitters/spot.cuh"
#include "emitters/projector.cuh"

#define HG_NO_EMITTER 0xffffffffu

#define HG_EMITTER_KIND(e) HG_KIND(HG_EMITTER_SET, (e).kind)
#define HG_ENV_EMITTERS ((1u << HG_EMITTER_CONSTANT) | (1u << HG_EMITTER_ENVMAP))

__device__ inline bool emitter_sample_direction(const SceneData& s, const FlatEmitter& e, V3 p, V2 u,
                                                EmitterSample* out) {
    switch (HG_EMITTER_KIND(e)) {
        HG_CASE(HG_EMITTER_SET, HG_EMITTER_AREA) return area_sample(s, e, p, u, out);
        HG_CASE(HG_EMITTER_SET, HG_EMITTER_CONSTANT) return constant_sample(s, e, u, out);
        HG_CASE(HG_EMITTER_SET, HG_EMITTER_POINT) return point_sample(s, e, p, out);
        HG_CASE(HG_EMITTER_SET, HG_EMITTER_DIRECTIONAL) return directional_sample(s, e, out);
        HG_CASE(HG_EMITTER_SET, HG_EMITTER_ENVMAP) return envmap_sample(s, e, u, out);
        HG_CASE(HG_EMITTER_SET, HG_EMITTER_SPOT) return spot_sample(s, e, p, out);
        HG_CASE(HG_EMITTER_SET, HG_EMITTER_PROJECTOR) return projector_sample(s, e, p, out);
        default: break;
    }
    return false;
}

// integrators::EmitterSampleResult
struct EmitterSampleResult {
    V3 d;
    V3 weight;
    float pdf;
    bool delta;
    Ray shadow;
};

// integrators::sample_emitter: uniform emitter selection, then a direction towards it.
__device__ HG_OUTLINE bool sample_emitter(const SceneData& s, const Hit& h, V2 u, EmitterSampleResult* out) {
    hg_u32 n = s.emitter_count;
    if (n == 0u) return false;
    float scaled = u.x * (float)n;
    hg_u32 idx = (hg_u32)scaled;  // scaled >= 0
    if (idx > n - 1u) idx = n - 1u;
    V2 uu = v2(fminf(scaled - (float)idx, 1.0f - HG_FLT_EPS / 2.0f), u.y);
    EmitterSample es;
    if (!emitter_sample_direction(s, s.emitters[idx], h.p, uu, &es)) return false;
    if (!(es.pdf > 0.0f) || is_zero(es.radiance)) return false;
    if (es.dist <= 3.4028235e38f) {
        V3 target = h.p + es.d * es.dist;
        V3 o = offset_origin(h.p, h.ng, es.d);
        V3 to = target - o;
        float len = sqrtf(dot(to, to));
        out->shadow.o = o;
        out->shadow.d = to / len;
        out->shadow.tmax = len * (1.0f - 1e-3f);
    } else {
        out->shadow = spawn_ray(h, es.d);
    }
    float pdf = es.pdf / (float)n;
    out->d = es.d;
    out->weight = es.radiance / pdf;
    out->pdf = pdf;
    out->delta = es.delta;
    return true;
}

// integrators::surface_emission: radiance towards the ray origin and its emitter-sampling pdf.
__device__ HG_OUTLINE bool surface_emission(const SceneData& s, const Hit& h, V3 ray_d, V3 from, V3* le, float* pdf) {
    if (!HG_HAS(HG_EMITTER_SET, HG_EMITTER_AREA)) return false;  // only area emitters sit on shapes
    hg_u32 ei = s.g.shapes[h.shape].emitter;
    if (ei == HG_NO_EMITTER) return false;
    const FlatEmitter& e = s.emitters[ei];
    if (e.kind == HG_EMITTER_AREA) {
        *le = area_eval_hit(s, e, h, ray_d);
        *pdf = area_pdf_hit(s, e, from, h) / (float)s.emitter_count;
    } else {
        *le = v3(0.0f, 0.0f, 0.0f);
        *pdf = 0.0f;
    }
    return true;
}

// integrators::environment_emission
__device__ HG_OUTLINE V3 environment_emission(const SceneData& s, V3 d, float* pdf) {
    V3 l = v3(0.0f, 0.0f, 0.0f);
    float p = 0.0f, n = (float)s.emitter_count;
    hg_u32 count = (HG_EMITTER_SET & HG_ENV_EMITTERS) != 0u ? s.env_count : 0u;
    for (hg_u32 k = 0; k < count; ++k) {
        const FlatEmitter& e = s.emitters[s.env_emitters[k]];
        hg_u32 kind = HG_KIND(HG_EMITTER_SET & HG_ENV_EMITTERS, e.kind);
        if (HG_HAS(HG_EMITTER_SET, HG_EMITTER_CONSTANT) && kind == HG_EMITTER_CONSTANT) {
            l = l + constant_eval(s, e);
            p = p + HG_INV_FOUR_PI / n;
        } else if (HG_HAS(HG_EMITTER_SET, HG_EMITTER_ENVMAP) && kind == HG_EMITTER_ENVMAP) {
            l = l + envmap_eval(s, e, d);
            p = p + envmap_pdf(s, e, d) / n;
        }
    }
    *pdf = p;
    return l;
}
