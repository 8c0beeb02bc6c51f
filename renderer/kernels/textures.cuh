// Texture dispatch (renderer/src/textures/mod.rs AnyTexture): tex_eval, tex_eval_1 and
// tex_eval_1_grad by texture handle. They are generated from the texture registry
// (textures/registry.rs) as the kernel file textures/registry.cuh: the HG_TEX_* tags, the
// twin of every registered plugin (textures/<name>.cuh), the checks of their records
// against the Rust ones, and a `switch (kind)` compiled for the kinds in HG_TEX_SET
// (features.cuh, HG_CASE); a checkerboard's colours are textures themselves, followed
// iteratively. A texture's record is read where it lies in tex_data (its RecordRef's
// offset; with one kind in the set, at its handle's slot).
#pragma once
#include "textures/registry.cuh"
