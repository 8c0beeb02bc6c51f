// An environment map's derivative hook for the backward pass (backward.cuh): its
// radiance without the scale and the texels a lookup interpolates.
#pragma once

#if HG_HAS(HG_EMITTER_SET, HG_EMITTER_ENVMAP)
// EnvmapEmitter::scale_derivative and texel_weights: the radiance along world direction d
// without the scale, and the texels (index y width + x of the source image) the lookup
// interpolates with their weights times the scale.
__device__ inline V3 envmap_derivatives(const SceneData& s, const EnvmapRecord& e, V3 d, hg_u32* texel, float* w) {
    V2 uv = direction_to_uv(normalize_or_zero(mat3_mul(e.to_local, d)));
    hg_u32 width = e.width, ix, iy;
    float fx, fy;
    env_cell(e, uv, &ix, &iy, &fx, &fy);
    hg_u32 ix1 = (ix + 1u) % width;  // the padded column `width` repeats column 0
    float k = e.scale;
    texel[0] = iy * width + ix, w[0] = (1.0f - fx) * (1.0f - fy) * k;
    texel[1] = iy * width + ix1, w[1] = fx * (1.0f - fy) * k;
    texel[2] = (iy + 1u) * width + ix, w[2] = (1.0f - fx) * fy * k;
    texel[3] = (iy + 1u) * width + ix1, w[3] = fx * fy * k;
    return e.scale != 0.0f ? env_lookup(s, e, uv) / e.scale : v3(0.0f, 0.0f, 0.0f);
}
#endif
