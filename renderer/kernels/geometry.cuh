// Ray intersection with the flat scene: watertight triangles, analytic spheres,
// rectangles, disks and cylinders (the twins in shapes/), and the BVH walk. Mirrors renderer/src/shapes/*.rs and
// renderer/src/accel/mod.rs operation by operation (same near-child-first order,
// same conservative box test), so CPU and GPU find the same closest hits. The GPU walks
// two-box nodes (FlatBvhNode, flat/bvh.rs) derived from the CPU's tree; instances of
// shapegroups in two levels (shapes/instance.rs, flat/instances.rs; HG_INSTANCES).
#pragma once
#include "common.cuh"

#define HG_SHAPE_KIND(sh) HG_KIND(HG_SHAPE_SET, (sh).kind)
#define HG_ANALYTIC_SHAPES (HG_SHAPE_SET & ~(1u << HG_SHAPE_MESH))

struct SceneGeom {
    const FlatBvhNode* nodes;  // node 0: the header (root box and child word)
    hg_u32 node_count;
    const LeafPrim* leaf;
    const UnitPrims* units;    // brute-force modules only (HG_BRUTE_FORCE): the kernel parameter
    const Prim* prims;
    const FlatShape* shapes;
};

// Woop et al. 2013 watertight test, as math/triangle.rs (TriRay + intersect_tri_watertight).
struct TriRay {
    V3 o;
    int kx, ky, kz;
    float sx, sy, sz;
};

__device__ inline TriRay tri_ray(const Ray& r) {
    float ax = fabsf(r.d.x), ay = fabsf(r.d.y), az = fabsf(r.d.z);
    int kz = ax > ay ? (ax > az ? 0 : 2) : (ay > az ? 1 : 2);
    TriRay t;
    t.o = r.o;
    t.kz = kz;
    t.kx = (kz + 1) % 3;
    t.ky = (t.kx + 1) % 3;
    float dx = comp(r.d, t.kx), dy = comp(r.d, t.ky), dz = comp(r.d, kz);
    t.sx = -dx / dz;
    t.sy = -dy / dz;
    t.sz = 1.0f / dz;
    return t;
}

__device__ inline V3 tri_local(const TriRay& t, const float* p) {
    V3 q = v3a(p) - t.o;
    float x = comp(q, t.kx), y = comp(q, t.ky), z = comp(q, t.kz);
    return v3(x + t.sx * z, y + t.sy * z, z);
}

__device__ inline float edge64(V3 u, V3 v) {
    return (float)((double)u.x * (double)v.y - (double)u.y * (double)v.x);
}

// Returns t (or HG_INF on a miss) and the barycentrics (b1, b2) in uv.
__device__ inline float intersect_tri(const LeafPrim& lp, const TriRay& r, float tmax, float* uv) {
    V3 a = tri_local(r, lp.p0), b = tri_local(r, lp.p1), c = tri_local(r, lp.p2);
    float e0 = b.x * c.y - b.y * c.x;
    float e1 = c.x * a.y - c.y * a.x;
    float e2 = a.x * b.y - a.y * b.x;
    if (e0 == 0.0f || e1 == 0.0f || e2 == 0.0f) {
        e0 = edge64(b, c);
        e1 = edge64(c, a);
        e2 = edge64(a, b);
    }
    bool neg = e0 < 0.0f || e1 < 0.0f || e2 < 0.0f;
    bool pos = e0 > 0.0f || e1 > 0.0f || e2 > 0.0f;
    float det = e0 + e1 + e2;
    if ((neg && pos) || det == 0.0f || det != det) return HG_INF;
    float inv_det = 1.0f / det;
    float t = (e0 * a.z + e1 * b.z + e2 * c.z) * r.sz * inv_det;
    if (!(t > HG_RAY_TMIN && t < tmax)) return HG_INF;
    uv[0] = e1 * inv_det;
    uv[1] = e2 * inv_det;
    return t;
}

