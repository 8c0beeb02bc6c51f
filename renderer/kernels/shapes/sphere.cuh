// `sphere` (renderer/src/shapes/sphere.rs): the intersection, hit record and uniform
// area sampling of an analytic sphere. Included by shapes/registry.cuh, after geometry.cuh
// declares ShapeTest.
#pragma once
#include "../math.cuh"

// Sphere::intersect: t, or HG_INF on a miss.
__device__ inline float sphere_intersect(const ShapeTest& s, const Ray& r, float tmax) {
    V3 oc = r.o - v3a(s.center);
    float a = dot(r.d, r.d);
    float b = dot(oc, r.d);
    float rr = s.radius * s.radius;
    float c = dot(oc, oc) - rr;
    V3 l = oc - (b / a) * r.d;
    float disc = a * (rr - dot(l, l));
    if (disc != disc || disc < 0.0f) return HG_INF;  // NaN or negative
    float q = -(b + copysignf(sqrtf(disc), b));
    float t0 = c / q, t1 = q / a;
    float near = t0 <= t1 ? t0 : t1, far = t0 <= t1 ? t1 : t0;
    if (near > HG_RAY_TMIN && near < tmax) return near;
    if (far > HG_RAY_TMIN && far < tmax) return far;
    return HG_INF;
}

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

// Sphere::interaction: the hit at t along ray, projected onto the sphere.
__device__ inline void sphere_hit(const FlatShape& sh, const Ray& ray, float t, V3* p, V3* n, V2* uv, V3* dpdu,
                                  V3* dpdv) {
    V3 dir = normalize_or((ray.o + ray.d * t) - v3a(sh.center), v3(0.0f, 0.0f, 1.0f));
    sphere_eval(sh, dir, n, uv, dpdu, dpdv);
    *p = v3a(sh.center) + dir * sh.radius;
}

// Sphere::sample_position: uniform over the sphere's directions.
__device__ inline void sphere_sample_position(const FlatShape& sh, V2 u, V3* p, V3* n, V2* uv) {
    V3 dir = square_to_uniform_sphere(u);
    V3 dpdu, dpdv;
    sphere_eval(sh, dir, n, uv, &dpdu, &dpdv);
    *p = v3a(sh.center) + dir * sh.radius;
}
