// `cylinder` (renderer/src/shapes/cylinder.rs): the intersection, hit record and uniform
// area sampling of an open tube, the unit cylinder (radius 1, z in [0, 1]) placed by the
// record's to_world. Same operations in the same order as the CPU (the quadratic in
// double precision). Included by shapes/registry.cuh, after geometry.cuh declares ShapeTest.
#pragma once
#include "../math.cuh"

// cylinder::solve_quadratic: false without real roots, else the roots in order.
__device__ inline bool cylinder_solve_quadratic(double a, double b, double c, double* near, double* far) {
    if (a == 0.0) {
        if (b == 0.0) return false;
        *near = *far = -c / b;
        return true;
    }
    double disc = b * b - 4.0 * a * c;
    if (!(disc >= 0.0)) return false;
    double q = -0.5 * (b + copysign(sqrt(disc), b));
    double x0 = q / a, x1 = c / q;
    *near = x0 <= x1 ? x0 : x1;
    *far = x0 <= x1 ? x1 : x0;
    return true;
}

// Cylinder::intersect with the record's world-to-unit map: t, or HG_INF on a miss.
__device__ inline float cylinder_intersect(const ShapeTest& s, const Ray& r, float tmax) {
    V3 o = affine_point(s.to_local, r.o);
    V3 d = affine_vector(s.to_local, r.d);
    double ox = o.x, oy = o.y, oz = o.z, dx = d.x, dy = d.y, dz = d.z;
    double a = dx * dx + dy * dy;
    double b = 2.0 * (dx * ox + dy * oy);
    double c = ox * ox + oy * oy - 1.0;
    double ts[2];
    if (!cylinder_solve_quadratic(a, b, c, &ts[0], &ts[1])) return HG_INF;
    for (int i = 0; i < 2; ++i) {
        double z = oz + dz * ts[i];
        float tf = (float)ts[i];
        if (tf > HG_RAY_TMIN && tf < tmax && z >= 0.0 && z <= 1.0) return tf;
    }
    return HG_INF;
}

// Cylinder::eval: point, normal, uv and dp/du at unit-cylinder point `local`.
__device__ inline void cylinder_eval(const FlatShape& sh, V3 local, V3* p, V3* n, V2* uv, V3* dpdu) {
    *p = affine_point(sh.to_world, local);
    *dpdu = affine_vector(sh.to_world, v3(-local.y, local.x, 0.0f)) * (2.0f * HG_PI);
    V3 dpdv = affine_vector(sh.to_world, v3(0.0f, 0.0f, 1.0f));
    V3 nn = normalize_or(cross(*dpdu, dpdv), v3(0.0f, 0.0f, 1.0f));
    *n = (sh.flags & HG_FLAG_FLIP) ? -nn : nn;
    float phi = atan2f(local.y, local.x);
    if (phi < 0.0f) phi += 2.0f * HG_PI;
    *uv = v2(phi * HG_INV_TWO_PI, local.z);
}

// Cylinder::interaction: the hit at t along ray, re-projected onto the tube.
__device__ inline void cylinder_hit(const FlatShape& sh, const Ray& ray, float t, V3* p, V3* n, V2* uv, V3* dpdu,
                                    V3* dpdv) {
    V3 q = affine_point(sh.to_local, ray.o + ray.d * t);
    float r = sqrtf(q.x * q.x + q.y * q.y);
    V3 local = r > 0.0f ? v3(q.x / r, q.y / r, q.z) : v3(1.0f, 0.0f, q.z);
    cylinder_eval(sh, local, p, n, uv, dpdu);
    *dpdv = affine_vector(sh.to_world, v3(0.0f, 0.0f, 1.0f));
}

// Cylinder::sample_position: uniform in (angle, height); u.x is the height.
__device__ inline void cylinder_sample_position(const FlatShape& sh, V2 u, V3* p, V3* n, V2* uv) {
    float s = sinf(2.0f * HG_PI * u.y), c = cosf(2.0f * HG_PI * u.y);
    V3 dpdu;
    cylinder_eval(sh, v3(c, s, u.x), p, n, uv, &dpdu);
}
