// The `direct` and `path` megakernels (one thread = one sample path at a time, end to
// end), the wavefront kernels of `path` (wavefront.cuh) and, in a backward module, the
// backward pass of differentiable rendering (backward.cuh). A wave renders
// samples [s0, s0 + n) of crop pixels [p0, p0 + pixels), n = 1 << log2_n a power of two
// <= 32. Each pixel's n samples are shared by t = n / k consecutive threads, k = 1 <<
// log2_k samples each (a power of two <= n, the launch's `samples per lane`): thread i
// takes pixel p0 + i / t and samples s0 + (i % t) k + j, j = 0 .. k - 1, one after
// another, starting the next as soon as the last ended (so a lane whose path ended early
// does not idle until the longest path of its warp ends; `path` paths differ in length).
// Each sample draws from the CPU's stream for that (pixel, sample) (samplers/mod.rs
// SampleRng; the film position first, as backend/cpu/mod.rs draws its jitter first), is
// placed by closed-form filter importance sampling (film.cuh), and its weighted value is
// added to the thread's sum in j order; the pixel's t sums are then reduced inside their
// warp segment into the accumulator (film.cuh), which hg_develop divides by the weight at
// the end. Camera, film
// and integrator records come by value (the kernel parameter space: constant-bank
// operands, no loads); a specialised module (features.cuh) compiles only its scene's
// plugins and integrator.
#include "integrators/direct.cuh"
#include "integrators/path.cuh"
#include "integrators/ptracer.cuh"
#include "film.cuh"
#include "camera.cuh"

// The start of one sample: its random stream (after the film's numbers), film weight and
// camera ray; the sample has index `sidx` in crop pixel `pix`.
struct SampleStart {
    SampleRng rng;
    float w;
    Ray ray;
};

__device__ inline SampleStart sample_start(const FlatCamera& cam, const FlatFilm& film, hg_u64 seed, hg_u32 pix,
                                           hg_u32 sidx) {
    SampleStart st;
    hg_u32 cw = film.crop_size[0];
    hg_u32 y = pix / cw, x = pix - y * cw;
    hg_u32 fx = x + film.crop_offset[0], fy = y + film.crop_offset[1];
    hg_u64 pixel = (hg_u64)fy * (hg_u64)film.width + (hg_u64)fx;
    st.rng = sample_rng(film.sampler, seed, pixel, sidx);
    float ox, oy;
    st.w = film_sample(film, x, y, st.rng, &ox, &oy);
    V2 a = aperture_sample(cam, st.rng);
    st.ray = camera_ray(cam, film, (float)fx + ox, (float)fy + oy, a.x, a.y);
    return st;
}

// Adds one finished sample (radiance l, alpha, film weight w) to a thread's sums
// (r, g, b, alpha, weight), as backend/cpu/mod.rs: a NaN/inf sample is dropped.
__device__ inline void film_accumulate(float* acc, V3 l, float alpha, float w) {
    if (!finite3(l)) l = v3(0.0f, 0.0f, 0.0f);
    acc[0] += w * l.x;
    acc[1] += w * l.y;
    acc[2] += w * l.z;
    acc[3] += w * alpha;
    acc[4] += w;
}

// Adds the sums of the t lanes (a power of two <= 32) of thread i's aligned warp segment
// to pixel pix (film.cuh segment_sum); the first wave stores.
__device__ inline void film_add(float* accum, hg_u32 pix, hg_u32 s0, hg_u32 i, hg_u32 t, float* acc) {
    if (!segment_sum(acc, i & 31u, t)) return;
    float* a = accum + (hg_u64)pix * HG_FILM_ACC;
    if (s0 == 0u) {
        for (int c = 0; c < HG_FILM_ACC; ++c) a[c] = acc[c];  // the first wave writes every pixel
    } else {
        for (int c = 0; c < HG_FILM_ACC; ++c) a[c] = a[c] + acc[c];
    }
}

#include "wavefront.cuh"

// The `direct` integrator as one step of the loop below: the whole sample.
__device__ inline bool direct_step(const SceneData& s, const FlatIntegrator& it, PathState* p) {
#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_DIRECT)
    float alpha;
    p->result = direct_sample(s, it, p->ray, p->rng, &alpha);
    p->valid = alpha > 0.0f;
#endif
    return false;
}

// Launched in blocks of a multiple of 32 threads (backend/cuda/device/render.rs
// RenderTuning), so warp segments stay aligned to pixels; `threads` = pixels << (log2_n -
// log2_k) < 2^32, log2_k <= log2_n.
extern "C" __global__ void hg_render(const __grid_constant__ FlatCamera cam, const __grid_constant__ FlatFilm film,
                                     const __grid_constant__ FlatIntegrator it, HG_SCENE_PARAMS,
                                     hg_u64 seed, hg_u32 s0, hg_u32 log2_n, hg_u32 log2_k, hg_u32 p0,
                                     hg_u32 threads, float* __restrict__ accum) {
    hg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= threads) return;  // whole segments only: threads is a multiple of t
    SceneData s = HG_SCENE_DATA;
    hg_u32 log2_t = log2_n - log2_k;
    hg_u32 pix = p0 + (i >> log2_t);
    hg_u32 first = s0 + ((i & ((1u << log2_t) - 1u)) << log2_k), end = first + (1u << log2_k);
    // a wavefront `path` module: the host launches hg_path_* instead
    bool path = HG_KIND(HG_INTEGRATOR_SET, it.kind) == HG_INTEGRATOR_PATH && !HG_PATH_WAVEFRONT;
    float acc[HG_FILM_ACC] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    PathState p;
    float w = 0.0f;
    bool alive = false;
    for (hg_u32 next = first;;) {
        if (!alive) {  // start the next sample
            if (next == end) break;
            SampleStart st = sample_start(cam, film, seed, pix, next++);
            w = st.w;
            path_begin(s, it, st.ray, st.rng, &p);
        }
#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_PATH) && !HG_PATH_WAVEFRONT
        alive = path ? path_step(s, it, &p) : direct_step(s, it, &p);
#else
        alive = direct_step(s, it, &p);
#endif
        if (!alive) film_accumulate(acc, p.result, p.valid ? 1.0f : 0.0f, w);
    }
    film_add(accum, pix, s0, i, 1u << log2_t, acc);
}

#include "backward.cuh"