// What the tests of analytic shapes read of a FlatShape, with 16-byte read-only loads
// (the record is 160 bytes, 16-byte aligned: to_local at 112, radius at 28, centre at 32).
struct ShapeTest {
    hg_u32 kind;
    float radius;
    float center[3];
    float to_local[12];
};

// The shape tags, the twins of the record kinds that have one (their tests read a
// ShapeTest) and the dispatch arms over them (HG_SHAPE_*_ARMS).
#include "shapes/registry.cuh"

__device__ inline ShapeTest load_shape_test(const FlatShape* sh) {
    const float4* q = reinterpret_cast<const float4*>(sh);
    ShapeTest t;
    if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_SPHERE)) {
        float4 a = __ldg(q + 1), b = __ldg(q + 2);  // bytes 16..47: .., area, radius, centre
        t.radius = a.w;
        t.center[0] = b.x;
        t.center[1] = b.y;
        t.center[2] = b.z;
    }
    float4 m0 = __ldg(q + 7), m1 = __ldg(q + 8), m2 = __ldg(q + 9);
    t.to_local[0] = m0.x, t.to_local[1] = m0.y, t.to_local[2] = m0.z, t.to_local[3] = m0.w;
    t.to_local[4] = m1.x, t.to_local[5] = m1.y, t.to_local[6] = m1.z, t.to_local[7] = m1.w;
    t.to_local[8] = m2.x, t.to_local[9] = m2.y, t.to_local[10] = m2.z, t.to_local[11] = m2.w;
    t.kind = HG_KIND(HG_ANALYTIC_SHAPES, __float_as_uint(__ldg(q).x));
    return t;
}

// shapes/rectangle.rs and disk.rs: Planar::cross_plane, then the square / unit-disk test.
// Returns t and the object-space point (x, y) in xy.
__device__ inline float intersect_planar(const ShapeTest& s, const Ray& r, float tmax, float* xy) {
    V3 o = affine_point(s.to_local, r.o);
    V3 d = affine_vector(s.to_local, r.d);
    float t = -o.z / d.z;
    float x = o.x + t * d.x, y = o.y + t * d.y;
    bool rect = !HG_HAS(HG_SHAPE_SET, HG_SHAPE_DISK) ||
                (HG_HAS(HG_SHAPE_SET, HG_SHAPE_RECTANGLE) && s.kind == HG_SHAPE_RECTANGLE);
    bool inside = rect ? (fabsf(x) <= 1.0f && fabsf(y) <= 1.0f) : (x * x + y * y <= 1.0f);
    if (!(t > HG_RAY_TMIN && t < tmax && inside)) return HG_INF;
    xy[0] = x;
    xy[1] = y;
    return t;
}

// BVH nodes and leaf primitives are the traversal's hot, read-only data: read them with
// 16-byte non-coherent loads (ld.global.nc.v4: 4 per node, 3 per leaf primitive) instead
// of one generic load per field (the scene's pointers reach the traversal through a
// struct, so the compiler cannot prove they are global and read-only). The records are
// 16-byte multiples in separately allocated arrays, so every element is 16-byte aligned.
__device__ inline LeafPrim load_leaf(const LeafPrim* p) {
    const float4* q = reinterpret_cast<const float4*>(p);
    float4 a = __ldg(q), b = __ldg(q + 1), c = __ldg(q + 2);
    LeafPrim l;
    l.p0[0] = a.x;
    l.p0[1] = a.y;
    l.p0[2] = a.z;
    l.prim = __float_as_uint(a.w);
    l.p1[0] = b.x;
    l.p1[1] = b.y;
    l.p1[2] = b.z;
    l.is_tri = __float_as_uint(b.w);
    l.p2[0] = c.x;
    l.p2[1] = c.y;
    l.p2[2] = c.z;
    l.shape = __float_as_uint(c.w);
    return l;
}


// Whether the module places shape groups (HG_SHAPE_INSTANCE in the shape set): a
// preprocessor constant, so a module without instances compiles none of their code.
#define HG_INSTANCES HG_HAS(HG_SHAPE_SET, HG_SHAPE_INSTANCE)
// Not an instance: the hit's instance when the hit is on a shape of the scene's own.
#define HG_NO_INSTANCE 0xffffffffu

