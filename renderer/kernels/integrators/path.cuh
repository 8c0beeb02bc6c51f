// `path` (renderer/src/integrators/path.rs): next-event estimation, MIS (power
// heuristic) and Russian roulette, with Mitsuba's meaning of max_depth; the same
// random numbers in the same order as the CPU.
#pragma once
#include "../bsdfs.cuh"
#include "../emitters.cuh"

__device__ HG_OUTLINE V3 path_sample(const SceneData& s, const FlatIntegrator& it, Ray ray, Pcg32& rng,
                                 float* alpha) {
    V3 throughput = v3(1.0f, 1.0f, 1.0f);
    V3 result = v3(0.0f, 0.0f, 0.0f);
    float eta = 1.0f;
    hg_u32 depth = 0;
    bool valid = !it.hide_emitters && s.env_count > 0u;
    V3 prev_p = ray.o;
    float prev_pdf = 1.0f;
    bool prev_delta = true;
    for (;;) {
        Hit hit;
        bool found = scene_intersect(s, ray, &hit);
        bool visible_emission = !(it.hide_emitters && depth == 0u);
        V3 le;
        float em_pdf;
        bool emitted;
        if (found) {
            emitted = surface_emission(s, hit, ray.d, prev_p, &le, &em_pdf);
        } else {
            le = environment_emission(s, ray.d, &em_pdf);
            emitted = true;
        }
        if (visible_emission && emitted && !is_zero(le)) {
            float w = prev_delta ? 1.0f : mis_weight(prev_pdf, em_pdf);
            result += mul(throughput, le) * w;
        }
        if (!found) break;
        if (depth == 0u) valid = true;
        hg_u32 next_depth = depth == 0xffffffffu ? depth : depth + 1u;
        if (next_depth >= it.max_depth) break;
        Frame frame = shading_frame(hit);
        V3 wi = to_local(frame, -ray.d);
        hg_u32 bi = s.g.shapes[hit.shape].bsdf;

        V2 u_em = next_2d(rng);
        if (!bsdf_is_delta(s, bi, hit.uv)) {
            EmitterSampleResult es;
            if (sample_emitter(s, hit, u_em, &es)) {
                V3 wo = to_local(frame, es.d);
                V3 f = bsdf_eval(s, bi, hit.uv, wi, wo);
                if (!is_zero(f) && !scene_occluded(s, es.shadow)) {
                    float w = es.delta ? 1.0f : mis_weight(es.pdf, bsdf_pdf(s, bi, hit.uv, wi, wo));
                    result += mul(mul(throughput, f), es.weight) * w;
                }
            }
        }

        float u1 = pcg_next_f32(rng);
        V2 u2 = next_2d(rng);
        BsdfSample bs;
        if (!bsdf_sample(s, bi, hit.uv, wi, u1, u2, &bs)) break;
        throughput = mul(throughput, bs.weight);
        eta *= bs.eta;
        V3 d = to_world(frame, bs.wo);
        ray = spawn_ray(hit, d);
        prev_p = hit.p;
        prev_pdf = bs.pdf;
        prev_delta = bs.delta;
        depth += 1u;

        float tmax = max_comp(throughput);
        if (!(tmax > 0.0f) || !(tmax <= 3.4028235e38f)) break;
        if (depth >= it.rr_depth) {
            float q = fminf(tmax * eta * eta, 0.95f);
            if (pcg_next_f32(rng) >= q) break;
            throughput = throughput / q;
        }
    }
    *alpha = valid ? 1.0f : 0.0f;
    return result;
}
