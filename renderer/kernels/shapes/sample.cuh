// Geometry::sample_position (renderer/src/shapes/{mesh,rectangle,disk,sphere,cylinder}.rs): a point
// uniform by area on a shape, with its normal, uv and area density.
#pragma once
#include "../scene.cuh"

struct PositionSample {
    V3 p, n;
    V2 uv;
    float pdf;
    hg_u32 prim;  // meshes: the triangle (as Hit::prim)
    V2 bary;      // meshes: the barycentrics (as Hit::bary)
};

__device__ inline PositionSample sample_position(const SceneData& s, hg_u32 shape, V2 u) {
    const FlatShape& sh = s.g.shapes[shape];
    PositionSample ps;
    ps.p = v3(0.0f, 0.0f, 0.0f);
    ps.n = v3(0.0f, 0.0f, 1.0f);
    ps.uv = v2(0.0f, 0.0f);
    ps.pdf = 0.0f;
    ps.prim = 0u;
    ps.bary = v2(0.0f, 0.0f);
    hg_u32 kind = HG_SHAPE_KIND(sh);
    if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_MESH) && kind == HG_SHAPE_MESH) {
        if (sh.area_dist == 0xffffffffu || s.dist1d[sh.area_dist].n == 0u || !(sh.area > 0.0f)) return ps;
        float pmf, du;
        hg_u32 i = dist1d_sample(s, sh.area_dist, u.y, &pmf, &du);
        V2 b = square_to_uniform_triangle(v2(u.x, du));
        V3 ng, dpdu, dpdv;
        ps.prim = sh.first_tri + i;
        ps.bary = b;
        mesh_eval(s, sh, ps.prim, b, &ps.p, &ng, &ps.n, &ps.uv, &dpdu, &dpdv);
        ps.pdf = 1.0f / sh.area;
    } else if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_RECTANGLE) && kind == HG_SHAPE_RECTANGLE) {
        ps.p = affine_point(sh.to_world, v3(2.0f * u.x - 1.0f, 2.0f * u.y - 1.0f, 0.0f));
        ps.n = v3a(sh.normal);
        ps.uv = u;
        ps.pdf = 1.0f / sh.area;
    }
    // the record kinds with a twin: `else if` arms generated in registry.cuh
    HG_SHAPE_SAMPLE_POSITION_ARMS(sh, kind, u, ps)
    else if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_DISK) && kind == HG_SHAPE_DISK) {
        V2 xy = square_to_uniform_disk_concentric(u);
        V3 dpdu;
        V3 dpdv;
        disk_eval(sh, xy, &ps.uv, &dpdu, &dpdv);
        ps.p = affine_point(sh.to_world, v3(xy.x, xy.y, 0.0f));
        ps.n = v3a(sh.normal);
        ps.pdf = 1.0f / sh.area;
    }
    return ps;
}
