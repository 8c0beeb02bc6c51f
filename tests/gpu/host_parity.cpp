// Per-plugin parity on fixed inputs: evaluates the CUDA twins of BSDFs, textures and
// emitters on the CPU for a list of queries (renderer/tests/gpu_plugins_on_host.rs).
// Usage: hg_parity_host DIR — reads the flat scene arrays DIR/<name>.bin and
// DIR/queries.bin (16 floats per query), writes DIR/answers.bin (16 floats per query).
//
// query: kind, index, uv.x, uv.y, a.xyz, b.xyz, u1, u2.xy, -, -, -
//   kind 0 (BSDF index; wi = a, wo = b): eval.rgb, pdf, sampled?, wo.xyz, pdf, weight.rgb,
//          eta, delta, is_delta
//   kind 1 (texture index): eval.rgb, eval_1
//   kind 2 (emitter index; p = a, u = (u1, u2.x)): sampled?, d.xyz, dist, pdf, radiance.rgb, delta
//   kind 3 (environment; d = a): radiance.rgb, pdf


#include "host_shim.h"
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernel_src.cu"

static std::vector<char> slurp(const std::string& path) {
    std::vector<char> v;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) { std::perror(path.c_str()); std::exit(2); }
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
    std::fclose(f);
    v.resize(v.size() + 16, 0);
    return v;
}

template <class T> static const T* as(const std::vector<char>& v) { return (const T*)v.data(); }
template <class T> static hg_u32 count(const std::vector<char>& v) { return (hg_u32)((v.size() - 16) / sizeof(T)); }

int main(int argc, char** argv) {
    if (argc != 2) { std::fprintf(stderr, "usage: hg_parity_host DIR\n"); return 2; }
    std::string d = std::string(argv[1]) + "/";
    const char* names[] = {"nodes", "leaf", "prims", "shapes", "positions", "normals", "uvs", "tris",
                           "bsdfs", "tables", "textures", "texels", "emitters", "env", "dist1d",
                           "dist2d", "dist_data", "bsphere", "queries"};
    std::vector<std::vector<char>> a;
    for (const char* n : names) a.push_back(slurp(d + n + ".bin"));
    SceneData s;
    s.g.nodes = as<BvhNode>(a[0]);
    s.g.node_count = count<BvhNode>(a[0]);
    s.g.leaf = as<LeafPrim>(a[1]);
    s.g.prims = as<Prim>(a[2]);
    s.g.shapes = as<FlatShape>(a[3]);
    s.positions = as<float>(a[4]);
    s.normals = as<float>(a[5]);
    s.uvs = as<float>(a[6]);
    s.tris = as<hg_u32>(a[7]);
    s.bsdfs = as<FlatBsdf>(a[8]);
    s.tables = as<float>(a[9]);
    s.textures = as<FlatTexture>(a[10]);
    s.texels = as<float>(a[11]);
    s.emitters = as<FlatEmitter>(a[12]);
    s.emitter_count = count<FlatEmitter>(a[12]);
    s.env_emitters = as<hg_u32>(a[13]);
    s.env_count = count<hg_u32>(a[13]);
    s.dist1d = as<FlatDist1D>(a[14]);
    s.dist2d = as<FlatDist2D>(a[15]);
    s.dist_data = as<float>(a[16]);
    s.bsphere_center = v3a(as<float>(a[17]));
    s.bsphere_radius = as<float>(a[17])[3];
    const float* q = as<float>(a[18]);
    hg_u32 nq = (hg_u32)((a[18].size() - 16) / (16 * sizeof(float)));
    std::vector<float> out((size_t)nq * 16, 0.0f);
    for (hg_u32 i = 0; i < nq; ++i) {
        const float* x = q + 16 * i;
        float* o = out.data() + 16 * i;
        int kind = (int)x[0];
        hg_u32 idx = (hg_u32)x[1];
        V2 uv = v2(x[2], x[3]);
        V3 va = v3(x[4], x[5], x[6]), vb = v3(x[7], x[8], x[9]);
        float u1 = x[10];
        V2 u2 = v2(x[11], x[12]);
        if (kind == 0) {
            V3 f = bsdf_eval(s, idx, uv, va, vb);
            o[0] = f.x; o[1] = f.y; o[2] = f.z;
            o[3] = bsdf_pdf(s, idx, uv, va, vb);
            BsdfSample bs;
            bool ok = bsdf_sample(s, idx, uv, va, u1, u2, &bs);
            o[4] = ok ? 1.0f : 0.0f;
            if (ok) {
                o[5] = bs.wo.x; o[6] = bs.wo.y; o[7] = bs.wo.z;
                o[8] = bs.pdf;
                o[9] = bs.weight.x; o[10] = bs.weight.y; o[11] = bs.weight.z;
                o[12] = bs.eta;
                o[13] = bs.delta ? 1.0f : 0.0f;
            }
            o[14] = bsdf_is_delta(s, idx, uv) ? 1.0f : 0.0f;
        } else if (kind == 1) {
            V3 c = tex_eval(s, idx, uv);
            o[0] = c.x; o[1] = c.y; o[2] = c.z;
            o[3] = tex_eval_1(s, idx, uv);
        } else if (kind == 2) {
            EmitterSample es;
            bool ok = emitter_sample_direction(s, s.emitters[idx], va, v2(u1, u2.x), &es);
            o[0] = ok ? 1.0f : 0.0f;
            if (ok) {
                o[1] = es.d.x; o[2] = es.d.y; o[3] = es.d.z;
                o[4] = es.dist;
                o[5] = es.pdf;
                o[6] = es.radiance.x; o[7] = es.radiance.y; o[8] = es.radiance.z;
                o[9] = es.delta ? 1.0f : 0.0f;
            }
        } else if (kind == 3) {
            float pdf;
            V3 l = environment_emission(s, va, &pdf);
            o[0] = l.x; o[1] = l.y; o[2] = l.z;
            o[3] = pdf;
        }
    }
    FILE* f = std::fopen((d + "answers.bin").c_str(), "wb");
    if (!f || std::fwrite(out.data(), sizeof(float), out.size(), f) != out.size()) return 2;
    std::fclose(f);
    return 0;
}
