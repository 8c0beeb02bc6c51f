// `checkerboard` (renderer/src/textures/checkerboard.rs): which of two textures covers uv.
#pragma once
#include "texture.cuh"

struct Checkerboard {
    hg_u32 color0;
    hg_u32 color1;
    UvTransform to_uv;
};

// Checkerboard::is_color0
__device__ inline bool checkerboard_is_color0(const Checkerboard& r, V2 uv0) {
    V2 uv = uv_apply(r.to_uv, uv0);
    float fx = uv.x - floorf(uv.x), fy = uv.y - floorf(uv.y);
    return (fx > 0.5f) == (fy > 0.5f);
}

// Checkerboard::eval: the texture evaluated instead.
__device__ inline hg_u32 checkerboard_pick(const SceneData& s, const Checkerboard& r, const SurfacePoint& sp) {
    (void)s;
    return checkerboard_is_color0(r, sp.uv) ? r.color0 : r.color1;
}

// Checkerboard::eval_1: the colours swapped, as Mitsuba 3's eval_1.
__device__ inline hg_u32 checkerboard_pick_1(const SceneData& s, const Checkerboard& r, const SurfacePoint& sp) {
    (void)s;
    return checkerboard_is_color0(r, sp.uv) ? r.color1 : r.color0;
}
