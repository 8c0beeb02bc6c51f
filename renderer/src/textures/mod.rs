//! Textures: every colour or float parameter of a BSDF or emitter is a
//! [`TexRef`] into the scene's [`TextureStore`]; a constant is a texture too,
//! so plugins never special-case "value or texture".
//!
//! Registry: `bitmap`, `checkerboard`, `rawconstant` (one file each); constants come
//! from `<rgb>`/`<float>` properties (and `rawconstant`, without colour conversion). [`image_file`] loads images for `bitmap` and
//! the `envmap` emitter.

pub mod bitmap;
pub mod checkerboard;
pub mod image_file;
pub mod rawconstant;

pub use bitmap::{BitmapTex, FilterType, WrapMode};
pub use checkerboard::Checkerboard;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::math::{luminance, Color, Vec2};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::ObjectDesc;
use crate::scene::props::{PixelArray, Props};

/// A handle into [`TextureStore::records`].
pub use crate::plugin::TexRef;

/// A 2D affine map of uv coordinates: `u' = m[0] u + m[1] v + m[2]`,
/// `v' = m[3] u + m[4] v + m[5]`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct UvTransform {
    /// The two rows of the affine map.
    pub m: [f32; 6],
}

impl UvTransform {
    /// The identity map.
    pub const IDENTITY: UvTransform = UvTransform {
        m: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    };

    /// Reads a `to_uv`-style transform: as Mitsuba 3.9 (checked with
    /// `mi.traverse` on a `<scale>` + `<translate>`), the 2×2 linear part of the
    /// 4×4 matrix plus its x/y translation (fourth column) form the uv map.
    pub fn from_props(p: &Props, key: &str) -> Result<Self> {
        let r = p.transform(key)?.to_rows();
        let m = [r[0][0], r[0][1], r[0][3], r[1][0], r[1][1], r[1][3]];
        if m.iter().any(|v| !v.is_finite()) {
            return Err(Error::param(&p.entry_loc(key), key, "must be finite"));
        }
        Ok(UvTransform { m })
    }

    /// Applies the map.
    #[inline]
    pub fn apply(&self, uv: Vec2) -> Vec2 {
        let m = &self.m;
        Vec2::new(
            m[0] * uv.x + m[1] * uv.y + m[2],
            m[3] * uv.x + m[4] * uv.y + m[5],
        )
    }
}

/// One texture record (plain data; bitmaps point into [`TextureStore::texels`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, u32)]
pub enum AnyTexture {
    /// A constant colour.
    Constant(Color),
    /// An image texture.
    Bitmap(BitmapTex),
    /// A procedural checkerboard.
    Checkerboard(Checkerboard),
}

/// Every texture of a scene plus the images bitmaps and environment maps read.
///
/// Each image is its own shared allocation, so that a parameter update swaps one
/// `Arc` (the same one the scene description holds) instead of copying texels, and a
/// render that still reads the old image keeps it alive.
#[derive(Clone, Debug, Default)]
pub struct TextureStore {
    /// Texture records.
    pub records: Vec<AnyTexture>,
    /// Stored images: linear RGB or single-channel floats, row-major.
    pub images: Vec<Arc<PixelArray>>,
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

    /// Adds an image and returns its index.
    pub fn add_image(&mut self, img: Arc<PixelArray>) -> u32 {
        self.images.push(img);
        (self.images.len() - 1) as u32
    }

    /// The values of image `i`.
    #[inline]
    pub fn image(&self, i: u32) -> &[f32] {
        &self.images[i as usize].data
    }

    /// Evaluates texture `t` at surface coordinates `uv`.
    #[inline]
    pub fn eval(&self, t: TexRef, uv: Vec2) -> Color {
        match &self.records[t as usize] {
            AnyTexture::Constant(c) => *c,
            AnyTexture::Bitmap(b) => b.eval(self.image(b.image), uv),
            AnyTexture::Checkerboard(c) => {
                let which = if c.is_color0(uv) { c.color0 } else { c.color1 };
                self.eval(which, uv)
            }
        }
    }

    /// Evaluates a texture used as a scalar (roughness, ...): the luminance of its colour
    /// (the value itself for greyscale data). A checkerboard swaps its colours here, as
    /// Mitsuba 3's `eval_1` does.
    #[inline]
    pub fn eval_1(&self, t: TexRef, uv: Vec2) -> f32 {
        if let AnyTexture::Checkerboard(c) = &self.records[t as usize] {
            let which = if c.is_color0(uv) { c.color1 } else { c.color0 };
            return self.eval_1(which, uv);
        }
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
            AnyTexture::Bitmap(b) => b.mean(self.image(b.image)),
            AnyTexture::Checkerboard(c) => 0.5 * (self.mean(c.color0) + self.mean(c.color1)),
        }
    }

    /// The colour of a constant texture; `None` for spatially varying ones.
    pub fn constant(&self, t: TexRef) -> Option<Color> {
        match &self.records[t as usize] {
            AnyTexture::Constant(c) => Some(*c),
            _ => None,
        }
    }
}

// Record layouts shared with the CUDA twins.
const _: () = assert!(std::mem::size_of::<BitmapTex>() == 48);
const _: () = assert!(std::mem::size_of::<Checkerboard>() == 32);
const _: () = assert!(std::mem::size_of::<AnyTexture>() == 52);

/// Names of the texture plugins, for error messages.
pub const KNOWN: &[&str] = &["bitmap", "checkerboard", "rawconstant"];

/// Builds a `<texture>` object and returns its handle.
pub fn build(obj: &ObjectDesc, ctx: &mut BuildCtx) -> Result<TexRef> {
    let p = &obj.props;
    let t = match obj.kind.as_str() {
        "bitmap" => AnyTexture::Bitmap(BitmapTex::build(p, ctx)?),
        "checkerboard" => AnyTexture::Checkerboard(Checkerboard::build(p, ctx)?),
        "rawconstant" => AnyTexture::Constant(rawconstant::build(p, ctx)?),
        _ => {
            return Err(Error::UnknownPlugin {
                loc: obj.loc.clone(),
                category: "texture",
                name: obj.kind.clone(),
                known: KNOWN.join(", "),
            })
        }
    };
    p.check_unused(&obj.kind)?;
    ctx.add_texture(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Loc;
    use crate::scene::desc::Category;

    #[test]
    fn unknown_plugins_list_the_known_ones() {
        let obj = ObjectDesc {
            category: Category::Texture,
            kind: "noise".into(),
            id: None,
            props: Props::new(Loc::new("t.xml", 4, 2)),
            loc: Loc::new("t.xml", 4, 2),
        };
        let e = build(&obj, &mut BuildCtx::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.xml:4") && e.contains("bitmap, checkerboard"),
            "{e}"
        );
    }

    #[test]
    fn scalar_lookup_is_the_value_or_the_luminance() {
        let mut st = TextureStore::default();
        let g = st.add_constant(Color::splat(0.3));
        let c = st.add_constant(Color::new(1.0, 0.0, 0.0));
        assert_eq!(st.eval_1(g, Vec2::ZERO), 0.3);
        assert!((st.eval_1(c, Vec2::ZERO) - 0.212671).abs() < 1e-6);
    }
}
