// Runs the per-plugin parity kernel (renderer/kernels/parity.cu) on the CPU
// (renderer/tests/gpu_plugins_on_host.rs). Usage: hg_parity_host DIR — reads the flat
// scene arrays DIR/<name>.bin and DIR/queries.bin (16 floats per query), writes
// DIR/answers.bin (16 floats per query; layout in parity.cu) and DIR/plugin_layout.bin
// (hg_plugin_layout_table).
#include "host_shim.h"
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "host_io.h"
#include "kernel_src.cu"

template <class T> static const T* as(const std::vector<char>& v) { return (const T*)v.data(); }
template <class T> static hg_u32 count(const std::vector<char>& v) { return (hg_u32)((v.size() - 16) / sizeof(T)); }

int main(int argc, char** argv) {
    if (argc != 2) { std::fprintf(stderr, "usage: hg_parity_host DIR\n"); return 2; }
    std::string d = std::string(argv[1]) + "/";
    const char* names[] = {"nodes", "leaf", "prims", "shapes", "positions", "normals", "uvs", "tris",
                           "bsdfs", "bsdf_data", "textures", "texels", "emitters", "emitter_data", "env",
                           "dist1d", "dist2d", "dist_data", "bsphere", "attrs", "tex_data", "queries"};
    std::vector<std::vector<char>> a;
    for (const char* n : names) a.push_back(slurp(d + n + ".bin"));
    const float* q = as<float>(a[21]);
    hg_u32 nq = (hg_u32)((a[21].size() - 16) / (16 * sizeof(float)));
    std::vector<float> out((size_t)nq * 16, 0.0f);
    blockDim = {64, 1, 1};
    for (hg_u32 t = 0; t < (nq + 63) / 64 * 64; ++t) {
        blockIdx = {t / 64, 0, 0};
        threadIdx = {t % 64, 0, 0};
        hg_parity(as<FlatBvhNode>(a[0]), count<FlatBvhNode>(a[0]), as<LeafPrim>(a[1]), as<Prim>(a[2]),
                  as<FlatShape>(a[3]), as<float>(a[4]), as<float>(a[5]), as<float>(a[6]), as<hg_u32>(a[7]),
                  as<FlatBsdf>(a[8]), as<hg_u32>(a[9]), as<RecordRef>(a[10]), as<float>(a[11]),
                  as<RecordRef>(a[12]), as<hg_u32>(a[13]), count<RecordRef>(a[12]), as<hg_u32>(a[14]),
                  count<hg_u32>(a[14]), as<FlatDist1D>(a[15]), as<FlatDist2D>(a[16]), as<float>(a[17]),
                  as<float>(a[18]), as<float>(a[19]), as<hg_u32>(a[20]), q, nq,
                  out.data());
    }
    FILE* f = std::fopen((d + "answers.bin").c_str(), "wb");
    if (!f || std::fwrite(out.data(), sizeof(float), out.size(), f) != out.size()) return 2;
    std::fclose(f);
    // the plugins' record layouts as the compiler laid them out
    std::vector<hg_u32> table(4096, 0u);
    blockIdx = {0, 0, 0};
    threadIdx = {0, 0, 0};
    hg_plugin_layout_table(table.data());
    f = std::fopen((d + "plugin_layout.bin").c_str(), "wb");
    if (!f || std::fwrite(table.data(), sizeof(hg_u32), table.size(), f) != table.size()) return 2;
    std::fclose(f);
    return 0;
}
