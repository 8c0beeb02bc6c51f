// The `direct` and `path` megakernels: one thread = one sample path end to end
// (DESIGN.md §3). A wave renders samples [s0, s0 + n) of crop pixels [p0, p0 + pixels), n
// = 1 << log2_n a power of two <= 32; thread i takes pixel p0 + i / n, sample s0 + i % n,
// draws from the CPU's stream for that (pixel, sample) (samplers/mod.rs SampleRng; the
// film position first, as backend/cpu.rs draws its jitter first), places the sample by
// filter importance sampling and reduces the pixel's weighted samples inside its warp
// segment into the accumulator (film.cuh), which hg_develop divides by the weight at the
// end. Camera, film and integrator records come by value (the kernel parameter space:
// constant-bank operands, no loads); a specialised module (features.cuh) compiles only its
// scene's plugins and integrator.
#include "integrators/direct.cuh"
#include "integrators/path.cuh"
#include "film.cuh"

// Launched in blocks of RENDER_BLOCK threads (backend/cuda/device/render.rs: a multiple of
// 32, so warp segments stay aligned to pixels); `threads` = pixels << log2_n < 2^32.
extern "C" __global__ void hg_render(const __grid_constant__ FlatCamera cam, const __grid_constant__ FlatFilm film,
                                     const __grid_constant__ FlatIntegrator it, HG_SCENE_PARAMS,
                                     const float* __restrict__ table, hg_u64 seed, hg_u32 s0, hg_u32 log2_n,
                                     hg_u32 p0, hg_u32 threads, float* __restrict__ accum) {
    hg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= threads) return;  // whole segments only: threads is a multiple of n
    hg_u32 n = 1u << log2_n;
    hg_u32 pix = p0 + (i >> log2_n);
    hg_u32 sidx = s0 + (i & (n - 1u));
    hg_u32 cw = film.crop_size[0];
    hg_u32 y = pix / cw, x = pix - y * cw;
    SceneData s = HG_SCENE_DATA;
    hg_u32 fx = x + film.crop_offset[0], fy = y + film.crop_offset[1];
    hg_u64 pixel = (hg_u64)fy * (hg_u64)film.width + (hg_u64)fx;
    Pcg32 rng = sample_rng(seed, pixel, sidx);
    float u1 = pcg_next_f32(rng);
    float u2 = pcg_next_f32(rng);
    float ox, oy;
    float w = film_sample(film, table, x, y, u1, u2, &ox, &oy);
    Ray ray = camera_ray(cam, film, (float)fx + ox, (float)fy + oy);
    float alpha = 0.0f;
    V3 l = HG_KIND(HG_INTEGRATOR_SET, it.kind) == HG_INTEGRATOR_PATH ? path_sample(s, it, ray, rng, &alpha)
                                                                      : direct_sample(s, it, ray, rng, &alpha);
    if (!finite3(l)) l = v3(0.0f, 0.0f, 0.0f);  // as backend/cpu.rs: a NaN/inf sample is dropped
    float v[HG_FILM_ACC] = {w * l.x, w * l.y, w * l.z, w * alpha, w};
    if (!segment_sum(v, i & 31u, n)) return;
    float* a = accum + (hg_u64)pix * HG_FILM_ACC;
    if (s0 == 0u) {
        for (int c = 0; c < HG_FILM_ACC; ++c) a[c] = v[c];  // the first wave writes every pixel
    } else {
        for (int c = 0; c < HG_FILM_ACC; ++c) a[c] = a[c] + v[c];
    }
}
