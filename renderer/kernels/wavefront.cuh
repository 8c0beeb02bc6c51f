// The wavefront `path` integrator: the path loop (integrators/path.cuh) one step per
// launch over a queue of the paths still alive, so that a warp's lanes are never idle
// waiting for the longest path of the warp (the megakernel's Cornell box ran 8.9 of 32
// lanes; backend/cuda/device/render.rs chooses the mode).
//
// Per chunk of samples (slot i = thread i of the chunk, pixel and sample as in hg_render):
//   hg_path_start    film sample, camera ray and the first step; the slot's state goes to
//                    the state arrays and the slot to queue 0 if the path lives on;
//   hg_path_bounce   k = 1, 2, ...: one step of every path in queue k-1, survivors to
//                    queue k; the last launch (`finish`) runs its paths to the end;
//   hg_path_reduce   every slot's result into its pixel, by the in-warp sum of film.cuh.
// A path's result depends only on its own random stream, never on the queue order that
// the atomics decide, and the reduction adds in slot order: the image is deterministic.
//
// State: structure of arrays, HG_PS_WORDS floats per slot, field k of slot i at
// st[k * cap + i] (coalesced when a warp handles consecutive slots, as the start does and
// as queue order keeps roughly true).
#pragma once

#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_PATH) && HG_PATH_WAVEFRONT

#define HG_PS_O 0         // ray origin (3)
#define HG_PS_D 3         // ray direction (3)
#define HG_PS_TMAX 6
#define HG_PS_THROUGHPUT 7
#define HG_PS_RESULT 10   // radiance so far (3)
#define HG_PS_PREV_P 13   // (3)
#define HG_PS_ETA 16
#define HG_PS_PREV_PDF 17
#define HG_PS_DEPTH 18    // u32 bits
#define HG_PS_FLAGS 19    // u32 bits: 1 valid (alpha), 2 previous bounce was a delta lobe
#define HG_PS_RNG 20      // the PCG32 state and increment, 2 words each
#define HG_PS_W 24        // film weight
#define HG_PS_SAMPLER 25  // SampleRng index, count, dim, pixel_seed, mode (u32 bits)
#define HG_PS_WORDS 30    // backend/cuda/device/wavefront.rs PATH_STATE_WORDS

__device__ inline void ps_put(float* st, hg_u32 cap, int k, hg_u32 i, float v) { st[(hg_u64)k * cap + i] = v; }
__device__ inline float ps_get(const float* st, hg_u32 cap, int k, hg_u32 i) { return st[(hg_u64)k * cap + i]; }
__device__ inline void ps_put3(float* st, hg_u32 cap, int k, hg_u32 i, V3 v) {
    ps_put(st, cap, k, i, v.x), ps_put(st, cap, k + 1, i, v.y), ps_put(st, cap, k + 2, i, v.z);
}
__device__ inline V3 ps_get3(const float* st, hg_u32 cap, int k, hg_u32 i) {
    return v3(ps_get(st, cap, k, i), ps_get(st, cap, k + 1, i), ps_get(st, cap, k + 2, i));
}
__device__ inline hg_u32 ps_flags(const PathState& p) { return (p.valid ? 1u : 0u) | (p.prev_delta ? 2u : 0u); }

