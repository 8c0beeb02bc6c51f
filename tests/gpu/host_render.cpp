// Runs the direct/path megakernel and hg_develop on the CPU, wave by wave, the way
// backend/cuda/device/render.rs launches them (renderer/tests/gpu_render_on_host.rs): each
// wave has n samples per pixel, the largest power of two <= min(samples left, N_WAVE, 32),
// and its threads run in index order (so a warp segment's lanes arrive in order, as the
// shim's segment reduction expects), each taking min(PER_LANE, n) samples of its pixel.
// A `ptracer` module (integrators/ptracer.cuh) runs hg_ptracer over the spp x pixels light
// paths in launches of N_WAVE x pixels paths, then hg_ptracer_develop.
// Usage: hg_render_host DIR SEED SPP N_WAVE PER_LANE [BOUNCE_LAUNCHES] — reads
// DIR/<array>.bin (flat scene arrays, as written by the test), writes DIR/out.bin (the
// developed film). With BOUNCE_LAUNCHES, `path` runs as the wavefront kernels
// (wavefront.cuh): start, that many bounce launches (the last finishes every path), reduce.
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

template <class T> static const T* as(const std::vector<char>& v) { return (const T*)v.data(); }

// A brute-force module's kernels take the unit records by value: unit.bin's records, padded
// to HG_UNIT_CAP with records that never hit (as flat::unit_prims::kernel_param pads them).
#if HG_BRUTE_FORCE
#define UNIT_ARG , units
static UnitPrims unit_param(const std::vector<char>& v) {
    UnitPrims u;
    size_t n = (v.size() - 16) / sizeof(FlatUnitPrim);
    if (n > HG_UNIT_CAP) { std::fprintf(stderr, "%zu unit records, the module holds %u\n", n, HG_UNIT_CAP); std::exit(2); }
    for (size_t i = 0; i < HG_UNIT_CAP; ++i) {
        if (i < n) std::memcpy(&u.p[i], v.data() + i * sizeof(FlatUnitPrim), sizeof(FlatUnitPrim));
        else u.p[i] = FlatUnitPrim{{0.0f}, 0u, 0u, HG_UNIT_NONE, 0u};
    }
    u.count = (hg_u32)n;
    return u;
}
#else
#define UNIT_ARG
#endif
template <class T> static hg_u32 count(const std::vector<char>& v) { return (hg_u32)((v.size() - 16) / sizeof(T)); }

#define SCENE_ARGS                                                                                       \
    as<FlatBvhNode>(nodes), count<FlatBvhNode>(nodes), as<LeafPrim>(leaf), as<Prim>(prims),              \
        as<FlatShape>(shapes), as<float>(positions), as<float>(normals), as<float>(uvs), as<hg_u32>(tris), \
        as<FlatBsdf>(bsdfs), as<hg_u32>(bsdf_data), as<RecordRef>(textures), as<float>(texels),         \
        as<RecordRef>(emitters), as<hg_u32>(emitter_data), count<RecordRef>(emitters), as<hg_u32>(env),   \
        count<hg_u32>(env),                                                                              \
        as<FlatDist1D>(dist1d), as<FlatDist2D>(dist2d), as<float>(dist_data), as<float>(bsphere), as<float>(attrs), \
        as<hg_u32>(tex_data) UNIT_ARG

// Runs `kernel` over threads [0, n) in blocks of 64, one thread after another.
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
    if (argc != 6 && argc != 7) {
        std::fprintf(stderr, "usage: hg_render_host DIR SEED SPP N_WAVE PER_LANE [BOUNCE_LAUNCHES]\n");
        return 2;
    }
    std::string d = std::string(argv[1]) + "/";
    hg_u64 seed = std::strtoull(argv[2], nullptr, 10);
    hg_u32 spp = (hg_u32)std::strtoul(argv[3], nullptr, 10);
    hg_u32 per_wave = (hg_u32)std::strtoul(argv[4], nullptr, 10);
    hg_u32 per_lane = (hg_u32)std::strtoul(argv[5], nullptr, 10);
    bool wavefront = argc == 7;  // the path integrator's wavefront kernels
    hg_u32 bounces = wavefront ? (hg_u32)std::strtoul(argv[6], nullptr, 10) : 0;
    auto cam = slurp(d + "camera.bin"), film = slurp(d + "film.bin"), integ = slurp(d + "integrator.bin");
    auto nodes = slurp(d + "nodes.bin"), leaf = slurp(d + "leaf.bin");
#if HG_BRUTE_FORCE
    UnitPrims units = unit_param(slurp(d + "unit.bin"));
