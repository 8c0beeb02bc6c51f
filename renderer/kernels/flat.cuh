// CUDA twins of the flat scene records (renderer/src/flat/mod.rs, renderer/src/accel/mod.rs,
// renderer/src/shapes/mod.rs). Sizes and offsets are asserted below from HG_LAYOUT, the
// same list as the Rust table `flat::LAYOUT` (a CPU test compares the two lists; the GPU
// test compares the offsets NVRTC used, written by `hg_layout_table`).
#pragma once
#include "features.cuh"

typedef unsigned int hg_u32;
typedef unsigned long long hg_u64;

// Two-box BVH node (flat/bvh.rs): both children's boxes and child words. A child word
// holds a leaf's primitive count in its bits from HG_CHILD_INDEX_BITS up (0: interior)
// and the interior node's index or the leaf's first slot below. Node 0 is a header: its
// `a` half is the root's box and child word, its `b` half is unused.
struct FlatBvhNode {
    float a_min[3];
    hg_u32 a_child;
    float a_max[3];
    hg_u32 a_pad;
    float b_min[3];
    hg_u32 b_child;
    float b_max[3];
    hg_u32 b_pad;
};

#define HG_CHILD_INDEX_BITS 29u
#define HG_CHILD_INDEX_MASK ((1u << HG_CHILD_INDEX_BITS) - 1u)

struct LeafPrim {
    float p0[3];
    hg_u32 prim;
    float p1[3];
    hg_u32 is_tri;
    float p2[3];
    hg_u32 shape;  // the primitive's shape (analytic shapes are tested from its record)
};

// A primitive (or a parallelogram pair of triangles) as an affine map into a unit shape,
// for the brute-force test of small scenes (flat/unit_prims.rs): local coordinate r of p =
// rows[4r..4r+3] . (p, 1).
struct FlatUnitPrim {
    float rows[12];
    hg_u32 prim;
    hg_u32 prim_b;  // a pair's triangle above the diagonal x + y = 1
    hg_u32 kind;
    hg_u32 roles;   // triangles, pairs: the weights that are (b1, b2), 2 bits each (unit_prims.rs)
};

// A brute-force module's unit records travel by value as a kernel parameter (the
// constant bank: one indexed constant load per two floats, no global loads or address
// arithmetic); HG_UNIT_CAP (features.cuh) is the scene's record count rounded up to a
// multiple of 4 (padding records never hit), `count` the scene's own.
struct UnitPrims {
    FlatUnitPrim p[HG_UNIT_CAP];
    hg_u32 count;
};
static_assert(sizeof(UnitPrims) == 64 * HG_UNIT_CAP + 4, "UnitPrims differs from flat::unit_prims::kernel_param");

#define HG_UNIT_NONE 0u
#define HG_UNIT_TRIANGLE 1u
#define HG_UNIT_PAIR 2u
#define HG_UNIT_SQUARE 3u
#define HG_UNIT_DISK 4u
#define HG_UNIT_SPHERE 5u

struct Prim {
    hg_u32 shape;
    hg_u32 index;
};

#define HG_FLAG_FLIP 1u
#define HG_FLAG_NORMALS 2u
#define HG_FLAG_UVS 4u

// Affine maps: column-major 3x4 (x axis, y axis, z axis, translation). An instance
// (HG_SHAPE_INSTANCE): to_world / to_local are its group-to-world map and inverse,
// first_tri is its group's BVH header node in `nodes`, tri_count the group's index.
struct FlatShape {
    hg_u32 kind;
    hg_u32 flags;
    hg_u32 bsdf;
    hg_u32 emitter;
    hg_u32 first_tri;
    hg_u32 tri_count;
    float area;
    float radius;
    float center[3];
    hg_u32 area_dist;  // meshes: index into dist1d; else 0xffffffff
    float normal[3];
    hg_u32 pad1;
    float to_world[12];
    float to_local[12];
};

#define HG_CAMERA_PERSPECTIVE 0u
#define HG_CAMERA_ORTHOGRAPHIC 1u
#define HG_CAMERA_THINLENS 2u

