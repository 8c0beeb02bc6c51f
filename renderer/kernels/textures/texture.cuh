// What every texture twin needs (renderer/src/textures/mod.rs): the scene with its texels
// and attributes, the uv map and the scalar view of a colour. A twin (textures/<name>.cuh)
// defines its record, with the Rust record's name and fields, and the functions of the
// generated dispatch (textures/registry.cuh, from textures/registry.rs):
//   V3     <name>_eval(const SceneData&, const Record&, const SurfacePoint&)
//   float  <name>_eval_1(const SceneData&, const Record&, const SurfacePoint&)
//   V2     <name>_eval_1_grad(...)   (a plugin with GRADIENT)
// or, for a plugin that PICKS another texture per point (checkerboard):
//   hg_u32 <name>_pick(...), <name>_pick_1(...)   (the handle eval / eval_1 evaluate instead)
#pragma once
#include "../scene.cuh"

// textures::UvTransform: u' = m[0] u + m[1] v + m[2], v' = m[3] u + m[4] v + m[5].
struct UvTransform {
    float m[6];
};

// UvTransform::apply
__device__ inline V2 uv_apply(const UvTransform& t, V2 uv) {
    const float* m = t.m;
    return v2((m[0] * uv.x + m[1] * uv.y) + m[2], (m[3] * uv.x + m[4] * uv.y) + m[5]);
}

// math::luminance
__device__ inline float luminance(V3 c) { return (c.x * 0.212671f + c.y * 0.715160f) + c.z * 0.072169f; }

// textures::scalar: a colour used as a scalar, its value when grey, else its luminance.
__device__ inline float tex_scalar(V3 c) { return (c.x == c.y && c.y == c.z) ? c.x : luminance(c); }
