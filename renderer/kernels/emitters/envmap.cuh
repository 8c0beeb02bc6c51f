// `envmap` (renderer/src/emitters/envmap.rs): a latitude-longitude environment with
// bilinear lookups and importance sampling through its 2D distribution
// (math/distribution.rs Distribution2D). The record holds where its texels lie (rows of
// width + 1 RGB texels) and its distribution's rows and marginal in dist1d (dist_h 0: a
// black map, nothing to sample).
#pragma once
#include "emitter.cuh"

struct EnvmapRecord {
    float to_world[9];  // column-major 3x3
    float to_local[9];
    hg_u32 offset;  // first texel
    hg_u32 width;
    hg_u32 height;
    float scale;
    hg_u32 dist_rows;
    hg_u32 dist_h;
    hg_u32 dist_marginal;
};

__device__ inline float env_half_texel(const EnvmapRecord& e) { return 0.5f / (float)e.width; }

// EnvmapEmitter::cell: the texel (ix, iy) at the top left of the 2x2 block a lookup at
// uv interpolates, and the fractions (fx, fy) within it.
__device__ inline void env_cell(const EnvmapRecord& e, V2 uv, hg_u32* ix_out, hg_u32* iy_out, float* fx, float* fy) {
    hg_u32 w = e.width, h = e.height;
    float u = uv.x - env_half_texel(e);
    u = u - floorf(u);
    float x = u * (float)w;
    float y = fminf(fmaxf(uv.y, 0.0f), 1.0f) * (float)(h - 1);
    hg_u32 ix = x == x && x > 0.0f ? (hg_u32)x : 0u, iy = y == y && y > 0.0f ? (hg_u32)y : 0u;
    if (ix > w - 1) ix = w - 1;
    if (iy > h - 2) iy = h - 2;
    *fx = x - (float)ix, *fy = y - (float)iy;
    *ix_out = ix;
    *iy_out = iy;
}

// EnvmapEmitter::lookup
__device__ inline V3 env_lookup(const SceneData& s, const EnvmapRecord& e, V2 uv) {
    hg_u32 ix, iy;
    float fx, fy;
    env_cell(e, uv, &ix, &iy, &fx, &fy);
    hg_u32 row = e.width + 1;
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

__device__ inline bool envmap_sample(const SceneData& s, const EnvmapRecord& e, V3 p, V2 u, EmitterSample* out) {
    (void)p;
    if (e.dist_h == 0u) return false;
    float pdf_v, pdf_u;
    hg_u32 row, col;
    float v = dist1d_sample_continuous(s, e.dist_marginal, u.y, &pdf_v, &row);
    float x = dist1d_sample_continuous(s, e.dist_rows + row, u.x, &pdf_u, &col);
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

// EnvmapEmitter::eval_env and ::pdf_env at once (both start from the map-frame direction).
__device__ inline V3 envmap_eval_env(const SceneData& s, const EnvmapRecord& e, V3 d, float* pdf) {
    V3 local = normalize_or_zero(mat3_mul(e.to_local, d));
    V2 uv = direction_to_uv(local);
    *pdf = 0.0f;
    float sin_theta = sqrtf(local.x * local.x + local.z * local.z);
    if (e.dist_h != 0u && sin_theta > 0.0f) {
        float su = uv.x - env_half_texel(e);
        V2 q = v2(su - floorf(su), uv.y);
        float fr = q.y * (float)e.dist_h;
        hg_u32 row = fr == fr && fr > 0.0f ? (hg_u32)fr : 0u;
        if (row > e.dist_h - 1) row = e.dist_h - 1;
        float p = dist1d_pdf_continuous(s, e.dist_marginal, q.y) * dist1d_pdf_continuous(s, e.dist_rows + row, q.x);
        *pdf = p / (2.0f * HG_PI * HG_PI * sin_theta);
    }
    return env_lookup(s, e, uv);
}
