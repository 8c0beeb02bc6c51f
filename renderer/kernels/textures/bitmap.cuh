// `bitmap` (renderer/src/textures/bitmap.rs): nearest or bilinear lookups with
// repeat / mirror / clamp wrapping, texels in the scene's texel array.
#pragma once
#include "texture.cuh"

struct BitmapRecord {
    hg_u32 offset;  // first value in the scene's texel array
    hg_u32 width;
    hg_u32 height;
    hg_u32 channels;
    hg_u32 filter;  // 0 nearest, 1 bilinear
    hg_u32 wrap;    // 0 repeat, 1 mirror, 2 clamp
    UvTransform to_uv;
};

// bitmap.rs `wrap`: an integer texel coordinate into [0, n). Coordinates already inside
// are themselves under every mode: that test spares the common case two integer
// divisions (a few dozen instructions each on the GPU).
__device__ inline int tex_wrap(int i, int n, hg_u32 mode) {
    if ((unsigned)i < (unsigned)n) return i;
    if (mode == 2u) return i < 0 ? 0 : (i > n - 1 ? n - 1 : i);
    if (mode == 0u) {
        int m = i % n;
        return m < 0 ? m + n : m;
    }
    int p = 2 * n, m = i % p;
    if (m < 0) m += p;
    return m < n ? m : p - 1 - m;
}

__device__ inline V3 bitmap_texel(const BitmapRecord& t, const float* texels, int x, int y) {
    hg_u32 xi = (hg_u32)tex_wrap(x, (int)t.width, t.wrap);
    hg_u32 yi = (hg_u32)tex_wrap(y, (int)t.height, t.wrap);
    const float* p = texels + t.offset + ((hg_u64)yi * t.width + xi) * t.channels;
    return t.channels == 1u ? v3(p[0], p[0], p[0]) : v3(p[0], p[1], p[2]);
}

__device__ inline float clamp_lim(float v) {
    const float lim = 1.0e7f;
    if (v != v) return 0.0f;  // the CPU's `NaN as i32` is texel 0
    return fminf(fmaxf(v, -lim), lim);
}

// Bitmap::grad_texels: the bilinear interpolant's uv gradient (Mitsuba 3.9's).
__device__ inline V2 bitmap_eval_1_grad(const SceneData& s, const BitmapRecord& t, const SurfacePoint& sp) {
    if (t.filter == 0u) return v2(0.0f, 0.0f);
    const float* texels = s.texels;
    V2 uv = uv_apply(t.to_uv, sp.uv);
    float rx = (float)t.width, ry = (float)t.height;
    float px = clamp_lim(uv.x * rx - 0.5f), py = clamp_lim(uv.y * ry - 0.5f);
    float x0 = floorf(px), y0 = floorf(py);
    float wx = px - x0, wy = py - y0;
    int x = (int)x0, y = (int)y0;
    V3 c00 = bitmap_texel(t, texels, x, y), c10 = bitmap_texel(t, texels, x + 1, y);
    V3 c01 = bitmap_texel(t, texels, x, y + 1), c11 = bitmap_texel(t, texels, x + 1, y + 1);
    float f00, f10, f01, f11;
    if (t.channels == 1u) {
        f00 = c00.x, f10 = c10.x, f01 = c01.x, f11 = c11.x;
    } else {
        f00 = luminance(c00), f10 = luminance(c10);
        f01 = luminance(c01), f11 = luminance(c11);
    }
    float dx = (1.0f - wy) * (f10 - f00) + wy * (f11 - f01);
    float dy = (1.0f - wx) * (f01 - f00) + wx * (f11 - f10);
    const float* m = t.to_uv.m;
    return v2((m[0] * dx + m[3] * dy) * rx, (m[1] * dx + m[4] * dy) * ry);
}

// Bitmap::eval_texels
__device__ inline V3 bitmap_eval(const SceneData& s, const BitmapRecord& t, const SurfacePoint& sp) {
    const float* texels = s.texels;
    V2 uv = uv_apply(t.to_uv, sp.uv);
    float rx = (float)t.width, ry = (float)t.height;
    if (t.filter == 0u) {
        float px = floorf(clamp_lim(uv.x * rx)), py = floorf(clamp_lim(uv.y * ry));
        return bitmap_texel(t, texels, (int)px, (int)py);
    }
    float px = clamp_lim(uv.x * rx - 0.5f), py = clamp_lim(uv.y * ry - 0.5f);
    float x0 = floorf(px), y0 = floorf(py);
    float wx = px - x0, wy = py - y0;
    int x = (int)x0, y = (int)y0;
    V3 top = bitmap_texel(t, texels, x, y) * (1.0f - wx) + bitmap_texel(t, texels, x + 1, y) * wx;
    V3 bot = bitmap_texel(t, texels, x, y + 1) * (1.0f - wx) + bitmap_texel(t, texels, x + 1, y + 1) * wx;
    return top * (1.0f - wy) + bot * wy;
}

// TexturePlugin::eval_1 (the default: grey value or luminance)
__device__ inline float bitmap_eval_1(const SceneData& s, const BitmapRecord& t, const SurfacePoint& sp) {
    return tex_scalar(bitmap_eval(s, t, sp));
}
