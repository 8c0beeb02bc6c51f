// The backward pass's adjoint state (backward.cuh): the observer of a sample's path that
// differentiates what its vertices evaluate.
#pragma once
#include "params.cuh"
#include "../textures/bitmap_diff.cuh"
#include "../emitters/envmap_diff.cuh"
#include "texels.cuh"

// A BSDF's value at vertex v towards local direction wo, in the scene a probe is set in:
// one type for both evaluations that differentiate it (next-event estimation and BSDF
// sampling), so the backward module holds one copy of its code.
struct BsdfEval {
    const PathVertex* v;
    V3 wo;
    __device__ inline V3 operator()(const SceneData& q) const { return bsdf_eval(q, v->bsdf, v->sp, v->wi, wo); }
};

// `a / b` per channel, 0 where b is 0.
__device__ inline V3 ratio(V3 a, V3 b) {
    return v3(b.x != 0.0f ? a.x / b.x : 0.0f, b.y != 0.0f ? a.y / b.y : 0.0f, b.z != 0.0f ? a.z / b.z : 0.0f);
}

// The adjoint state of one thread's samples (diff/adjoint.rs Adjoint), an observer of
// integrators/observe.cuh.
struct Adjoint {
    SceneData* scene;  // the thread's scene (the one its paths read), whose probe it sets
    const FlatDiffParam* params;
    hg_u32 count;
    const hg_u32* bsdf_masks;  // per BSDF, the parameters it reads (bit k: parameter k)
    const hg_u32* bsdf_linear; // per BSDF, those its eval is affine in, channel by channel
    hg_u32 mask_count;
    float* small;  // HG_DIFF_SMALL accumulators
    V3 delta;      // the sample's adjoint radiance
    V3 rest;       // the radiance the path has yet to add (`path` traced twice), or minus
                   // what it has added (traced once)
    bool envmap_params;
    hg_u32 emitter_mask;  // the parameters an emitter reads (bit k: parameter k)
    bool active;   // false while `path` traces a sample's radiance, before its replay
    // A bitmap parameter's derivatives at one point, held until derivatives at another
    // point come (a vertex's next-event estimate and its BSDF sample read the texture at
    // the same point: one scatter of atomics for both); pend_k HG_DIFF_NONE: none.
    hg_u32 pend_k;
    V2 pend_uv;
    float pend[3];
    // `path` traced once (when at most HG_DEFER terms can be deferred): a scatter's
    // derivative needs the radiance the path adds after it, known only at its end, so
    // its term waits here, with rest (minus the radiance added before it) and e[c], the
    // derivative with respect to value channel c times the adjoint over the sample
    // weight, per colour channel.
    bool deferring;
    struct Deferred {
        hg_u32 k;
        V2 uv;
        V3 rest;
        V3 e[3];
    } deferred[HG_DEFER];
    hg_u32 n_deferred;

    // The parameters BSDF `b` reads.
    __device__ inline hg_u32 mask_of(hg_u32 b) const { return b < mask_count ? bsdf_masks[b] : 0u; }
    // The parameters BSDF `b`'s eval is affine in.
    __device__ inline hg_u32 linear_of(hg_u32 b) const { return b < mask_count ? bsdf_linear[b] : 0u; }

    // Scatters the held bitmap derivatives to the texels the lookup read.
    __device__ __noinline__ void flush() {
        if (pend_k == HG_DIFF_NONE) return;
#if HG_HAS(HG_TEX_SET, HG_TEX_BITMAP)
        FlatDiffParam p = params[pend_k];
        TexRec t = tex_rec(*scene, p.source);
        if (t.kind == HG_TEX_BITMAP) {
            hg_u32 texel[4];
            float w[4];
            int n = bitmap_texel_weights(*(const BitmapRecord*)t.rec, pend_uv, texel, w);
            add_texels(p.grad, p.channels, pend_k, texel, w, n, pend);
        }
#endif
        pend_k = HG_DIFF_NONE;
    }

