// The `direct` and `path` megakernels (DESIGN.md §3). A wave renders samples
// [s0, s0 + n_wave) of every crop pixel; sample (pixel, sidx) draws from the CPU's stream
// for that (pixel, sample) (samplers/mod.rs SampleRng; the film position first, as
// backend/cpu.rs draws its jitter first) and is placed by filter importance sampling
// (film.cuh film_sample). The integrators reduce differently:
// - `direct` (hg_render): one thread = one sample; n_wave is a power of two <= 32, thread i
//   takes pixel i / n_wave, sample s0 + i % n_wave, and the pixel's weighted samples are
//   summed inside their warp segment into the accumulator (film.cuh segment_sum). Its
//   samples are short and alike (one bounce), so the lanes of a warp finish together and
//   nothing is gained by a sample buffer.
// - `path` (hg_render_path): path lengths differ widely (Russian roulette, escapes), so a
//   thread renders many samples and starts the next one in the same loop iteration in
//   which its path ends (path regeneration): the lanes of a warp stay busy instead of
//   idling until the longest path of the warp ends. Each sample's (w r, w g, w b, w alpha, w)
//   goes to its own slot of the wave's sample buffer, and hg_reduce (film.cuh) sums a
//   pixel's samples in sample order into the accumulator.
// Either way every sum has a fixed order, so the same scene, spp, seed and wave split give
// the same bits; hg_develop divides by the weight at the end.
#include "integrators/direct.cuh"
#include "integrators/path.cuh"
#include "film.cuh"

// The camera ray, random stream (after the two film numbers) and filter weight *w of
// sample sidx of crop pixel pix.
__device__ inline Ray sample_start(const FlatCamera& cam, const FlatFilm& film, const float* __restrict__ table,
                                   hg_u64 seed, hg_u64 pix, hg_u32 sidx, Pcg32* rng, float* w) {
    hg_u64 cw = film.crop_size[0];
    hg_u32 x = (hg_u32)(pix % cw), y = (hg_u32)(pix / cw);
    hg_u32 fx = x + film.crop_offset[0], fy = y + film.crop_offset[1];
    hg_u64 pixel = (hg_u64)fy * (hg_u64)film.width + (hg_u64)fx;
    *rng = sample_rng(seed, pixel, sidx);
    float u1 = pcg_next_f32(*rng);
    float u2 = pcg_next_f32(*rng);
    float ox, oy;
    *w = film_sample(film, table, x, y, u1, u2, &ox, &oy);
    return camera_ray(cam, film, (float)fx + ox, (float)fy + oy);
}

// `direct`, launched in blocks of 64 threads (backend/cuda/device/render.rs RENDER_BLOCK: a
// multiple of 32, so warp segments stay aligned to pixels). No __launch_bounds__: with it
// ptxas caps the call graph's registers and spills; 64-thread blocks waste fewer of an SM's
// 64K registers than 128-thread ones.
extern "C" __global__ void hg_render(const FlatCamera* __restrict__ cam_p, const FlatFilm* __restrict__ film_p,
                                     const FlatIntegrator* __restrict__ integ_p, HG_SCENE_PARAMS,
                                     const float* __restrict__ table, hg_u64 seed, hg_u32 s0, hg_u32 n_wave,
                                     float* __restrict__ accum) {
    const FlatFilm& film = *film_p;
    hg_u64 i = (hg_u64)blockIdx.x * blockDim.x + threadIdx.x;
    hg_u64 total = (hg_u64)film.crop_size[0] * film.crop_size[1] * n_wave;
    if (i >= total) return;  // whole segments only: total is a multiple of n_wave
    hg_u64 pix = i / n_wave;
    SceneData s = HG_SCENE_DATA;
    Pcg32 rng;
    float w;
    Ray ray = sample_start(*cam_p, film, table, seed, pix, s0 + (hg_u32)(i % n_wave), &rng, &w);
    float alpha = 0.0f;
    V3 l = direct_sample(s, *integ_p, ray, rng, &alpha);
    if (!finite3(l)) l = v3(0.0f, 0.0f, 0.0f);  // as backend/cpu.rs: a NaN/inf sample is dropped
    float v[HG_FILM_ACC] = {w * l.x, w * l.y, w * l.z, w * alpha, w};
    if (!segment_sum(v, (hg_u32)(i & 31u), n_wave)) return;
    float* a = accum + pix * HG_FILM_ACC;
    for (int c = 0; c < HG_FILM_ACC; ++c) a[c] = a[c] + v[c];
}

// `path` with path regeneration: the wave's samples j = k * pixels + pix (sample s0 + k of
// crop pixel pix, k < n_wave) are dealt round-robin to the grid's threads (thread t takes
// t, t + T, t + 2T, ... for T threads in all; backend/cuda/device/render.rs launches about
// as many threads as the GPU holds at once). Each loop iteration advances every lane's
// path by one bounce; a lane whose path ended writes the sample's record samples[j]
// (5 floats) and starts its next sample at the top of the next iteration, together with
// the other lanes' next bounce, so no lane idles until the warp's longest path ends (only
// at the very end, when a thread has no samples left). A static deal needs no counter and
// no atomics; its cost is the tail (a thread whose samples happen to be long finishes
// last), small at ~100 samples per thread. Which thread renders a sample does not change
// its value (its stream is its own), and hg_reduce sums the records in a fixed order.
// Blocks of 64 threads (RENDER_BLOCK); __launch_bounds__(64, 8) lets ptxas use at most 128
// registers (it takes 118, no spills), so 8 blocks (16 warps) fit an SM; asking for 9
// blocks forces 96 registers and spills.
extern "C" __global__ void __launch_bounds__(64, 8)
    hg_render_path(const FlatCamera* __restrict__ cam_p, const FlatFilm* __restrict__ film_p,
                   const FlatIntegrator* __restrict__ integ_p, HG_SCENE_PARAMS, const float* __restrict__ table,
                   hg_u64 seed, hg_u32 s0, hg_u32 n_wave, float* __restrict__ samples) {
    const FlatFilm& film = *film_p;
    const FlatIntegrator& it = *integ_p;
    hg_u64 pixels = (hg_u64)film.crop_size[0] * film.crop_size[1];
    hg_u64 total = pixels * n_wave;
    hg_u64 stride = (hg_u64)gridDim.x * blockDim.x;
    hg_u64 j = (hg_u64)blockIdx.x * blockDim.x + threadIdx.x;
    SceneData s = HG_SCENE_DATA;
    Pcg32 rng;
    float w;
    PathState p;
    bool live = false;
    for (;;) {
        if (!live) {  // one call site of the sample's start, for the first sample and the next ones
            if (j >= total) break;
            p = path_begin(s, it, sample_start(*cam_p, film, table, seed, j % pixels, s0 + (hg_u32)(j / pixels),
                                               &rng, &w));
        }
        live = path_step(s, it, p, rng);
        if (live) continue;
        V3 l = finite3(p.result) ? p.result : v3(0.0f, 0.0f, 0.0f);  // as backend/cpu.rs
        float alpha = p.valid ? 1.0f : 0.0f;
        float* r = samples + j * HG_FILM_ACC;
        r[0] = w * l.x;
        r[1] = w * l.y;
        r[2] = w * l.z;
        r[3] = w * alpha;
        r[4] = w;
        j += stride;
    }
}
