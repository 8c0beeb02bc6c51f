// The backward pass of differentiable rendering (renderer/src/diff, whose module docs are
// the design): the gradient of Σ adjoint · image with respect to scene parameters, by
// path replay backpropagation. Compiled into a render module with HG_BACKWARD
// (backend/cuda/device/backward.rs), whose texture dispatch has the probe below.
//
// - hg_film_weights: each crop pixel's sum W of film weights over the backward pass's
//   samples (film.cuh film_sample, the same streams as hg_render).
// - hg_backward: the samples of hg_render's chunks (render.cu), threads as hg_render's. A sample of pixel p with
//   film weight w moves the pixel by w L / W, so its adjoint radiance is
//   δ = adjoint[p] w / W. `path` traces the sample twice with the same random numbers (its
//   radiance L, then the replay with rest = L, each step taking off what it added), or,
//   when a path's scatter terms fit a thread's buffer (short paths, few parameters),
//   once: a scatter's term, which needs the radiance added after it, is kept (its
//   derivative times δ per colour channel, and minus the radiance added before it) and
//   completed when the path ends; `direct` once. What each step adds to the gradients is that of diff/adjoint.rs.
// - Derivatives of what a BSDF or emitter evaluates with respect to a texture's value at
//   a point: the thread's scene has a probe, a texture handle that reads as a constant;
//   central differences at v ± h per channel (diff/probe.rs: relative step 1e-3, exact
//   for linear dependences). Where a BSDF's `eval` is affine in the texture channel by
//   channel (the host's per-BSDF linear masks, from the plugins' `linear_in`), two
//   evaluations, at values 1 and 0, give the derivative of every channel instead. A
//   BSDF's plain float: the probe reads the BSDF's record as
//   the one rebuilt at value ± step (diff/probe.rs RecordProbe). An environment map's
//   texels and scale enter linearly and are differentiated in closed form.
// - Work: a vertex whose BSDF reads none of the parameters is not probed (per-BSDF masks
//   of the parameters each reads).
// - Accumulation: a bitmap's or an environment map's texels by float atomics into the
//   gradient buffer (their order, and so the last bits, follow the GPU's schedule): the
//   derivatives of one sample's lookups at one point are summed first, then those of the
//   lanes of a warp that read the same texels (add_texels), and one lane adds them; a
//   constant's or a scale's few values in the thread's registers, summed over the warp at
//   the end and added by one atomic per warp.
#pragma once

#if HG_BACKWARD

#define HG_DIFF_CONSTANT 0u
#define HG_DIFF_BITMAP 1u
#define HG_DIFF_ENVMAP_DATA 2u
#define HG_DIFF_ENVMAP_SCALE 3u
#define HG_DIFF_BSDF_FLOAT 4u
#define HG_DIFF_READ_BSDF 1u     // a BSDF reads the texture
#define HG_DIFF_READ_EMITTER 2u  // an emitter reads it
#define HG_DIFF_SMALL 24         // a thread's accumulators for constants and scales
#define HG_DIFF_NONE 0xffffffffu
#define HG_DIFF_STEP 1.0e-3f     // diff/probe.rs STEP
#define HG_DEFER 4               // a thread's deferred scatter terms (one pass of `path`)

// One differentiable parameter (backend/cuda/device/backward.rs FlatDiffParam).
struct FlatDiffParam {
    hg_u32 kind;      // HG_DIFF_*
    hg_u32 source;    // the texture (constant, bitmap), the emitter (envmap) or the BSDF (float)
    hg_u32 channels;  // of the value at a point (1 or 3)
    hg_u32 reads;     // HG_DIFF_READ_* bits
    hg_u32 small;     // its first accumulator (constants, scales, floats), else HG_DIFF_NONE
    float step;       // a BSDF float's central-difference step
    float* grad;      // its gradient, added to
    const hg_u32* plus;   // a BSDF float's record rebuilt at value + step
    const hg_u32* minus;  // ... and at value - step
};
static_assert(sizeof(FlatDiffParam) == 48, "FlatDiffParam: renderer/src/diff/flat.rs");

__device__ inline float v3_at(V3 v, int c) { return c == 0 ? v.x : (c == 1 ? v.y : v.z); }

