// What a camera sample's path does, step by step, for an observer that needs more than
// its radiance (renderer/src/integrators/observe.rs): the backward pass of differentiable
// rendering (backward.cuh) replays a path with the same random numbers and, at each step,
// differentiates what the step evaluated. `path` and `direct` run their loop over an
// observer; a render passes Unobserved, whose empty methods compile away.
#pragma once
#include "../bsdfs.cuh"
#include "../emitters.cuh"

// A scattering vertex: the hit, its shading frame, BSDF and surface point, and the
// incident direction (local frame).
struct PathVertex {
    const Hit* hit;
    Frame frame;
    V3 wi;
    hg_u32 bsdf;
    SurfacePoint sp;
};

// The observer of a plain render. The methods an observer has:
//   emission(hit, d, beta, w, le): emission le seen along d (on surface `hit`, or from the
//       environment when hit is null) with throughput beta and MIS weight w;
//   next_event(v, beta, w, f, wo, es, u): emitter sample es (drawn with u), BSDF value f
//       towards it (local wo), MIS weight w;
//   scatter(v, bs, u1, u2, carried): the BSDF at v sampled with (u1, u2) gave bs;
//       carried: the radiance that came through it when known (`direct`), else null.
struct Unobserved {
    __device__ inline void emission(const Hit*, V3, V3, float, V3) {}
    __device__ inline void next_event(const PathVertex&, V3, float, V3, V3, const EmitterSampleResult&, V2) {}
    __device__ inline void scatter(const PathVertex&, const BsdfSample&, float, V2, const V3*) {}
};