#endif
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
    FlatFilm film_spp = *as<FlatFilm>(film);
    film_spp.sampler.sample_count = spp;  // the render's effective count, as the device's launches
    const FlatFilm* fl = &film_spp;
    const FlatCamera& camera = *as<FlatCamera>(cam);
    const FlatIntegrator& it = *as<FlatIntegrator>(integ);
    hg_u32 w = fl->crop_size[0], h = fl->crop_size[1], ch = fl->alpha ? 4 : 3;
    hg_u64 pixels = (hg_u64)w * h;
    std::vector<float> accum(pixels * 5, 0.0f), out(pixels * ch, 0.0f);
#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_PTRACER)
    if (it.kind == HG_INTEGRATOR_PTRACER) {
        // spp x pixels light paths in launches of N_WAVE x pixels, splatted, then the sums
        std::vector<float> sums(pixels * HG_PT_ACC, 0.0f);
        hg_u64 total = pixels * spp, per = pixels * (per_wave ? per_wave : 1u);
        float scale = (float)(1.0 / (double)spp);
        for (hg_u64 first = 0; first < total; first += per) {
            hg_u32 n = (hg_u32)(total - first < per ? total - first : per);
            launch(n, [&] {
                hg_ptracer(camera, *fl, it, SCENE_ARGS, seed, first, n, pixels, scale, sums.data());
            });
        }
        blockDim = {16, 16, 1};
        for (hg_u32 by = 0; by < (h + 15) / 16; ++by)
            for (hg_u32 bx = 0; bx < (w + 15) / 16; ++bx)
                for (hg_u32 ty = 0; ty < 16; ++ty)
                    for (hg_u32 tx = 0; tx < 16; ++tx) {
                        blockIdx = {bx, by, 0};
                        threadIdx = {tx, ty, 0};
                        hg_ptracer_develop(*fl, sums.data(), out.data());
                    }
        spill(d + "out.bin", out.data(), out.size() * sizeof(float));
        return 0;
    }
#endif
    for (hg_u32 s0 = 0; s0 < spp;) {
        hg_u32 cap = spp - s0 < per_wave ? spp - s0 : per_wave;
        hg_u32 n = 1;
        while (n * 2 <= cap && n * 2 <= 32) n *= 2;
        hg_u32 log2_n = 0, log2_k = 0;
        while ((1u << log2_n) < n) ++log2_n;
        while ((2u << log2_k) <= per_lane && log2_k < log2_n) ++log2_k;
        hg_u32 threads = (hg_u32)(pixels * n), lanes = threads >> log2_k;
        if (!wavefront) {
            launch(lanes, [&] {
                hg_render(camera, *fl, it, SCENE_ARGS, seed, s0, log2_n, log2_k, 0u, lanes, accum.data());
            });
        } else {
#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_PATH) && HG_PATH_WAVEFRONT
            // one chunk of every pixel; the device splits large waves into several
            std::vector<float> st((size_t)threads * HG_PS_WORDS, std::nanf(""));
            std::vector<hg_u32> queues(2 * (size_t)threads), counts(bounces + 1, 0u);
            launch(threads, [&] {
                hg_path_start(camera, *fl, it, SCENE_ARGS, seed, s0, log2_n, 0u, threads, st.data(), threads,
                              queues.data(), counts.data());
            });
            for (hg_u32 k = 1; k <= bounces; ++k) {
                hg_u32 finish = k == bounces ? 1u : 0u;
                launch(64, [&] {  // one block: the kernel strides over the queue
                    hg_path_bounce(it, SCENE_ARGS, st.data(), threads, queues.data(), counts.data(), k, finish);
                });
            }
            launch(lanes, [&] {
                hg_path_reduce(st.data(), threads, s0, log2_n, log2_k, 0u, lanes, accum.data());
            });
#else
            std::fprintf(stderr, "this module has no wavefront path kernels\n");
            return 2;
#endif
        }
        s0 += n;
    }
    blockDim = {16, 16, 1};
    for (hg_u32 by = 0; by < (h + 15) / 16; ++by)
        for (hg_u32 bx = 0; bx < (w + 15) / 16; ++bx)
            for (hg_u32 ty = 0; ty < 16; ++ty)
                for (hg_u32 tx = 0; tx < 16; ++tx) {
                    blockIdx = {bx, by, 0};
                    threadIdx = {tx, ty, 0};
                    hg_develop(*fl, accum.data(), out.data());
                }
    spill(d + "out.bin", out.data(), out.size() * sizeof(float));
    return 0;
}