// Bitmap::texel_weights: the texels (index y width + x) a lookup at surface uv `uv`
// reads and their weights, four for bilinear filtering, one for nearest.
__device__ inline int bitmap_texel_weights(const BitmapRecord& t, V2 uv, hg_u32* texel, float* w) {
    V2 q = uv_apply(t.to_uv, uv);
    float rx = (float)t.width, ry = (float)t.height;
    float half = t.filter == 0u ? 0.0f : 0.5f;
    float px = clamp_lim(q.x * rx - half), py = clamp_lim(q.y * ry - half);
    float x0 = floorf(px), y0 = floorf(py);
    int x = (int)x0, y = (int)y0;
    auto at = [&](int dx, int dy) {
        hg_u32 xi = (hg_u32)tex_wrap(x + dx, (int)t.width, t.wrap);
        hg_u32 yi = (hg_u32)tex_wrap(y + dy, (int)t.height, t.wrap);
        return yi * t.width + xi;
    };
    if (t.filter == 0u) {
        texel[0] = at(0, 0);
        w[0] = 1.0f;
        return 1;
    }
    float wx = px - x0, wy = py - y0;
    texel[0] = at(0, 0), w[0] = (1.0f - wx) * (1.0f - wy);
    texel[1] = at(1, 0), w[1] = wx * (1.0f - wy);
    texel[2] = at(0, 1), w[2] = (1.0f - wx) * wy;
    texel[3] = at(1, 1), w[3] = wx * wy;
    return 4;
}

#if HG_HAS(HG_EMITTER_SET, HG_EMITTER_ENVMAP)
// EnvmapEmitter::derivatives: the radiance along world direction d without the scale, and
// the texels (index y width + x of the source image) the lookup interpolates with their
// weights times the scale.
__device__ inline V3 envmap_derivatives(const SceneData& s, const EnvmapRecord& e, V3 d, hg_u32* texel, float* w) {
    V2 uv = direction_to_uv(normalize_or_zero(mat3_mul(e.to_local, d)));
    hg_u32 width = e.width, h = e.height;
    float u = uv.x - env_half_texel(e);
    u = u - floorf(u);
    float x = u * (float)width;
    float y = fminf(fmaxf(uv.y, 0.0f), 1.0f) * (float)(h - 1);
    hg_u32 ix = x == x && x > 0.0f ? (hg_u32)x : 0u, iy = y == y && y > 0.0f ? (hg_u32)y : 0u;
    if (ix > width - 1) ix = width - 1;
    if (iy > h - 2) iy = h - 2;
    float fx = x - (float)ix, fy = y - (float)iy;
    hg_u32 ix1 = (ix + 1u) % width;  // the padded column `width` repeats column 0
    float k = e.scale;
    texel[0] = iy * width + ix, w[0] = (1.0f - fx) * (1.0f - fy) * k;
    texel[1] = iy * width + ix1, w[1] = fx * (1.0f - fy) * k;
    texel[2] = (iy + 1u) * width + ix, w[2] = (1.0f - fx) * fy * k;
    texel[3] = (iy + 1u) * width + ix1, w[3] = fx * fy * k;
    return e.scale != 0.0f ? env_lookup(s, e, uv) / e.scale : v3(0.0f, 0.0f, 0.0f);
}
#endif

// Adds w[j] * vals[c] to channel c of texel texel[j] of `grad` (texels of `channels`
// floats) for the n (<= 4) texels of one lookup of parameter k. On the device the lanes
// of a warp that add to the same texels (same parameter and first texel: a pixel's
// samples share a warp and mostly read the same texels) are summed first, by a tree over
// the lanes of each group (log2 of its size steps of shuffles), and one lane of each
// group adds the sums: a set of atomics per group instead of per lane, and no lanes
// queueing on one address. Any subset of a warp's lanes may call it together.
// Out of line: inlined into its two callers, it made the backward kernel 21% slower.
__device__ __noinline__ void add_texels(float* grad, hg_u32 channels, hg_u32 k, const hg_u32* texel, const float* w, int n,
                                  const float* vals) {
    float v[12];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int c = 0; c < 3; ++c) v[3 * j + c] = j < n && c < (int)channels ? w[j] * vals[c] : 0.0f;
    }
    bool adds = true;
#if !defined(HG_HOST_SHIM) && defined(__CUDA_ARCH__)
    unsigned active = __activemask();
    unsigned long long key = ((unsigned long long)k << 32) | texel[0];
    unsigned peers = __match_any_sync(active, key);
    unsigned lane = threadIdx.x & 31u, below = (1u << lane) - 1u;
    hg_u32 rank = (hg_u32)__popc(peers & below);  // position in the group
    unsigned above = peers & ~below & ~(1u << lane);  // the group's lanes after this one
    adds = rank == 0u;
    // step by step, each remaining lane adds the sums of the next remaining lane of its
    // group, and the lanes at odd positions (whose sums were taken) leave
    while (__any_sync(active, above != 0u)) {
        int next = __ffs(above);  // 1 + that lane, 0 when none
        int from = next > 0 ? next - 1 : (int)lane;
#pragma unroll
        for (int q = 0; q < 12; ++q) {
            float t = __shfl_sync(active, v[q], from);
            if (next > 0) v[q] += t;
        }
        above &= __ballot_sync(active, (rank & 1u) == 0u);
        rank >>= 1;
    }
