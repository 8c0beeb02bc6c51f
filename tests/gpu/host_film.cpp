// Runs the film's filter importance sampling (film.cuh film_sample) on the CPU for a check of
// its estimator against quadrature (renderer/tests/gpu_render_on_host.rs): for every crop
// pixel, N samples from a fixed PCG stream; each sample's crop-space position p gets the
// test signal L(p) = 0.01 px^2 + 0.3 py + 0.2 sin(1.3 px) (smooth, asymmetric, nonlinear),
// and the pixel's estimate is sum(w L) / sum(w) as the render kernel forms it.
// Usage: hg_film_host DIR N — reads DIR/film.bin and DIR/filter_table.bin, writes
// DIR/est.bin: per pixel (row-major) the estimate and its standard error (two doubles).
// Exits 3 when a sample lies outside the crop window.
// hg_film_host DIR N search — instead checks filter_sample (the guide table of film.cuh
// filter_bin) against a binary search over the CDF (the reference below) for N
// random (window, u) pairs plus every CDF value, guide boundary and their float neighbours
// as u, on the full window [-r, r] and on truncated ones: the offset and pdf must have the
// same bits. Exits 4 on the first difference; prints the number of cases and the search's
// dependent steps (mean, mean of the most of 32 random full-window cases, as a warp of
// interior pixels waits for its slowest lane, most).
#include "host_shim.h"
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "host_io.h"
#include "kernel_src.cu"

// The inverse-CDF search before the guide table: the last bin k with cdf[k] <= c.
static float binary_search_sample(const float* cdf, float r, float bw, float inv_bw, float lo, float hi, float u,
                                  float* pdf) {
    float c_lo = lo > -r ? filter_cdf_at(cdf, r, inv_bw, lo) : 0.0f;
    float c_hi = hi < r ? filter_cdf_at(cdf, r, inv_bw, hi) : 1.0f;
    float c = c_lo + u * (c_hi - c_lo);
    int a = 0, b = HG_FILTER_BINS;
    while (b - a > 1) {
        int m = (a + b) >> 1;
        if (cdf[m] <= c) a = m;
        else b = m;
    }
    float c0 = cdf[a], c1 = cdf[a + 1];
    float t = c1 > c0 ? fminf(fmaxf(__fdividef(c - c0, c1 - c0), 0.0f), 1.0f) : 0.5f;
    *pdf = (c1 - c0) * inv_bw;
    float x = -r + ((float)a + t) * bw;
    return fminf(fmaxf(x, lo), hi);
}

static int check_search(const FlatFilm* fl, const float* tab, long n) {
    const float* cdf = tab + HG_FILTER_CDF;
    const float* guide = cdf + HG_FILTER_BINS + 1;
    float r = fl->filter_radius;
    float bw = 2.0f * r / (float)HG_FILTER_BINS, inv_bw = (0.5f * (float)HG_FILTER_BINS) * __frcp_rn(r);
    std::vector<float> us;
    for (int k = 0; k <= HG_FILTER_BINS; ++k) us.push_back(cdf[k]);
    for (int j = 0; j < HG_FILTER_GUIDE_SIZE; ++j) us.push_back((float)j / HG_FILTER_GUIDE_SIZE);
    for (size_t k = 0, m = us.size(); k < m; ++k) {
        us.push_back(std::nextafter(us[k], 0.0f));
        us.push_back(std::nextafter(us[k], 1.0f));
    }
    us.push_back(0.0f);
    us.push_back(1.0f - 1.0f / 16777216.0f);
    Pcg32 rng = pcg_new(0x5eed, 7);
    long cases = 0, full = 0, steps_sum = 0, warp_sum = 0, warps = 0;
    int longest = 0, warp_max = 0;
    for (long i = 0; i < n + (long)us.size() * 4; ++i) {
        bool fixed = i >= n;
        float u = fixed ? us[(i - n) / 4] : pcg_next_f32(rng);
        if (!(u >= 0.0f && u < 1.0f)) continue;  // the kernel's u lies in [0, 1)
        // windows: full, truncated on one side or both (as at the crop edges)
        int kind = fixed ? (int)((i - n) % 4) : (int)(pcg_next(rng) % 4u);
        float lo = -r, hi = r;
        if (kind == 1 || kind == 3) lo = -r + 2.0f * r * pcg_next_f32(rng);
        if (kind == 2 || kind == 3) hi = lo + (r - lo) * pcg_next_f32(rng);
        if (!(hi > lo)) hi = r;
        float pa, pb;
        float xa = filter_sample(cdf, r, bw, inv_bw, lo, hi, u, &pa);
        float xb = binary_search_sample(cdf, r, bw, inv_bw, lo, hi, u, &pb);
        if (__float_as_uint(xa) != __float_as_uint(xb) || __float_as_uint(pa) != __float_as_uint(pb)) {
            std::fprintf(stderr,
                         "u = %.9g on [%.9g, %.9g]: guide gives (%.9g, pdf %.9g), binary search (%.9g, pdf %.9g)\n",
                         u, lo, hi, xa, pa, xb, pb);
            return 4;
        }
        float c_lo = lo > -r ? filter_cdf_at(cdf, r, inv_bw, lo) : 0.0f;
        float c_hi = hi < r ? filter_cdf_at(cdf, r, inv_bw, hi) : 1.0f;
        float c = c_lo + u * (c_hi - c_lo);
        int steps = 0;  // the binary search steps of filter_bin
        if (c >= 0.0f) {
            int j = (int)fminf(c * (float)HG_FILTER_GUIDE_SIZE, (float)(HG_FILTER_GUIDE_SIZE - 1));
            for (int span = (int)guide[j + 1] + 1 - (int)guide[j]; span > 1; span = (span + 1) / 2) ++steps;
        }
        longest = steps > longest ? steps : longest;
        steps_sum += steps;
        if (!fixed && kind == 0) warp_max = steps > warp_max ? steps : warp_max;
        ++cases;
        if (!fixed && kind == 0 && ++full % 32 == 0) {  // a warp (full windows) waits for its slowest lane
            warp_sum += warp_max;
            ++warps;
            warp_max = 0;
        }
    }
    std::printf("search: %ld cases agree bit for bit; search steps: mean %.2f, "
                "mean of 32 full-window lanes' most %.2f, most %d (a full binary search: 8)\n",
                cases, (double)steps_sum / cases, warps ? (double)warp_sum / warps : 0.0, longest);
    return 0;
}

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[3]) == "search") {
        std::string d = std::string(argv[1]) + "/";
        auto film = slurp(d + "film.bin"), table = slurp(d + "filter_table.bin");
        long n = std::strtol(argv[2], nullptr, 10);
        return check_search((const FlatFilm*)film.data(), (const float*)table.data(), n);
    }
    if (argc != 3) { std::fprintf(stderr, "usage: hg_film_host DIR N [search]\n"); return 2; }
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
