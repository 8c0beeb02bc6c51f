// Deterministic film reconstruction (renderer/src/films/block.rs, without float atomics):
// each wave writes one record per sample (crop-space position, radiance, alpha) in
// pixel-major, sample-minor order; hg_gather then computes every pixel from the samples
// of the pixels within the filter radius, in a fixed order, with the CPU's filter table
// (FilterTable: LUT_SIZE + 2 values over [0, radius], linear interpolation), and adds
// that wave's sums to the pixel's accumulator. The result does not depend on the
// thread schedule: same scene, spp and seed give the same bits.
#pragma once
#include "common.cuh"

#define HG_LUT_SIZE 1024
#define HG_SAMPLE_FLOATS 6  // x, y, r, g, b, alpha

// FilterTable::eval
__device__ inline float filter_table_eval(const float* values, float scale, float x) {
    float f = fabsf(x) * scale;
    if (!(f < (float)HG_LUT_SIZE)) return f == (float)HG_LUT_SIZE ? values[HG_LUT_SIZE] : 0.0f;
    int i = (int)f;
    float t = f - (float)i;
    return values[i] + t * (values[i + 1] - values[i]);
}

// Adds sample `smp` to the accumulator `acc` (r, g, b, alpha, weight) of crop pixel
// (x, y) exactly as Block::splat would.
__device__ inline void gather_one(const FlatFilm& film, const float* table, float scale, const float* smp,
                                  int x, int y, float* acc) {
    float px = smp[0], py = smp[1];
    if (film.filter == HG_FILTER_BOX && film.filter_radius <= 0.5f) {
        if ((int)floorf(px) != x || (int)floorf(py) != y) return;
        acc[0] = acc[0] + smp[2];
        acc[1] = acc[1] + smp[3];
        acc[2] = acc[2] + smp[4];
        acc[3] = acc[3] + smp[5];
        acc[4] = acc[4] + 1.0f;
        return;
    }
    float r = film.filter_radius;
    int lo_x = (int)ceilf(px - 0.5f - r), hi_x = (int)floorf(px - 0.5f + r);
    int lo_y = (int)ceilf(py - 0.5f - r), hi_y = (int)floorf(py - 0.5f + r);
    if (x < lo_x || x > hi_x || y < lo_y || y > hi_y) return;
    float wy = filter_table_eval(table, scale, (float)y + 0.5f - py);
    if (wy == 0.0f) return;
    float w = filter_table_eval(table, scale, (float)x + 0.5f - px) * wy;
    acc[0] = acc[0] + w * smp[2];
    acc[1] = acc[1] + w * smp[3];
    acc[2] = acc[2] + w * smp[4];
    acc[3] = acc[3] + w * smp[5];
    acc[4] = acc[4] + w;
}

// One thread per crop pixel: adds this wave's filtered samples (n_wave per pixel) to
// `accum` (5 floats per pixel).
extern "C" __global__ void hg_gather(const FlatFilm* film_p, const float* table, const float* samples,
                                     hg_u32 n_wave, float* accum) {
    const FlatFilm film = *film_p;
    hg_u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    hg_u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    int cw = (int)film.crop_size[0], chh = (int)film.crop_size[1];
    if ((int)x >= cw || (int)y >= chh) return;
    float scale = (float)HG_LUT_SIZE / film.filter_radius;
    // A sample of pixel q lies in [q, q + 1] and reaches pixels within r + 0.5 of it: q in
    // [x - R, x + R] with R = floor(r + 0.5) (a small margin covers rounding). A one-pixel
    // box puts a sample in floor(pos): its own pixel, or the next when pos rounds up.
    int lo = (int)floorf(film.filter_radius + 0.5f + 1e-3f), hi = lo;
    if (film.filter == HG_FILTER_BOX && film.filter_radius <= 0.5f) {
        lo = 1;
        hi = 0;
    }
    float acc[5] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int y0 = (int)y - lo < 0 ? 0 : (int)y - lo, y1 = (int)y + hi >= chh ? chh - 1 : (int)y + hi;
    int x0 = (int)x - lo < 0 ? 0 : (int)x - lo, x1 = (int)x + hi >= cw ? cw - 1 : (int)x + hi;
    for (int qy = y0; qy <= y1; ++qy)
        for (int qx = x0; qx <= x1; ++qx) {
            const float* base = samples + ((hg_u64)qy * (hg_u64)cw + (hg_u64)qx) * n_wave * HG_SAMPLE_FLOATS;
            for (hg_u32 k = 0; k < n_wave; ++k)
                gather_one(film, table, scale, base + (hg_u64)k * HG_SAMPLE_FLOATS, (int)x, (int)y, acc);
        }
    float* a = accum + ((hg_u64)y * (hg_u64)cw + x) * 5u;
    for (int c = 0; c < 5; ++c) a[c] = a[c] + acc[c];
}

// Block::develop: one thread per crop pixel, rgb(a) = accumulated / weight.
extern "C" __global__ void hg_develop(const FlatFilm* film_p, const float* accum, float* out) {
    const FlatFilm film = *film_p;
    hg_u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    hg_u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= film.crop_size[0] || y >= film.crop_size[1]) return;
    hg_u64 i = (hg_u64)y * film.crop_size[0] + x;
    const float* a = accum + i * 5u;
    hg_u32 ch = film.alpha ? 4u : 3u;
    float inv = a[4] > 0.0f ? 1.0f / a[4] : 0.0f;
    for (hg_u32 c = 0; c < ch; ++c) out[i * ch + c] = a[c] * inv;
}