    // Adds weight · ∂eval / ∂(value of each parameter's texture at `at`) to the gradients
    // of the parameters in `mask` (those the vertex's BSDF reads, or every one for an
    // emitter) that a BSDF (`bsdf`) or an emitter reads; eval(scene) evaluates with the
    // probed scene. `linear`: the parameters eval is affine in, channel by channel (a
    // BSDF's eval), differentiated from its values at 1 and 0.
    // Out of line, with one call site of `eval`: the backward module's code stays small
    // enough for the instruction cache (inlined, its many evaluations made it stall there).
    template <class F>
    __device__ __noinline__ void accumulate(bool bsdf, hg_u32 mask, hg_u32 linear, bool defer, const SurfacePoint& at,
                                            V3 weight, F eval) {
        if (is_zero(weight) || mask == 0u) return;
        hg_u32 need = bsdf ? HG_DIFF_READ_BSDF : HG_DIFF_READ_EMITTER;
        for (hg_u32 k = 0; k < count; ++k) {
            if (k < 32u && ((mask >> k) & 1u) == 0u) continue;
            FlatDiffParam p = params[k];
            bool record = p.kind == HG_DIFF_BSDF_FLOAT;
            if ((p.reads & need) == 0u || (p.kind > HG_DIFF_BITMAP && !record)) continue;
            bool lin = !record && k < 32u && ((linear >> k) & 1u) != 0u;
            // a texture's value at `at` (the probe replaces it), or the BSDF's record
            V3 v = v3(0.0f, 0.0f, 0.0f);
            const hg_u32* rec = nullptr;
            if (record) {
                rec = bsdf_ref(*scene, p.source).rec;
            } else if (!lin) {
                scene->probe_tex = HG_DIFF_NONE;
                v = tex_eval(*scene, p.source, at);
            }
            // d[c]: the derivative of eval with respect to channel c of the value
            V3 d[3] = {v3(0.0f, 0.0f, 0.0f), v3(0.0f, 0.0f, 0.0f), v3(0.0f, 0.0f, 0.0f)};
            V3 up = v3(0.0f, 0.0f, 0.0f);
            hg_u32 evals = lin ? 2u : 2u * p.channels;
#pragma unroll 1
            for (hg_u32 j = 0; j < evals; ++j) {  // channel c = j / 2, at v + h, then v - h
                hg_u32 c = j >> 1;
                float h = p.step;
                if (record) {
                    scene->probe_bsdf_at = rec;
                    scene->probe_bsdf_rec = (j & 1u) ? p.minus : p.plus;
                } else if (lin) {  // at 1, then at 0
                    float x = (j & 1u) ? 0.0f : 1.0f;
                    scene->probe_tex = p.source;
                    scene->probe_value = v3(x, x, x);
                } else {
                    V3 dir = p.channels == 1u
                                 ? v3(1.0f, 1.0f, 1.0f)
                                 : v3(c == 0u ? 1.0f : 0.0f, c == 1u ? 1.0f : 0.0f, c == 2u ? 1.0f : 0.0f);
                    h = HG_DIFF_STEP * fmaxf(fabsf(v3_at(v, p.channels == 1u ? 0 : (int)c)), 1.0f);
                    scene->probe_tex = p.source;
                    scene->probe_value = v + dir * ((j & 1u) ? -h : h);
                }
                V3 r = eval(*scene);
                if ((j & 1u) == 0u) {
                    up = r;
                    continue;
                }
                if (lin) {  // channel c of the value moves channel c of eval only
                    V3 e = up - r;
                    if (p.channels == 1u) {
                        d[0] = e;
                    } else {
                        d[0] = v3(e.x, 0.0f, 0.0f), d[1] = v3(0.0f, e.y, 0.0f), d[2] = v3(0.0f, 0.0f, e.z);
                    }
                    break;
                }
                d[c] = (up - r) / (2.0f * h);
            }
            scene->probe_tex = HG_DIFF_NONE;
            scene->probe_bsdf_at = nullptr;
            if (defer) {  // the radiance still to come is known when the path ends
                Deferred& q = deferred[n_deferred < HG_DEFER ? n_deferred++ : HG_DEFER - 1];
                q.k = k, q.uv = at.uv, q.rest = rest;
                for (int c = 0; c < 3; ++c) q.e[c] = mul(weight, d[c]);
                continue;
            }
            float sc[3] = {dot(weight, d[0]), dot(weight, d[1]), dot(weight, d[2])};
            add(k, at.uv, sc);
        }
    }

    // Adds sc (per channel of parameter k's value; at surface uv for a bitmap) to the
    // parameter's gradient.
    __device__ inline void add(hg_u32 k, V2 uv, const float* sc) {
        FlatDiffParam p = params[k];
        bool any = false, finite = true;
        for (hg_u32 c = 0; c < p.channels; ++c) {
            any = any || sc[c] != 0.0f;
            finite = finite && fabsf(sc[c]) <= 3.4028235e38f;
        }
        // a numerical accident (an overflowing sample) is dropped, as the render drops it
        if (!any || !finite) return;
        if (p.kind == HG_DIFF_CONSTANT || p.kind == HG_DIFF_BSDF_FLOAT) {
            for (hg_u32 c = 0; c < p.channels; ++c) small[p.small + c] += sc[c];
            return;
        }
        if (pend_k != k || pend_uv.x != uv.x || pend_uv.y != uv.y) {
            flush();
            pend_k = k;
            pend_uv = uv;
            pend[0] = pend[1] = pend[2] = 0.0f;
        }
        for (hg_u32 c = 0; c < p.channels; ++c) pend[c] += sc[c];
    }

    // The deferred terms of a path whose radiance turned out to be `l`: each scatter's
    // adjoint radiance is what came after it, l + rest then (rest was minus what came
    // before).
    __device__ __noinline__ void resolve(V3 l) {
        for (hg_u32 i = 0; i < n_deferred; ++i) {
            const Deferred& q = deferred[i];
            V3 after = l + q.rest;
            float sc[3] = {dot(after, q.e[0]), dot(after, q.e[1]), dot(after, q.e[2])};
            add(q.k, q.uv, sc);
        }
        n_deferred = 0;
    }

