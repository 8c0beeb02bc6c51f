// Per-plugin parity kernel: evaluates the BSDF, texture and emitter twins on
// a list of fixed queries, one thread per query. The same code runs on the host
// (tests/gpu/host_parity.cpp, renderer/tests/gpu_plugins_on_host.rs) and on the GPU
// (renderer/tests/gpu_render.rs), both compared with the Rust plugins.
//
// query (16 floats): kind, index, uv.x, uv.y, a.xyz, b.xyz, u1, u2.xy, -, -, -
//   kind 0 (BSDF index; wi = a, wo = b): eval.rgb, pdf, sampled?, wo.xyz, pdf, weight.rgb,
//          eta, delta, is_delta
//   kind 1 (texture index): eval.rgb, eval_1
//   kind 2 (emitter index; p = a, u = (u1, u2.x)): sampled?, d.xyz, dist, pdf, radiance.rgb, delta
//   kind 3 (environment; d = a): radiance.rgb, pdf
//   kind 4 (ray o = a, d = b; u1: a shadow ray's tmax): hit?, t, shape, p.xyz, ng.xyz,
//          n.xyz, uv.xy, occluded? (the same ray up to u1), the hit shape's BSDF
#include "bsdfs.cuh"
#include "emitters.cuh"

extern "C" __global__ void hg_parity(HG_SCENE_PARAMS,
                                     const float* q, hg_u32 nq, float* out) {
    hg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nq) return;
    SceneData s = HG_SCENE_DATA;
    const float* x = q + 16 * i;
    float* o = out + 16 * i;
    for (int c = 0; c < 16; ++c) o[c] = 0.0f;
    int kind = (int)x[0];
    hg_u32 idx = (hg_u32)x[1];
    SurfacePoint uv = surface_point_uv(v2(x[2], x[3]));
    V3 va = v3(x[4], x[5], x[6]), vb = v3(x[7], x[8], x[9]);
    float u1 = x[10];
    V2 u2 = v2(x[11], x[12]);
    if (kind == 0) {
        V3 f = bsdf_eval(s, idx, uv, va, vb);
        o[0] = f.x, o[1] = f.y, o[2] = f.z;
        o[3] = bsdf_pdf(s, idx, uv, va, vb);
        BsdfSample bs;
        bool ok = bsdf_sample(s, idx, uv, va, u1, u2, &bs);
        o[4] = ok ? 1.0f : 0.0f;
        if (ok) {
            o[5] = bs.wo.x, o[6] = bs.wo.y, o[7] = bs.wo.z;
            o[8] = bs.pdf;
            o[9] = bs.weight.x, o[10] = bs.weight.y, o[11] = bs.weight.z;
            o[12] = bs.eta;
            o[13] = bs.delta ? 1.0f : 0.0f;
        }
        o[14] = bsdf_is_delta(s, idx, uv) ? 1.0f : 0.0f;
    } else if (kind == 1) {
        V3 c = tex_eval(s, idx, uv);
        o[0] = c.x, o[1] = c.y, o[2] = c.z;
        o[3] = tex_eval_1(s, idx, uv);
    } else if (kind == 2) {
        EmitterSample es;
        bool ok = emitter_sample_direction(s, idx, va, v2(u1, u2.x), &es);
        o[0] = ok ? 1.0f : 0.0f;
        if (ok) {
            o[1] = es.d.x, o[2] = es.d.y, o[3] = es.d.z;
            o[4] = es.dist;
            o[5] = es.pdf;
            o[6] = es.radiance.x, o[7] = es.radiance.y, o[8] = es.radiance.z;
            o[9] = es.delta ? 1.0f : 0.0f;
        }
    } else if (kind == 3) {
        float pdf;
        V3 l = environment_emission(s, va, &pdf);
        o[0] = l.x, o[1] = l.y, o[2] = l.z;
        o[3] = pdf;
    } else if (kind == 4) {
        Ray ray = make_ray(va, vb);
        Hit h;
        if (scene_intersect(s, ray, &h)) {
            o[0] = 1.0f;
            o[1] = h.t;
            o[2] = (float)h.shape;
            o[3] = h.p.x, o[4] = h.p.y, o[5] = h.p.z;
            o[6] = h.ng.x, o[7] = h.ng.y, o[8] = h.ng.z;
            o[9] = h.n.x, o[10] = h.n.y, o[11] = h.n.z;
            o[12] = h.uv.x, o[13] = h.uv.y;
            o[15] = (float)s.g.shapes[h.shape].bsdf;
        }
        ray.tmax = u1;
        o[14] = scene_occluded(s, ray) ? 1.0f : 0.0f;
    }
}

// Writes the sizes and offsets NVRTC used for the plugins' own records, for the layout
// parity test: the BSDFs', the textures' and the emitters' (HG_BSDF_LAYOUT,
// HG_TEXTURE_LAYOUT, HG_EMITTER_LAYOUT; flat::plugin_layout).
extern "C" __global__ void hg_plugin_layout_table(hg_u32* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    hg_u32 i = 0;
#define HG_WRITE_SIZE(rec, n) out[i++] = (hg_u32)sizeof(rec);
#define HG_WRITE_FIELD(rec, field, off) \
    { rec r_; out[i++] = (hg_u32)((const char*)&r_.field - (const char*)&r_); }
    HG_BSDF_LAYOUT(HG_WRITE_SIZE, HG_WRITE_FIELD)
    HG_TEXTURE_LAYOUT(HG_WRITE_SIZE, HG_WRITE_FIELD)
    HG_EMITTER_LAYOUT(HG_WRITE_SIZE, HG_WRITE_FIELD)
#undef HG_WRITE_SIZE
#undef HG_WRITE_FIELD
}
