// The `direct` and `path` megakernels: one thread = one sample path end to end
// (DESIGN.md §3). A wave renders samples [s0, s0 + n_wave) of every crop pixel, n_wave a
// power of two <= 32; thread i takes pixel i / n_wave, sample s0 + i % n_wave, draws from
// the CPU's stream for that (pixel, sample) (samplers/mod.rs SampleRng; the film position
// first, as backend/cpu.rs draws its jitter first), places the sample by filter importance
// sampling and reduces the pixel's weighted samples inside its warp segment into the
// accumulator (film.cuh), which hg_develop divides by the weight at the end.
#include "integrators/direct.cuh"
#include "integrators/path.cuh"
#include "film.cuh"

// Launched in blocks of 64 threads (backend/cuda/device/render.rs RENDER_BLOCK: a multiple
// of 32, so warp segments stay aligned to pixels). No __launch_bounds__: with it ptxas caps
// this call graph at 96 registers and spills; without it the kernel uses 108 registers and
// no spills, and 64-thread blocks let 9 blocks (18 warps) share an SM's 64K registers where
// 128-thread blocks fit only 4 (16 warps).
extern "C" __global__ void hg_render(const FlatCamera* __restrict__ cam_p, const FlatFilm* __restrict__ film_p,
                                     const FlatIntegrator* __restrict__ integ_p, HG_SCENE_PARAMS,
                                     const float* __restrict__ table, hg_u64 seed, hg_u32 s0, hg_u32 n_wave,
                                     float* __restrict__ accum) {
    const FlatFilm& film = *film_p;
    hg_u64 i = (hg_u64)blockIdx.x * blockDim.x + threadIdx.x;
    hg_u64 cw = film.crop_size[0];
    hg_u64 total = cw * film.crop_size[1] * n_wave;
    if (i >= total) return;  // whole segments only: total is a multiple of n_wave
    hg_u64 pix = i / n_wave;
    hg_u32 sidx = s0 + (hg_u32)(i % n_wave);
    hg_u32 x = (hg_u32)(pix % cw), y = (hg_u32)(pix / cw);
    SceneData s = HG_SCENE_DATA;
    hg_u32 fx = x + film.crop_offset[0], fy = y + film.crop_offset[1];
    hg_u64 pixel = (hg_u64)fy * (hg_u64)film.width + (hg_u64)fx;
    Pcg32 rng = sample_rng(seed, pixel, sidx);
    float u1 = pcg_next_f32(rng);
    float u2 = pcg_next_f32(rng);
    float ox, oy;
    float w = film_sample(film, table, x, y, u1, u2, &ox, &oy);
    Ray ray = camera_ray(*cam_p, film, (float)fx + ox, (float)fy + oy);
    float alpha = 0.0f;
    const FlatIntegrator& it = *integ_p;
    V3 l = it.kind == HG_INTEGRATOR_PATH ? path_sample(s, it, ray, rng, &alpha)
                                          : direct_sample(s, it, ray, rng, &alpha);
    if (!finite3(l)) l = v3(0.0f, 0.0f, 0.0f);  // as backend/cpu.rs: a NaN/inf sample is dropped
    float v[HG_FILM_ACC] = {w * l.x, w * l.y, w * l.z, w * alpha, w};
    if (!segment_sum(v, (hg_u32)(i & 31u), n_wave)) return;
    float* a = accum + pix * HG_FILM_ACC;
    for (int c = 0; c < HG_FILM_ACC; ++c) a[c] = a[c] + v[c];
}
