// The samplers (renderer/src/samplers/: mod.rs and one file per sampler, whose docs say
// which sequence each draws): the state of one sample path (SampleRng) and its next_1d /
// next_2d, with the CPU's integer arithmetic and its exactly rounded float conversions,
// so that both backends draw the same numbers for the same (seed, pixel, sample).
#pragma once
#include "math.cuh"

// FlatSampler::kind: HG_SAMPLER_* (samplers/registry.cuh, through features.cuh,
// generated from the registry in samplers/mod.rs)

// SampleRng: the sample's own PCG32 stream (independent numbers, jitter) and the
// sampler's state.
struct SampleRng {
    Pcg32 pcg;
    hg_u32 index;       // sample index in the pixel, < count
    hg_u32 count;       // effective samples per pixel
    hg_u32 dim;         // dimensions drawn so far
    hg_u32 pixel_seed;  // seed of the per-dimension permutations and scrambles
    hg_u32 mode;        // kind | jitter << 8
};

// samplers/mod.rs pixel_seed
__device__ inline hg_u32 sampler_pixel_seed(hg_u64 seed, hg_u64 pixel) {
    return (hg_u32)(mix64(mix64(seed ^ 0x6a09e667f3bcc909ull) ^ pixel) >> 32);
}

// SampleRng::new(sampler, seed, pixel, index)
__device__ inline SampleRng sample_rng(const FlatSampler& smp, hg_u64 seed, hg_u64 pixel, hg_u64 index) {
    SampleRng r;
    seed += (hg_u64)smp.seed;
    r.pcg = pcg_new(mix64((seed * 0x9e3779b97f4a7c15ull) ^ index), pixel);
    r.index = (hg_u32)index;
    r.count = smp.sample_count > 0u ? smp.sample_count : 1u;
    r.dim = 0u;
    r.pixel_seed = sampler_pixel_seed(seed, pixel);
    r.mode = smp.kind | (smp.jitter != 0u ? 0x100u : 0u);
    return r;
}

__device__ inline hg_u32 sampler_kind(const SampleRng& r) { return r.mode & 0xffu; }

// mod.rs tea
__device__ inline void sampler_tea(hg_u32 v0, hg_u32 v1, int rounds, hg_u32* o0, hg_u32* o1) {
    hg_u32 sum = 0u;
    for (int i = 0; i < rounds; ++i) {
        sum += 0x9e3779b9u;
        v0 += ((v1 << 4) + 0xa341316cu) ^ (v1 + sum) ^ ((v1 >> 5) + 0xc8013ea4u);
        v1 += ((v0 << 4) + 0xad90777du) ^ (v0 + sum) ^ ((v0 >> 5) + 0x7e95761eu);
    }
    *o0 = v0;
    *o1 = v1;
}

// mod.rs permute_kensler
__device__ inline hg_u32 permute_kensler(hg_u32 i, hg_u32 n, hg_u32 seed) {
    if (n <= 1u) return 0u;
    hg_u32 w = n - 1u;
    w |= w >> 1;
    w |= w >> 2;
    w |= w >> 4;
    w |= w >> 8;
    w |= w >> 16;
    do {
        i ^= seed;
        i *= 0xe170893du;
        i ^= seed >> 16;
        i ^= (i & w) >> 4;
        i ^= seed >> 8;
        i *= 0x0929eb3fu;
        i ^= seed >> 23;
        i ^= (i & w) >> 1;
        i *= 1u | seed >> 27;
        i *= 0x6935fa69u;
        i ^= (i & w) >> 11;
        i *= 0x74dcb303u;
        i ^= (i & w) >> 2;
        i *= 0x9e501cc3u;
        i ^= (i & w) >> 2;
        i *= 0xc860a3dfu;
        i &= w;
        i ^= i >> 5;
    } while (i >= n);
    return (hg_u32)(((hg_u64)i + (hg_u64)seed) % (hg_u64)n);
}

// mod.rs permute_pow2
__device__ inline hg_u32 permute_pow2(hg_u32 i, hg_u32 n, hg_u32 seed) {
    for (hg_u32 bit = 1u; bit < n; bit <<= 1) {
        hg_u32 a, b;
        sampler_tea(i | bit, seed, 2, &a, &b);
        if ((a & bit) != 0u) i ^= bit;
    }
    return i;
}

// mod.rs ceil_log2 (n >= 1)
__device__ inline hg_u32 sampler_ceil_log2(hg_u32 n) {
    hg_u32 m = n > 0u ? n - 1u : 0u;
    hg_u32 lz = 32u;
    while (m != 0u) {
        m >>= 1;
        --lz;
    }
    return 32u - lz;
}

// mod.rs isqrt
__device__ inline hg_u32 sampler_isqrt(hg_u32 n) {
    hg_u64 r = (hg_u64)sqrt((double)n);
    while (r * r > (hg_u64)n) --r;
    while ((r + 1u) * (r + 1u) <= (hg_u64)n) ++r;
    return (hg_u32)r;
}

// mod.rs stratum_point: exact operands, one correctly rounded division (__fdiv_rn: the
// render module's approximate division would break the equality with the CPU).
__device__ inline float stratum_point(hg_u32 k, hg_u32 n, bool jittered, hg_u32 j24) {
    hg_u32 cl = sampler_ceil_log2(n);
    hg_u32 b = cl < 23u ? 23u - cl : 0u;
    hg_u64 den = (hg_u64)n << (b + 1u);
    hg_u64 offset = jittered ? 2u * ((hg_u64)j24 >> (24u - b)) + 1u : (hg_u64)1u << b;
    hg_u64 num = ((hg_u64)k << (b + 1u)) + offset;
    return fminf(__fdiv_rn((float)num, (float)den), 0.99999994f);
}

