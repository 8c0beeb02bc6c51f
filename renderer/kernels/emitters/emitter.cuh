// What every emitter twin shares (renderer/src/emitters/mod.rs): the sample and ray
// records, and the frame maps of point-like emitters. The twins' dispatch is generated
// from the emitter registry as emitters/registry.cuh (emitters/registry.rs); a twin
// defines `<name>_sample` and, as its plugin's flags say, `<name>_sample_ray`,
// `<name>_sample_position`, `<name>_pdf_hit`, `<name>_eval_hit` or `<name>_eval_env`.
#pragma once
#include "../textures.cuh"
#include "../shapes/sample.cuh"

// One direction sampled towards an emitter (emitters::EmitterSample).
struct EmitterSample {
    V3 d;
    float dist;
    float pdf;
    V3 radiance;
    bool delta;
    V2 uv;  // an area light's sampled point (its radiance texture's lookup), else 0
};

// A ray leaving an emitter (emitters::EmitterRay).
struct EmitterRay {
    V3 p, n, d, weight;
};

// m v for a column-major 3x3 m (glam Mat3 * Vec3).
__device__ inline V3 mat3_mul(const float* m, V3 v) { return (v3a(m) * v.x + v3a(m + 3) * v.y) + v3a(m + 6) * v.z; }

// glam normalize_or_zero
__device__ inline V3 normalize_or_zero(V3 v) {
    float rcp = 1.0f / sqrtf(dot(v, v));
    return (rcp > 0.0f && rcp <= 3.4028235e38f) ? v * rcp : v3(0.0f, 0.0f, 0.0f);
}

// m⁻¹ v for a column-major 3x3 m (glam Mat3::inverse: the rows of the inverse are the
// cross products of the columns over the determinant), and |det m|.
__device__ inline V3 mat3_inverse_mul(const float* m, V3 v, float* abs_det) {
    V3 x = v3a(m), y = v3a(m + 3), z = v3a(m + 6);
    V3 r0 = cross(y, z), r1 = cross(z, x), r2 = cross(x, y);
    float det = dot(z, r2);
    *abs_det = fabsf(det);
    float inv = 1.0f / det;
    return v3(dot(r0, v) * inv, dot(r1, v) * inv, dot(r2, v) * inv);
}

// emitters::local_direction_to_world
__device__ inline bool local_direction_to_world(const float* to_local, V3 local, float pdf_local, V3* d, float* pdf) {
    float det;
    V3 v = mat3_inverse_mul(to_local, local, &det);
    float len = sqrtf(dot(v, v));
    *pdf = pdf_local * det * len * len * len;
    if (!(len > 0.0f && *pdf > 0.0f && *pdf <= 3.4028235e38f)) return false;
    *d = v / len;
    return true;
}
