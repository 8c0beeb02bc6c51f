// The backward pass's texel gradients (backward.cuh): lookups' derivatives scattered
// by atomics, summed over a warp's lanes first.
#pragma once

// Adds w[j] * vals[c] to channel c of texel texel[j] of `grad` (texels of `channels`
// floats) for the n (<= 4) texels of one lookup of parameter k. On the device the lanes
// of a warp that add to the same texels (same parameter and first texel: a pixel's
// samples share a warp and mostly read the same texels) are summed first, by a tree over
// the lanes of each group (log2 of its size steps of shuffles), and one lane of each
// group adds the sums: a set of atomics per group instead of per lane, and no lanes
// queueing on one address. Any subset of a warp's lanes may call it together.
// Out of line: inlined into its two callers, it made the backward kernel 21% slower.
__device__ __noinline__ void add_texels(float* grad, hg_u32 channels, hg_u32 k, const hg_u32* texel, const float* w, int n,
                                  const float* vals) {
    float v[12];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int c = 0; c < 3; ++c) v[3 * j + c] = j < n && c < (int)channels ? w[j] * vals[c] : 0.0f;
    }
    bool adds = true;
#if !defined(HG_HOST_SHIM) && defined(__CUDA_ARCH__)
    unsigned active = __activemask();
    unsigned long long key = ((unsigned long long)k << 32) | texel[0];
    unsigned peers = __match_any_sync(active, key);
    unsigned lane = threadIdx.x & 31u, below = (1u << lane) - 1u;
    hg_u32 rank = (hg_u32)__popc(peers & below);  // position in the group
    unsigned above = peers & ~below & ~(1u << lane);  // the group's lanes after this one
    adds = rank == 0u;
    // step by step, each remaining lane adds the sums of the next remaining lane of its
    // group, and the lanes at odd positions (whose sums were taken) leave
    while (__any_sync(active, above != 0u)) {
        int next = __ffs(above);  // 1 + that lane, 0 when none
        int from = next > 0 ? next - 1 : (int)lane;
#pragma unroll
        for (int q = 0; q < 12; ++q) {
            float t = __shfl_sync(active, v[q], from);
            if (next > 0) v[q] += t;
        }
        above &= __ballot_sync(active, (rank & 1u) == 0u);
        rank >>= 1;
    }
#endif
    if (!adds) return;
    // unrolled, so that v stays in registers
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float a = v[3 * j], b = v[3 * j + 1], c = v[3 * j + 2];
        if (j >= n || (a == 0.0f && b == 0.0f && c == 0.0f)) continue;
        float* g = grad + (hg_u64)texel[j] * channels;
#if !defined(HG_HOST_SHIM) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (channels == 3u) {
            // two atomics instead of three: the pair of channels at an 8-byte boundary (0
            // and 1 of an even texel, 1 and 2 of an odd one) as one
            if ((texel[j] & 1u) == 0u) {
                atomicAdd((float2*)g, make_float2(a, b));
                atomicAdd(g + 2, c);
            } else {
                atomicAdd(g, a);
                atomicAdd((float2*)(g + 1), make_float2(b, c));
            }
            continue;
        }
#endif
#pragma unroll
        for (hg_u32 c2 = 0; c2 < 3u; ++c2) {
            if (c2 < channels) atomicAdd(g + c2, v[3 * j + c2]);
        }
    }
}
