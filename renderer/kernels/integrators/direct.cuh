// `direct` (renderer/src/integrators/direct.rs): emitter sampling and BSDF sampling
// combined with the power heuristic, weighted by sample counts; the same random
// numbers in the same order as the CPU.
#pragma once
#include "../bsdfs.cuh"
#include "../emitters.cuh"
#include "../samplers.cuh"
#include "observe.cuh"

// One sample, observed by `obs` (observe.cuh).
template <class O>
__device__ inline V3 direct_sample_observed(const SceneData& s, const FlatIntegrator& it, const Ray& ray,
                                            SampleRng& rng, float* alpha, O& obs) {
    Hit hit;
    if (!scene_intersect(s, ray, &hit)) {
        *alpha = 0.0f;
        if (it.hide_emitters) return v3(0.0f, 0.0f, 0.0f);
        float pdf;
        V3 l = environment_emission(s, ray.d, &pdf);
        *alpha = s.env_count > 0u ? 1.0f : 0.0f;
        if (!is_zero(l)) obs.emission(nullptr, ray.d, v3(1.0f, 1.0f, 1.0f), 1.0f, l);
        return l;
    }
    *alpha = 1.0f;
    V3 result = v3(0.0f, 0.0f, 0.0f);
    if (!it.hide_emitters) {
        V3 le;
        float pdf;
        if (surface_emission(s, hit, ray.d, ray.o, &le, &pdf)) {
            result += le;
            if (!is_zero(le)) obs.emission(&hit, ray.d, v3(1.0f, 1.0f, 1.0f), 1.0f, le);
        }
    }
    float ne = (float)it.emitter_samples, nb = (float)it.bsdf_samples;
    float total = ne + nb;
    if (total == 0.0f) return result;
    float frac_em = ne / total, frac_bsdf = nb / total;
    Frame frame = shading_frame(hit);
    V3 wi = to_local(frame, -ray.d);
    hg_u32 bi = s.g.shapes[hit.shape].bsdf;
    SurfacePoint sp = surface_point(hit, frame);
    bool smooth = !bsdf_is_delta(s, bi, sp);
    PathVertex v = {&hit, frame, wi, bi, sp};

    for (hg_u32 k = 0; k < it.emitter_samples; ++k) {
        V2 u = next_2d(rng);
        if (!smooth) continue;
        EmitterSampleResult es;
        if (!sample_emitter(s, hit, u, &es)) continue;
        V3 wo = to_local(frame, es.d);
        V3 f = bsdf_eval(s, bi, sp, wi, wo);
        if (is_zero(f) || scene_occluded(s, es.shadow)) continue;
        float w = es.delta ? 1.0f : mis_weight(es.pdf * frac_em, bsdf_pdf(s, bi, sp, wi, wo) * frac_bsdf);
        result += mul(f, es.weight) * (w / ne);
        float inv_ne = 1.0f / ne;
        obs.next_event(v, v3(inv_ne, inv_ne, inv_ne), w, f, wo, es, u);
    }

    for (hg_u32 k = 0; k < it.bsdf_samples; ++k) {
        float u1 = next_1d(rng);
        V2 u2 = next_2d(rng);
        BsdfSample bs;
        if (!bsdf_sample(s, bi, sp, wi, u1, u2, &bs)) continue;
        V3 d = to_world(frame, bs.wo);
        Ray next = spawn_ray(hit, d);
        V3 le;
        float em_pdf;
        Hit h2;
        bool found = scene_intersect(s, next, &h2);
        if (found) {
            if (!surface_emission(s, h2, d, hit.p, &le, &em_pdf)) continue;
        } else {
            le = environment_emission(s, d, &em_pdf);
        }
        if (is_zero(le)) continue;
        float w = bs.delta ? 1.0f : mis_weight(bs.pdf * frac_bsdf, em_pdf * frac_em);
        result += mul(bs.weight, le) * (w / nb);
        V3 beta = bs.weight / nb;
        obs.emission(found ? &h2 : nullptr, d, beta, w, le);
        V3 carried = mul(beta, le) * w;
        obs.scatter(v, bs, u1, u2, &carried);
    }
    return result;
}

__device__ HG_OUTLINE V3 direct_sample(const SceneData& s, const FlatIntegrator& it, const Ray& ray, SampleRng& rng,
                                   float* alpha) {
    Unobserved none;
    return direct_sample_observed(s, it, ray, rng, alpha, none);
}