// sensors/camera.rs `Camera`, flattened (flat/mod.rs).
struct FlatCamera {
    float origin[3];
    float tan_half_x;
    float lin[9];  // column-major 3x3
    float aspect;
    float near_clip;
    float far_clip;
    hg_u32 kind;  // HG_CAMERA_*
    float aperture_radius;
    float focus_distance;
    hg_u32 pad;
};

// The sensor's sampler (renderer/src/samplers/mod.rs FlatSampler).
struct FlatSampler {
    hg_u32 kind;          // HG_SAMPLER_*
    hg_u32 sample_count;  // the render's effective samples per pixel
    hg_u32 jitter;        // 1: random offsets within the strata (stratified, multijitter)
    hg_u32 seed;          // the sampler's `seed`, added to the render's
};

#define HG_FILTER_BOX 0u
#define HG_FILTER_TENT 1u
#define HG_FILTER_GAUSSIAN 2u

struct FlatFilm {
    hg_u32 width;
    hg_u32 height;
    hg_u32 crop_offset[2];
    hg_u32 crop_size[2];
    hg_u32 alpha;
    hg_u32 filter;
    float filter_radius;
    float filter_stddev;
    float filter_k;  // film.cuh: 1 / radius (tent), a r^2 = -(r / stddev)^2 / 2 (gaussian), 0 (box)
    hg_u32 pad;
    FlatSampler sampler;  // the sensor's sampler (samplers.cuh); sample_count set per render
};

// FlatIntegrator::kind: HG_INTEGRATOR_* (integrators/registry.cuh, through features.cuh)
struct FlatIntegrator {
    hg_u32 kind;
    hg_u32 max_depth;
    hg_u32 rr_depth;
    hg_u32 hide_emitters;
    hg_u32 emitter_samples;
    hg_u32 bsdf_samples;
    hg_u32 pad[2];
};

// Which plugin of a category an instance is and where its record starts in the category's
// record words (plugin/record.rs RecordRef): BSDFs (bsdfs/registry.cuh), textures
// (textures/registry.cuh) and emitters (emitters/registry.cuh) read their own records
// through these. 8-aligned: one load.
struct alignas(8) RecordRef {
    hg_u32 kind;
    hg_u32 offset;  // first word of the record (records lie in 16-byte slots)
};
typedef RecordRef FlatBsdf;

// The words of a record's slot: its size rounded up to 16 bytes (plugin/record.rs slot_words).
#define HG_SLOT_WORDS(rec) ((hg_u32)((sizeof(rec) + 15u) / 16u * 4u))

// Sampling distributions (renderer/src/flat/materials.rs).
// func[n] then cdf[n + 1] at dist_data + offset
struct FlatDist1D {
    hg_u32 offset;
    hg_u32 n;
    float sum;
    hg_u32 pad;
};

struct FlatDist2D {
    hg_u32 rows;  // first row's FlatDist1D; h of them
    hg_u32 h;
    hg_u32 marginal;
    hg_u32 pad;
};

