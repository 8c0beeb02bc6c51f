// `null` (renderer/src/bsdfs/null.rs): straight through, weight 1, a delta lobe.
#pragma once
#include "bsdf.cuh"

struct Null {
    hg_u32 unused;
};

__device__ inline bool null_sample(const SceneData& s, const Null& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2, BsdfSample* out) {
    (void)s;
    (void)r;
    (void)sp;
    (void)u1;
    (void)u2;
    out->wo = v3(-wi.x, -wi.y, -wi.z);
    out->pdf = 1.0f;
    out->weight = v3(1.0f, 1.0f, 1.0f);
    out->eta = 1.0f;
    out->delta = true;
    return true;
}
