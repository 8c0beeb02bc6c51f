// A bitmap's derivative hook for the backward pass (backward.cuh): the texels a lookup
// reads and their weights.
#pragma once

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
