// Deterministic film reconstruction by filter importance sampling (no sample buffer, no
// float atomics). The CPU (renderer/src/films/block.rs) splats each sample, drawn
// uniformly in its pixel, onto every pixel within the filter radius; its pixel is
// sum(f(x - c) L) / sum(f(x - c)) over the film positions x near the centre c, whose
// expectation is the filter-weighted mean of L over [c - r, c + r] clipped to the film.
// Here each sample of pixel c is drawn at c + (dx, dy), (dx, dy) in the window [-r, r]^2
// clipped to the crop, from a density p proportional to f (box, tent) or to the untruncated
// normal (gaussian), truncated to the window, and weighted by w = f(dx) f(dy) / p(dx, dy)
// up to a constant factor per pixel; the pixel is sum(w L) / sum(w), so the factor cancels
// and the estimator has the CPU's expectation. f is the filter itself (rfilters/mod.rs
// AnyFilter::eval, separable), not the CPU's table of it, which differs by ~1e-6.
// Each kind is sampled in closed form, so a specialised module compiles only its own
// (features.cuh HG_FILM_*):
// - a box of radius <= 0.5: uniform jitter in the pixel, weight 1 (exactly the CPU);
// - a wider box: uniform over the window, weight 1;
// - a tent: its CDF inverted over the window (one sqrt), weight 1;
// - a gaussian: Box-Muller, redrawn while outside the window (only pixels within r of
//   the crop edge, and 1.3e-4 of the rest, whose draw falls beyond 4 stddev, ever redraw),
//   weight (1 - exp(a (r^2 - dx^2))) (1 - exp(a (r^2 - dy^2))), a = -1 / (2 stddev^2).
// The film takes the sample's first two random numbers, and two more per redraw.
//
// Reduction: a pixel's n samples of one wave (n a power of two <= 32) are rendered by t =
// n / k threads of k samples each (render.cu hg_render), which fill one aligned segment of
// a warp; each thread sums its samples' (w r, w g, w b, w alpha, w) in order, the segment
// sums the t threads' with a fixed xor butterfly and its first lane adds them to the
// pixel's accumulator: one writer per pixel per wave, waves in order, so the result does
// not depend on the thread schedule (same scene, spp, seed, wave split and samples per
// lane give the same bits). hg_develop divides by the weight.
#pragma once
#include "samplers.cuh"

#define HG_FILM_ACC 5                           // r, g, b, alpha, weight per pixel

// The placement kind (HG_FILM_*) of `film`'s filter (backend/cuda/features.rs
// film_placement, which picks the module's HG_FILM_SET).
__device__ inline hg_u32 film_placement(const FlatFilm& film) {
    if (film.filter == HG_FILTER_BOX) return film.filter_radius <= 0.5f ? HG_FILM_JITTER : HG_FILM_BOX;
    return film.filter == HG_FILTER_TENT ? HG_FILM_TENT : HG_FILM_GAUSSIAN;
}

// An offset uniform over the window [lo, hi] (a box's density truncated to it) from u in
// [0, 1); the clamp keeps a rounded-up hi - lo from stepping past the window.
__device__ inline float film_box(float lo, float hi, float u) {
    return fminf(lo + u * (hi - lo), hi);
}

// The CDF of the tent over [-1, 1] at t (an offset in units of the radius).
__device__ inline float tent_cdf(float t) {
    float a = 1.0f - fabsf(t);
    float h = 0.5f * a * a;
    return t < 0.0f ? h : 1.0f - h;
}

// An offset in the window [lo, hi] (a part of [-r, r]) drawn from the tent of radius r
// truncated to the window, from u in [0, 1): the CDF's value c = F(lo) + u (F(hi) - F(lo))
// inverted in closed form, t = sqrt(2 c) - 1 below one half, 1 - sqrt(2 (1 - c)) above.
// inv_r = 1 / r (FlatFilm::filter_k). Away from the crop edges the window is all of
// [-r, r] and c = u.
__device__ inline float film_tent(float r, float inv_r, float lo, float hi, float u) {
    float c_lo = lo > -r ? tent_cdf(lo * inv_r) : 0.0f;
    float c_hi = hi < r ? tent_cdf(hi * inv_r) : 1.0f;
    float c = c_lo + u * (c_hi - c_lo);
    float q = sqrtf(2.0f * fminf(c, 1.0f - c));
    float x = copysignf(r * (1.0f - q), c - 0.5f);
    return fminf(fmaxf(x, lo), hi);  // rounding may step a hair outside the window
}

