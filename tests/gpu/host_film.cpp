// Runs the film's filter importance sampling (film.cuh film_sample) on the CPU for a check of
// its estimator against quadrature (renderer/tests/gpu_render_on_host.rs): for every crop
// pixel, N samples from a fixed PCG stream; each sample's crop-space position p gets the
// test signal L(p) = 0.01 px^2 + 0.3 py + 0.2 sin(1.3 px) (smooth, asymmetric, nonlinear),
// and the pixel's estimate is sum(w L) / sum(w) as the render kernel forms it.
// Usage: hg_film_host DIR N — reads DIR/film.bin and DIR/filter_table.bin, writes
// DIR/est.bin: per pixel (row-major) the estimate and its standard error (two doubles).
// Exits 3 when a sample lies outside the crop window.
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
    return v;
}

int main(int argc, char** argv) {
    if (argc != 3) { std::fprintf(stderr, "usage: hg_film_host DIR N\n"); return 2; }
    std::string d = std::string(argv[1]) + "/";
    long n = std::strtol(argv[2], nullptr, 10);
    auto film = slurp(d + "film.bin"), table = slurp(d + "filter_table.bin");
    const FlatFilm* fl = (const FlatFilm*)film.data();
    const float* tab = (const float*)table.data();
    hg_u32 cw = fl->crop_size[0], ch = fl->crop_size[1];
    std::vector<double> out;
    for (hg_u32 y = 0; y < ch; ++y)
        for (hg_u32 x = 0; x < cw; ++x) {
            Pcg32 rng = pcg_new(0x5eed + (hg_u64)y * cw + x, (hg_u64)y * cw + x);
            std::vector<double> ws, ls;
            double sw = 0.0, swl = 0.0;
            for (long k = 0; k < n; ++k) {
                float u1 = pcg_next_f32(rng), u2 = pcg_next_f32(rng);
                float ox, oy;
                float w = film_sample(*fl, tab, x, y, u1, u2, &ox, &oy);
                double px = (double)x + ox, py = (double)y + oy;
                if (!(px >= 0.0 && px <= cw && py >= 0.0 && py <= ch)) {
                    std::fprintf(stderr, "pixel (%u, %u): sample at (%g, %g) outside the crop\n", x, y, px, py);
                    return 3;
                }
                double l = 0.01 * px * px + 0.3 * py + 0.2 * std::sin(1.3 * px);
                ws.push_back(w);
                ls.push_back(l);
                sw += w;
                swl += w * l;
            }
            double est = swl / sw, var = 0.0;
            for (size_t k = 0; k < ws.size(); ++k) var += ws[k] * ws[k] * (ls[k] - est) * (ls[k] - est);
            out.push_back(est);
            out.push_back(std::sqrt(var) / sw);
        }
    FILE* f = std::fopen((d + "est.bin").c_str(), "wb");
    if (!f || std::fwrite(out.data(), sizeof(double), out.size(), f) != out.size()) return 2;
    std::fclose(f);
    return 0;
}
