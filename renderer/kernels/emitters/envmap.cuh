// `envmap` (renderer/src/emitters/envmap.rs): a latitude-longitude environment with
// bilinear lookups and importance sampling through its 2D distribution
// (math/distribution.rs Distribution2D). Record: offset/width/height of the texels
// (rows of width + 1 RGB texels), dist (index into dist2d), scale, to_world/to_local.
#pragma once
#include "constant.cuh"

__device__ inline V3 mat3_mul(const float* m, V3 v) { return (v3a(m) * v.x + v3a(m + 3) * v.y) + v3a(m + 6) * v.z; }

// glam normalize_or_zero
__device__ inline V3 normalize_or_zero(V3 v) {
    float rcp = 1.0f / sqrtf(dot(v, v));
    return (rcp > 0.0f && rcp <= 3.4028235e38f) ? v * rcp : v3(0.0f, 0.0f, 0.0f);
}

__device__ inline float env_half_texel(const FlatEmitter& e) { return 0.5f / (float)e.width; }

__device__ inline V3 env_lookup(const SceneData& s, const FlatEmitter& e, V2 uv) {
    hg_u32 w = e.width, h = e.height;
    float u = uv.x - env_half_texel(e);
    u = u - floorf(u);
    float x = u * (float)w;
    float y = fminf(fmaxf(uv.y, 0.0f), 1.0f) * (float)(h - 1);
    hg_u32 ix = x == x && x > 0.0f ? (hg_u32)x : 0u, iy = y == y && y > 0.0f ? (hg_u32)y : 0u;
    if (ix > w - 1) ix = w - 1;
    if (iy > h - 2) iy = h - 2;
    float fx = x - (float)ix, fy = y - (float)iy;
    hg_u32 row = w + 1;
    const float* t = s.texels + e.offset;
    const float* a = t + 3 * (iy * row + ix);
    const float* b = t + 3 * ((iy + 1) * row + ix);
    V3 top = v3(a[0], a[1], a[2]) * (1.0f - fx) + v3(a[3], a[4], a[5]) * fx;
    V3 bot = v3(b[0], b[1], b[2]) * (1.0f - fx) + v3(b[3], b[4], b[5]) * fx;
    return (top * (1.0f - fy) + bot * fy) * e.scale;
}

__device__ inline V2 direction_to_uv(V3 d) {
    return v2(atan2f(d.x, -d.z) * HG_INV_TWO_PI, acosf(fminf(fmaxf(d.y, -1.0f), 1.0f)) * HG_INV_PI);
}

__device__ inline V3 envmap_eval(const SceneData& s, const FlatEmitter& e, V3 d) {
    V3 local = normalize_or_zero(mat3_mul(e.to_local, d));
    return env_lookup(s, e, direction_to_uv(local));
}

// Distribution1D::sample_continuous: (x, density)
__device__ inline float dist1d_sample_continuous(const SceneData& s, hg_u32 di, float u, float* pdf, hg_u32* bin) {
    float pmf, du;
    hg_u32 i = dist1d_sample(s, di, u, &pmf, &du);
    float n = (float)s.dist1d[di].n;
    *pdf = pmf * n;
    *bin = i;
    return ((float)i + du) / n;
}

__device__ inline float dist1d_pdf_continuous(const SceneData& s, hg_u32 di, float x) {
    const FlatDist1D d = s.dist1d[di];
    float f = x * (float)d.n;
    hg_u32 i = f == f && f > 0.0f ? (f >= 4294967040.0f ? 0xffffffffu : (hg_u32)f) : 0u;
    if (i > d.n - 1) i = d.n - 1;
    return s.dist_data[d.offset + i] / d.sum * (float)d.n;
}

#define HG_NO_DIST 0xffffffffu

__device__ inline bool envmap_sample(const SceneData& s, const FlatEmitter& e, V2 u, EmitterSample* out) {
    if (e.dist == HG_NO_DIST) return false;
    const FlatDist2D d2 = s.dist2d[e.dist];
    float pdf_v, pdf_u;
    hg_u32 row, col;
    float v = dist1d_sample_continuous(s, d2.marginal, u.y, &pdf_v, &row);
    float x = dist1d_sample_continuous(s, d2.rows + row, u.x, &pdf_u, &col);
    float pdf_uv = pdf_v * pdf_u;
    V2 uv = v2(x + env_half_texel(e), v);
    float sin_t = sinf(HG_PI * uv.y), cos_t = cosf(HG_PI * uv.y);
    float sin_p = sinf(2.0f * HG_PI * uv.x), cos_p = cosf(2.0f * HG_PI * uv.x);
    V3 local = v3(sin_p * sin_t, cos_t, -cos_p * sin_t);
    float pdf = pdf_uv / (2.0f * HG_PI * HG_PI * sin_t);
    if (!(pdf_uv > 0.0f) || !(sin_t > 0.0f) || !(fabsf(pdf) <= 3.4028235e38f)) return false;
    out->d = normalize(mat3_mul(e.to_world, local));
    out->dist = HG_INF;
    out->pdf = pdf;
    out->radiance = env_lookup(s, e, uv);
    out->delta = false;
    return true;
}

__device__ inline float envmap_pdf(const SceneData& s, const FlatEmitter& e, V3 d) {
    if (e.dist == HG_NO_DIST) return 0.0f;
    const FlatDist2D d2 = s.dist2d[e.dist];
    V3 local = normalize_or_zero(mat3_mul(e.to_local, d));
    float sin_theta = sqrtf(local.x * local.x + local.z * local.z);
    if (!(sin_theta > 0.0f)) return 0.0f;
    V2 uv = direction_to_uv(local);
    float su = uv.x - env_half_texel(e);
    V2 p = v2(su - floorf(su), uv.y);
    float fr = p.y * (float)d2.h;
    hg_u32 row = fr == fr && fr > 0.0f ? (hg_u32)fr : 0u;
    if (row > d2.h - 1) row = d2.h - 1;
    float pdf = dist1d_pdf_continuous(s, d2.marginal, p.y) * dist1d_pdf_continuous(s, d2.rows + row, p.x);
    return pdf / (2.0f * HG_PI * HG_PI * sin_theta);
}
