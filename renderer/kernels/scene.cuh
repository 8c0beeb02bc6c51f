// The whole flat scene as one struct of device pointers (renderer/src/flat/mod.rs),
// surface interactions (shapes/*.rs `interaction`) and visibility.
#pragma once
#include "geometry.cuh"
#include "math.cuh"

struct SceneData {
    SceneGeom g;
    const float* positions;  // [f32; 3] per vertex
    const float* normals;    // [f32; 3] per vertex (or empty)
    const float* uvs;        // [f32; 2] per vertex (or empty)
    const hg_u32* tris;      // [u32; 3] per triangle
    const FlatBsdf* bsdfs;     // kind and record offset per BSDF
    const hg_u32* bsdf_data;   // the BSDF records (bsdfs/registry.cuh)
    const RecordRef* textures;  // kind and record offset per texture
    const hg_u32* tex_data;     // the texture records (textures/registry.cuh)
    const float* texels;
    const float* attrs;      // mesh attributes: lookup table, then values (textures/mesh_attribute.rs)
    const RecordRef* emitters;     // kind and record offset per emitter
    const hg_u32* emitter_data;    // the emitter records (emitters/registry.cuh)
    hg_u32 emitter_count;
    const hg_u32* env_emitters;
    hg_u32 env_count;
    const FlatDist1D* dist1d;
    const FlatDist2D* dist2d;
    const float* dist_data;
    V3 bsphere_center;
    float bsphere_radius;
#if HG_BACKWARD
    // A probe (backward.cuh): texture probe_tex reads as the constant probe_value, and
    // the BSDF record at probe_bsdf_at as the words at probe_bsdf_rec.
    hg_u32 probe_tex;
    V3 probe_value;
    const hg_u32* probe_bsdf_at;
    const hg_u32* probe_bsdf_rec;
#endif
};

// The scene arrays as kernel parameters, in the order the host pushes them
// (backend/cuda/device/render.rs, `SceneArgs::push`); every scene kernel takes them
// through HG_SCENE_PARAMS and turns them into a SceneData with HG_SCENE_DATA. A
// brute-force module's kernels take the unit records by value after them (HG_UNIT_PARAM).
#define HG_SCENE_ARRAYS                                                                                   \
    const FlatBvhNode *nodes, hg_u32 node_count, const LeafPrim *leaf, const Prim *prims,               \
        const FlatShape *shapes, const float *positions, const float *normals, const float *uvs,         \
        const hg_u32 *tris, const FlatBsdf *bsdfs, const hg_u32 *bsdf_data, const RecordRef *textures,   \
        const float *texels, const RecordRef *emitters, const hg_u32 *emitter_data, hg_u32 emitter_count, \
        const hg_u32 *env_emitters, hg_u32 env_count, const FlatDist1D *dist1d, const FlatDist2D *dist2d, \
        const float *dist_data, const float *bsphere, const float *attrs, const hg_u32 *tex_data
#if HG_BRUTE_FORCE
#define HG_UNIT_PARAM , const __grid_constant__ UnitPrims units
#define HG_UNIT_ARG &units
#else
#define HG_UNIT_PARAM
#define HG_UNIT_ARG nullptr
#endif
#define HG_SCENE_PARAMS HG_SCENE_ARRAYS HG_UNIT_PARAM
#define HG_SCENE_DATA                                                                                    \
    scene_data(nodes, node_count, leaf, prims, shapes, positions, normals, uvs, tris, bsdfs, bsdf_data, \
               textures, texels, emitters, emitter_data, emitter_count, env_emitters, env_count, dist1d,  \
               dist2d, dist_data, bsphere, attrs, tex_data, HG_UNIT_ARG)

