// Deterministic film reconstruction by filter importance sampling (no sample buffer, no
// float atomics). The CPU (renderer/src/films/block.rs) splats each sample, drawn
// uniformly in its pixel, onto every pixel within the filter radius; its pixel is sum(f(x - c) L) / sum(f(x - c)) over the film positions x near the centre
// c, whose expectation is the filter-weighted mean of L over [c - r, c + r] clipped to
// the film. Here each sample of pixel c is drawn at c + (dx, dy) with dx, dy from the
// filter's tabulated 1D density (the host's FilterTable::sampling_cdf: piecewise constant
// over HG_FILTER_BINS bins of [-r, r]) truncated to the crop window (inverse CDF over the
// window's part of [-r, r], found through a guide table: no rejection, no fallback), and
// weighted by w = f(dx) f(dy) / (pdf(dx) pdf(dy)) with f the CPU's filter table; the pixel
// is sum(w L) / sum(w), so the estimator has the CPU's expectation even though the density
// is only tabulated. A one-pixel box (radius <= 0.5) is exactly the CPU: uniform jitter,
// weight 1.
//
// Reduction: hg_render's thread i renders pixel p0 + i / n, sample s0 + i % n, with n a
// power of two <= 32, so a pixel's samples of one wave fill one aligned segment of a warp. The
// segment sums (w r, w g, w b, w alpha, w) with a fixed xor butterfly and its first lane
// adds them to the pixel's accumulator: one writer per pixel per wave, waves in order, so
// the result does not depend on the thread schedule (same scene, spp, seed and wave split
// give the same bits). hg_develop divides by the weight.
#pragma once
#include "common.cuh"

#define HG_LUT_SIZE 1024
#define HG_FILTER_BINS 256                      // films::block::SAMPLING_BINS
#define HG_FILTER_CDF (HG_LUT_SIZE + 2)         // the CDF's offset in the filter table array
#define HG_FILTER_GUIDE_SIZE 1024               // films::block::SAMPLING_GUIDE (+1 entries after the CDF)
#define HG_FILM_ACC 5                           // r, g, b, alpha, weight per pixel

// FilterTable::eval
__device__ inline float filter_table_eval(const float* values, float scale, float x) {
    float f = fabsf(x) * scale;
    if (!(f < (float)HG_LUT_SIZE)) return f == (float)HG_LUT_SIZE ? values[HG_LUT_SIZE] : 0.0f;
    int i = (int)f;
    float t = f - (float)i;
    return values[i] + t * (values[i + 1] - values[i]);
}

// The tabulated CDF at offset x in [-r, r] (linear within a bin); inv_bw = bins / (2 r).
__device__ inline float filter_cdf_at(const float* cdf, float r, float inv_bw, float x) {
    float s = (x + r) * inv_bw;
    int k = (int)floorf(s);
    k = k < 0 ? 0 : (k > HG_FILTER_BINS - 1 ? HG_FILTER_BINS - 1 : k);
    float t = fminf(fmaxf(s - (float)k, 0.0f), 1.0f);
    return cdf[k] + t * (cdf[k + 1] - cdf[k]);
}

// The last bin k < HG_FILTER_BINS with cdf[k] <= c (c >= 0; else 0, as a binary search
// over all bins gives), by a binary search over the few bins the guide table leaves
// (films/block.rs sampling_guide: entry j is the last bin with cdf[k] <= j / G, so for c in
// [j / G, (j + 1) / G) the bin lies in [guide[j], guide[j + 1]]; c * G is exact since G is
// a power of two). The CDF is non-decreasing, so this is the full binary search's bin; it
// takes 0 or 1 steps where the filter has mass and a few only in its tails, where it took
// eight dependent loads everywhere.
__device__ inline int filter_bin(const float* cdf, const float* guide, float c) {
    if (!(c >= 0.0f)) return 0;
    int j = (int)fminf(c * (float)HG_FILTER_GUIDE_SIZE, (float)(HG_FILTER_GUIDE_SIZE - 1));
    int a = (int)guide[j], b = (int)guide[j + 1] + 1;
    while (b - a > 1) {
        int m = (a + b) >> 1;
        if (cdf[m] <= c) a = m;
        else b = m;
    }
    return a;
}

// Draws an offset in [lo, hi] (a sub-interval of [-r, r]) from the tabulated density
// truncated to [lo, hi], by inverting the CDF at u in [0, 1); *pdf gets the untruncated
// density there (the truncation's constant factor cancels in sum(w L) / sum(w)). The CDF's
// guide table follows it in the filter table array. bw is the bin width 2 r / bins and
// inv_bw its inverse. Divisions are the GPU's fast ones: the position only has to follow
// the density it reports (the weight divides by that same density), and the host checks
// the estimator against quadrature (tests/gpu/host_film.cpp).
__device__ inline float filter_sample(const float* cdf, float r, float bw, float inv_bw, float lo, float hi,
                                      float u, float* pdf) {
    // away from the film edges the window is all of [-r, r]: the CDF's ends, 0 and 1 exactly
    float c_lo = lo > -r ? filter_cdf_at(cdf, r, inv_bw, lo) : 0.0f;
    float c_hi = hi < r ? filter_cdf_at(cdf, r, inv_bw, hi) : 1.0f;
    float c = c_lo + u * (c_hi - c_lo);
    int a = filter_bin(cdf, cdf + (HG_FILTER_BINS + 1), c);
    float c0 = cdf[a], c1 = cdf[a + 1];
    float t = c1 > c0 ? fminf(fmaxf(__fdividef(c - c0, c1 - c0), 0.0f), 1.0f) : 0.5f;
    *pdf = (c1 - c0) * inv_bw;
    float x = -r + ((float)a + t) * bw;
    return fminf(fmaxf(x, lo), hi);
}

