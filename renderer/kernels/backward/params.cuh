// The backward pass's parameter records and constants (backward.cuh).
#pragma once

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