__device__ inline SceneData scene_data(HG_SCENE_ARRAYS, const UnitPrims* units) {
    SceneData s;
    s.g.nodes = nodes;
    s.g.node_count = node_count;
    s.g.leaf = leaf;
    s.g.units = units;
    s.g.prims = prims;
    s.g.shapes = shapes;
    s.positions = positions;
    s.normals = normals;
    s.uvs = uvs;
    s.tris = tris;
    s.bsdfs = bsdfs;
    s.bsdf_data = bsdf_data;
    s.textures = textures;
    s.tex_data = tex_data;
    s.texels = texels;
    s.attrs = attrs;
    s.emitters = emitters;
    s.emitter_data = emitter_data;
    s.emitter_count = emitter_count;
    s.env_emitters = env_emitters;
    s.env_count = env_count;
    s.dist1d = dist1d;
    s.dist2d = dist2d;
    s.dist_data = dist_data;
    s.bsphere_center = v3a(bsphere);
    s.bsphere_radius = bsphere[3];
#if HG_BACKWARD
    s.probe_tex = 0xffffffffu;
    s.probe_value = v3(0.0f, 0.0f, 0.0f);
    s.probe_bsdf_at = nullptr;
    s.probe_bsdf_rec = nullptr;
#endif
    return s;
}

// shapes::Hit
struct Hit {
    float t;
    V3 p, ng, n;
    V2 uv;
    V3 dpdu, dpdv;
    hg_u32 shape;
    hg_u32 prim;  // meshes: the triangle
    V2 bary;      // meshes: barycentrics (b1, b2)
};

__device__ inline V3 vtx3(const float* a, hg_u32 i) { return v3(a[3 * i], a[3 * i + 1], a[3 * i + 2]); }

// Mesh::eval: position, normals, uv, dp/du and dp/dv at barycentrics b of triangle `tri`.
__device__ inline void mesh_eval(const SceneData& s, const FlatShape& sh, hg_u32 tri, V2 b, V3* pos,
                                 V3* ng_out, V3* n_out, V2* uv_out, V3* dpdu_out, V3* dpdv_out) {
    const hg_u32* t = s.tris + 3 * tri;
    V3 p0 = vtx3(s.positions, t[0]), p1 = vtx3(s.positions, t[1]), p2 = vtx3(s.positions, t[2]);
    float b0 = 1.0f - b.x - b.y;
    *pos = (p0 * b0 + p1 * b.x) + p2 * b.y;
    V3 e1 = p1 - p0, e2 = p2 - p0;
    V3 ng = normalize_or(cross(e1, e2), v3(0.0f, 0.0f, 1.0f));
    V3 n = ng;
    if (sh.flags & HG_FLAG_NORMALS) {
        V3 nv = (vtx3(s.normals, t[0]) * b0 + vtx3(s.normals, t[1]) * b.x) + vtx3(s.normals, t[2]) * b.y;
        n = normalize_or(nv, ng);
    }
    if (sh.flags & HG_FLAG_UVS) {
        V2 w0 = v2(s.uvs[2 * t[0]], s.uvs[2 * t[0] + 1]);
        V2 w1 = v2(s.uvs[2 * t[1]], s.uvs[2 * t[1] + 1]);
        V2 w2 = v2(s.uvs[2 * t[2]], s.uvs[2 * t[2] + 1]);
        *uv_out = v2((w0.x * b0 + w1.x * b.x) + w2.x * b.y, (w0.y * b0 + w1.y * b.x) + w2.y * b.y);
        V2 d1 = v2(w1.x - w0.x, w1.y - w0.y), d2 = v2(w2.x - w0.x, w2.y - w0.y);
        float det = d1.x * d2.y - d1.y * d2.x;
        if (det != 0.0f) {
            *dpdu_out = (e1 * d2.y - e2 * d1.y) / det;
            *dpdv_out = (e2 * d1.x - e1 * d2.x) / det;
        } else {
            *dpdu_out = v3(0.0f, 0.0f, 0.0f);
            *dpdv_out = frame_from_normal(ng).t;
        }
    } else {
        *uv_out = b;
        Frame f = frame_from_normal(ng);
        *dpdu_out = f.s;
        *dpdv_out = f.t;
    }
    if (sh.flags & HG_FLAG_FLIP) {
        ng = -ng;
        n = -n;
    }
    *ng_out = ng;
    *n_out = n;
}