// Stores slot i's state (all of it while the path lives on; its result and flags once it
// has ended: all the reduction reads).
__device__ inline void ps_store(float* st, hg_u32 cap, hg_u32 i, const PathState& p, bool alive) {
    ps_put3(st, cap, HG_PS_RESULT, i, p.result);
    ps_put(st, cap, HG_PS_FLAGS, i, __uint_as_float(ps_flags(p)));
    if (!alive) return;
    ps_put3(st, cap, HG_PS_O, i, p.ray.o);
    ps_put3(st, cap, HG_PS_D, i, p.ray.d);
    ps_put(st, cap, HG_PS_TMAX, i, p.ray.tmax);
    ps_put3(st, cap, HG_PS_THROUGHPUT, i, p.throughput);
    ps_put3(st, cap, HG_PS_PREV_P, i, p.prev_p);
    ps_put(st, cap, HG_PS_ETA, i, p.eta);
    ps_put(st, cap, HG_PS_PREV_PDF, i, p.prev_pdf);
    ps_put(st, cap, HG_PS_DEPTH, i, __uint_as_float(p.depth));
    ps_put(st, cap, HG_PS_RNG, i, __uint_as_float((hg_u32)p.rng.pcg.state));
    ps_put(st, cap, HG_PS_RNG + 1, i, __uint_as_float((hg_u32)(p.rng.pcg.state >> 32)));
    ps_put(st, cap, HG_PS_RNG + 2, i, __uint_as_float((hg_u32)p.rng.pcg.inc));
    ps_put(st, cap, HG_PS_RNG + 3, i, __uint_as_float((hg_u32)(p.rng.pcg.inc >> 32)));
    ps_put(st, cap, HG_PS_SAMPLER, i, __uint_as_float(p.rng.index));
    ps_put(st, cap, HG_PS_SAMPLER + 1, i, __uint_as_float(p.rng.count));
    ps_put(st, cap, HG_PS_SAMPLER + 2, i, __uint_as_float(p.rng.dim));
    ps_put(st, cap, HG_PS_SAMPLER + 3, i, __uint_as_float(p.rng.pixel_seed));
    ps_put(st, cap, HG_PS_SAMPLER + 4, i, __uint_as_float(p.rng.mode));
}

__device__ inline void ps_load(const float* st, hg_u32 cap, hg_u32 i, PathState* p) {
    p->ray.o = ps_get3(st, cap, HG_PS_O, i);
    p->ray.d = ps_get3(st, cap, HG_PS_D, i);
    p->ray.tmax = ps_get(st, cap, HG_PS_TMAX, i);
    p->throughput = ps_get3(st, cap, HG_PS_THROUGHPUT, i);
    p->result = ps_get3(st, cap, HG_PS_RESULT, i);
    p->prev_p = ps_get3(st, cap, HG_PS_PREV_P, i);
    p->eta = ps_get(st, cap, HG_PS_ETA, i);
    p->prev_pdf = ps_get(st, cap, HG_PS_PREV_PDF, i);
    p->depth = __float_as_uint(ps_get(st, cap, HG_PS_DEPTH, i));
    hg_u32 flags = __float_as_uint(ps_get(st, cap, HG_PS_FLAGS, i));
    p->valid = (flags & 1u) != 0u;
    p->prev_delta = (flags & 2u) != 0u;
    auto word = [&](int k) { return (hg_u64)__float_as_uint(ps_get(st, cap, HG_PS_RNG + k, i)); };
    p->rng.pcg.state = word(0) | (word(1) << 32);
    p->rng.pcg.inc = word(2) | (word(3) << 32);
    auto u32_at = [&](int k) { return __float_as_uint(ps_get(st, cap, HG_PS_SAMPLER + k, i)); };
    p->rng.index = u32_at(0);
    p->rng.count = u32_at(1);
    p->rng.dim = u32_at(2);
    p->rng.pixel_seed = u32_at(3);
    p->rng.mode = u32_at(4);
}

// Appends slot i to the queue when `alive`. Every lane of the warp calls it (one atomic
// per warp; lanes keep their order within the warp's run of entries).
__device__ inline void queue_push(bool alive, hg_u32 i, hg_u32* queue, hg_u32* count) {
#ifdef HG_HOST_SHIM
    if (alive) queue[(*count)++] = i;
#else
    unsigned m = __ballot_sync(0xffffffffu, alive);
    if (m == 0u) return;
    unsigned lane = threadIdx.x & 31u;
    int leader = __ffs(m) - 1;
    hg_u32 base = 0;
    if ((int)lane == leader) base = atomicAdd(count, (hg_u32)__popc(m));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (alive) queue[base + (hg_u32)__popc(m & ((1u << lane) - 1u))] = i;
#endif
}

// The queues are two arrays of `cap` slots in `queues` (queue k is array k % 2) and
// counts[k] the length of queue k (zeroed by the host before the start kernel).