// S(record, size) and F(record, field, offset), in the order of the Rust `flat::LAYOUT`.
#define HG_LAYOUT(S, F) \
    S(FlatBvhNode, 64) F(FlatBvhNode, a_min, 0) F(FlatBvhNode, a_child, 12) \
    F(FlatBvhNode, a_max, 16) F(FlatBvhNode, a_pad, 28) F(FlatBvhNode, b_min, 32) \
    F(FlatBvhNode, b_child, 44) F(FlatBvhNode, b_max, 48) F(FlatBvhNode, b_pad, 60) \
    S(LeafPrim, 48) F(LeafPrim, p0, 0) F(LeafPrim, prim, 12) F(LeafPrim, p1, 16) \
    F(LeafPrim, is_tri, 28) F(LeafPrim, p2, 32) F(LeafPrim, shape, 44) \
    S(FlatUnitPrim, 64) F(FlatUnitPrim, rows, 0) F(FlatUnitPrim, prim, 48) F(FlatUnitPrim, prim_b, 52) \
    F(FlatUnitPrim, kind, 56) F(FlatUnitPrim, roles, 60) \
    S(Prim, 8) F(Prim, shape, 0) F(Prim, index, 4) \
    S(FlatShape, 160) F(FlatShape, kind, 0) F(FlatShape, flags, 4) F(FlatShape, bsdf, 8) \
    F(FlatShape, emitter, 12) F(FlatShape, first_tri, 16) F(FlatShape, tri_count, 20) \
    F(FlatShape, area, 24) F(FlatShape, radius, 28) F(FlatShape, center, 32) \
    F(FlatShape, area_dist, 44) F(FlatShape, normal, 48) F(FlatShape, pad1, 60) \
    F(FlatShape, to_world, 64) F(FlatShape, to_local, 112) \
    S(FlatCamera, 80) F(FlatCamera, origin, 0) F(FlatCamera, tan_half_x, 12) \
    F(FlatCamera, lin, 16) F(FlatCamera, aspect, 52) F(FlatCamera, near_clip, 56) \
    F(FlatCamera, far_clip, 60) F(FlatCamera, kind, 64) F(FlatCamera, aperture_radius, 68) \
    F(FlatCamera, focus_distance, 72) F(FlatCamera, pad, 76) \
    S(FlatFilm, 64) F(FlatFilm, width, 0) F(FlatFilm, height, 4) F(FlatFilm, crop_offset, 8) \
    F(FlatFilm, crop_size, 16) F(FlatFilm, alpha, 24) F(FlatFilm, filter, 28) \
    F(FlatFilm, filter_radius, 32) F(FlatFilm, filter_stddev, 36) F(FlatFilm, filter_k, 40) \
    F(FlatFilm, pad, 44) F(FlatFilm, sampler, 48) \
    S(FlatSampler, 16) F(FlatSampler, kind, 0) F(FlatSampler, sample_count, 4) \
    F(FlatSampler, jitter, 8) F(FlatSampler, seed, 12) \
    S(FlatIntegrator, 32) F(FlatIntegrator, kind, 0) F(FlatIntegrator, max_depth, 4) \
    F(FlatIntegrator, rr_depth, 8) F(FlatIntegrator, hide_emitters, 12) \
    F(FlatIntegrator, emitter_samples, 16) F(FlatIntegrator, bsdf_samples, 20) \
    F(FlatIntegrator, pad, 24) \
    S(RecordRef, 8) F(RecordRef, kind, 0) F(RecordRef, offset, 4) \
    S(FlatDist1D, 16) F(FlatDist1D, offset, 0) F(FlatDist1D, n, 4) F(FlatDist1D, sum, 8) \
    F(FlatDist1D, pad, 12) \
    S(FlatDist2D, 16) F(FlatDist2D, rows, 0) F(FlatDist2D, h, 4) F(FlatDist2D, marginal, 8) \
    F(FlatDist2D, pad, 12)

#define HG_ASSERT_SIZE(rec, n) static_assert(sizeof(rec) == n, "sizeof(" #rec ") differs from Rust");
#ifdef __CUDACC_RTC__
// NVRTC has neither offsetof nor __builtin_offsetof: sizes are checked at compile
// time here, offsets at run time by hg_layout_table against the Rust table.
#define HG_ASSERT_FIELD(rec, field, off)
#else
#define HG_ASSERT_FIELD(rec, field, off) \
    static_assert(__builtin_offsetof(rec, field) == off, "offset of " #rec "." #field " differs from Rust");
#endif
// (kept defined: the plugin registries' generated files assert their records' layouts too)
HG_LAYOUT(HG_ASSERT_SIZE, HG_ASSERT_FIELD)

// Writes the sizes and offsets NVRTC used, in HG_LAYOUT order, for the GPU parity test.
extern "C" __global__ void hg_layout_table(hg_u32* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    hg_u32 i = 0;
#define HG_WRITE_SIZE(rec, n) out[i++] = (hg_u32)sizeof(rec);
#define HG_WRITE_FIELD(rec, field, off) \
    { rec r_; out[i++] = (hg_u32)((const char*)&r_.field - (const char*)&r_); }
    HG_LAYOUT(HG_WRITE_SIZE, HG_WRITE_FIELD)
#undef HG_WRITE_SIZE
#undef HG_WRITE_FIELD
}
