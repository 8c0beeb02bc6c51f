//! Local derivatives of what a plugin evaluates with respect to one texture's value.
//!
//! Every differentiable parameter is the value of a texture (a constant colour or
//! float, or a bitmap's texels), and BSDFs and emitters read textures only through the
//! scene's [`TextureStore`]. So the derivative of anything a plugin evaluates at a point
//! with respect to that texture's value there is found without differentiating the
//! plugin's code: a private copy of the store has the texture's record replaced by a
//! constant `v ± h` (per channel), the plugin evaluates with that copy, and the central
//! difference gives the derivative. It is exact (up to rounding) where the plugin is
//! linear in the value — reflectances, transmittances and radiances — and second-order
//! accurate elsewhere (roughness), with a relative step of 1e-3. Values a plugin derived
//! from a texture when the scene was built (a plastic's lobe-selection weight from its
//! textures' means) are sampling choices and are held fixed, as in Mitsuba's `prb`.
//!
//! A BSDF's plain float parameter (an index of refraction) is not a texture: its
//! record is rebuilt once per backward pass with the value moved by `± h` (through the
//! scene's parameter update), and the probe swaps those records in ([`RecordProbe`]).

use crate::bsdfs::AnyBsdf;
use crate::math::{Color, Vec3};
use crate::plugin::TexRef;
use crate::textures::{AnyTexture, Constant, SurfacePoint, TextureStore};

/// Relative central-difference step.
const STEP: f32 = 1.0e-3;

/// What a probed evaluation reads: the texture store and the BSDF records, either of
/// which may have a record swapped.
pub struct Probed<'a> {
    /// The textures.
    pub tex: &'a TextureStore,
    /// The BSDF records.
    pub bsdfs: &'a [AnyBsdf],
}

/// A parameter that is a plain float of a BSDF (an index of refraction): its record
/// rebuilt with the value moved by `± step`, which the probe swaps in.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordProbe {
    /// The BSDF record.
    pub bsdf: u32,
    /// The record at `value + step`.
    pub plus: AnyBsdf,
    /// The record at `value - step`.
    pub minus: AnyBsdf,
    /// The step.
    pub step: f32,
    /// `plus` as the CUDA kernels read it (its record's words, nested records referred
    /// to where the scene's flat BSDF array has them).
    pub plus_words: Vec<u32>,
    /// `minus` as the CUDA kernels read it.
    pub minus_words: Vec<u32>,
}

/// A private copy of a scene's texture store and BSDF records whose records can be
/// swapped.
pub struct Probe {
    store: TextureStore,
    bsdfs: Vec<AnyBsdf>,
}

impl Probe {
    /// A copy of `store` and `bsdfs` (records and attribute table copied, images
    /// shared).
    pub fn new(store: &TextureStore, bsdfs: &[AnyBsdf]) -> Probe {
        Probe {
            store: store.clone(),
            bsdfs: bsdfs.to_vec(),
        }
    }

    /// The store, with every record as the scene has it.
    pub fn store(&self) -> &TextureStore {
        &self.store
    }

    /// The derivatives of `eval(store)` with respect to texture `t`'s value at `at`:
    /// one per channel of the value (`channels` 1: the value is a grey level, and the
    /// single derivative moves all three colour channels together).
    pub fn derivative(
        &mut self,
        t: TexRef,
        at: &SurfacePoint,
        channels: usize,
        mut eval: impl FnMut(&Probed) -> Color,
    ) -> [Color; 3] {
        let v = self.store.eval(t, at);
        let original = self.store.records[t as usize];
        let mut out = [Color::ZERO; 3];
        for (c, d) in out.iter_mut().enumerate().take(channels) {
            let dir = if channels == 1 {
                Color::ONE
            } else {
                Vec3::AXES[c]
            };
            let h = STEP * v[if channels == 1 { 0 } else { c }].abs().max(1.0);
            self.store.records[t as usize] = AnyTexture::Constant(Constant::new(v + dir * h));
            let up = eval(&self.probed());
            self.store.records[t as usize] = AnyTexture::Constant(Constant::new(v - dir * h));
            let down = eval(&self.probed());
            *d = (up - down) / (2.0 * h);
        }
        self.store.records[t as usize] = original;
        out
    }

    /// As [`Self::derivative`], for an `eval` affine in texture `t`'s value channel by
    /// channel (a BSDF's [`crate::bsdfs::AnyBsdf::linear_in`]): `eval` at value 1 minus
    /// `eval` at value 0 is the whole derivative, exact up to rounding, from two
    /// evaluations and no lookup of the texture.
    pub fn linear_derivative(
        &mut self,
        t: TexRef,
        channels: usize,
        mut eval: impl FnMut(&Probed) -> Color,
    ) -> [Color; 3] {
        let original = self.store.records[t as usize];
        self.store.records[t as usize] = AnyTexture::Constant(Constant::new(Color::ONE));
        let one = eval(&self.probed());
        self.store.records[t as usize] = AnyTexture::Constant(Constant::new(Color::ZERO));
        let zero = eval(&self.probed());
        self.store.records[t as usize] = original;
        let d = one - zero;
        if channels == 1 {
            return [d, Color::ZERO, Color::ZERO];
        }
        // channel c of the value moves channel c of eval only
        [0, 1, 2].map(|c| Vec3::AXES[c] * d[c])
    }

    /// The derivative of `eval` with respect to the float parameter of `r`: the
    /// central difference with its rebuilt records swapped in.
    pub fn record_derivative(
        &mut self,
        r: &RecordProbe,
        mut eval: impl FnMut(&Probed) -> Color,
    ) -> Color {
        let i = r.bsdf as usize;
        let original = self.bsdfs[i];
        self.bsdfs[i] = r.plus;
        let up = eval(&self.probed());
        self.bsdfs[i] = r.minus;
        let down = eval(&self.probed());
        self.bsdfs[i] = original;
        (up - down) / (2.0 * r.step)
    }

    fn probed(&self) -> Probed<'_> {
        Probed {
            tex: &self.store,
            bsdfs: &self.bsdfs,
        }
    }
}
