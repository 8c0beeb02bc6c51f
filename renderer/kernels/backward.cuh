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

#include "backward/params.cuh"
#include "textures/bitmap_diff.cuh"
#include "emitters/envmap_diff.cuh"
#include "backward/texels.cuh"
#include "backward/adjoint.cuh"

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