#if HG_INSTANCES
template <bool TOP>
__device__ inline float bvh_walk(const SceneGeom& g, hg_u32 header, const Ray& ray, hg_u32* hit_prim,
                                 float* coords, bool any_hit, hg_u32* hit_inst);

// shapes/instance.rs Instance::intersect: the ray carried into group space by the
// instance's to_local (origin and direction, not renormalised, so t stays the world
// distance) and traced through the group's BVH, whose header node the instance's record
// names. Returns t (or HG_INF), the group primitive (an index into the scene's `prims`,
// where the groups' primitives follow the scene's own) and its coordinates.
__device__ inline float intersect_instance(const SceneGeom& g, hg_u32 shape, const ShapeTest& s, const Ray& r,
                                           float tmax, hg_u32* prim, float* uv, bool any_hit) {
    Ray local;
    local.o = affine_point(s.to_local, r.o);
    local.d = affine_vector(s.to_local, r.d);
    local.tmax = tmax;
    hg_u32 header = __ldg(&g.shapes[shape].first_tri);
    return bvh_walk<false>(g, header, local, prim, uv, any_hit, nullptr);
}
#endif

// Tests leaf slot `slot`. At the top level (TOP) of a module with instances, an
// instance's slot traces its group (the group's BVH holds no instances: no nesting);
// *inst is then the instance's shape.
template <bool TOP>
__device__ inline float intersect_slot(const SceneGeom& g, hg_u32 slot, const Ray& r, const TriRay& tr, float tmax,
                                       hg_u32* prim, float* uv, bool any_hit, hg_u32* inst) {
    const LeafPrim lp = load_leaf(g.leaf + slot);
    *prim = lp.prim;
    if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_MESH) && (HG_ANALYTIC_SHAPES == 0u || lp.is_tri))
        return intersect_tri(lp, tr, tmax, uv);
    if (HG_ANALYTIC_SHAPES == 0u) return HG_INF;
    const ShapeTest s = load_shape_test(g.shapes + lp.shape);
#if HG_INSTANCES
    // (the bottom level's code holds no call back into the walk: no recursion)
    if constexpr (TOP) {
        if (s.kind == HG_SHAPE_INSTANCE) {
            *inst = lp.shape;
            return intersect_instance(g, lp.shape, s, r, tmax, prim, uv, any_hit);
        }
    }
#endif
    // the record kinds with a twin: arms generated in shapes/registry.cuh
    HG_SHAPE_INTERSECT_ARMS(s, r, tmax)
#if HG_INSTANCES
    if (!HG_HAS(HG_SHAPE_SET, HG_SHAPE_RECTANGLE) && !HG_HAS(HG_SHAPE_SET, HG_SHAPE_DISK)) return HG_INF;
#endif
    return intersect_planar(s, r, tmax, uv);
}

// Brute force (HG_BRUTE_FORCE, flat/unit_prims.rs): unit record u, a map into a unit
// shape. The local z of the ray's origin and direction give t, the local x and y at t
// decide, with branch-free bounds for triangles, pairs and squares (a disk adds its
// circle, a sphere keeps its own test). Every lane of a warp tests the same record, so
// the kind branches (compiled only for the kinds the module's shapes have) are uniform;
// the records are a kernel parameter (constant bank). Returns t in (HG_RAY_TMIN, tmax),
// or HG_INF, and the local x, y (sphere: 0).
__device__ inline float hg_affine_row(const float* r, V3 p) { return fmaf(r[0], p.x, fmaf(r[1], p.y, fmaf(r[2], p.z, r[3]))); }
__device__ inline float hg_linear_row(const float* r, V3 v) { return fmaf(r[0], v.x, fmaf(r[1], v.y, r[2] * v.z)); }

// The GPU's approximate reciprocal (one MUFU.RCP, no range fix-up: the test rejects the
// +-inf or NaN t of a ray parallel to the plane, or of a record whose rows are zero).
__device__ inline float hg_rcp_approx(float x) {
#ifdef HG_HOST_SHIM
    return 1.0f / x;
#else
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#endif
}