// Draws (*dx, *dy) in the window [lox, hix] x [loy, hiy] for the gaussian of `film`
// (stddev s, radius r): s (zx, zy) with (zx, zy) standard normal by Box-Muller from
// (u1, u2) (the GPU's fast log and sincos: the position only has to follow the density
// the weight assumes to ~1e-6; 1 - u1 lies in (0, 1], so the log is finite, and the
// angle 2 pi u2 - pi, a rotation by pi that the normal does not see, stays in the fast
// sincos's accurate range [-pi, pi]), redrawn from two more numbers of the sample's own
// stream `rng` while outside the window (not from the sampler's dimensions: the CPU,
// which splats instead, draws none, and both must reach the integrator at the same one). Returns the weight f(dx) f(dy) / (pdf(dx) pdf(dy)) up to a constant:
// per axis 1 - exp(a (r^2 - dx^2)) = 1 - exp(a r^2 + z^2 / 2), a = -1 / (2 s^2) and a r^2
// = FlatFilm::filter_k, clamped at 0 (it is 0 at |dx| = r, and the window lies in [-r, r]).
__device__ inline float film_gaussian(const FlatFilm& film, float lox, float hix, float loy, float hiy, float u1,
                                      float u2, Pcg32& rng, float* dx, float* dy) {
    float s = film.filter_stddev;
    float zx, zy;
    for (;;) {
        float rho = sqrtf(-2.0f * __logf(1.0f - u1));
        float sn, cs;
        __sincosf(6.28318531f * u2 - 3.14159265f, &sn, &cs);
        zx = rho * cs;
        zy = rho * sn;
        *dx = s * zx;
        *dy = s * zy;
        if (*dx >= lox && *dx <= hix && *dy >= loy && *dy <= hiy) break;
        u1 = pcg_next_f32(rng);
        u2 = pcg_next_f32(rng);
    }
    float k = film.filter_k;
    float wx = fmaxf(0.0f, 1.0f - __expf(0.5f * zx * zx + k));
    float wy = fmaxf(0.0f, 1.0f - __expf(0.5f * zy * zy + k));
    return wx * wy;
}

// The film position (crop-space pixel (x, y) + (*ox, *oy)) and filter weight of one
// sample of crop pixel (x, y), from the sample's sampler: its first 2D point (u1, u2, as
// backend/cpu/mod.rs draws its jitter first), and two independent numbers per gaussian redraw.
__device__ inline float film_sample(const FlatFilm& film, hg_u32 x, hg_u32 y, SampleRng& rng, float* ox, float* oy) {
    V2 u = next_2d(rng);
    float u1 = u.x, u2 = u.y;
    float r = film.filter_radius;
    // the window: offsets from the pixel centre within r that stay in the crop
    float cx = (float)x + 0.5f, cy = (float)y + 0.5f;
    float lox = fmaxf(-r, -cx), hix = fminf(r, (float)film.crop_size[0] - cx);
    float loy = fmaxf(-r, -cy), hiy = fminf(r, (float)film.crop_size[1] - cy);
    float dx = 0.0f, dy = 0.0f, w = 0.0f;
    switch (HG_KIND(HG_FILM_SET, film_placement(film))) {
        HG_CASE(HG_FILM_SET, HG_FILM_JITTER) {
            *ox = u1;  // the CPU: position = pixel + jitter, weight 1
            *oy = u2;
            return 1.0f;
        }
        HG_CASE(HG_FILM_SET, HG_FILM_BOX) {
            dx = film_box(lox, hix, u1);
            dy = film_box(loy, hiy, u2);
            w = 1.0f;
            break;
        }
        HG_CASE(HG_FILM_SET, HG_FILM_TENT) {
            dx = film_tent(r, film.filter_k, lox, hix, u1);
            dy = film_tent(r, film.filter_k, loy, hiy, u2);
            w = 1.0f;  // f / pdf is constant
            break;
        }
        HG_CASE(HG_FILM_SET, HG_FILM_GAUSSIAN) {
            w = film_gaussian(film, lox, hix, loy, hiy, u1, u2, rng.pcg, &dx, &dy);
            break;
        }
    }
    *ox = 0.5f + dx;
    *oy = 0.5f + dy;
    return w;
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