    // Adds weight · ∂Le for the radiance environment map `emitter` sends along d.
    __device__ __noinline__ void envmap(hg_u32 emitter, V3 d, V3 weight) {
#if HG_HAS(HG_EMITTER_SET, HG_EMITTER_ENVMAP)
        if (is_zero(weight)) return;
        EmitterRef e = emitter_ref(*scene, emitter);
        if (e.kind != HG_EMITTER_ENVMAP) return;
        const EnvmapRecord& r = *(const EnvmapRecord*)e.rec;
        hg_u32 texel[4];
        float w[4];
        V3 unscaled = envmap_derivatives(*scene, r, d, texel, w);
        for (hg_u32 k = 0; k < count; ++k) {
            FlatDiffParam p = params[k];
            if (p.kind < HG_DIFF_ENVMAP_DATA || p.source != emitter) continue;
            if (p.kind == HG_DIFF_ENVMAP_DATA) {
                float vals[3] = {weight.x, weight.y, weight.z};
                add_texels(p.grad, 3u, k, texel, w, 4, vals);
            } else if (p.kind == HG_DIFF_ENVMAP_SCALE) {
                float v = dot(weight, unscaled);
                if (fabsf(v) <= 3.4028235e38f) small[p.small] += v;
            }
        }
#endif
    }

    __device__ inline void emission(const Hit* hit, V3 d, V3 beta, float w, V3 le) {
        if (!active) return;
        rest = rest - mul(beta, le) * w;
        V3 weight = mul(delta, beta) * w;
        if (hit) {
            hg_u32 ei = scene->g.shapes[hit->shape].emitter;
            if (ei == HG_NO_EMITTER || emitter_mask == 0u) return;
            const Hit& h = *hit;
            accumulate(false, emitter_mask, 0u, false, surface_point_uv(hit->uv), weight,
                       [&](const SceneData& q) { return emitter_eval_hit(q, emitter_ref(q, ei), h, d); });
            return;
        }
        if (envmap_params) {
            hg_u32 n = (HG_EMITTER_SET & HG_ENV_EMITTERS) != 0u ? scene->env_count : 0u;
            for (hg_u32 k = 0; k < n; ++k) envmap(scene->env_emitters[k], d, weight);
        }
        if (emitter_mask == 0u) return;
        accumulate(false, emitter_mask, 0u, false, surface_point_uv(v2(0.0f, 0.0f)), weight, [&](const SceneData& q) {
            float pdf;
            return environment_emission(q, d, &pdf);
        });
    }

    __device__ inline void next_event(const PathVertex& v, V3 beta, float w, V3 f, V3 wo,
                                      const EmitterSampleResult& es, V2 u) {
        if (!active) return;
        rest = rest - mul(mul(beta, f), es.weight) * w;
        V3 common = mul(delta, beta) * w;
        // the BSDF's value towards the light
        accumulate(true, mask_of(v.bsdf), linear_of(v.bsdf), false, v.sp, mul(common, es.weight),
                   BsdfEval{&v, wo});
        // the light's radiance over its density, sampled again with the same numbers
        const Hit& h = *v.hit;
        if (emitter_mask != 0u) {
            accumulate(false, emitter_mask, 0u, false, surface_point_uv(es.uv), mul(common, f),
                       [&](const SceneData& q) {
                           EmitterSampleResult again;
                           return sample_emitter(q, h, u, &again) ? again.weight : v3(0.0f, 0.0f, 0.0f);
                       });
        }
        if (envmap_params) envmap(es.emitter, es.d, mul(common, f) / es.pdf);
    }

    __device__ inline void scatter(const PathVertex& v, const BsdfSample& bs, float u1, V2 u2, const V3* carried) {
        if (!active) return;
        // what came through the BSDF: given (`direct`), the rest of the path's radiance
        // (`path` traced twice), or not known yet (deferred: the factor 1 here)
        bool defer = deferring && !carried;
        V3 through = carried ? *carried : (defer ? v3(1.0f, 1.0f, 1.0f) : rest);
        hg_u32 mask = mask_of(v.bsdf);
        if (is_zero(through) || mask == 0u) return;
        if (bs.delta) {
            accumulate(true, mask, 0u, defer, v.sp, mul(delta, ratio(through, bs.weight)), [&](const SceneData& q) {
                BsdfSample again;
                return bsdf_sample(q, v.bsdf, v.sp, v.wi, u1, u2, &again) ? again.weight : v3(0.0f, 0.0f, 0.0f);
            });
        } else {
            // the BSDF's value towards the sampled direction: weight = eval / pdf (the
            // sample's contract; diff/adjoint.rs likewise), no evaluation
            V3 f = bs.weight * bs.pdf;
            accumulate(true, mask, linear_of(v.bsdf), defer, v.sp, mul(delta, ratio(through, f)),
                       BsdfEval{&v, bs.wo});
        }
    }
};
