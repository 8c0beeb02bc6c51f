// `path` (renderer/src/integrators/path.rs): next-event estimation, MIS (power
// heuristic) and Russian roulette, with Mitsuba's meaning of max_depth; the same
// random numbers in the same order as the CPU. The path is a state (PathState) advanced one
// bounce at a time (path_step), so that render.cu's hg_render_path can start a new sample
// in a lane whose path has ended while the other lanes of its warp keep bouncing (path
// regeneration).
#pragma once
#include "../bsdfs.cuh"
#include "../emitters.cuh"

// One path between bounces: the ray to trace next and what the loop of path.rs carries.
struct PathState {
    Ray ray;
    V3 throughput, result, prev_p;
    float eta, prev_pdf;
    hg_u32 depth;
    bool valid, prev_delta;
};

// The state of a new path along camera ray `ray`.
__device__ inline PathState path_begin(const SceneData& s, const FlatIntegrator& it, const Ray& ray) {
    PathState p;
    p.ray = ray;
    p.throughput = v3(1.0f, 1.0f, 1.0f);
    p.result = v3(0.0f, 0.0f, 0.0f);
    p.prev_p = ray.o;
    p.eta = 1.0f;
    p.prev_pdf = 1.0f;
    p.depth = 0;
    p.valid = !it.hide_emitters && s.env_count > 0u;
    p.prev_delta = true;
    return p;
}

// One iteration of path.rs's loop: traces p.ray, adds emission and next-event estimation,
// samples the BSDF and applies Russian roulette. Returns false when the path has ended
// (p.result is then its radiance and p.valid its alpha).
__device__ inline bool path_step(const SceneData& s, const FlatIntegrator& it, PathState& p, Pcg32& rng) {
    Hit hit;
    bool found = scene_intersect(s, p.ray, &hit);
    bool visible_emission = !(it.hide_emitters && p.depth == 0u);
    V3 le;
    float em_pdf;
    bool emitted;
    if (found) {
        emitted = surface_emission(s, hit, p.ray.d, p.prev_p, &le, &em_pdf);
    } else {
        le = environment_emission(s, p.ray.d, &em_pdf);
        emitted = true;
    }
    if (visible_emission && emitted && !is_zero(le)) {
        float w = p.prev_delta ? 1.0f : mis_weight(p.prev_pdf, em_pdf);
        p.result += mul(p.throughput, le) * w;
    }
    if (!found) return false;
    if (p.depth == 0u) p.valid = true;
    hg_u32 next_depth = p.depth == 0xffffffffu ? p.depth : p.depth + 1u;
    if (next_depth >= it.max_depth) return false;
    Frame frame = shading_frame(hit);
    V3 wi = to_local(frame, -p.ray.d);
    hg_u32 bi = s.g.shapes[hit.shape].bsdf;

    V2 u_em = next_2d(rng);
    if (!bsdf_is_delta(s, bi, hit.uv)) {
        EmitterSampleResult es;
        if (sample_emitter(s, hit, u_em, &es)) {
            V3 wo = to_local(frame, es.d);
            V3 f = bsdf_eval(s, bi, hit.uv, wi, wo);
            if (!is_zero(f) && !scene_occluded(s, es.shadow)) {
                float w = es.delta ? 1.0f : mis_weight(es.pdf, bsdf_pdf(s, bi, hit.uv, wi, wo));
                p.result += mul(mul(p.throughput, f), es.weight) * w;
            }
        }
    }

    float u1 = pcg_next_f32(rng);
    V2 u2 = next_2d(rng);
    BsdfSample bs;
    if (!bsdf_sample(s, bi, hit.uv, wi, u1, u2, &bs)) return false;
    p.throughput = mul(p.throughput, bs.weight);
    p.eta *= bs.eta;
    V3 d = to_world(frame, bs.wo);
    p.ray = spawn_ray(hit, d);
    p.prev_p = hit.p;
    p.prev_pdf = bs.pdf;
    p.prev_delta = bs.delta;
    p.depth += 1u;

    float tmax = max_comp(p.throughput);
    if (!(tmax > 0.0f) || !(tmax <= 3.4028235e38f)) return false;
    if (p.depth >= it.rr_depth) {
        float q = fminf(tmax * p.eta * p.eta, 0.95f);
        if (pcg_next_f32(rng) >= q) return false;
        p.throughput = p.throughput / q;
    }
    return true;
}
