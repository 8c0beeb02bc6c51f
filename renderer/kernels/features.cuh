// The plugin set a module is compiled for (renderer/src/backend/cuda/features.rs).
//
// A render module is compiled for one scene's plugin set: the host prepends #defines
// naming the BSDF, texture, emitter and shape kinds the scene uses (bit k of a set = kind
// k), its integrator, how its film places samples and how deep its BVH is. Every
// dispatch then compiles only the cases that can occur (HG_CASE), a category with one
// kind dispatches on a constant (HG_KIND), and HG_INLINE_ALL inlines the whole sample path
// into the kernel: no ABI calls, and the scene, hit and sample records stay in registers
// instead of the stack. Without the #defines (the parity kernel, the host tests' generic
// build) every case is compiled and the large plugin functions stay out of line.
#pragma once

// HG_BSDF_SET, HG_TEX_SET, HG_EMITTER_SET and HG_SHAPE_SET (bit HG_BSDF_*, HG_TEX_*,
// HG_EMITTER_*, HG_SHAPE_*; default: every registered kind) are in bsdfs/registry.cuh,
// textures/registry.cuh, emitters/registry.cuh and shapes/registry.cuh, generated from
// the registries.
#ifndef HG_INTEGRATOR_SET
#define HG_INTEGRATOR_SET 0x3u   // bit HG_INTEGRATOR_*: direct, path (ptracer, bit 3: only when named)
#endif
#ifndef HG_FILM_SET
#define HG_FILM_SET 0xfu         // bit HG_FILM_*: one-pixel jitter, box, tent, gaussian
#endif
#ifndef HG_SAMPLER_SET
#define HG_SAMPLER_SET 0xfu      // bit HG_SAMPLER_*: independent, stratified, multijitter, ldsampler
#endif
#ifndef HG_PATH_WAVEFRONT
#define HG_PATH_WAVEFRONT 0      // 1: `path` as the wavefront kernels (hg_render: `direct` only)
#endif
#ifndef HG_BACKWARD
#define HG_BACKWARD 0            // 1: the backward pass of differentiable rendering (backward.cuh)
#endif
#ifndef HG_BRUTE_FORCE
#define HG_BRUTE_FORCE 0         // 1: rays test every leaf slot instead of walking the BVH
#endif
#ifndef HG_UNIT_CAP
#define HG_UNIT_CAP 4            // brute force: unit records passed by value (flat.cuh UnitPrims)
#endif
#ifndef HG_STACK
#define HG_STACK 128             // BVH traversal stack entries (accel::STACK_SIZE)
#endif

// How the film places a sample (film.cuh film_sample; features.rs film_placement).
#define HG_FILM_JITTER 0u        // a box of radius <= 0.5: uniform jitter in the pixel, weight 1
#define HG_FILM_BOX 1u           // a wider box: uniform over the window, weight 1
#define HG_FILM_TENT 2u          // a tent: its CDF inverted over the window, weight 1
#define HG_FILM_GAUSSIAN 3u      // a gaussian: Box-Muller, rejection outside the window, weight f / pdf

#define HG_HAS(set, k) ((((set) >> (k)) & 1u) != 0u)

// Log2 of a one-bit set of up to 32 kinds (a constant expression).
#define HG_LOG2_4(s) ((s) == 1u ? 0u : (s) == 2u ? 1u : (s) == 4u ? 2u : 3u)
#define HG_LOG2_16(s)                                                                       \
    ((s) < 16u ? HG_LOG2_4(s) : (s) < 256u ? HG_LOG2_4((s) >> 4) + 4u : (s) < 4096u ? HG_LOG2_4((s) >> 8) + 8u \
                                                                      : HG_LOG2_4((s) >> 12) + 12u)
#define HG_LOG2_32(s) ((s) < 65536u ? HG_LOG2_16(s) : HG_LOG2_16((s) >> 16) + 16u)

// Whether `set` has exactly one member.
#define HG_ONE_KIND(set) ((set) != 0u && ((set) & ((set) - 1u)) == 0u)

// The kind of a record whose category set is `set`: the one member when there is one
// (a constant: the record's tag is not even read), else the tag `k`.
#define HG_KIND(set, k) ((((set) & ((set) - 1u)) == 0u) ? HG_LOG2_32(set) : (k))

// A switch case that compiles its body only when kind k is in `set`:
//   switch (HG_KIND(set, tag)) { HG_CASE(set, A) return a(); HG_CASE(set, B) return b(); }
#define HG_CASE(set, k) \
    case k:             \
        if (!HG_HAS(set, k)) break;

// The plugin entry points that the generic build keeps out of line (compile time) and a
// specialised build inlines (speed).
#ifdef HG_INLINE_ALL
#define HG_OUTLINE __forceinline__
#else
#define HG_OUTLINE __noinline__
#endif