#endif
    if (!adds) return;
    // unrolled, so that v stays in registers
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float a = v[3 * j], b = v[3 * j + 1], c = v[3 * j + 2];
        if (j >= n || (a == 0.0f && b == 0.0f && c == 0.0f)) continue;
        float* g = grad + (hg_u64)texel[j] * channels;
#if !defined(HG_HOST_SHIM) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (channels == 3u) {
            // two atomics instead of three: the pair of channels at an 8-byte boundary (0
            // and 1 of an even texel, 1 and 2 of an odd one) as one
            if ((texel[j] & 1u) == 0u) {
                atomicAdd((float2*)g, make_float2(a, b));
                atomicAdd(g + 2, c);
            } else {
                atomicAdd(g, a);
                atomicAdd((float2*)(g + 1), make_float2(b, c));
            }
            continue;
        }
#endif
#pragma unroll
        for (hg_u32 c2 = 0; c2 < 3u; ++c2) {
            if (c2 < channels) atomicAdd(g + c2, v[3 * j + c2]);
        }
    }
}

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

// Each crop pixel's sum of film weights over samples [0, spp) (spp in film's sampler), one
// thread per pixel of [0, pixels).
extern "C" __global__ void hg_film_weights(const __grid_constant__ FlatFilm film, hg_u64 seed, hg_u32 pixels,
                                           float* __restrict__ weights) {
    hg_u32 pix = blockIdx.x * blockDim.x + threadIdx.x;
    if (pix >= pixels) return;
    hg_u32 cw = film.crop_size[0];
    hg_u32 y = pix / cw, x = pix - y * cw;
    hg_u64 pixel = (hg_u64)(y + film.crop_offset[1]) * (hg_u64)film.width + (hg_u64)(x + film.crop_offset[0]);
    float sum = 0.0f;
    for (hg_u32 k = 0; k < film.sampler.sample_count; ++k) {
        SampleRng rng = sample_rng(film.sampler, seed, pixel, k);
        float ox, oy;
        sum += film_sample(film, x, y, rng, &ox, &oy);
    }
    weights[pix] = sum;
}

// Sums v over the warp (every lane ends with the sum).
__device__ inline float warp_sum(float v) {
#ifdef HG_HOST_SHIM
    return v;  // the host runs lanes one after another: each adds its own
#else
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
#endif
}

