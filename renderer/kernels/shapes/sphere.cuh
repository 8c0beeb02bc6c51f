// `sphere` (renderer/src/shapes/sphere.rs): the hit record and uniform area sampling
// of an analytic sphere (the intersection itself is in geometry.cuh).
#pragma once
#include "../math.cuh"

// Sphere::eval: normal, uv and dp/du at unit direction `dir` from the centre.
__device__ inline void sphere_eval(const FlatShape& sh, V3 dir, V3* n, V2* uv, V3* dpdu, V3* dpdv) {
    V3 p = v3a(sh.center) + dir * sh.radius;
    V3 q = affine_point(sh.to_local, p);
    float l2 = dot(q, q);
    float rcp = 1.0f / sqrtf(l2);
    V3 local = (rcp > 0.0f && rcp <= 3.4028235e38f) ? q * rcp : v3(0.0f, 0.0f, 1.0f);
    float phi = atan2f(local.y, local.x);
    if (phi < 0.0f) phi += 2.0f * HG_PI;
    float theta = acosf(fminf(fmaxf(local.z, -1.0f), 1.0f));
    *uv = v2(phi * HG_INV_TWO_PI, theta * HG_INV_PI);
    *dpdu = affine_vector(sh.to_world, v3(-local.y, local.x, 0.0f)) * (2.0f * HG_PI);
    float rd = sqrtf(local.x * local.x + local.y * local.y);
    V3 dv = rd > 0.0f ? v3(local.z * local.x / rd, local.z * local.y / rd, -rd) : v3(1.0f, 0.0f, 0.0f);
    *dpdv = affine_vector(sh.to_world, dv) * HG_PI;
    *n = (sh.flags & HG_FLAG_FLIP) ? -dir : dir;
}
