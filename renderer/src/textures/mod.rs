//! Textures: every colour or float parameter of a BSDF or emitter is a
//! [`TexRef`] into the scene's [`TextureStore`]; a constant is a texture too,
//! so plugins never special-case "value or texture".
//!
//! Registry: `bitmap`, `checkerboard` (one file each); constants come from
//! `<rgb>`/`<float>` properties.

use crate::error::{Error, Result};
use crate::math::{luminance, Color, Vec2};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::ObjectDesc;

/// A handle into [`TextureStore::records`].
pub type TexRef = u32;

/// One texture record (plain data; bitmaps point into [`TextureStore::texels`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, u32)]
pub enum AnyTexture {
    /// A constant colour.
    Constant(Color),
}

/// Every texture of a scene plus the texel storage bitmaps index into.
#[derive(Clone, Debug, Default)]
pub struct TextureStore {
    /// Texture records.
    pub records: Vec<AnyTexture>,
    /// Texel data of all bitmaps (linear RGB or single-channel floats).
    pub texels: Vec<f32>,
}

impl TextureStore {
    /// Adds a constant texture and returns its handle.
    pub fn add_constant(&mut self, c: Color) -> TexRef {
        self.add(AnyTexture::Constant(c))
    }

    /// Adds a record and returns its handle.
    pub fn add(&mut self, t: AnyTexture) -> TexRef {
        self.records.push(t);
        (self.records.len() - 1) as TexRef
    }

    /// Evaluates texture `t` at surface coordinates `uv`.
    #[inline]
    pub fn eval(&self, t: TexRef, _uv: Vec2) -> Color {
        match &self.records[t as usize] {
            AnyTexture::Constant(c) => *c,
        }
    }

    /// Evaluates a texture used as a scalar (roughness, ...): the luminance of its colour
    /// (the value itself for greyscale data).
    #[inline]
    pub fn eval_1(&self, t: TexRef, uv: Vec2) -> f32 {
        let c = self.eval(t, uv);
        if c.x == c.y && c.y == c.z {
            c.x
        } else {
            luminance(c)
        }
    }

    /// The average value over the texture's domain (for sampling weights).
    pub fn mean(&self, t: TexRef) -> Color {
        match &self.records[t as usize] {
            AnyTexture::Constant(c) => *c,
        }
    }
}

/// Names of the texture plugins, for error messages.
pub const KNOWN: &[&str] = &[];

/// Builds a `<texture>` object and returns its handle.
pub fn build(obj: &ObjectDesc, _ctx: &mut BuildCtx) -> Result<TexRef> {
    Err(Error::UnknownPlugin {
        loc: obj.loc.clone(),
        category: "texture",
        name: obj.kind.clone(),
        known: KNOWN.join(", "),
    })
}
