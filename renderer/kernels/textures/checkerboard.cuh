// `checkerboard` (renderer/src/textures/checkerboard.rs): which of two textures covers uv.
#pragma once
#include "bitmap.cuh"

// Checkerboard::is_color0
__device__ inline bool checker_is_color0(const FlatTexture& t, V2 uv0) {
    V2 uv = uv_apply(t.to_uv, uv0);
    float fx = uv.x - floorf(uv.x), fy = uv.y - floorf(uv.y);
    return (fx > 0.5f) == (fy > 0.5f);
}
