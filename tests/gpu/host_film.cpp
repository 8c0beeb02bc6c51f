// Runs the film's sample placement (film.cuh film_sample) on the CPU for a check of its
// estimator against quadrature (renderer/tests/gpu_render_on_host.rs): for every crop
// pixel, N samples from a fixed PCG stream; each sample's crop-space position p gets the
// test signal L(p) = 0.01 px^2 + 0.3 py + 0.2 sin(1.3 px) (smooth, asymmetric, nonlinear),
// and the pixel's estimate is sum(w L) / sum(w) as the render kernel forms it.
// Usage: hg_film_host DIR N — reads DIR/film.bin, writes DIR/est.bin: per pixel (row-major)
// four doubles: the estimate, its standard error, and the mean and the most pairs of
// random numbers one sample drew (1 unless the gaussian redraws outside the window); and
// DIR/samples.bin: per pixel its first 16 samples' offsets from the pixel centre and
// weights (dx, dy, w as floats), for a check of the weight formula.
// Exits 3 when a sample lies outside its window (the crop, and within the filter radius
// of the pixel centre; a one-pixel box: within the pixel), 4 on a weight that is negative
// or not finite, 5 when a sample drew an odd count of numbers or more than 2^20.
#include "host_shim.h"
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "host_io.h"
#include "kernel_src.cu"

// How many numbers `after` lies past `before` on their PCG stream (-1: more than `most`).
static long draws_between(Pcg32 before, const Pcg32& after, long most) {
    for (long k = 0; k <= most; ++k) {
        if (before.state == after.state) return k;
        pcg_next(before);
    }
    return -1;
}

int main(int argc, char** argv) {
    if (argc != 3) { std::fprintf(stderr, "usage: hg_film_host DIR N\n"); return 2; }
    std::string d = std::string(argv[1]) + "/";
    long n = std::strtol(argv[2], nullptr, 10);
    auto film = slurp(d + "film.bin");
    const FlatFilm* fl = (const FlatFilm*)film.data();
    hg_u32 cw = fl->crop_size[0], ch = fl->crop_size[1];
    std::vector<double> out;
    std::vector<float> first;
    for (hg_u32 y = 0; y < ch; ++y)
        for (hg_u32 x = 0; x < cw; ++x) {
            // an independent stream: the film's two numbers, then the gaussian's redraws
            SampleRng rng;
            rng.pcg = pcg_new(0x5eed + (hg_u64)y * cw + x, (hg_u64)y * cw + x);
            rng.index = 0u;
            rng.count = 1u;
            rng.dim = 0u;
            rng.pixel_seed = 0u;
            rng.mode = HG_SAMPLER_INDEPENDENT;
            std::vector<double> ws, ls;
            double sw = 0.0, swl = 0.0, pairs = 0.0, most = 0.0;
            for (long k = 0; k < n; ++k) {
                Pcg32 before = rng.pcg;
                float ox, oy;
                float w = film_sample(*fl, x, y, rng, &ox, &oy);
                long drawn = draws_between(before, rng.pcg, 1l << 20);
                if (drawn < 2 || drawn % 2 != 0) {
                    std::fprintf(stderr, "pixel (%u, %u): a sample drew %ld numbers\n", x, y, drawn);
                    return 5;
                }
                pairs += (double)(drawn / 2);
                most = most > (double)(drawn / 2) ? most : (double)(drawn / 2);
                double px = (double)x + ox, py = (double)y + oy;
                double reach = (fl->filter_radius > 0.5f ? fl->filter_radius : 0.5) + 1e-5;  // jitter: the pixel
                if (!(px >= 0.0 && px <= cw && py >= 0.0 && py <= ch) || !(std::fabs(ox - 0.5) <= reach) ||
                    !(std::fabs(oy - 0.5) <= reach)) {
                    std::fprintf(stderr, "pixel (%u, %u): sample at (%g, %g) outside its window\n", x, y, px, py);
                    return 3;
                }
                if (!(w >= 0.0f && std::isfinite(w))) {
                    std::fprintf(stderr, "pixel (%u, %u): weight %g\n", x, y, w);
                    return 4;
                }
                if (k < 16) {
                    first.push_back(ox - 0.5f);
                    first.push_back(oy - 0.5f);
                    first.push_back(w);
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
            out.push_back(pairs / (double)n);
            out.push_back(most);
        }
    FILE* f = std::fopen((d + "est.bin").c_str(), "wb");
    if (!f || std::fwrite(out.data(), sizeof(double), out.size(), f) != out.size()) return 2;
    std::fclose(f);
    f = std::fopen((d + "samples.bin").c_str(), "wb");
    if (!f || std::fwrite(first.data(), sizeof(float), first.size(), f) != first.size()) return 2;
    std::fclose(f);
    return 0;
}
