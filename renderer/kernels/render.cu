// The `direct` and `path` megakernels: one thread = one sample path end to end
// (DESIGN.md §3), and the wavefront kernels of `path` (wavefront.cuh). A wave renders
// samples [s0, s0 + n) of crop pixels [p0, p0 + pixels), n = 1 << log2_n a power of two
// <= 32; thread i takes pixel p0 + i / n, sample s0 + i % n, draws from the CPU's stream
// for that (pixel, sample) (samplers/mod.rs SampleRng; the film position first, as
// backend/cpu.rs draws its jitter first), places the sample by closed-form filter importance
// sampling and reduces the pixel's weighted samples inside its warp segment into the accumulator
// (film.cuh), which hg_develop divides by the weight at the end. Camera, film and
// integrator records come by value (the kernel parameter space: constant-bank operands,
// no loads); a specialised module (features.cuh) compiles only its scene's plugins and
// integrator.
#include "integrators/direct.cuh"
#include "integrators/path.cuh"
#include "film.cuh"

// The start of thread i's sample: its crop pixel, random stream (after the film's
// numbers), film weight and camera ray.
struct SampleStart {
    hg_u32 pix;
    Pcg32 rng;
    float w;
    Ray ray;
};

__device__ inline SampleStart sample_start(const FlatCamera& cam, const FlatFilm& film,
                                           hg_u64 seed, hg_u32 s0, hg_u32 log2_n, hg_u32 p0, hg_u32 i) {
    SampleStart st;
    st.pix = p0 + (i >> log2_n);
    hg_u32 sidx = s0 + (i & ((1u << log2_n) - 1u));
    hg_u32 cw = film.crop_size[0];
    hg_u32 y = st.pix / cw, x = st.pix - y * cw;
    hg_u32 fx = x + film.crop_offset[0], fy = y + film.crop_offset[1];
    hg_u64 pixel = (hg_u64)fy * (hg_u64)film.width + (hg_u64)fx;
    st.rng = sample_rng(seed, pixel, sidx);
    float ox, oy;
    st.w = film_sample(film, x, y, st.rng, &ox, &oy);
    st.ray = camera_ray(cam, film, (float)fx + ox, (float)fy + oy);
    return st;
}

// Adds thread i's weighted sample (radiance l, alpha, film weight w) to pixel pix through
// its warp segment's sum (film.cuh segment_sum); the first wave stores.
__device__ inline void film_add(float* accum, hg_u32 pix, hg_u32 s0, hg_u32 i, hg_u32 n, V3 l, float alpha, float w) {
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

#include "wavefront.cuh"

// Launched in blocks of a multiple of 32 threads (backend/cuda/device/render.rs
// RenderTuning), so warp segments stay aligned to pixels; `threads` = pixels << log2_n < 2^32.
extern "C" __global__ void hg_render(const __grid_constant__ FlatCamera cam, const __grid_constant__ FlatFilm film,
                                     const __grid_constant__ FlatIntegrator it, HG_SCENE_PARAMS,
                                     hg_u64 seed, hg_u32 s0, hg_u32 log2_n,
                                     hg_u32 p0, hg_u32 threads, float* __restrict__ accum) {
    hg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= threads) return;  // whole segments only: threads is a multiple of n
    SceneData s = HG_SCENE_DATA;
    SampleStart st = sample_start(cam, film, seed, s0, log2_n, p0, i);
    float alpha = 0.0f;
    V3 l = v3(0.0f, 0.0f, 0.0f);  // a wavefront `path` module: the host launches hg_path_* instead
    bool path = HG_KIND(HG_INTEGRATOR_SET, it.kind) == HG_INTEGRATOR_PATH;
#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_PATH) && !HG_PATH_WAVEFRONT
    if (path) l = path_sample(s, it, st.ray, st.rng, &alpha);
#endif
#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_DIRECT)
    if (!path) l = direct_sample(s, it, st.ray, st.rng, &alpha);
#endif
    film_add(accum, st.pix, s0, i, 1u << log2_n, l, alpha, st.w);
}
