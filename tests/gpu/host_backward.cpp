// Runs the backward pass (renderer/kernels/backward.cuh: hg_film_weights, then hg_backward
// wave by wave as host_render.cpp runs hg_render) on the CPU, for
// renderer/tests/gpu_backward_on_host.rs.
// Usage: hg_backward_host DIR SEED SPP N_WAVE PER_LANE GRADS ENVMAP_PARAMS — reads the
// flat scene arrays DIR/<array>.bin, DIR/params.bin (FlatDiffParam records), DIR/masks.bin
// (the BSDFs' parameter masks, then their linear masks), DIR/records.bin (plain floats'
// rebuilt BSDF records) and DIR/adjoint.bin (crop pixels x channels floats), writes DIR/grads.bin (GRADS floats).
#include "host_shim.h"
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "host_io.h"
#include "kernel_src.cu"

template <class T> static const T* as(const std::vector<char>& v) { return (const T*)v.data(); }
template <class T> static hg_u32 count(const std::vector<char>& v) { return (hg_u32)((v.size() - 16) / sizeof(T)); }

#define SCENE_ARGS                                                                                       \
    as<FlatBvhNode>(nodes), count<FlatBvhNode>(nodes), as<LeafPrim>(leaf), as<Prim>(prims),              \
        as<FlatShape>(shapes), as<float>(positions), as<float>(normals), as<float>(uvs), as<hg_u32>(tris), \
        as<FlatBsdf>(bsdfs), as<hg_u32>(bsdf_data), as<RecordRef>(textures), as<float>(texels),         \
        as<RecordRef>(emitters), as<hg_u32>(emitter_data), count<RecordRef>(emitters), as<hg_u32>(env),   \
        count<hg_u32>(env),                                                                              \
        as<FlatDist1D>(dist1d), as<FlatDist2D>(dist2d), as<float>(dist_data), as<float>(bsphere), as<float>(attrs), \
        as<hg_u32>(tex_data)

template <class F> static void launch(hg_u64 n, F kernel) {
    blockDim = {64, 1, 1};
    gridDim = {(unsigned)((n + 63) / 64), 1, 1};
    for (hg_u64 t = 0; t < (n + 63) / 64 * 64; ++t) {
        blockIdx = {(unsigned)(t / 64), 0, 0};
        threadIdx = {(unsigned)(t % 64), 0, 0};
        kernel();
    }
}

int main(int argc, char** argv) {
#if HG_BRUTE_FORCE
    std::fprintf(stderr, "host_backward runs BVH modules only\n");
    return 2;
#else
    if (argc != 8) {
        std::fprintf(stderr, "usage: hg_backward_host DIR SEED SPP N_WAVE PER_LANE GRADS ENVMAP_PARAMS\n");
        return 2;
    }
    std::string d = std::string(argv[1]) + "/";
    hg_u64 seed = std::strtoull(argv[2], nullptr, 10);
    hg_u32 spp = (hg_u32)std::strtoul(argv[3], nullptr, 10);
    hg_u32 per_wave = (hg_u32)std::strtoul(argv[4], nullptr, 10);
    hg_u32 per_lane = (hg_u32)std::strtoul(argv[5], nullptr, 10);
    size_t ngrads = (size_t)std::strtoull(argv[6], nullptr, 10);
    hg_u32 envmap_params = (hg_u32)std::strtoul(argv[7], nullptr, 10);
    auto cam = slurp(d + "camera.bin"), film = slurp(d + "film.bin"), integ = slurp(d + "integrator.bin");
    auto nodes = slurp(d + "nodes.bin"), leaf = slurp(d + "leaf.bin");
    auto prims = slurp(d + "prims.bin"), shapes = slurp(d + "shapes.bin");
    auto positions = slurp(d + "positions.bin"), normals = slurp(d + "normals.bin");
    auto uvs = slurp(d + "uvs.bin"), tris = slurp(d + "tris.bin");
    auto bsdfs = slurp(d + "bsdfs.bin"), bsdf_data = slurp(d + "bsdf_data.bin");
    auto textures = slurp(d + "textures.bin"), texels = slurp(d + "texels.bin");
    auto emitters = slurp(d + "emitters.bin"), emitter_data = slurp(d + "emitter_data.bin");
    auto env = slurp(d + "env.bin");
    auto dist1d = slurp(d + "dist1d.bin"), dist2d = slurp(d + "dist2d.bin");
    auto dist_data = slurp(d + "dist_data.bin");
    auto bsphere = slurp(d + "bsphere.bin"), attrs = slurp(d + "attrs.bin");
    auto tex_data = slurp(d + "tex_data.bin");
    auto params = slurp(d + "params.bin"), adjoint = slurp(d + "adjoint.bin"), masks = slurp(d + "masks.bin");
    auto records = slurp(d + "records.bin");
    FlatFilm film_spp = *as<FlatFilm>(film);
    film_spp.sampler.sample_count = spp;
    const FlatFilm* fl = &film_spp;
    const FlatCamera& camera = *as<FlatCamera>(cam);
    const FlatIntegrator& it = *as<FlatIntegrator>(integ);
    hg_u32 w = fl->crop_size[0], h = fl->crop_size[1], ch = fl->alpha ? 4 : 3;
    hg_u32 pixels = w * h;
    std::vector<float> weights(pixels, 0.0f), grads(ngrads, 0.0f);
    // params.bin's `grad` fields are offsets into the one gradient array here, `plus` and
    // `minus` into records.bin
    std::vector<FlatDiffParam> ps(count<FlatDiffParam>(params));
    std::memcpy(ps.data(), params.data(), ps.size() * sizeof(FlatDiffParam));
    for (FlatDiffParam& p : ps) {
        p.grad = grads.data() + (size_t)p.grad;
        p.plus = as<hg_u32>(records) + (size_t)p.plus;
        p.minus = as<hg_u32>(records) + (size_t)p.minus;
    }
    launch(pixels, [&] { hg_film_weights(*fl, seed, pixels, weights.data()); });
    for (hg_u32 s0 = 0; s0 < spp;) {
        hg_u32 cap = spp - s0 < per_wave ? spp - s0 : per_wave;
        hg_u32 n = 1;
        while (n * 2 <= cap && n * 2 <= 32) n *= 2;
        hg_u32 log2_n = 0, log2_k = 0;
        while ((1u << log2_n) < n) ++log2_n;
        while ((2u << log2_k) <= per_lane && log2_k < log2_n) ++log2_k;
        hg_u32 lanes = (pixels * n) >> log2_k;
        launch(lanes, [&] {
            hg_backward(camera, *fl, it, SCENE_ARGS, seed, s0, log2_n, log2_k, 0u, lanes, as<float>(adjoint), ch,
                        weights.data(), ps.data(), (hg_u32)ps.size(), as<hg_u32>(masks), count<hg_u32>(masks) / 2,
                        envmap_params);
        });
        s0 += n;
    }
    FILE* f = std::fopen((d + "grads.bin").c_str(), "wb");
    if (!f || std::fwrite(grads.data(), sizeof(float), grads.size(), f) != grads.size()) return 2;
    std::fclose(f);
    return 0;
#endif
}
