//! Textures: every colour or float parameter of a BSDF or emitter is a
//! [`TexRef`] into the scene's [`TextureStore`]; a constant is a texture too,
//! so plugins never special-case "value or texture".
//!
//! Registry: `bitmap`, `checkerboard`, `mesh_attribute`, `rawconstant` (one file each); constants come
//! from `<rgb>`/`<float>` properties (and `rawconstant`, without colour conversion). [`image_file`] loads images for `bitmap` and
//! the `envmap` emitter.

pub mod bitmap;
pub mod checkerboard;
pub mod image_file;
pub mod mesh_attribute;
pub mod rawconstant;

pub use bitmap::{BitmapTex, FilterType, WrapMode};
pub use checkerboard::Checkerboard;
pub use mesh_attribute::{AttributeTable, MeshAttributeTex};

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::math::{luminance, Color, Frame, Vec2, Vec3};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::ObjectDesc;
use crate::scene::props::{PixelArray, Props};
use crate::shapes::Hit;

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

/// Where a texture or a BSDF is evaluated: the texture coordinates, the mesh data that
/// `mesh_attribute` reads, and the differential geometry that `bumpmap` reads, in the
/// shading frame (the frame whose z is the shading normal and whose x follows dp/du).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfacePoint {
    /// Texture coordinates.
    pub uv: Vec2,
    /// The shape (a scene shape handle), or [`SurfacePoint::NO_SHAPE`] off any surface
    /// (emitter and environment lookups).
    pub shape: u32,
    /// Meshes: the triangle (an index into the mesh store's triangles).
    pub prim: u32,
    /// Meshes: the barycentric coordinates (b1, b2) of the point in its triangle.
    pub bary: Vec2,
    /// dp/du in the shading frame.
    pub dpdu: Vec3,
    /// dp/dv in the shading frame.
    pub dpdv: Vec3,
    /// The geometric normal in the shading frame.
    pub ng: Vec3,
}

impl SurfacePoint {
    /// [`Self::shape`] of a lookup that is not on a surface.
    pub const NO_SHAPE: u32 = u32::MAX;

    /// A lookup by texture coordinates alone (a flat, unit-speed parameterisation).
    #[inline]
    pub fn at_uv(uv: Vec2) -> Self {
        SurfacePoint {
            uv,
            shape: Self::NO_SHAPE,
            prim: 0,
            bary: Vec2::ZERO,
            dpdu: Vec3::X,
            dpdv: Vec3::Y,
            ng: Vec3::Z,
        }
    }

    /// The point of a hit, with its differential geometry in the shading frame `f`.
    #[inline]
    pub fn at_hit(h: &Hit, f: &Frame) -> Self {
        SurfacePoint {
            uv: h.uv,
            shape: h.shape,
            prim: h.prim,
            bary: h.bary,
            dpdu: f.to_local(h.dpdu),
            dpdv: f.to_local(h.dpdv),
            ng: f.to_local(h.ng),
        }
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
    /// A value stored on the mesh that was hit.
    MeshAttribute(MeshAttributeTex),
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
    /// The mesh attributes that `mesh_attribute` textures read.
    pub attributes: AttributeTable,
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

    /// Evaluates texture `t` at `at`.
    #[inline]
    pub fn eval(&self, t: TexRef, at: &SurfacePoint) -> Color {
        match &self.records[t as usize] {
            AnyTexture::Constant(c) => *c,
            AnyTexture::Bitmap(b) => b.eval(self.image(b.image), at.uv),
            AnyTexture::Checkerboard(c) => {
                let which = if c.is_color0(at.uv) {
                    c.color0
                } else {
                    c.color1
                };
                self.eval(which, at)
            }
            AnyTexture::MeshAttribute(m) => self.attributes.eval(m, at),
        }
    }

    /// Evaluates a texture used as a scalar (roughness, ...): the luminance of its colour
    /// (the value itself for greyscale data). A checkerboard swaps its colours here, as
    /// Mitsuba 3's `eval_1` does.
    #[inline]
    pub fn eval_1(&self, t: TexRef, at: &SurfacePoint) -> f32 {
        if let AnyTexture::Checkerboard(c) = &self.records[t as usize] {
            let which = if c.is_color0(at.uv) {
                c.color1
            } else {
                c.color0
            };
            return self.eval_1(which, at);
        }
        if let AnyTexture::MeshAttribute(m) = &self.records[t as usize] {
            return self.attributes.eval_1(m, at);
        }
        let c = self.eval(t, at);
        if c.x == c.y && c.y == c.z {
            c.x
        } else {
            luminance(c)
        }
    }

    /// The gradient of [`Self::eval_1`] with respect to uv (for bump maps): a bitmap's
    /// (see [`BitmapTex::eval_1_grad`]); zero for every other texture, which is constant
    /// or piecewise constant in uv.
    #[inline]
    pub fn eval_1_grad(&self, t: TexRef, at: &SurfacePoint) -> Vec2 {
        match &self.records[t as usize] {
            AnyTexture::Bitmap(b) => b.eval_1_grad(self.image(b.image), at.uv),
            _ => Vec2::ZERO,
        }
    }

    /// The average value over the texture's domain (for sampling weights).
    pub fn mean(&self, t: TexRef) -> Color {
        match &self.records[t as usize] {
            AnyTexture::Constant(c) => *c,
            AnyTexture::Bitmap(b) => b.mean(self.image(b.image)),
            AnyTexture::Checkerboard(c) => 0.5 * (self.mean(c.color0) + self.mean(c.color1)),
            AnyTexture::MeshAttribute(m) => self.attributes.mean(m),
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
pub const KNOWN: &[&str] = &["bitmap", "checkerboard", "mesh_attribute", "rawconstant"];

/// Builds a `<texture>` object and returns its handle.
pub fn build(obj: &ObjectDesc, ctx: &mut BuildCtx) -> Result<TexRef> {
    let p = &obj.props;
    let t = match obj.kind.as_str() {
        "bitmap" => AnyTexture::Bitmap(BitmapTex::build(p, ctx)?),
        "checkerboard" => AnyTexture::Checkerboard(Checkerboard::build(p, ctx)?),
        "rawconstant" => AnyTexture::Constant(rawconstant::build(p, ctx)?),
        "mesh_attribute" => AnyTexture::MeshAttribute(mesh_attribute::build(p, ctx)?),
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
            e.contains("t.xml:4") && e.contains("bitmap, checkerboard, mesh_attribute"),
            "{e}"
        );
    }

    #[test]
    fn scalar_lookup_is_the_value_or_the_luminance() {
        let mut st = TextureStore::default();
        let g = st.add_constant(Color::splat(0.3));
        let c = st.add_constant(Color::new(1.0, 0.0, 0.0));
        let at = SurfacePoint::at_uv(Vec2::ZERO);
        assert_eq!(st.eval_1(g, &at), 0.3);
        assert!((st.eval_1(c, &at) - 0.212671).abs() < 1e-6);
    }
}