__device__ inline float intersect_unit(const FlatUnitPrim& u, const Ray& r, float tmax, float* x, float* y) {
    if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_SPHERE) && u.kind == HG_UNIT_SPHERE) {
        ShapeTest st;
        st.radius = u.rows[3];
        st.center[0] = u.rows[0], st.center[1] = u.rows[1], st.center[2] = u.rows[2];
        *x = *y = 0.0f;
        return sphere_intersect(st, r, tmax);
    }
    float t = -hg_affine_row(u.rows + 8, r.o) * hg_rcp_approx(hg_linear_row(u.rows + 8, r.d));
    *x = fmaf(t, hg_linear_row(u.rows, r.d), hg_affine_row(u.rows, r.o));
    *y = fmaf(t, hg_linear_row(u.rows + 4, r.d), hg_affine_row(u.rows + 4, r.o));
    float lo = u.kind >= HG_UNIT_SQUARE ? -1.0f : 0.0f, w = u.kind == HG_UNIT_TRIANGLE ? 1.0f : 0.0f;
    float a = fminf(*x, *y), b = fmaxf(*x, *y);
    bool inside = a >= lo && fmaf(w, a, b) <= 1.0f;
    if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_DISK) && u.kind == HG_UNIT_DISK) inside = inside && *x * *x + *y * *y <= 1.0f;
    return t > HG_RAY_TMIN && t < tmax && inside ? t : HG_INF;
}

// The primitive and hit coordinates of a hit at unit x, y on record u: a triangle's or a
// pair's half's barycentrics in its mesh's vertex order (unit_prims.rs FlatUnitPrim::
// triangle_hit), else x, y themselves.
__device__ inline hg_u32 unit_hit(const FlatUnitPrim& u, float x, float y, float* coords) {
    coords[0] = x;
    coords[1] = y;
    if (!HG_HAS(HG_SHAPE_SET, HG_SHAPE_MESH) || (u.kind != HG_UNIT_TRIANGLE && u.kind != HG_UNIT_PAIR)) return u.prim;
    bool upper = u.kind == HG_UNIT_PAIR && x + y > 1.0f;
    float w[3] = {1.0f - x - y, x, y};
    if (upper) w[0] = x + y - 1.0f, w[1] = 1.0f - y, w[2] = 1.0f - x;
    hg_u32 r = upper ? u.roles >> 4 : u.roles;
    hg_u32 r1 = r & 3u, r2 = (r >> 2) & 3u;
    coords[0] = r1 == 0u ? w[0] : (r1 == 1u ? w[1] : w[2]);
    coords[1] = r2 == 0u ? w[0] : (r2 == 1u ? w[1] : w[2]);
    return upper ? u.prim_b : u.prim;
}

// accel/mod.rs RayBox
struct RayBox {
    V3 o, inv;
};

__device__ inline float safe_dir(float d) { return fabsf(d) < 1e-30f ? copysignf(1e-30f, d) : d; }

__device__ inline RayBox ray_box(const Ray& r) {
    RayBox b;
    b.o = r.o;
    // __frcp_rn is the correctly rounded 1 / x (the CPU's bits) without the division's slow path
    b.inv = v3(__frcp_rn(safe_dir(r.d.x)), __frcp_rn(safe_dir(r.d.y)), __frcp_rn(safe_dir(r.d.z)));
    return b;
}

#define HG_ROBUST (1.0f + 2.0f * (3.0f * HG_FLT_EPS * 0.5f) / (1.0f - 3.0f * HG_FLT_EPS * 0.5f))