// Disk::eval: uv = (r, phi / 2pi), dp/du and dp/dv at object-space point xy.
__device__ inline void disk_eval(const FlatShape& sh, V2 xy, V2* uv, V3* dpdu, V3* dpdv) {
    float r = sqrtf(xy.x * xy.x + xy.y * xy.y);
    float v = atan2f(xy.y, xy.x) * HG_INV_TWO_PI;
    if (v < 0.0f) v += 1.0f;
    float c = 1.0f, sn = 0.0f;
    if (r > 0.0f) {
        c = xy.x / r;
        sn = xy.y / r;
    }
    *dpdu = affine_vector(sh.to_world, v3(c, sn, 0.0f));
    *dpdv = affine_vector(sh.to_world, v3(-sn, c, 0.0f)) * (2.0f * HG_PI * r);
    *uv = v2(r, v);
}

// Geometry::surface_interaction.
__device__ inline Hit make_hit(const SceneData& s, hg_u32 prim, const Ray& ray, float t, const float* c) {
    Prim pr = s.g.prims[prim];
    const FlatShape& sh = s.g.shapes[pr.shape];
    Hit h;
    h.t = t;
    h.shape = pr.shape;
    h.prim = 0u;
    h.bary = v2(0.0f, 0.0f);
    hg_u32 kind = HG_SHAPE_KIND(sh);
    if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_MESH) && kind == HG_SHAPE_MESH) {
        h.prim = pr.index;
        h.bary = v2(c[0], c[1]);
        mesh_eval(s, sh, pr.index, h.bary, &h.p, &h.ng, &h.n, &h.uv, &h.dpdu, &h.dpdv);
        return h;
    }
    // the record kinds with a twin: arms generated in shapes/registry.cuh
    HG_SHAPE_HIT_ARMS(sh, kind, ray, t, h)
    h.p = ray.o + ray.d * t;
    h.ng = v3a(sh.normal);
    h.n = h.ng;
    if (!HG_HAS(HG_SHAPE_SET, HG_SHAPE_DISK) || kind == HG_SHAPE_RECTANGLE) {
        h.uv = v2(c[0] * 0.5f + 0.5f, c[1] * 0.5f + 0.5f);
        h.dpdu = v3a(sh.to_world) * 2.0f;
        h.dpdv = v3a(sh.to_world + 3) * 2.0f;
    } else {
        disk_eval(sh, v2(c[0], c[1]), &h.uv, &h.dpdu, &h.dpdv);
    }
    return h;
}

#if HG_INSTANCES
// shapes/instance.rs Instance::interaction: the hit on group primitive `prim` at t,
// found in the space of instance `inst` (a shape record, HG_SHAPE_INSTANCE), carried back
// to world space: the position and dp/du by to_world, the normals by its inverse
// transpose (the transpose of to_local's linear part), renormalised. The shape (its
// material) is the group's member, as on the CPU.
__device__ inline Hit make_instance_hit(const SceneData& s, hg_u32 inst, hg_u32 prim, const Ray& ray, float t,
                                        const float* c) {
    const FlatShape& is = s.g.shapes[inst];
    Ray local;
    local.o = affine_point(is.to_local, ray.o);
    local.d = affine_vector(is.to_local, ray.d);
    local.tmax = ray.tmax;
    Hit h = make_hit(s, prim, local, t, c);
    const float* m = is.to_local;
    V3 ng = v3(dot(v3a(m), h.ng), dot(v3a(m + 3), h.ng), dot(v3a(m + 6), h.ng));
    V3 n = v3(dot(v3a(m), h.n), dot(v3a(m + 3), h.n), dot(v3a(m + 6), h.n));
    h.p = affine_point(is.to_world, h.p);
    h.ng = normalize_or(ng, h.ng);
    h.n = normalize_or(n, h.n);
    h.dpdu = affine_vector(is.to_world, h.dpdu);
    h.dpdv = affine_vector(is.to_world, h.dpdv);
    h.t = t;
    return h;
}
#endif

// Benchmark variant only (backend/cuda/device/render.rs `count_rays` compiles the render
// module with HG_COUNT_RAYS): every traced ray, closest-hit or shadow, adds one to
// hg_ray_count (one atomic per warp and call site: the lanes of the call add their count).
#ifdef HG_COUNT_RAYS
__device__ unsigned long long hg_ray_count;
__device__ inline void count_ray() {
    unsigned m = __activemask();
    if ((threadIdx.x & 31u) == (unsigned)(__ffs(m) - 1)) atomicAdd(&hg_ray_count, (unsigned long long)__popc(m));
}
#else
__device__ inline void count_ray() {}
#endif