// The film position (crop-space pixel x + offset, returned in *off) and filter weight of
// one sample of crop pixel (x, y), from the first two numbers (u1, u2) of its stream.
__device__ inline float film_sample(const FlatFilm& film, const float* __restrict__ table, hg_u32 x, hg_u32 y,
                                    float u1, float u2, float* ox, float* oy) {
    float r = film.filter_radius;
    hg_u32 mode = (film.filter == HG_FILTER_BOX && r <= 0.5f) ? HG_FILM_JITTER : HG_FILM_IMPORTANCE;
    if (HG_KIND(HG_FILM_SET, mode) == HG_FILM_JITTER) {
        *ox = u1;  // the CPU: position = pixel + jitter, weight 1
        *oy = u2;
        return 1.0f;
    }
    const float* cdf = table + HG_FILTER_CDF;
    float cx = (float)x + 0.5f, cy = (float)y + 0.5f;
    float px, py;
    float inv_r = __frcp_rn(r);
    float bw = 2.0f * r / (float)HG_FILTER_BINS, inv_bw = (0.5f * (float)HG_FILTER_BINS) * inv_r;
    float dx = filter_sample(cdf, r, bw, inv_bw, fmaxf(-r, -cx), fminf(r, (float)film.crop_size[0] - cx), u1, &px);
    float dy = filter_sample(cdf, r, bw, inv_bw, fmaxf(-r, -cy), fminf(r, (float)film.crop_size[1] - cy), u2, &py);
    *ox = 0.5f + dx;
    *oy = 0.5f + dy;
    float scale = (float)HG_LUT_SIZE * inv_r;
    float pdf = px * py;
    return pdf > 0.0f ? __fdividef(filter_table_eval(table, scale, dx) * filter_table_eval(table, scale, dy), pdf)
                      : 0.0f;
}

// Sums v over the n lanes (a power of two <= 32) of this thread's aligned warp segment
// with the fixed butterfly (at each level a lane adds its partner lane ^ off, off = n/2,
// ..., 1; a + b and b + a round alike, so every lane ends with the same bits). Returns
// whether this lane writes the segment's sum. The host shim (tests/gpu/host_shim.h), which
// runs threads one after another, keeps the lanes' values and evaluates the same tree,
// level by level, when the segment's last lane arrives.
__device__ inline bool segment_sum(float* v, hg_u32 lane, hg_u32 n) {
#ifdef HG_HOST_SHIM
    hg_u32 j = lane & (n - 1u);
    for (int c = 0; c < HG_FILM_ACC; ++c) hg_host_lanes[j][c] = v[c];
    if (j != n - 1u) return false;
    for (hg_u32 off = n >> 1; off > 0u; off >>= 1) {
        float next[32][HG_FILM_ACC];
        for (hg_u32 l = 0; l < n; ++l)
            for (int c = 0; c < HG_FILM_ACC; ++c) next[l][c] = hg_host_lanes[l][c] + hg_host_lanes[l ^ off][c];
        std::memcpy(hg_host_lanes, next, sizeof next);
    }
    for (int c = 0; c < HG_FILM_ACC; ++c) v[c] = hg_host_lanes[0][c];
    return true;
#else
    if (n == 32u) {  // the whole warp (the common case): a constant full mask, no divergence check
        for (hg_u32 off = 16u; off > 0u; off >>= 1)
            for (int c = 0; c < HG_FILM_ACC; ++c) v[c] = v[c] + __shfl_xor_sync(0xffffffffu, v[c], off);
        return lane == 0u;
    }
    hg_u32 first = lane & ~(n - 1u);
    unsigned mask = n >= 32u ? 0xffffffffu : ((1u << n) - 1u) << first;
    for (hg_u32 off = n >> 1; off > 0u; off >>= 1)
        for (int c = 0; c < HG_FILM_ACC; ++c) v[c] = v[c] + __shfl_xor_sync(mask, v[c], off);
    return lane == first;
#endif
}

// Block::develop: one thread per crop pixel, rgb(a) = accumulated / weight.
extern "C" __global__ void hg_develop(const __grid_constant__ FlatFilm film, const float* accum, float* out) {
    hg_u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    hg_u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= film.crop_size[0] || y >= film.crop_size[1]) return;
    hg_u64 i = (hg_u64)y * film.crop_size[0] + x;
    const float* a = accum + i * HG_FILM_ACC;
    hg_u32 ch = film.alpha ? 4u : 3u;
    float inv = a[4] > 0.0f ? 1.0f / a[4] : 0.0f;
    for (hg_u32 c = 0; c < ch; ++c) out[i * ch + c] = a[c] * inv;
}