// mod.rs unit_from_bits
__device__ inline float unit_from_bits(hg_u32 bits) { return (float)(bits >> 8) * (1.0f / 16777216.0f); }

// SampleRng::next_dim_seed
__device__ inline hg_u32 sampler_dim_seed(SampleRng& r) { return r.pixel_seed + r.dim++; }

__device__ inline bool sampler_jittered(const SampleRng& r) { return (r.mode & 0x100u) != 0u; }

// SampleRng::jitter24 (the draw only when jittering)
__device__ inline hg_u32 sampler_jitter24(SampleRng& r) { return sampler_jittered(r) ? pcg_next(r.pcg) >> 8 : 0u; }

// ldsampler.rs
__device__ inline hg_u32 radical_inverse_bits(hg_u32 i, hg_u32 scramble) {
#ifdef HG_HOST_SHIM
    hg_u32 v = 0u;
    for (int b = 0; b < 32; ++b) v |= ((i >> b) & 1u) << (31 - b);
    return v ^ scramble;
#else
    return __brev(i) ^ scramble;
#endif
}

__device__ inline hg_u32 sobol2_bits(hg_u32 i, hg_u32 scramble) {
    for (hg_u32 v = 1u << 31; i != 0u; i >>= 1, v ^= v >> 1)
        if ((i & 1u) != 0u) scramble ^= v;
    return scramble;
}

// multijitter.rs grid: (nx, ny) of an effective count
__device__ inline void multijitter_grid(hg_u32 n, hg_u32* nx, hg_u32* ny) {
    hg_u32 y = sampler_isqrt(n);
    if (y == 0u) y = 1u;
    *ny = y;
    *nx = (n + y - 1u) / y;
}

// SampleRng::next_1d
__device__ inline float next_1d(SampleRng& r) {
    switch (HG_KIND(HG_SAMPLER_SET, sampler_kind(r))) {
        HG_CASE(HG_SAMPLER_SET, HG_SAMPLER_STRATIFIED) {
            hg_u32 p = permute_kensler(r.index, r.count, sampler_dim_seed(r));
            bool jit = sampler_jittered(r);
            return stratum_point(p, r.count, jit, sampler_jitter24(r));
        }
        HG_CASE(HG_SAMPLER_SET, HG_SAMPLER_MULTIJITTER) {
            hg_u32 p = permute_kensler(r.index, r.count, sampler_dim_seed(r) * 0x45fbe943u);
            bool jit = sampler_jittered(r);
            return stratum_point(p, r.count, jit, sampler_jitter24(r));
        }
        HG_CASE(HG_SAMPLER_SET, HG_SAMPLER_LDSAMPLER) {
            hg_u32 i = permute_pow2(r.index, r.count, sampler_dim_seed(r));
            hg_u32 scramble, unused;
            sampler_tea(r.pixel_seed, 0x48bc48ebu, 4, &scramble, &unused);
            return unit_from_bits(radical_inverse_bits(i, scramble));
        }
        default:
            break;
    }
    r.dim++;
    return pcg_next_f32(r.pcg);
}

// SampleRng::next_2d
__device__ inline V2 next_2d(SampleRng& r) {
    switch (HG_KIND(HG_SAMPLER_SET, sampler_kind(r))) {
        HG_CASE(HG_SAMPLER_SET, HG_SAMPLER_STRATIFIED) {
            hg_u32 p = permute_kensler(r.index, r.count, sampler_dim_seed(r));
            hg_u32 res = sampler_isqrt(r.count);
            hg_u32 y = p / res, x = p - y * res;
            bool jit = sampler_jittered(r);
            hg_u32 jx = sampler_jitter24(r);
            hg_u32 jy = sampler_jitter24(r);
            return v2(stratum_point(x, res, jit, jx), stratum_point(y, res, jit, jy));
        }
        HG_CASE(HG_SAMPLER_SET, HG_SAMPLER_MULTIJITTER) {
            hg_u32 seed = sampler_dim_seed(r);
            hg_u32 n = r.count, nx, ny;
            multijitter_grid(n, &nx, &ny);
            hg_u32 s = permute_kensler(r.index, n, seed * 0x51633e2du);
            hg_u32 cy = s / nx, cx = s - cy * nx;
            hg_u32 sx = permute_kensler(cx, nx, seed * 0x68bc21ebu);
            hg_u32 sy = permute_kensler(cy, ny, seed * 0x02e5be93u);
            bool jit = sampler_jittered(r);
            hg_u32 jx = sampler_jitter24(r);
            hg_u32 jy = sampler_jitter24(r);
            return v2(stratum_point(cx * ny + sy, n, jit, jx), stratum_point(cy * nx + sx, n, jit, jy));
        }
        HG_CASE(HG_SAMPLER_SET, HG_SAMPLER_LDSAMPLER) {
            hg_u32 i = permute_pow2(r.index, r.count, sampler_dim_seed(r));
            hg_u32 sx, sy;
            sampler_tea(r.pixel_seed, 0x98bc51abu, 4, &sx, &sy);
            return v2(unit_from_bits(radical_inverse_bits(i, sx)), unit_from_bits(sobol2_bits(i, sy)));
        }
        default:
            break;
    }
    r.dim++;
    float x = pcg_next_f32(r.pcg);
    return v2(x, pcg_next_f32(r.pcg));
}