// Entry distance into the box (lo.xyz, hi.xyz), or HG_INF when the ray misses it
// before tmax (the .w lanes carry the child word and padding and are ignored).
__device__ inline float box_enter(const RayBox& rb, float4 lo, float4 hi, float tmax) {
    V3 t0 = (v3(lo.x, lo.y, lo.z) - rb.o), t1 = (v3(hi.x, hi.y, hi.z) - rb.o);
    t0 = v3(t0.x * rb.inv.x, t0.y * rb.inv.y, t0.z * rb.inv.z);
    t1 = v3(t1.x * rb.inv.x, t1.y * rb.inv.y, t1.z * rb.inv.z);
    float near = fmaxf(fmaxf(fmaxf(fminf(t0.x, t1.x), fminf(t0.y, t1.y)), fminf(t0.z, t1.z)), 0.0f);
    float far = fminf(fminf(fmaxf(t0.x, t1.x), fmaxf(t0.y, t1.y)), fmaxf(t0.z, t1.z)) * HG_ROBUST;
    far = fminf(far, tmax);
    return near <= far ? near : HG_INF;
}

// The traversal stack has HG_STACK entries (features.cuh): accel::STACK_SIZE, whose
// depth the host refuses trees to exceed (flat::flatten_bvh), or at least the depth of a
// specialised module's own BVH. The stack holds at most one entry per level above the
// current node, so it cannot overflow; a shallow scene's small stack keeps the local
// memory it touches small.

// A postponed child: its child word and the distance at which the ray enters its box.
// Node and distance side by side: one 8-byte local store per push, one load per pop.
struct alignas(8) BvhEntry {
    hg_u32 child;
    float t;
};

// Pops the next child that may still hold something nearer than tmax into `child`;
// false when the stack runs out.
__device__ inline bool bvh_pop(const BvhEntry* stack, int& sp, float tmax, hg_u32& child) {
    while (sp > 0) {
        --sp;
        BvhEntry e = stack[sp];
        if (e.t <= tmax) {
            child = e.child;
            return true;
        }
    }
    return false;
}

// Tests leaf slots [first, end) against the ray, keeping the nearest hit in best/tmax
// (and its primitive, coordinates and, at the top level of a module with instances, the
// instance it lies in or HG_NO_INSTANCE); true when `any_hit` found one (stop).
template <bool TOP>
__device__ inline bool test_slots(const SceneGeom& g, hg_u32 first, hg_u32 end, const Ray& ray, const TriRay& tr,
                                  float& tmax, float& best, hg_u32* hit_prim, float* coords, bool any_hit,
                                  hg_u32* hit_inst) {
    for (hg_u32 slot = first; slot < end; ++slot) {
        hg_u32 prim;
        float uv[2] = {0.0f, 0.0f};
        hg_u32 inst = HG_NO_INSTANCE;
        float t = intersect_slot<TOP>(g, slot, ray, tr, tmax, &prim, uv, any_hit, &inst);
        if (t != HG_INF) {
            best = t;
            tmax = t;
            *hit_prim = prim;
            if (coords) {
                coords[0] = uv[0];
                coords[1] = uv[1];
            }
#if HG_INSTANCES
            if (TOP && hit_inst) *hit_inst = inst;
#endif
            if (any_hit) return true;
        }
    }
    return false;
}

// The BVH walk from header node `header` (node 0: the scene's tree; an instance's group:
// its own header, flat/instances.rs) up to ray.tmax; see intersect_scene. TOP: the
// scene's tree, whose instances' groups are walked in their turn (bottom level, own stack).
template <bool TOP>
__device__ inline float bvh_walk(const SceneGeom& g, hg_u32 header_node, const Ray& ray, hg_u32* hit_prim,
                                 float* coords, bool any_hit, hg_u32* hit_inst) {
    float best = HG_INF;
    float tmax = ray.tmax;
    const float4* header = reinterpret_cast<const float4*>(g.nodes + header_node);
    TriRay tr = tri_ray(ray);
    RayBox rb = ray_box(ray);
    BvhEntry stack[HG_STACK];
    int sp = 0;
    const float4 root_lo = __ldg(header), root_hi = __ldg(header + 1);
    if (box_enter(rb, root_lo, root_hi, tmax) == HG_INF) return best;
    hg_u32 child = __float_as_uint(root_lo.w);
    for (;;) {
        while ((child >> HG_CHILD_INDEX_BITS) == 0u) {
            const float4* q = reinterpret_cast<const float4*>(g.nodes + child);
            const float4 a_lo = __ldg(q), a_hi = __ldg(q + 1);
            const float4 b_lo = __ldg(q + 2), b_hi = __ldg(q + 3);
            float ta = box_enter(rb, a_lo, a_hi, tmax);
            float tb = box_enter(rb, b_lo, b_hi, tmax);
            bool a_near = ta <= tb;
            hg_u32 ca = __float_as_uint(a_lo.w), cb = __float_as_uint(b_lo.w);
            float tn = a_near ? ta : tb, tf = a_near ? tb : ta;
            if (tn == HG_INF) {
                if (!bvh_pop(stack, sp, tmax, child)) return best;
                continue;
            }
            if (tf != HG_INF && sp < HG_STACK) {  // sp < HG_STACK: see HG_STACK
                stack[sp].child = a_near ? cb : ca;
                stack[sp].t = tf;
                ++sp;
            }
            child = a_near ? ca : cb;
        }
        hg_u32 first = child & HG_CHILD_INDEX_MASK, end = first + (child >> HG_CHILD_INDEX_BITS);
        if (test_slots<TOP>(g, first, end, ray, tr, tmax, best, hit_prim, coords, any_hit, hit_inst)) return best;
        if (!bvh_pop(stack, sp, tmax, child)) return best;
    }
}

