// Emitter dispatch by handle and the integrators' shared emitter helpers
// (renderer/src/emitters/mod.rs AnyEmitter, renderer/src/integrators/mod.rs). The
// dispatch over the kinds is generated from the emitter registry (emitters/registry.rs)
// as the kernel file emitters/registry.cuh: the HG_EMITTER_* tags, the twin of every
// registered plugin (emitters/<name>.cuh), the checks of their records against the Rust
// ones, and `switch (kind)`es compiled for the kinds in HG_EMITTER_SET (features.cuh,
// HG_CASE). An emitter's record is read where it lies in emitter_data (its RecordRef's
// offset).
#pragma once
#include "emitters/registry.cuh"

#define HG_NO_EMITTER 0xffffffffu

// AnyEmitter::sample_direction
__device__ inline bool emitter_sample_direction(const SceneData& s, hg_u32 ei, V3 p, V2 u, EmitterSample* out) {
    out->uv = v2(0.0f, 0.0f);
    return emitter_sample_at(s, emitter_ref(s, ei), p, u, out);
}

// AnyEmitter::sample_infinite_ray: a direction as sampled from the scene's centre, an
// origin uniform on the disk of the bounding sphere facing it.
__device__ inline bool infinite_sample_ray(const SceneData& s, EmitterRef e, V2 u_pos, V2 u_dir, EmitterRay* out) {
    V3 centre = s.bsphere_center;
    float r = fmaxf(s.bsphere_radius, 1e-4f);
    EmitterSample es;
    if (!emitter_sample_at(s, e, centre, u_dir, &es)) return false;
    if (!(es.pdf > 0.0f)) return false;
    V2 q = square_to_uniform_disk_concentric(u_pos);
    q = v2(q.x * r, q.y * r);
    V3 disk = to_world(frame_from_normal(es.d), v3(q.x, q.y, 0.0f));
    V3 w = es.radiance / es.pdf * (HG_PI * r * r);
    if (!finite3(w)) return false;
    out->p = (centre + es.d * r) + disk;
    out->n = v3(0.0f, 0.0f, 0.0f);
    out->d = -es.d;
    out->weight = w;
    return true;
}

// AnyEmitter::sample_ray
__device__ inline bool emitter_sample_ray(const SceneData& s, hg_u32 ei, V2 u_pos, V2 u_dir, EmitterRay* out) {
    EmitterRef e = emitter_ref(s, ei);
    if ((HG_EMITTER_SET & HG_INFINITE_EMITTERS) != 0u && HG_HAS(HG_INFINITE_EMITTERS, HG_KIND(HG_EMITTER_SET, e.kind)))
        return infinite_sample_ray(s, e, u_pos, u_dir, out);
    return emitter_sample_ray_at(s, e, u_pos, u_dir, out);
}

// integrators::EmitterSampleResult
struct EmitterSampleResult {
    V3 d;
    V3 weight;
    float pdf;
    bool delta;
    Ray shadow;
    V2 uv;           // EmitterSample::uv
    hg_u32 emitter;  // the emitter sampled
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
    if (!emitter_sample_direction(s, idx, h.p, uu, &es)) return false;
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
    out->uv = es.uv;
    out->emitter = idx;
    return true;
}

// integrators::surface_emission: radiance towards the ray origin and its emitter-sampling pdf.
__device__ HG_OUTLINE bool surface_emission(const SceneData& s, const Hit& h, V3 ray_d, V3 from, V3* le, float* pdf) {
    if ((HG_EMITTER_SET & HG_SURFACE_EMITTERS) == 0u) return false;  // only these sit on shapes
    hg_u32 ei = s.g.shapes[h.shape].emitter;
    if (ei == HG_NO_EMITTER) return false;
    EmitterRef e = emitter_ref(s, ei);
    *le = emitter_eval_hit(s, e, h, ray_d);
    *pdf = emitter_pdf_hit(s, e, from, h) / (float)s.emitter_count;
    return true;
}

// integrators::environment_emission
__device__ HG_OUTLINE V3 environment_emission(const SceneData& s, V3 d, float* pdf) {
    V3 l = v3(0.0f, 0.0f, 0.0f);
    float p = 0.0f, n = (float)s.emitter_count;
    hg_u32 count = (HG_EMITTER_SET & HG_ENV_EMITTERS) != 0u ? s.env_count : 0u;
    for (hg_u32 k = 0; k < count; ++k) {
        float pk = 0.0f;
        l = l + emitter_eval_env(s, emitter_ref(s, s.env_emitters[k]), d, &pk);
        p = p + pk / n;
    }
    *pdf = p;
    return l;
}
