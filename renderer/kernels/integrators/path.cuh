// `path` (renderer/src/integrators/path.rs): next-event estimation, MIS (power
// heuristic) and Russian roulette, with Mitsuba's meaning of max_depth; the same
// random numbers in the same order as the CPU.
//
// The path loop is split into its state (PathState), its start (path_begin) and one
// iteration (path_step: one intersection, the emission found there, next-event
// estimation and the next direction), so that the megakernel (render.cu hg_render, which
// starts a lane's next sample as soon as its path ends) and the wavefront kernels
// (wavefront.cuh), which run one step per launch over a queue of live paths, compute the
// same thing.
#pragma once
#include "../bsdfs.cuh"
#include "../emitters.cuh"
#include "../samplers.cuh"
#include "observe.cuh"

struct PathState {
    Ray ray;
    V3 throughput;
    V3 result;
    V3 prev_p;     // where the ray started (MIS of emitters hit by BSDF sampling)
    float eta;
    float prev_pdf;
    hg_u32 depth;
    bool prev_delta;
    bool valid;    // the alpha channel: the camera ray hit something or sees an environment
    SampleRng rng;
};

__device__ inline void path_begin(const SceneData& s, const FlatIntegrator& it, const Ray& ray, const SampleRng& rng,
                                  PathState* p) {
    p->ray = ray;
    p->throughput = v3(1.0f, 1.0f, 1.0f);
    p->result = v3(0.0f, 0.0f, 0.0f);
    p->prev_p = ray.o;
    p->eta = 1.0f;
    p->prev_pdf = 1.0f;
    p->depth = 0;
    p->prev_delta = true;
    p->valid = !it.hide_emitters && s.env_count > 0u;
    p->rng = rng;
}

// One iteration of path.rs's loop, observed by `obs` (observe.cuh); false when the path
// has ended (p->result is final).
template <class O>
__device__ inline bool path_step_observed(const SceneData& s, const FlatIntegrator& it, PathState* p, O& obs) {
    Hit hit;
    const Ray ray = p->ray;
    bool found = scene_intersect(s, ray, &hit);
    bool visible_emission = !(it.hide_emitters && p->depth == 0u);
    V3 le;
    float em_pdf;
    bool emitted;
    if (found) {
        emitted = surface_emission(s, hit, ray.d, p->prev_p, &le, &em_pdf);
    } else {
        le = environment_emission(s, ray.d, &em_pdf);
        emitted = true;
    }
    if (visible_emission && emitted && !is_zero(le)) {
        float w = p->prev_delta ? 1.0f : mis_weight(p->prev_pdf, em_pdf);
        p->result += mul(p->throughput, le) * w;
        obs.emission(found ? &hit : nullptr, ray.d, p->throughput, w, le);
    }
    if (!found) return false;
    if (p->depth == 0u) p->valid = true;
    hg_u32 next_depth = p->depth == 0xffffffffu ? p->depth : p->depth + 1u;
    if (next_depth >= it.max_depth) return false;
    Frame frame = shading_frame(hit);
    V3 wi = to_local(frame, -ray.d);
    hg_u32 bi = s.g.shapes[hit.shape].bsdf;
    SurfacePoint sp = surface_point(hit, frame);
    PathVertex v = {&hit, frame, wi, bi, sp};

    V2 u_em = next_2d(p->rng);
    if (!bsdf_is_delta(s, bi, sp)) {
        EmitterSampleResult es;
        if (sample_emitter(s, hit, u_em, &es)) {
            V3 wo = to_local(frame, es.d);
            V3 f = bsdf_eval(s, bi, sp, wi, wo);
            if (!is_zero(f) && !scene_occluded(s, es.shadow)) {
                float w = es.delta ? 1.0f : mis_weight(es.pdf, bsdf_pdf(s, bi, sp, wi, wo));
                p->result += mul(mul(p->throughput, f), es.weight) * w;
                obs.next_event(v, p->throughput, w, f, wo, es, u_em);
            }
        }
    }

    float u1 = next_1d(p->rng);
    V2 u2 = next_2d(p->rng);
    BsdfSample bs;
    if (!bsdf_sample(s, bi, sp, wi, u1, u2, &bs)) return false;
    obs.scatter(v, bs, u1, u2, nullptr);
    p->throughput = mul(p->throughput, bs.weight);
    p->eta *= bs.eta;
    V3 d = to_world(frame, bs.wo);
    p->ray = spawn_ray(hit, d);
    p->prev_p = hit.p;
    p->prev_pdf = bs.pdf;
    p->prev_delta = bs.delta;
    p->depth += 1u;

    float tmax = max_comp(p->throughput);
    if (!(tmax > 0.0f) || !(tmax <= 3.4028235e38f)) return false;
    if (p->depth >= it.rr_depth) {
        float q = fminf(tmax * p->eta * p->eta, 0.95f);
        if (next_1d(p->rng) >= q) return false;
        p->throughput = p->throughput / q;
    }
    return true;
}

// One iteration of path.rs's loop for a render.
__device__ inline bool path_step(const SceneData& s, const FlatIntegrator& it, PathState* p) {
    Unobserved none;
    return path_step_observed(s, it, p, none);
}