// Closest hit: returns t (HG_INF on a miss), the primitive and, when `coords` is given,
// the primitive's coordinates (triangles: barycentrics; rectangles, disks: local x, y).
// `any_hit` stops at the first hit (shadow rays).
//
// While-while traversal (Aila & Laine 2009): the inner loop descends interior nodes,
// one 64-byte node fetch each, testing both children's boxes from the parent, pushing
// the far child and descending the near one (the left one on a tie, as the CPU does);
// a leaf's primitives are then tested straight from its child word. Leaves are visited
// in the CPU's order, so ties between equally near primitives resolve the same way.
//
// HG_BRUTE_FORCE (a specialised module of a small scene, backend/cuda/features.rs):
// the scene's unit records in order instead (UnitPrims::count of them) with the
// unit-shape test (intersect_unit), so all lanes of a warp test the same record together,
// then the winner's triangle and barycentrics (unit_hit). A tie between two equally near
// primitives can then resolve differently from the CPU's walk, and the triangle test is
// not watertight across records (flat/unit_prims.rs); scenes with instances never
// take it (their unit record list is empty).
//
// Instances (HG_INSTANCES): two-level traversal. The scene's tree holds one primitive
// per instance (its world box); reaching it, the ray is carried into the group's space
// and the group's own tree is walked (intersect_instance, with its own stack) up to the
// current nearest hit, as the CPU does (shapes/instance.rs). *hit_inst, when given, is
// then the instance's shape (make_hit carries the hit back to world space), else
// HG_NO_INSTANCE.
__device__ inline float intersect_scene(const SceneGeom& g, const Ray& ray, hg_u32* hit_prim,
                                        float* coords = nullptr, bool any_hit = false,
                                        hg_u32* hit_inst = nullptr) {
    float best = HG_INF;
    if (g.node_count == 0) return best;
#if HG_BRUTE_FORCE
    float tmax = ray.tmax;
    // not unrolled: unrolled, ptxas computed many records' tests at once and spilled them
    hg_u32 best_slot = 0;
    float bx = 0.0f, by = 0.0f;
#pragma unroll 1
    for (hg_u32 slot = 0; slot < g.units->count; ++slot) {
        float x, y;
        float t = intersect_unit(g.units->p[slot], ray, tmax, &x, &y);
        if (t != HG_INF) {
            best = t;
            tmax = t;
            best_slot = slot;
            bx = x;
            by = y;
            if (any_hit) break;
        }
    }
    if (best != HG_INF) {
        float c[2];
        *hit_prim = unit_hit(g.units->p[best_slot], bx, by, c);
        if (coords) {
            coords[0] = c[0];
            coords[1] = c[1];
        }
    }
    return best;
#else
    return bvh_walk<true>(g, 0u, ray, hit_prim, coords, any_hit, hit_inst);
#endif
}
