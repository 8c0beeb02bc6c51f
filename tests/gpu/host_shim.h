// Lets the CUDA C kernels of renderer/kernels/ compile as plain C++ and run on the CPU
// (renderer/tests/gpu_kernels_on_host.rs): a check of their syntax, layout and logic
// on a machine without a GPU. Only what the kernels use is provided.
#pragma once
#include <math.h>
#include <cmath>
#include <cstring>

#define __global__
#define __device__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __grid_constant__
#define __restrict__ __restrict
#define __launch_bounds__(...)

// The host runs a kernel's threads one after another; warp reductions (film.cuh
// segment_sum) keep each lane's values here and evaluate the device's fixed tree when a
// segment's last lane arrives.
#define HG_HOST_SHIM 1
static float hg_host_lanes[32][5];

struct hg_dim3 {
    unsigned x, y, z;
};
static hg_dim3 blockIdx, threadIdx, blockDim, gridDim;

// 16-byte vector loads (geometry.cuh: BVH nodes, load_leaf): memcpy keeps the host's
// reads free of type punning.
struct float4 {
    float x, y, z, w;
};
template <class T> static inline T __ldg(const T* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
// IEEE division, rounded to nearest (the host's `/`).
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline unsigned __float_as_uint(float f) {
    unsigned u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

// Correctly rounded reciprocal, and the GPU's fast approximate division (exact here).
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fdividef(float a, float b) { return a / b; }

// The GPU's fast approximate log, exp and sincos (film.cuh film_gaussian, math.cuh's
// warps): libm's here. Macros, because glibc's <math.h> already declares functions of
// these names.
static inline void hg_host_sincosf(float x, float* s, float* c) {
    *s = sinf(x);
    *c = cosf(x);
}
#define __logf(x) logf(x)
#define __expf(x) expf(x)
#define __sincosf(x, s, c) hg_host_sincosf(x, s, c)

static inline float __uint_as_float(unsigned u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// The host runs threads one after another: a float atomic add is a plain add
// (integrators/ptracer.cuh's splats; on the GPU their order is the schedule's).
static inline float atomicAdd(float* p, float v) {
    float old = *p;
    *p = old + v;
    return old;
}

static inline float __int_as_float(int i) {
    float f;
    std::memcpy(&f, &i, sizeof f);
    return f;
}
