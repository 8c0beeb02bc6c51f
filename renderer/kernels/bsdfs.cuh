// BSDF dispatch (renderer/src/bsdfs/mod.rs AnyBsdf): `switch (kind)` over the flat
// records, one file per plugin in bsdfs/, compiled for the kinds in HG_BSDF_SET
// (features.cuh). `twosided` (twosided.rs) picks its front or back BSDF by the side of wi
// and mirrors the directions for the back; it never wraps another twosided, so the
// dispatch does not recurse.
#pragma once
#include "bsdfs/diffuse.cuh"
#include "bsdfs/conductor.cuh"
#include "bsdfs/roughconductor.cuh"
#include "bsdfs/dielectric.cuh"
#include "bsdfs/thindielectric.cuh"
#include "bsdfs/plastic.cuh"
#include "bsdfs/roughplastic.cuh"
#include "bsdfs/roughdielectric.cuh"

// The kinds a twosided record can wrap, and the delta ones among them.
#define HG_BASE_BSDFS (HG_BSDF_SET & ~(1u << HG_BSDF_TWO_SIDED))
#define HG_DELTA_BSDFS ((1u << HG_BSDF_CONDUCTOR) | (1u << HG_BSDF_DIELECTRIC) | (1u << HG_BSDF_THIN_DIELECTRIC))
#define HG_BASE_KIND(b) HG_KIND(HG_BASE_BSDFS, (b).kind)
#define HG_TWO_SIDED(b) (HG_HAS(HG_BSDF_SET, HG_BSDF_TWO_SIDED) && (b).kind == HG_BSDF_TWO_SIDED)

__device__ inline bool bsdf_base_is_delta(hg_u32 kind) {
    return (HG_BASE_BSDFS & HG_DELTA_BSDFS) != 0u && HG_HAS(HG_DELTA_BSDFS, kind);
}

__device__ inline bool bsdf_base_sample(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, float u1, V2 u2,
                                        BsdfSample* out) {
    switch (HG_BASE_KIND(b)) {
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_DIFFUSE) return diffuse_sample(s, b, uv, wi, u1, u2, out);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_CONDUCTOR) return conductor_sample(s, b, uv, wi, out);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_ROUGH_CONDUCTOR) return roughconductor_sample(s, b, uv, wi, u2, out);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_DIELECTRIC) return dielectric_sample(s, b, uv, wi, u1, out);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_THIN_DIELECTRIC) return thindielectric_sample(s, b, uv, wi, u1, out);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_PLASTIC) return plastic_sample(s, b, uv, wi, u1, u2, out);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_ROUGH_PLASTIC) return roughplastic_sample(s, b, uv, wi, u1, u2, out);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_ROUGH_DIELECTRIC) return roughdielectric_sample(s, b, uv, wi, u1, u2, out);
        default: break;
    }
    return false;
}

__device__ inline V3 bsdf_base_eval(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, V3 wo) {
    switch (HG_BASE_KIND(b)) {
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_DIFFUSE) return diffuse_eval(s, b, uv, wi, wo);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_ROUGH_CONDUCTOR) return roughconductor_eval(s, b, uv, wi, wo);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_PLASTIC) return plastic_eval(s, b, uv, wi, wo);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_ROUGH_PLASTIC) return roughplastic_eval(s, b, uv, wi, wo);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_ROUGH_DIELECTRIC) return roughdielectric_eval(s, b, uv, wi, wo);
        default: break;
    }
    return v3(0.0f, 0.0f, 0.0f);
}

__device__ inline float bsdf_base_pdf(const SceneData& s, const FlatBsdf& b, V2 uv, V3 wi, V3 wo) {
    switch (HG_BASE_KIND(b)) {
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_DIFFUSE) return diffuse_pdf(wi, wo);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_ROUGH_CONDUCTOR) return roughconductor_pdf(s, b, uv, wi, wo);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_PLASTIC) return plastic_pdf(b, wi, wo);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_ROUGH_PLASTIC) return roughplastic_pdf(s, b, wi, wo);
        HG_CASE(HG_BASE_BSDFS, HG_BSDF_ROUGH_DIELECTRIC) return roughdielectric_pdf(s, b, uv, wi, wo);
        default: break;
    }
    return 0.0f;
}

__device__ inline V3 flip_z(V3 v) { return v3(v.x, v.y, -v.z); }

// AnyBsdf::is_delta
__device__ inline bool bsdf_is_delta(const SceneData& s, hg_u32 bi, V2 uv) {
    (void)uv;
    if ((HG_BASE_BSDFS & HG_DELTA_BSDFS) == 0u) return false;
    const FlatBsdf& b = s.bsdfs[bi];
    if (HG_TWO_SIDED(b))
        return bsdf_base_is_delta(HG_BASE_KIND(s.bsdfs[b.tex[0]])) &&
               bsdf_base_is_delta(HG_BASE_KIND(s.bsdfs[b.tex[1]]));
    return bsdf_base_is_delta(HG_BASE_KIND(b));
}

__device__ HG_OUTLINE bool bsdf_sample(const SceneData& s, hg_u32 bi, V2 uv, V3 wi, float u1, V2 u2,
                                       BsdfSample* out) {
    const FlatBsdf& b = s.bsdfs[bi];
    if (!HG_TWO_SIDED(b)) return bsdf_base_sample(s, b, uv, wi, u1, u2, out);
    if (wi.z == 0.0f) return false;
    if (!(wi.z < 0.0f)) return bsdf_base_sample(s, s.bsdfs[b.tex[0]], uv, wi, u1, u2, out);
    if (!bsdf_base_sample(s, s.bsdfs[b.tex[1]], uv, flip_z(wi), u1, u2, out)) return false;
    out->wo = flip_z(out->wo);
    return true;
}

__device__ HG_OUTLINE V3 bsdf_eval(const SceneData& s, hg_u32 bi, V2 uv, V3 wi, V3 wo) {
    const FlatBsdf& b = s.bsdfs[bi];
    if (!HG_TWO_SIDED(b)) return bsdf_base_eval(s, b, uv, wi, wo);
    if (wi.z == 0.0f) return v3(0.0f, 0.0f, 0.0f);
    if (wi.z < 0.0f) return bsdf_base_eval(s, s.bsdfs[b.tex[1]], uv, flip_z(wi), flip_z(wo));
    return bsdf_base_eval(s, s.bsdfs[b.tex[0]], uv, wi, wo);
}

__device__ HG_OUTLINE float bsdf_pdf(const SceneData& s, hg_u32 bi, V2 uv, V3 wi, V3 wo) {
    const FlatBsdf& b = s.bsdfs[bi];
    if (!HG_TWO_SIDED(b)) return bsdf_base_pdf(s, b, uv, wi, wo);
    if (wi.z == 0.0f) return 0.0f;
    if (wi.z < 0.0f) return bsdf_base_pdf(s, s.bsdfs[b.tex[1]], uv, flip_z(wi), flip_z(wo));
    return bsdf_base_pdf(s, s.bsdfs[b.tex[0]], uv, wi, wo);
}
