// `mesh_attribute` (renderer/src/textures/mesh_attribute.rs): a value stored per vertex
// or face of the mesh that was hit, read from the scene's attribute table (`attrs`: two
// words per slot and shape, then the values).
#pragma once
#include "texture.cuh"

struct MeshAttributeRecord {
    hg_u32 slot;    // the attribute's row of the table
    hg_u32 shapes;  // shapes per row
    float scale;
};

#define HG_ATTR_PER_CORNER 0x100u

// AttributeTable::lookup: the first three values (interpolated for a vertex attribute)
// and how many the attribute has (0 when the shape lacks it).
__device__ inline hg_u32 mesh_attribute_lookup(const SceneData& s, const MeshAttributeRecord& t, const SurfacePoint& sp,
                                               V3* out) {
    *out = v3(0.0f, 0.0f, 0.0f);
    if (sp.shape >= t.shapes) return 0u;
    hg_u64 e = 2ull * ((hg_u64)t.slot * t.shapes + sp.shape);
    hg_u32 first = __float_as_uint(s.attrs[e]), flags = __float_as_uint(s.attrs[e + 1]);
    hg_u32 dim = flags & 0xffu;
    if (first == 0xffffffffu || dim == 0u) return 0u;
    bool corner = (flags & HG_ATTR_PER_CORNER) != 0u;
    hg_u32 at = first + sp.prim * (corner ? 3u * dim : dim);
    hg_u32 k1 = dim > 1u ? 1u : 0u, k2 = dim > 2u ? 2u : k1;
    V3 v0 = v3(s.attrs[at], s.attrs[at + k1], s.attrs[at + k2]);
    if (corner) {
        const float* a = s.attrs + at + dim;
        const float* b = a + dim;
        V3 v1 = v3(a[0], a[k1], a[k2]), v2 = v3(b[0], b[k1], b[k2]);
        v0 = (v0 * (1.0f - sp.bary.x - sp.bary.y) + v1 * sp.bary.x) + v2 * sp.bary.y;
    }
    *out = v0;
    return dim;
}

// AttributeTable::eval
__device__ inline V3 mesh_attribute_eval(const SceneData& s, const MeshAttributeRecord& t, const SurfacePoint& sp) {
    V3 v;
    hg_u32 dim = mesh_attribute_lookup(s, t, sp, &v);
    float k = t.scale;
    if (dim == 1u) return v3(v.x * k, v.x * k, v.x * k);
    if (dim == 3u) return v * k;
    return v3(0.0f, 0.0f, 0.0f);
}

// AttributeTable::eval_1
__device__ inline float mesh_attribute_eval_1(const SceneData& s, const MeshAttributeRecord& t, const SurfacePoint& sp) {
    V3 v;
    return mesh_attribute_lookup(s, t, sp, &v) == 1u ? v.x * t.scale : 0.0f;
}
