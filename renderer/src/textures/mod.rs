//! Textures: every colour or float parameter of a BSDF or emitter is a
//! [`TexRef`] into the scene's [`TextureStore`]; a constant is a texture too,
//! so plugins never special-case "value or texture". One file per plugin (the file stem
//! is the scene `type`), listed once in the registry at the bottom of this file;
//! everything else about the category is derived from that list.
//!
//! Every `<rgb>`, `<float>` or `<spectrum>` parameter of a plugin becomes a texture of
//! the [`rawconstant`] plugin (its record is the colour, converted for its use; a
//! `rawconstant` object is the same record without the conversion), so the kernels'
//! constant lookup is one read of that record. [`image_file`] loads images for
//! `bitmap` and the `envmap` emitter.
//!
//! # Adding a texture
//!
//! A plugin is three things, and nothing outside them changes:
//!
//! 1. **`src/textures/<name>.rs`**: the module doc is the plugin's manual (a first
//!    sentence `` `<name>`: ... ``, a `| parameter | type | default | meaning |` table,
//!    an XML example; `heliograph plugins <name>` prints it). The file defines the
//!    plugin's record, a `#[repr(C)]` struct of `u32`/`f32` fields (texture handles are
//!    [`TexRef`]s, uv maps [`UvTransform`]s) declared with
//!    [`device_record!`](crate::device_record), and implements [`TexturePlugin`]:
//!    `build` reads the properties through a [`BuildContext`] (nested textures, images,
//!    mesh attributes, parameter declarations — never the scene builder itself),
//!    `record` gives the record with what only the flattening knows ([`RecordCtx`]:
//!    where an image's texels start, the attribute table's row length), and
//!    `eval`/`eval_1`/`eval_1_grad`/`mean` evaluate it on the CPU. The flags (`PICKS`,
//!    `GRADIENT`) say which functions its twin has. Its tests sit at the bottom.
//! 2. **`kernels/textures/<name>.cuh`**: the CUDA twin. It includes `texture.cuh`,
//!    defines the record's twin with the same name, field names and order (the layout
//!    checks compare it with the Rust record on every compile and on the GPU), and
//!    `<name>_eval`, `<name>_eval_1` (or, for a plugin that `PICKS`, `<name>_pick`,
//!    `<name>_pick_1`) and with `GRADIENT` `<name>_eval_1_grad`, with the signatures
//!    of [`registry`]'s dispatch, repeating the Rust float operations in the same order.
//! 3. **One line** in `register_plugins!` below, `TAG = module::Plugin`,
//!    appended at the end (a line's position is its tag), next to the module's
//!    `pub mod` line.
//!
//! From the list, the registry derives: the [`AnyTexture`] enum and its dispatch, the
//! [`tag`] constants, [`KNOWN`] (unknown types get a "did you mean"), the build match
//! ([`build`]), the flattening into device records ([`registry::flatten`]: a
//! [`RecordRef`](crate::plugin::record::RecordRef) `{kind, offset}` per texture and the
//! records in one word blob, each in a 16-byte slot), the record layout checks, and the
//! CUDA side — the `HG_TEX_<TAG>` defines, the `#include` of every twin and the dispatch
//! `switch`es, generated as the kernel file `textures/registry.cuh`
//! ([`registry::cuda_source`]) — as well as the listing of `heliograph plugins`.
//!
//! ```ignore
//! //! `gradient`: ... manual ...
//! #[derive(Clone, Copy, Debug, PartialEq)]
//! #[repr(C)]
//! pub struct Gradient {
//!     /// Colour at u = 0 and u = 1.
//!     pub from: TexRef,
//!     pub to: TexRef,
//! }
//! device_record!(Gradient { from, to });
//!
//! impl TexturePlugin for Gradient {
//!     type Record = Self;
//!     const READS_UV: bool = true;
//!     fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> { ... }
//!     fn record(&self, _at: &RecordCtx) -> Self { *self }
//!     fn eval(..) { .. }  fn mean(..) { .. }
//! }
//! ```

pub mod image_file;

pub mod registry;

pub use bitmap::{FilterType, WrapMode};
pub use mesh_attribute::AttributeTable;

use std::sync::Arc;