// Slots [0, threads) of the chunk: start and first step, survivors to queue 0; `cap` >=
// threads.
extern "C" __global__ void hg_path_start(const __grid_constant__ FlatCamera cam, const __grid_constant__ FlatFilm film,
                                         const __grid_constant__ FlatIntegrator it, HG_SCENE_PARAMS,
                                         hg_u64 seed, hg_u32 s0, hg_u32 log2_n,
                                         hg_u32 p0, hg_u32 threads, float* __restrict__ st, hg_u32 cap,
                                         hg_u32* __restrict__ queues, hg_u32* __restrict__ counts) {
    hg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    bool alive = false;
    if (i < threads) {  // no early return: the queue push is warp-wide
        SceneData s = HG_SCENE_DATA;
        SampleStart ss = sample_start(cam, film, seed, p0 + (i >> log2_n), s0 + (i & ((1u << log2_n) - 1u)));
        PathState p;
        path_begin(s, it, ss.ray, ss.rng, &p);
        alive = path_step(s, it, &p);
        ps_store(st, cap, i, p, alive);
        ps_put(st, cap, HG_PS_W, i, ss.w);
    }
    queue_push(alive, i, queues, counts);
}

// Launch k >= 1: one step of every path in queue k - 1, survivors to queue k; with
// `finish`, every path runs to its end instead. Grid-stride over warps of the queue, so
// the host needs no queue length: the grid fills the GPU once.
extern "C" __global__ void hg_path_bounce(const __grid_constant__ FlatIntegrator it, HG_SCENE_PARAMS,
                                          float* __restrict__ st, hg_u32 cap, hg_u32* __restrict__ queues,
                                          hg_u32* __restrict__ counts, hg_u32 k, hg_u32 finish) {
    SceneData s = HG_SCENE_DATA;
    const hg_u32* queue_in = queues + (hg_u64)((k - 1u) & 1u) * cap;
    hg_u32* queue_out = queues + (hg_u64)(k & 1u) * cap;
    hg_u32* count_out = counts + k;
    hg_u32 n = counts[k - 1u];
    hg_u32 stride = gridDim.x * blockDim.x;
    hg_u32 lane = threadIdx.x & 31u;
    for (hg_u32 base = (blockIdx.x * blockDim.x + threadIdx.x) - lane; base < n; base += stride) {
        hg_u32 q = base + lane;
        bool alive = false;
        hg_u32 i = 0;
        if (q < n) {
            i = queue_in[q];
            PathState p;
            ps_load(st, cap, i, &p);
            do {  // one call site: the step is inlined once
                alive = path_step(s, it, &p);
            } while (finish && alive);
            ps_store(st, cap, i, p, alive);
        }
        if (!finish) queue_push(alive, i, queue_out, count_out);
    }
}

// Every slot's result into its pixel, summed as hg_render sums the same samples: thread i
// of pixels << (log2_n - log2_k) adds its k = 1 << log2_k slots in order, then its warp
// segment reduces (render.cu film_add), so both modes give the same bits.
extern "C" __global__ void hg_path_reduce(const float* __restrict__ st, hg_u32 cap, hg_u32 s0, hg_u32 log2_n,
                                          hg_u32 log2_k, hg_u32 p0, hg_u32 threads, float* __restrict__ accum) {
    hg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= threads) return;  // whole segments only
    hg_u32 log2_t = log2_n - log2_k;
    hg_u32 px = i >> log2_t;  // the chunk's pixel: its slots are px * n + sample
    hg_u32 first = (px << log2_n) + ((i & ((1u << log2_t) - 1u)) << log2_k);
    float acc[HG_FILM_ACC] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (hg_u32 slot = first; slot < first + (1u << log2_k); ++slot) {
        hg_u32 flags = __float_as_uint(ps_get(st, cap, HG_PS_FLAGS, slot));
        film_accumulate(acc, ps_get3(st, cap, HG_PS_RESULT, slot), (flags & 1u) ? 1.0f : 0.0f,
                        ps_get(st, cap, HG_PS_W, slot));
    }
    film_add(accum, p0 + px, s0, i, 1u << log2_t, acc);
}

#endif
