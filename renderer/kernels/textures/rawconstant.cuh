// `rawconstant` (renderer/src/textures/rawconstant.rs): a constant colour, the texture of
// every <rgb>/<float>/<spectrum> parameter too. Its record is the colour: one read.
#pragma once
#include "texture.cuh"

struct Constant {
    float value[3];
};

// Constant::eval
__device__ inline V3 rawconstant_eval(const SceneData& s, const Constant& r, const SurfacePoint& sp) {
    (void)s, (void)sp;
    return v3a(r.value);
}

// TexturePlugin::eval_1 (the default: grey value or luminance)
__device__ inline float rawconstant_eval_1(const SceneData& s, const Constant& r, const SurfacePoint& sp) {
    return tex_scalar(rawconstant_eval(s, r, sp));
}
