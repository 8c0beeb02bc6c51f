// More vector math for the integrators (renderer/src/math/{mod,warp}.rs): frames,
// ray offsets, warps. Shared by every plugin twin.
#pragma once
#include "common.cuh"

#define HG_PI 3.14159265358979323846f
#define HG_INV_PI 0.31830988618379067154f
#define HG_INV_TWO_PI (0.5f * HG_INV_PI)
#define HG_INV_FOUR_PI (0.25f * HG_INV_PI)
#define HG_RAY_EPSILON 1e-4f
// math::ONE_MINUS_EPSILON: the largest float below 1
#define HG_ONE_MINUS_EPSILON 0x1.fffffep-1f

__device__ inline V3 operator-(V3 a) { return v3(-a.x, -a.y, -a.z); }
__device__ inline V3 mul(V3 a, V3 b) { return v3(a.x * b.x, a.y * b.y, a.z * b.z); }
// One reciprocal and three products instead of three divisions: correctly rounded where
// division is (the depth module), the GPU's approximate reciprocal in the render modules
// (--prec-div=false, backend/cuda/mod.rs compile_options).
__device__ inline V3 operator/(V3 a, float s) { return a * (1.0f / s); }
__device__ inline V3& operator+=(V3& a, V3 b) { a = a + b; return a; }
__device__ inline V3 cross(V3 a, V3 b) {
    return v3(a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y);
}
__device__ inline float length_sq(V3 a) { return dot(a, a); }
__device__ inline float max_comp(V3 a) { return fmaxf(fmaxf(a.x, a.y), a.z); }
__device__ inline bool is_zero(V3 a) { return a.x == 0.0f && a.y == 0.0f && a.z == 0.0f; }
__device__ inline bool finite3(V3 a) {
    return fabsf(a.x) <= 3.4028235e38f && fabsf(a.y) <= 3.4028235e38f && fabsf(a.z) <= 3.4028235e38f;
}
__device__ inline float safe_sqrt(float x) { return sqrtf(fmaxf(x, 0.0f)); }

// shapes::normalize_or
__device__ inline V3 normalize_or(V3 v, V3 fallback) {
    float l2 = dot(v, v);
    return (l2 > 0.0f && l2 <= 3.4028235e38f) ? v / sqrtf(l2) : fallback;
}

struct V2 {
    float x, y;
};
__device__ inline V2 v2(float x, float y) { V2 r; r.x = x; r.y = y; return r; }

// math::Frame
struct Frame {
    V3 s, t, n;
};

__device__ inline Frame frame_from_normal(V3 n) {
    float sign = copysignf(1.0f, n.z);
    float a = -1.0f / (sign + n.z);
    float b = n.x * n.y * a;
    Frame f;
    f.s = v3(1.0f + sign * n.x * n.x * a, sign * b, -sign * n.x);
    f.t = v3(b, sign + n.y * n.y * a, -n.y);
    f.n = n;
    return f;
}

__device__ inline Frame frame_from_normal_tangent(V3 n, V3 dpdu) {
    V3 s = dpdu - n * dot(n, dpdu);
    float len2 = dot(s, s);
    if (len2 < 1e-12f || !(len2 <= 3.4028235e38f)) return frame_from_normal(n);
    s = s / sqrtf(len2);
    Frame f;
    f.s = s;
    f.t = cross(n, s);
    f.n = n;
    return f;
}

__device__ inline V3 to_local(const Frame& f, V3 v) { return v3(dot(v, f.s), dot(v, f.t), dot(v, f.n)); }
__device__ inline V3 to_world(const Frame& f, V3 v) { return (f.s * v.x + f.t * v.y) + f.n * v.z; }

// math::offset_origin
__device__ inline V3 offset_origin(V3 p, V3 ng, V3 d) {
    float scale = HG_RAY_EPSILON * (1.0f + max_comp(v3(fabsf(p.x), fabsf(p.y), fabsf(p.z))));
    return dot(ng, d) >= 0.0f ? p + ng * scale : p - ng * scale;
}

__device__ inline Ray make_ray(V3 o, V3 d) {
    Ray r;
    r.o = o;
    r.d = d;
    r.tmax = HG_INF;
    return r;
}

// math::warp
__device__ inline V2 square_to_uniform_disk_concentric(V2 u) {
    float x = 2.0f * u.x - 1.0f, y = 2.0f * u.y - 1.0f;
    if (x == 0.0f && y == 0.0f) return v2(0.0f, 0.0f);
    float r, phi;
    if (fabsf(x) > fabsf(y)) {
        r = x;
        phi = (HG_PI / 4.0f) * (y / x);
    } else {
        r = y;
        phi = HG_PI / 2.0f - (HG_PI / 4.0f) * (x / y);
    }
    float sn, cs;
    __sincosf(phi, &sn, &cs);  // |phi| <= 3 pi / 4: the fast hardware sine is accurate to ~1e-6
    return v2(r * cs, r * sn);
}

__device__ inline V3 square_to_cosine_hemisphere(V2 u) {
    V2 p = square_to_uniform_disk_concentric(u);
    float z = safe_sqrt(1.0f - (p.x * p.x + p.y * p.y));
    return v3(p.x, p.y, z);
}

__device__ inline float cosine_hemisphere_pdf(V3 v) { return v.z > 0.0f ? v.z * HG_INV_PI : 0.0f; }

__device__ inline V3 square_to_uniform_sphere(V2 u) {
    float z = 1.0f - 2.0f * u.y;
    float r = safe_sqrt(1.0f - z * z);
    float phi = 2.0f * HG_PI * u.x;
    float sn, cs;
    __sincosf(phi, &sn, &cs);  // 0 <= phi < 2 pi: the fast hardware sine is accurate to ~1e-6
    return v3(r * cs, r * sn, z);
}

__device__ inline V2 square_to_uniform_triangle(V2 u) {
    float t = safe_sqrt(1.0f - u.x);
    return v2(1.0f - t, t * u.y);
}

// integrators::mis_weight (power heuristic)
__device__ inline float mis_weight(float a, float b) {
    float a2 = a * a, b2 = b * b;
    float w = a2 / (a2 + b2);
    if (fabsf(w) <= 3.4028235e38f) return w;
    return a > 0.0f ? 1.0f : 0.0f;
}

