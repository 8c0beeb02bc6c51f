//! Derivative hooks: what a plugin whose texels are a differentiable parameter tells
//! the backward pass. The pass knows where a lookup's derivative comes from (the
//! adjoint, [`crate::diff`]); the plugin knows which texels the lookup read, and with
//! which weights. On the device the same hooks are the plugins' `_diff.cuh` twins
//! (`textures/bitmap_diff.cuh`, `emitters/envmap_diff.cuh`).

/// A plugin whose texels are a differentiable parameter (a bitmap's, an environment
/// map's): it scatters the derivative of one lookup to the texels the lookup read.
pub trait TexelGradient {
    /// Where a lookup reads: a surface uv (a bitmap), a world direction (an
    /// environment map).
    type At: Copy;

    /// Adds `s[c]` times each read texel's weight (the derivative of the looked-up
    /// value with respect to the texel's, channel by channel) to channel `c` of that
    /// texel in `grad`, whose texels hold `channels` floats.
    fn add_texel_gradient(&self, at: Self::At, s: [f32; 3], channels: usize, grad: &mut [f32]);
}
