// Runs hg_depth and hg_layout_table on the CPU, one emulated thread at a time.
// Usage: hg_host DIR SEED SPP — reads DIR/{camera,film,nodes,leaf,prims,shapes}.bin,
// writes DIR/out.bin (the film) and DIR/layout.bin (the layout table).
#include "host_shim.h"
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "host_io.h"
#include "kernel_src.cu"

static void spill(const std::string& path, const void* p, size_t n) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(p, 1, n, f) != n) { std::perror(path.c_str()); std::exit(2); }
    std::fclose(f);
}

int main(int argc, char** argv) {
    if (argc != 4) { std::fprintf(stderr, "usage: hg_host DIR SEED SPP\n"); return 2; }
    std::string dir = argv[1];
    hg_u64 seed = std::strtoull(argv[2], nullptr, 10);
    hg_u32 spp = (hg_u32)std::strtoul(argv[3], nullptr, 10);
    auto cam = slurp(dir + "/camera.bin"), film = slurp(dir + "/film.bin");
    auto nodes = slurp(dir + "/nodes.bin"), leaf = slurp(dir + "/leaf.bin");
    auto prims = slurp(dir + "/prims.bin"), shapes = slurp(dir + "/shapes.bin");
    const FlatFilm* fl = (const FlatFilm*)film.data();
    hg_u32 node_count = (hg_u32)((nodes.size() - 16) / sizeof(FlatBvhNode));
    hg_u32 w = fl->crop_size[0], h = fl->crop_size[1], ch = fl->alpha ? 4 : 3;
    std::vector<float> out((size_t)w * h * ch, 0.0f);
    blockDim = {16, 16, 1};
    for (hg_u32 by = 0; by < (h + 15) / 16; ++by)
        for (hg_u32 bx = 0; bx < (w + 15) / 16; ++bx)
            for (hg_u32 ty = 0; ty < 16; ++ty)
                for (hg_u32 tx = 0; tx < 16; ++tx) {
                    blockIdx = {bx, by, 0};
                    threadIdx = {tx, ty, 0};
                    hg_depth((const FlatCamera*)cam.data(), fl, (const FlatBvhNode*)nodes.data(),
                             node_count, (const LeafPrim*)leaf.data(), (const Prim*)prims.data(),
                             (const FlatShape*)shapes.data(), seed, spp, out.data());
                }
    spill(dir + "/out.bin", out.data(), out.size() * sizeof(float));
    std::vector<hg_u32> table(256, 0);
    blockIdx = {0, 0, 0};
    threadIdx = {0, 0, 0};
    hg_layout_table(table.data());
    spill(dir + "/layout.bin", table.data(), table.size() * sizeof(hg_u32));
    return 0;
}
