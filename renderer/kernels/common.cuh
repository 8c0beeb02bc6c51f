// Small vector math and the random streams, written to repeat the CPU's float
// operations in the same order (the modules are compiled with --fmad=false, so no
// multiply-add contraction changes the rounding): CPU and GPU agree bit for bit on
// primary rays.
#pragma once
#include "flat.cuh"

#define HG_INF __int_as_float(0x7f800000)
#define HG_FLT_EPS 1.1920929e-7f
#define HG_RAY_TMIN 1e-6f

struct V3 {
    float x, y, z;
};

__device__ inline V3 v3(float x, float y, float z) { V3 r; r.x = x; r.y = y; r.z = z; return r; }
__device__ inline V3 v3a(const float* a) { return v3(a[0], a[1], a[2]); }
__device__ inline V3 operator+(V3 a, V3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ inline V3 operator-(V3 a, V3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ inline V3 operator*(V3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
__device__ inline V3 operator*(float s, V3 a) { return v3(s * a.x, s * a.y, s * a.z); }
__device__ inline float dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ inline float comp(V3 a, int k) { return k == 0 ? a.x : (k == 1 ? a.y : a.z); }

// glam: x_axis * x + y_axis * y + z_axis * z (+ translation), left to right.
__device__ inline V3 affine_vector(const float* m, V3 v) {
    return (v3a(m) * v.x + v3a(m + 3) * v.y) + v3a(m + 6) * v.z;
}
__device__ inline V3 affine_point(const float* m, V3 p) {
    return affine_vector(m, p) + v3a(m + 9);
}

struct Ray {
    V3 o, d;
    float tmax;
};

// PCG32 (renderer/src/math/rng.rs); each sample's stream is in samplers.cuh.
struct Pcg32 {
    hg_u64 state, inc;
};

__device__ inline hg_u32 pcg_next(Pcg32& r) {
    hg_u64 old = r.state;
    r.state = old * 6364136223846793005ull + r.inc;
    hg_u32 xorshifted = (hg_u32)(((old >> 18) ^ old) >> 27);
    hg_u32 rot = (hg_u32)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

__device__ inline Pcg32 pcg_new(hg_u64 seed, hg_u64 stream) {
    Pcg32 r;
    r.state = 0;
    r.inc = (stream << 1) | 1ull;
    pcg_next(r);
    r.state += seed;
    pcg_next(r);
    return r;
}

__device__ inline float pcg_next_f32(Pcg32& r) {
    return (float)(pcg_next(r) >> 8) * (1.0f / 16777216.0f);
}

__device__ inline hg_u64 mix64(hg_u64 x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}