use crate::desc::props::{PixelArray, Props};
use crate::desc::ObjectDesc;
use crate::error::{Error, Result};
use crate::math::{luminance, Color, Frame, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::DeviceRecord;
use crate::plugin::registry::register_plugins;
use crate::plugin::BuildContext;
use crate::shapes::Hit;
use registry::{RecordCtx, TextureEntry};

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
crate::device_record!(UvTransform { m });

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

/// A texture plugin: how it is built, what the kernels read, and how it is evaluated on
/// the CPU (its CUDA twin repeats the lookups; see the module docs).
pub trait TexturePlugin: Copy + std::fmt::Debug + PartialEq {
    /// The record the kernels read: `Self` when the plugin is plain data already, else a
    /// record with what only the flattening knows (where an image's texels start).
    type Record: DeviceRecord;

    /// Picks another texture per point instead of producing a value (`checkerboard`):
    /// its twin defines `<name>_pick` and `<name>_pick_1` (the handle that `eval` and
    /// `eval_1` evaluate instead), which the kernels follow iteratively; the others'
    /// twins define `<name>_eval` and `<name>_eval_1`.
    const PICKS: bool = false;
    /// Has a uv gradient of `eval_1` (`bitmap`): its twin defines `<name>_eval_1_grad`;
    /// the other kinds' gradient is zero.
    const GRADIENT: bool = false;
    /// Whether `eval` reads the surface point's texture coordinates (`uv`). A scene
    /// whose textures all answer no (and that has no `aov` integrator) leaves sphere
    /// hits' uv at zero instead of computing an `atan2` and an `acos` per hit, so a
    /// plugin that reads `uv` must say so. No default, for that reason.
    const READS_UV: bool;
    /// The parameters an update writes in place, with where each lives; the others
    /// rebuild the plugin from its edited description.
    const EDITABLE: &'static [EditableKey] = &[];

    /// Reads the plugin's properties (every one must be read: the registry checks).
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self>;

    /// The record the kernels read, with what the flattening resolved (`at`).
    fn record(&self, at: &RecordCtx) -> Self::Record;

    /// The colour at `at` (`st` holds the scene's textures, images and attributes).
    fn eval(&self, st: &TextureStore, at: &SurfacePoint) -> Color;

    /// The value used as a scalar (roughness, ...): by default the grey value of the
    /// colour, else its luminance.
    fn eval_1(&self, st: &TextureStore, at: &SurfacePoint) -> f32 {
        scalar(self.eval(st, at))
    }

    /// The gradient of [`Self::eval_1`] with respect to uv (for bump maps); zero for a
    /// texture that is constant or piecewise constant in uv.
    fn eval_1_grad(&self, _st: &TextureStore, _at: &SurfacePoint) -> Vec2 {
        Vec2::ZERO
    }

    /// The average value over the texture's domain (for sampling weights).
    fn mean(&self, st: &TextureStore) -> Color;

    /// The colour of a constant texture; `None` for spatially varying ones.
    fn constant(&self) -> Option<Color> {
        None
    }
}

/// A colour used as a scalar: its value when grey, else its luminance.
#[inline]
pub fn scalar(c: Color) -> f32 {
    if c.x == c.y && c.y == c.z {
        c.x
    } else {
        luminance(c)
    }
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
    /// Whether a texture reads the texture coordinates of the points it is evaluated at.
    pub fn reads_uv(&self) -> bool {
        self.records.iter().any(AnyTexture::reads_uv)
    }

    /// Adds a constant texture and returns its handle.
    pub fn add_constant(&mut self, c: Color) -> TexRef {
        self.add(AnyTexture::Constant(Constant::new(c)))
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
    #[inline(always)]
    pub fn eval(&self, t: TexRef, at: &SurfacePoint) -> Color {
        match &self.records[t as usize] {
            // a constant (most reflectances) inline, without a call into the dispatch
            AnyTexture::Constant(c) => c.color(),
            r => self.eval_varying(r, at),
        }
    }

    /// [`Self::eval`] of a texture that is not a constant.
    #[inline(never)]
    fn eval_varying(&self, r: &AnyTexture, at: &SurfacePoint) -> Color {
        r.eval(self, at)
    }

    /// Evaluates a texture used as a scalar (roughness, ...): the luminance of its colour
    /// (the value itself for greyscale data). A checkerboard swaps its colours here, as
    /// Mitsuba 3's `eval_1` does.
    #[inline]
    pub fn eval_1(&self, t: TexRef, at: &SurfacePoint) -> f32 {
        self.records[t as usize].eval_1(self, at)
    }

    /// The gradient of [`Self::eval_1`] with respect to uv (for bump maps): a bitmap's
    /// (see [`Bitmap::eval_1_grad`](TexturePlugin::eval_1_grad)); zero for every other
    /// texture, which is constant or piecewise constant in uv.
    #[inline]
    pub fn eval_1_grad(&self, t: TexRef, at: &SurfacePoint) -> Vec2 {
        self.records[t as usize].eval_1_grad(self, at)
    }

    /// The average value over the texture's domain (for sampling weights).
    pub fn mean(&self, t: TexRef) -> Color {
        self.records[t as usize].mean(self)
    }

    /// The colour of a constant texture; `None` for spatially varying ones.
    pub fn constant(&self, t: TexRef) -> Option<Color> {
        self.records[t as usize].constant()
    }
}

// The registry: one line per plugin, `TAG = module::Plugin`. Append new plugins at the
// end: a line's position is its tag, which the kernel caches and tests rely on.
register_plugins! {
    category "texture" in "textures";
    /// Every texture plugin, one variant per registry line.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum AnyTexture: TexturePlugin, entry TextureEntry, dispatch any_texture;
    fn build_kind(props, ctx: &mut dyn BuildContext);
    CONSTANT = rawconstant::Constant,
    BITMAP = bitmap::Bitmap,
    CHECKERBOARD = checkerboard::Checkerboard,
    MESH_ATTRIBUTE = mesh_attribute::MeshAttribute,
}

impl AnyTexture {
    /// [`TexturePlugin::READS_UV`] of its plugin.
    pub fn reads_uv(&self) -> bool {
        any_texture!(self, t => reads_uv(t))
    }

    /// The colour at `at`.
    #[inline]
    pub fn eval(&self, st: &TextureStore, at: &SurfacePoint) -> Color {
        any_texture!(self, t => t.eval(st, at))
    }

    /// The value used as a scalar.
    #[inline]
    pub fn eval_1(&self, st: &TextureStore, at: &SurfacePoint) -> f32 {
        any_texture!(self, t => t.eval_1(st, at))
    }

    /// The uv gradient of [`Self::eval_1`].
    #[inline]
    pub fn eval_1_grad(&self, st: &TextureStore, at: &SurfacePoint) -> Vec2 {
        any_texture!(self, t => t.eval_1_grad(st, at))
    }

    /// The average value over the texture's domain.
    pub fn mean(&self, st: &TextureStore) -> Color {
        any_texture!(self, t => t.mean(st))
    }

    /// The colour of a constant texture; `None` for spatially varying ones.
    #[inline]
    pub fn constant(&self) -> Option<Color> {
        any_texture!(self, t => t.constant())
    }

    /// The plugin's registry entry.
    pub fn entry(&self) -> &'static TextureEntry {
        &REGISTRY[self.tag() as usize]
    }

    /// The words of the record the kernels read (its slot in the blob).
    pub fn record_words(&self, at: &RecordCtx) -> Vec<u32> {
        use crate::plugin::record::record_words;
        any_texture!(self, t => record_words(&t.record(at)))
    }
}

/// [`TexturePlugin::READS_UV`] of `T`.
fn reads_uv<T: TexturePlugin>(_: &T) -> bool {
    T::READS_UV
}

/// Builds a `<texture>` object into an [`AnyTexture`] (nested textures are built
/// through `ctx` and referred to by handle); every property must be read.
pub fn build(obj: &ObjectDesc, ctx: &mut dyn BuildContext) -> Result<AnyTexture> {
    let t = build_kind(obj, ctx)?;
    obj.props.check_unused(&obj.kind)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desc::Category;
    use crate::error::Loc;
    use crate::scene::builder::BuildCtx;

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
            e.contains("t.xml:4")
                && e.contains("rawconstant, bitmap, checkerboard, mesh_attribute"),
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
