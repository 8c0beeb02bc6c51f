// Texture dispatch (renderer/src/textures/mod.rs TextureStore::eval / eval_1), compiled
// for the kinds in HG_TEX_SET (features.cuh): `constant` is the record's colour; `bitmap`,
// `checkerboard` and `mesh_attribute` have their own files.
#pragma once
#include "textures/checkerboard.cuh"
#include "textures/mesh_attribute.cuh"

#define HG_TEX_KIND(t) HG_KIND(HG_TEX_SET, (t).kind)

// A constant, bitmap or mesh attribute texture (not a checkerboard).
__device__ inline V3 tex_eval_leaf(const SceneData& s, const FlatTexture& t, const SurfacePoint& sp) {
    if (HG_HAS(HG_TEX_SET, HG_TEX_BITMAP) && HG_TEX_KIND(t) == HG_TEX_BITMAP) return bitmap_eval(t, s.texels, sp.uv);
    if (HG_HAS(HG_TEX_SET, HG_TEX_MESH_ATTRIBUTE) && HG_TEX_KIND(t) == HG_TEX_MESH_ATTRIBUTE)
        return mesh_attribute_eval(s, t, sp);
    return v3a(t.color);
}

// TextureStore::eval (a checkerboard's colours are textures themselves: followed iteratively).
__device__ HG_OUTLINE V3 tex_eval(const SceneData& s, hg_u32 ti, const SurfacePoint& sp) {
    if (!HG_HAS(HG_TEX_SET, HG_TEX_CHECKERBOARD)) return tex_eval_leaf(s, s.textures[ti], sp);
#pragma unroll 1
    for (int guard = 0; guard < 16; ++guard) {
        const FlatTexture& t = s.textures[ti];
        if (HG_TEX_KIND(t) != HG_TEX_CHECKERBOARD) return tex_eval_leaf(s, t, sp);
        ti = checker_is_color0(t, sp.uv) ? t.color0 : t.color1;
    }
    return v3(0.0f, 0.0f, 0.0f);
}

// math::luminance
__device__ inline float luminance(V3 c) { return bitmap_luminance(c); }

// TextureStore::eval_1_grad: a bitmap's; zero for the other kinds.
__device__ inline V2 tex_eval_1_grad(const SceneData& s, hg_u32 ti, const SurfacePoint& sp) {
    const FlatTexture& t = s.textures[ti];
    if (HG_HAS(HG_TEX_SET, HG_TEX_BITMAP) && HG_TEX_KIND(t) == HG_TEX_BITMAP)
        return bitmap_eval_1_grad(t, s.texels, sp.uv);
    return v2(0.0f, 0.0f);
}

// TextureStore::eval_1 (a checkerboard swaps its colours, as Mitsuba's eval_1)
__device__ HG_OUTLINE float tex_eval_1(const SceneData& s, hg_u32 ti, const SurfacePoint& sp) {
#pragma unroll 1
    for (int guard = 0; guard < 16; ++guard) {
        const FlatTexture& t = s.textures[ti];
        if (HG_HAS(HG_TEX_SET, HG_TEX_CHECKERBOARD) && HG_TEX_KIND(t) == HG_TEX_CHECKERBOARD) {
            ti = checker_is_color0(t, sp.uv) ? t.color1 : t.color0;
            continue;
        }
        if (HG_HAS(HG_TEX_SET, HG_TEX_MESH_ATTRIBUTE) && HG_TEX_KIND(t) == HG_TEX_MESH_ATTRIBUTE)
            return mesh_attribute_eval_1(s, t, sp);
        V3 c = tex_eval(s, ti, sp);
        return (c.x == c.y && c.y == c.z) ? c.x : luminance(c);
    }
    return 0.0f;
}