// Scene::intersect; false on a miss.
__device__ HG_OUTLINE bool scene_intersect(const SceneData& s, const Ray& ray, Hit* h) {
    count_ray();
    hg_u32 prim = 0;
    float c[2] = {0.0f, 0.0f};
#if HG_INSTANCES
    hg_u32 inst = HG_NO_INSTANCE;
    float t = intersect_scene(s.g, ray, &prim, c, false, &inst);
    if (t == HG_INF) return false;
    *h = inst == HG_NO_INSTANCE ? make_hit(s, prim, ray, t, c) : make_instance_hit(s, inst, prim, ray, t, c);
    return true;
#else
    float t = intersect_scene(s.g, ray, &prim, c);
    if (t == HG_INF) return false;
    *h = make_hit(s, prim, ray, t, c);
    return true;
#endif
}

// Scene::occluded
__device__ HG_OUTLINE bool scene_occluded(const SceneData& s, const Ray& ray) {
    count_ray();
    hg_u32 prim = 0;
    return intersect_scene(s.g, ray, &prim, nullptr, true) != HG_INF;
}

// integrators::shading_frame / spawn_ray
__device__ inline Frame shading_frame(const Hit& h) { return frame_from_normal_tangent(h.n, h.dpdu); }

// textures::SurfacePoint: where a texture or BSDF is evaluated (dpdu, dpdv and ng in the
// shading frame).
struct SurfacePoint {
    V2 uv;
    hg_u32 shape;  // 0xffffffff off any surface
    hg_u32 prim;
    V2 bary;
    V3 dpdu, dpdv, ng;
};

// SurfacePoint::at_uv
__device__ inline SurfacePoint surface_point_uv(V2 uv) {
    SurfacePoint sp;
    sp.uv = uv;
    sp.shape = 0xffffffffu;
    sp.prim = 0u;
    sp.bary = v2(0.0f, 0.0f);
    sp.dpdu = v3(1.0f, 0.0f, 0.0f);
    sp.dpdv = v3(0.0f, 1.0f, 0.0f);
    sp.ng = v3(0.0f, 0.0f, 1.0f);
    return sp;
}

// SurfacePoint::at_hit
__device__ inline SurfacePoint surface_point(const Hit& h, const Frame& f) {
    SurfacePoint sp;
    sp.uv = h.uv;
    sp.shape = h.shape;
    sp.prim = h.prim;
    sp.bary = h.bary;
    sp.dpdu = to_local(f, h.dpdu);
    sp.dpdv = to_local(f, h.dpdv);
    sp.ng = to_local(f, h.ng);
    return sp;
}
__device__ inline Ray spawn_ray(const Hit& h, V3 d) { return make_ray(offset_origin(h.p, h.ng, d), d); }

// Distribution1D::sample: (bin, pmf, rescaled u)
__device__ inline hg_u32 dist1d_sample(const SceneData& s, hg_u32 di, float u, float* pmf, float* du) {
    const FlatDist1D d = s.dist1d[di];
    const float* func = s.dist_data + d.offset;
    const float* cdf = func + d.n;
    hg_u32 lo = 0, hi = d.n;
    while (lo < hi) {
        hg_u32 mid = (lo + hi) / 2;
        if (cdf[mid + 1] <= u) lo = mid + 1;
        else hi = mid;
    }
    hg_u32 i = lo < d.n - 1 ? lo : d.n - 1;
    if (!(func[i] > 0.0f)) {
        for (hg_u32 k = d.n; k-- > 0;) {
            if (func[k] > 0.0f && cdf[k] <= u) {
                i = k;
                break;
            }
        }
    }
    float c0 = cdf[i], c1 = cdf[i + 1];
    *du = c1 > c0 ? fminf(fmaxf((u - c0) / (c1 - c0), 0.0f), 1.0f - HG_FLT_EPS / 2.0f) : 0.5f;
    *pmf = func[i] / d.sum;
    return i;
}