// The backward pass over the samples of a chunk, threads as hg_render's. `adjoint`: the
// image's gradient (crop pixels x `channels`, alpha ignored); `weights`: hg_film_weights;
// `params`: the parameters, whose gradients are added to; `bsdf_masks`: mask_count
// BSDFs' parameter masks, then as many linear masks. Launched in blocks of a
// multiple of 32 threads (the warp sums at the end).
extern "C" __global__ void hg_backward(const __grid_constant__ FlatCamera cam, const __grid_constant__ FlatFilm film,
                                       const __grid_constant__ FlatIntegrator it, HG_SCENE_PARAMS, hg_u64 seed,
                                       hg_u32 s0, hg_u32 log2_n, hg_u32 log2_k, hg_u32 p0, hg_u32 threads,
                                       const float* __restrict__ adjoint, hg_u32 channels,
                                       const float* __restrict__ weights, const FlatDiffParam* __restrict__ params,
                                       hg_u32 count, const hg_u32* __restrict__ bsdf_masks, hg_u32 mask_count,
                                       hg_u32 envmap_params) {
    hg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    // two copies of the scene: the paths' (never probed: its address is not taken, so it
    // stays in registers and the parameter space, as hg_render's) and the probes'
    // (Adjoint::scene, in the thread's local memory). One shared copy, whose address the
    // out-of-line probes take, kept the paths' scene in local memory: 7% slower.
    const SceneData s = HG_SCENE_DATA;
    SceneData probed = s;
    float small[HG_DIFF_SMALL];
    Adjoint a;
    a.scene = &probed;
    a.params = params;
    a.count = count;
    a.bsdf_masks = bsdf_masks;
    a.bsdf_linear = bsdf_masks + mask_count;  // the linear masks follow the masks
    a.mask_count = mask_count;
    a.small = small;
    a.envmap_params = envmap_params != 0u;
    a.emitter_mask = 0u;
    hg_u32 smalls = 0u;  // the accumulators in use (none for bitmaps and environment maps)
    for (hg_u32 k = 0; k < count; ++k) {
        FlatDiffParam p = params[k];
        if ((p.reads & HG_DIFF_READ_EMITTER) != 0u) a.emitter_mask |= k < 32u ? 1u << k : 0xffffffffu;
        hg_u32 end = p.small + (p.kind == HG_DIFF_CONSTANT ? p.channels : 1u);
        if (p.small != HG_DIFF_NONE && end > smalls) smalls = end;
    }
    for (hg_u32 k = 0; k < smalls && k < (hg_u32)HG_DIFF_SMALL; ++k) small[k] = 0.0f;
    a.pend_k = HG_DIFF_NONE;
    a.deferring = false;
    a.n_deferred = 0;
    // `path` traced once when every scatter term of a path fits the deferred buffer: at
    // most max_depth - 1 scattering vertices, each with at most `count` terms
    bool one_pass = it.max_depth != 0xffffffffu && it.max_depth >= 1u &&
                    (hg_u64)(it.max_depth - 1u) * count <= (hg_u64)HG_DEFER;
    (void)one_pass;
    if (i < threads) {  // no early return: the warp sums below take every lane
        // as hg_render: a pixel's samples in neighbouring lanes, whose paths (rays through
        // one pixel) mostly take the same branches, and whose texel gradients add_texels
        // sums over the warp (pixel-major lanes, each its own pixel, took 37% longer)
        hg_u32 log2_t = log2_n - log2_k;
        hg_u32 pix = p0 + (i >> log2_t);
        hg_u32 first = s0 + ((i & ((1u << log2_t) - 1u)) << log2_k), end = first + (1u << log2_k);
        const float* g = adjoint + (hg_u64)pix * channels;
        V3 adj = v3(g[0], g[1], g[2]);
        float total = weights[pix];
        bool path = HG_KIND(HG_INTEGRATOR_SET, it.kind) == HG_INTEGRATOR_PATH;
        for (hg_u32 k = first; k < end && total > 0.0f && !is_zero(adj); ++k) {
            SampleStart st = sample_start(cam, film, seed, pix, k);
            a.delta = adj * (st.w / total);
            if (is_zero(a.delta)) continue;
#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_PATH)
            if (path) {
                // twice with the same numbers: the radiance, then the replay; one loop,
                // so that the module holds one copy of the (inlined) path step
                // or once, its scatter terms deferred to the end (one_pass)
                PathState p;
                a.active = one_pass;
                a.deferring = one_pass;
                a.n_deferred = 0;
                a.rest = v3(0.0f, 0.0f, 0.0f);
#pragma unroll 1
                for (int pass = one_pass ? 1 : 0; pass < 2; ++pass) {
                    path_begin(s, it, st.ray, st.rng, &p);
                    while (path_step_observed(s, it, &p, a)) {
                    }
                    if (pass == 1 || !finite3(p.result)) break;  // the render drops such a sample
                    a.rest = p.result;
                    a.active = true;
                }
                // a sample whose radiance overflowed (the render drops it) keeps the
                // terms added on the way, a numerical accident
                if (one_pass && finite3(p.result)) a.resolve(p.result);
                a.n_deferred = 0;
                continue;
            }
#endif
#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_DIRECT)
            float alpha;
            a.rest = v3(0.0f, 0.0f, 0.0f);
            a.active = true;
            direct_sample_observed(s, it, st.ray, st.rng, &alpha, a);
#endif
            (void)path;
        }
    }
    // the held texel derivatives (add() flushed those of other points on the way), with
    // the warp's lanes together again so that add_texels sums over all of them
#if !defined(HG_HOST_SHIM) && defined(__CUDA_ARCH__)
    __syncwarp();
#endif
    a.flush();
    for (hg_u32 k = 0; k < count; ++k) {
        FlatDiffParam p = params[k];
        if (p.small == HG_DIFF_NONE) continue;
        hg_u32 n = p.kind == HG_DIFF_CONSTANT ? p.channels : 1u;
        for (hg_u32 c = 0; c < n; ++c) {
            float v = warp_sum(small[p.small + c]);
#ifdef HG_HOST_SHIM
            if (v != 0.0f) atomicAdd(p.grad + c, v);
#else
            if ((threadIdx.x & 31u) == 0u && v != 0.0f) atomicAdd(p.grad + c, v);
#endif
        }
    }
}

#endif
