//! `bitmap`: an image texture, looked up by surface uv.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `filename` | string | — | PNG, JPEG or OpenEXR file (relative to the scene file) |
//! | `bitmap` / `data` | bitmap array | — | in-memory linear pixels (instead of `filename`) |
//! | `filter_type` | string | `bilinear` | `bilinear` or `nearest` |
//! | `wrap_mode` | string | `repeat` | `repeat`, `mirror` or `clamp` outside `[0, 1]` |
//! | `raw` | boolean | false | keep 8/16-bit values as stored instead of decoding sRGB |
//! | `format` | string | `auto` | Mitsuba's storage precision: `auto`, `variant`, `float16` (or `fp16`) or `uint8`; accepted for compatibility, texels are always kept as 32-bit floats |
//! | `to_uv` | transform | identity | affine uv map: the 2×2 linear part and x/y translation of the 4×4 (as Mitsuba) |
//!
//! Conventions (Mitsuba 3): row 0 of the image is `v = 0`, no flip; texel `(x, y)`
//! has its centre at `uv = ((x + 0.5) / w, (y + 0.5) / h)`; bilinear lookups
//! interpolate between texel centres; grey images stay single-channel.
//! Float files and arrays are linear; 8/16-bit files are sRGB unless `raw`.
//!
//! ```xml
//! <texture type="bitmap" name="reflectance">
//!     <string name="filename" value="textures/wood.png"/>
//!     <string name="wrap_mode" value="mirror"/>
//! </texture>
//! ```

use super::{RecordCtx, SurfacePoint, TexturePlugin, TextureStore, UvTransform};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::{floor_i32, luminance, Color, Vec2};
use crate::plugin::gradient::TexelGradient;
use crate::plugin::patch::{EditableKey, Place};
use crate::plugin::BuildContext;

/// How texels are reconstructed between their centres.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum FilterType {
    /// The texel that contains the point.
    Nearest = 0,
    /// Bilinear interpolation between the four nearest texel centres.
    Bilinear = 1,
}

/// What happens to texel coordinates outside the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum WrapMode {
    /// Tile the image.
    Repeat = 0,
    /// Tile with every other copy mirrored.
    Mirror = 1,
    /// Use the nearest edge texel.
    Clamp = 2,
}

/// The bitmap texture; texels live in [`super::TextureStore::images`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bitmap {
    /// Index of the image in [`super::TextureStore::images`].
    pub image: u32,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Channels per texel (1 or 3).
    pub channels: u32,
    /// Reconstruction filter.
    pub filter: FilterType,
    /// Wrap mode.
    pub wrap: WrapMode,
    /// Applied to surface uv before the lookup.
    pub to_uv: UvTransform,
}

/// The record the kernels read: the bitmap with its image resolved to where its texels
/// start in the flat texel array.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct BitmapRecord {
    /// The image's first value in the flat texel array.
    pub offset: u32,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Channels per texel (1 or 3).
    pub channels: u32,
    /// [`FilterType`] as its `u32`.
    pub filter: u32,
    /// [`WrapMode`] as its `u32`.
    pub wrap: u32,
    /// Applied to surface uv before the lookup.
    pub to_uv: UvTransform,
}
crate::device_record!(BitmapRecord {
    offset,
    width,
    height,
    channels,
    filter,
    wrap,
    to_uv: UvTransform
});

impl TexturePlugin for Bitmap {
    type Record = BitmapRecord;
    const GRADIENT: bool = true;
    const READS_UV: bool = true;
    const EDITABLE: &'static [EditableKey] = &[EditableKey {
        key: "data",
        place: Place::Image,
    }];

    /// Reads the plugin's parameters, adding the image to the scene's texture store.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let filter = match p
            .choice("filter_type", "bilinear", &["bilinear", "nearest"])?
            .as_str()
        {
            "nearest" => FilterType::Nearest,
            _ => FilterType::Bilinear,
        };
        let wrap = match p
            .choice("wrap_mode", "repeat", &["repeat", "mirror", "clamp"])?
            .as_str()
        {
            "mirror" => WrapMode::Mirror,
            "clamp" => WrapMode::Clamp,
            _ => WrapMode::Repeat,
        };
        let raw = p.bool("raw", false)?;
        // storage precision only: every texel is kept as an f32 here
        p.choice(
            "format",
            "auto",
            &["auto", "variant", "float16", "fp16", "uint8"],
        )?;
        let to_uv = UvTransform::from_props(p, "to_uv")?;
        let img = ctx.image(p, raw)?;
        if img.data.len() > u32::MAX as usize || img.width.max(img.height) > 1 << 24 {
            return Err(Error::param(&p.loc, "filename", "image too large"));
        }
        let (width, height, channels) = (img.width, img.height, img.channels);
        ctx.declare_image("data", &img);
        Ok(Bitmap {
            image: ctx.add_image(img)?,
            width: width as u32,
            height: height as u32,
            channels: channels as u32,
            filter,
            wrap,
            to_uv,
        })
    }

    fn record(&self, at: &RecordCtx) -> BitmapRecord {
        BitmapRecord {
            offset: at.image_offsets[self.image as usize],
            width: self.width,
            height: self.height,
            channels: self.channels,
            filter: self.filter as u32,
            wrap: self.wrap as u32,
            to_uv: self.to_uv,
        }
    }

    #[inline]
    fn eval(&self, st: &TextureStore, at: &SurfacePoint) -> Color {
        self.eval_texels(st.image(self.image), at.uv)
    }

    #[inline]
    fn eval_1_grad(&self, st: &TextureStore, at: &SurfacePoint) -> Vec2 {
        self.grad_texels(st.image(self.image), at.uv)
    }

    fn mean(&self, st: &TextureStore) -> Color {
        self.mean_texels(st.image(self.image))
    }
}

impl Bitmap {
    /// The index (`y · width + x`) of the texel at integer coordinates, wrapped per
    /// [`Self::wrap`].
    #[inline]
    fn index(&self, x: i32, y: i32) -> usize {
        let x = wrap(x, self.width as i32, self.wrap) as usize;
        wrap(y, self.height as i32, self.wrap) as usize * self.width as usize + x
    }

    /// The texel indices (`y · width + x`) of the bilinear lookup whose top-left texel
    /// is `(x, y)`: `(x, y)`, `(x + 1, y)`, `(x, y + 1)`, `(x + 1, y + 1)`, wrapped.
    /// Each coordinate is wrapped once: a repeat or mirror wrap outside the image is an
    /// integer division.
    #[inline(always)]
    fn corners(&self, x: i32, y: i32) -> [usize; 4] {
        let (w, h) = (self.width as i32, self.height as i32);
        // (plain calls: `[x, x + 1].map(..)` compiled to out-of-line closure calls)
        let (x0, x1) = (
            wrap(x, w, self.wrap) as usize,
            wrap(x + 1, w, self.wrap) as usize,
        );
        let row = |i: i32| wrap(i, h, self.wrap) as usize * w as usize;
        let (y0, y1) = (row(y), row(y + 1));
        [y0 + x0, y0 + x1, y1 + x0, y1 + x1]
    }

    /// Texel `k` (`y · width + x`, already wrapped).
    #[inline(always)]
    fn texel_at(&self, texels: &[f32], k: usize) -> Color {
        let i = k * self.channels as usize;
        if self.channels == 1 {
            Color::splat(texels[i])
        } else {
            // one bounds check for the three channels
            let t: &[f32; 3] = texels[i..i + 3].try_into().expect("three floats");
            Color::new(t[0], t[1], t[2])
        }
    }

    /// Where a lookup at surface coordinates `uv` lands: the texel grid position of
    /// the lookup (for bilinear filtering, relative to texel centres), clamped so that
    /// far-away coordinates stay inside i32 (NaN becomes texel 0).
    #[inline]
    fn grid(&self, uv: Vec2) -> Vec2 {
        let uv = self.to_uv.apply(uv);
        let res = Vec2::new(self.width as f32, self.height as f32);
        let lim = Vec2::splat(1.0e7);
        match self.filter {
            FilterType::Nearest => (uv * res).clamp(-lim, lim),
            FilterType::Bilinear => (uv * res - 0.5).clamp(-lim, lim),
        }
    }

    /// The filtered value of `texels` (this texture's image) at surface coordinates `uv`.
    #[inline]
    pub fn eval_texels(&self, texels: &[f32], uv: Vec2) -> Color {
        let p = self.grid(uv);
        let (x, y) = (floor_i32(p.x), floor_i32(p.y));
        match self.filter {
            FilterType::Nearest => self.texel_at(texels, self.index(x, y)),
            FilterType::Bilinear => {
                let w1 = p - Vec2::new(x as f32, y as f32);
                let [k00, k10, k01, k11] = self.corners(x, y);
                let at = |k: usize| self.texel_at(texels, k);
                let top = at(k00) * (1.0 - w1.x) + at(k10) * w1.x;
                let bot = at(k01) * (1.0 - w1.x) + at(k11) * w1.x;
                top * (1.0 - w1.y) + bot * w1.y
            }
        }
    }

    /// The texels a lookup at `uv` reads and their weights in [`Self::eval_texels`]:
    /// (texel index `y · width + x`, weight), four for bilinear filtering (the same
    /// texel may appear twice after wrapping), one with weight 1 and three with weight 0
    /// for nearest. Differentiable rendering scatters a lookup's gradient with them.
    pub fn texel_weights(&self, uv: Vec2) -> [(usize, f32); 4] {
        let p = self.grid(uv);
        let (x, y) = (floor_i32(p.x), floor_i32(p.y));
        match self.filter {
            FilterType::Nearest => {
                let i = self.index(x, y);
                [(i, 1.0), (i, 0.0), (i, 0.0), (i, 0.0)]
            }
            FilterType::Bilinear => {
                let w1 = p - Vec2::new(x as f32, y as f32);
                let w0 = Vec2::ONE - w1;
                let [k00, k10, k01, k11] = self.corners(x, y);
                [
                    (k00, w0.x * w0.y),
                    (k10, w1.x * w0.y),
                    (k01, w0.x * w1.y),
                    (k11, w1.x * w1.y),
                ]
            }
        }
    }

    /// The gradient of the scalar value (a single channel, or the luminance) with
    /// respect to the surface's uv, as Mitsuba 3.9's `eval_1_grad`: the bilinear
    /// interpolant's derivative, carried through the uv map by its transpose and scaled
    /// by the resolution; zero for nearest lookups.
    pub fn grad_texels(&self, texels: &[f32], uv: Vec2) -> Vec2 {
        if self.filter != FilterType::Bilinear {
            return Vec2::ZERO;
        }
        let res = Vec2::new(self.width as f32, self.height as f32);
        let p = self.grid(uv);
        let (x, y) = (floor_i32(p.x), floor_i32(p.y));
        let w1 = p - Vec2::new(x as f32, y as f32);
        let w0 = Vec2::ONE - w1;
        let f = |k: usize| {
            let c = self.texel_at(texels, k);
            if self.channels == 1 {
                c.x
            } else {
                luminance(c)
            }
        };
        let [f00, f10, f01, f11] = self.corners(x, y).map(f);
        let dx = w0.y * (f10 - f00) + w1.y * (f11 - f01);
        let dy = w0.x * (f01 - f00) + w1.x * (f11 - f10);
        let m = &self.to_uv.m;
        Vec2::new(m[0] * dx + m[3] * dy, m[1] * dx + m[4] * dy) * res
    }

    /// The average texel value of `texels` (this texture's image).
    pub fn mean_texels(&self, texels: &[f32]) -> Color {
        let n = (self.width * self.height) as usize;
        let c = self.channels as usize;
        let data = &texels[..n * c];
        let mut acc = [0.0f64; 3];
        for px in data.chunks_exact(c) {
            for k in 0..3 {
                acc[k] += px[k.min(c - 1)] as f64;
            }
        }
        Color::new(acc[0] as f32, acc[1] as f32, acc[2] as f32) / n as f32
    }

    /// The mean luminance (Mitsuba's scalar `mean()` of a bitmap).
    pub fn mean_luminance(&self, texels: &[f32]) -> f32 {
        luminance(self.mean_texels(texels))
    }
}

impl TexelGradient for Bitmap {
    type At = Vec2;

    /// Scatters a lookup's derivative with [`Bitmap::texel_weights`]; texels of weight
    /// zero (a nearest lookup's three) are left alone.
    fn add_texel_gradient(&self, uv: Vec2, s: [f32; 3], channels: usize, grad: &mut [f32]) {
        for (texel, w) in self.texel_weights(uv) {
            if w != 0.0 {
                for c in 0..channels {
                    grad[texel * channels + c] += w * s[c];
                }
            }
        }
    }
}

/// Maps an integer texel coordinate into `[0, n)`.
#[inline(always)]
fn wrap(i: i32, n: i32, mode: WrapMode) -> i32 {
    if (0..n).contains(&i) {
        return i; // every mode leaves a coordinate inside the image as it is
    }
    match mode {
        WrapMode::Clamp => i.clamp(0, n - 1),
        WrapMode::Repeat => i.rem_euclid(n),
        WrapMode::Mirror => {
            // period 2n: 0..n-1 then n-1..0 (the edge texel repeats)
            let m = i.rem_euclid(2 * n);
            if m < n {
                m
            } else {
                2 * n - 1 - m
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desc::props::{PixelArray, Value};
    use crate::error::Loc;
    use crate::math::Transform;
    use crate::scene::builder::BuildCtx;
    use crate::textures::image_file::tests::scratch;
    use crate::textures::{AnyTexture, TextureStore};
    use std::sync::Arc;

    /// A w×h single-channel array whose texel (x, y) holds `10 y + x`.
    fn ramp(w: usize, h: usize) -> Arc<PixelArray> {
        let data = (0..h)
            .flat_map(|y| (0..w).map(move |x| (10 * y + x) as f32))
            .collect();
        Arc::new(PixelArray {
            width: w,
            height: h,
            channels: 1,
            data,
        })
    }

    fn build(px: Arc<PixelArray>, extra: &[(&str, Value)]) -> Result<(TextureStore, u32)> {
        let mut p = Props::new(Loc::new("t.xml", 1, 1));
        p.insert("data", Value::Pixels(px), Loc::new("t.xml", 2, 1))?;
        for (i, (k, v)) in extra.iter().enumerate() {
            p.insert(k, v.clone(), Loc::new("t.xml", 3 + i as u32, 1))?;
        }
        let mut ctx = BuildCtx::default();
        ctx.textures.add_constant(Color::ONE); // so the handles are exercised
        ctx.textures.add_image(ramp(1, 1));
        let b = Bitmap::build(&p, &mut ctx)?;
        p.check_unused("bitmap")?;
        let t = ctx.textures.add(AnyTexture::Bitmap(b));
        Ok((ctx.textures, t))
    }

    fn s(v: &str) -> Value {
        Value::String(v.into())
    }

    fn at(store: &TextureStore, t: u32, u: f32, v: f32) -> f32 {
        store
            .eval(t, &crate::textures::SurfacePoint::at_uv(Vec2::new(u, v)))
            .x
    }

    #[test]
    fn bilinear_hits_texel_centres_and_interpolates_between_them() {
        let (st, t) = build(ramp(4, 2), &[]).unwrap();
        // texel (x, y) centre at ((x+.5)/4, (y+.5)/2); row 0 is v in [0, 0.5)
        assert_eq!(at(&st, t, 0.125, 0.25), 0.0);
        assert_eq!(at(&st, t, 0.625, 0.75), 12.0);
        // halfway between the centres of (1,0) and (2,0)
        assert!((at(&st, t, 0.5, 0.25) - 1.5).abs() < 1e-6);
        // halfway between rows 0 and 1 at column 3
        assert!((at(&st, t, 0.875, 0.5) - 8.0).abs() < 1e-6);
    }

    #[test]
    fn nearest_picks_the_containing_texel() {
        let (st, t) = build(ramp(4, 2), &[("filter_type", s("nearest"))]).unwrap();
        assert_eq!(at(&st, t, 0.26, 0.49), 1.0);
        assert_eq!(at(&st, t, 0.24, 0.51), 10.0);
        assert_eq!(at(&st, t, 0.999, 0.999), 13.0);
    }

    #[test]
    fn wrap_modes_follow_mitsuba() {
        // nearest lookups one texel beyond each edge of a 4-wide ramp (row 0)
        let cases = [
            ("repeat", [3.0, 0.0, 1.0, 3.0, 0.0]),
            ("mirror", [0.0, 0.0, 1.0, 3.0, 3.0]),
            ("clamp", [0.0, 0.0, 1.0, 3.0, 3.0]),
        ];
        let us = [-0.125, 0.125, 0.375, 0.875, 1.125];
        for (mode, want) in cases {
            let (st, t) = build(
                ramp(4, 2),
                &[("filter_type", s("nearest")), ("wrap_mode", s(mode))],
            )
            .unwrap();
            for (u, w) in us.iter().zip(want) {
                assert_eq!(at(&st, t, *u, 0.25), w, "{mode} at u={u}");
            }
        }
        // mirror and clamp differ two texels out: mirror goes 0,0,1,.. backwards
        let (st, t) = build(
            ramp(4, 2),
            &[("filter_type", s("nearest")), ("wrap_mode", s("mirror"))],
        )
        .unwrap();
        assert_eq!(at(&st, t, -0.375, 0.25), 1.0);
        assert_eq!(at(&st, t, 1.375, 0.25), 2.0);
        // bilinear repeat at u = 0 blends the last and first column
        let (st, t) = build(ramp(4, 2), &[]).unwrap();
        assert!((at(&st, t, 0.0, 0.25) - 1.5).abs() < 1e-6);
        let (st, t) = build(ramp(4, 2), &[("wrap_mode", s("clamp"))]).unwrap();
        assert!((at(&st, t, 0.0, 0.25) - 0.0).abs() < 1e-6);
        assert!(at(&st, t, f32::NAN, 1e30).is_finite());
    }

    #[test]
    fn bilinear_lookups_wrap_every_corner_as_the_textbook_rule() {
        // the textbook rule per corner texel, in f64, against the lookup and its weights,
        // for coordinates inside, at the edges and several periods outside the image
        let textbook = |i: i64, n: i64, mode: &str| match mode {
            "repeat" => i.rem_euclid(n),
            "clamp" => i.clamp(0, n - 1),
            _ => {
                let m = i.rem_euclid(2 * n);
                if m < n {
                    m
                } else {
                    2 * n - 1 - m
                }
            }
        };
        let (w, h) = (5i64, 3i64);
        let mut rng = crate::math::Pcg32::new(7, 1);
        for mode in ["repeat", "mirror", "clamp"] {
            let (st, t) = build(ramp(w as usize, h as usize), &[("wrap_mode", s(mode))]).unwrap();
            let AnyTexture::Bitmap(b) = &st.records[t as usize] else {
                unreachable!("a bitmap")
            };
            let texels = st.image(b.image);
            for k in 0..4000 {
                // a quarter of the points on texel centres and edges, exactly
                let (u, v) = if k % 4 == 0 {
                    let q = |r: f32, n: i64| ((r * 64.0).floor() - 24.0) / (2 * n) as f32;
                    (q(rng.next_f32(), w), q(rng.next_f32(), h))
                } else {
                    (rng.next_f32() * 8.0 - 4.0, rng.next_f32() * 8.0 - 4.0)
                };
                let (px, py) = (u as f64 * w as f64 - 0.5, v as f64 * h as f64 - 0.5);
                let (x, y) = (px.floor(), py.floor());
                let (fx, fy) = (px - x, py - y);
                let texel = |dx: i64, dy: i64| {
                    let tx = textbook(x as i64 + dx, w, mode);
                    let ty = textbook(y as i64 + dy, h, mode);
                    (10 * ty + tx) as f64
                };
                let want = (texel(0, 0) * (1.0 - fx) + texel(1, 0) * fx) * (1.0 - fy)
                    + (texel(0, 1) * (1.0 - fx) + texel(1, 1) * fx) * fy;
                let got = b.eval_texels(texels, Vec2::new(u, v)).x as f64;
                assert!(
                    (got - want).abs() < 1e-4,
                    "{mode} at ({u}, {v}): {got} vs {want}"
                );
                let summed: f64 = b
                    .texel_weights(Vec2::new(u, v))
                    .iter()
                    .map(|&(i, wt)| texels[i] as f64 * wt as f64)
                    .sum();
                assert!((summed - want).abs() < 1e-4, "{mode} weights at ({u}, {v})");
            }
        }
    }

    #[test]
    fn png_row_zero_is_v_zero_and_8bit_is_decoded() {
        let dir = scratch("bitmap_png");
        let path = dir.join("two_rows.png");
        // 1x2 grey: top 128, bottom 255
        image::save_buffer(&path, &[128u8, 255], 1, 2, image::ExtendedColorType::L8).unwrap();
        for (raw, top) in [(false, 0.2158605), (true, 128.0 / 255.0)] {
            let mut p = Props::new(Loc::new("t.xml", 1, 1));
            p.insert(
                "filename",
                s(path.to_str().unwrap()),
                Loc::new("t.xml", 2, 1),
            )
            .unwrap();
            p.insert("filter_type", s("nearest"), Loc::new("t.xml", 3, 1))
                .unwrap();
            p.insert("raw", Value::Bool(raw), Loc::new("t.xml", 4, 1))
                .unwrap();
            let mut ctx = BuildCtx::default();
            let b = Bitmap::build(&p, &mut ctx).unwrap();
            let st = ctx.textures;
            let texels = st.image(b.image);
            assert!((b.eval_texels(texels, Vec2::new(0.5, 0.25)).x - top).abs() < 1e-6);
            assert!((b.eval_texels(texels, Vec2::new(0.5, 0.75)).y - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn to_uv_uses_the_linear_part_and_xy_translation() {
        // scale u by 2 and shift u by 0.25 (an XML <scale> then <translate>), as Mitsuba 3.9 reads it
        let rows = [
            [2.0, 0.0, 0.0, 0.25],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let tf = Transform::from_rows(rows).unwrap();
        let (st, t) = build(
            ramp(4, 2),
            &[
                ("filter_type", s("nearest")),
                ("to_uv", Value::Transform(tf)),
            ],
        )
        .unwrap();
        // u = 0.1 -> 0.45 -> texel 1
        assert_eq!(at(&st, t, 0.1, 0.25), 1.0);
        assert_eq!(at(&st, t, 0.3, 0.25), 3.0);
    }

    #[test]
    fn mean_and_errors() {
        let (st, t) = build(ramp(4, 2), &[]).unwrap();
        assert!((st.mean(t).x - 6.5).abs() < 1e-6);
        let e = build(ramp(4, 2), &[("wrap_mode", s("tile"))])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.xml:3") && e.contains("wrap_mode") && e.contains("repeat"),
            "{e}"
        );
        let mut bad = (*ramp(2, 2)).clone();
        bad.data[3] = f32::INFINITY;
        let e = build(Arc::new(bad), &[]).unwrap_err().to_string();
        assert!(e.contains("t.xml:2") && e.contains("non-finite"), "{e}");
        let e = build(ramp(2, 2), &[("filename", s("x.png"))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("not both"), "{e}");
        let mut p = Props::new(Loc::new("t.xml", 1, 1));
        p.insert(
            "filename",
            s("/nonexistent/dir/tex.png"),
            Loc::new("t.xml", 5, 1),
        )
        .unwrap();
        let e = Bitmap::build(&p, &mut BuildCtx::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.xml:5") && e.contains("/nonexistent/dir/tex.png"),
            "{e}"
        );
    }

    #[test]
    fn the_scalar_gradient_is_the_bilinear_slope() {
        // a smooth image (no texel is linear in its neighbours) under a uv map with a
        // scale and a translation: central differences of eval_1 inside one bilinear
        // cell agree with the analytic gradient; nearest lookups have none
        let data: Vec<f32> = (0..5 * 3)
            .map(|i| ((i * 7) % 11) as f32 * 0.1 + (i as f32 * 0.3).sin())
            .collect();
        let px = Arc::new(PixelArray {
            width: 5,
            height: 3,
            channels: 1,
            data,
        });
        let scale = Transform::scale(crate::math::Vec3::new(1.5, 0.5, 1.0)).unwrap();
        let shift = Transform::translate(crate::math::Vec3::new(0.1, 0.2, 0.0));
        let to_uv = Value::Transform(shift.then_after(&scale));
        let (st, t) = build(px.clone(), &[("to_uv", to_uv.clone())]).unwrap();
        let AnyTexture::Bitmap(b) = st.records[t as usize] else {
            unreachable!()
        };
        let img = st.image(b.image);
        let mut rng = crate::math::Pcg32::new(9, 1);
        for _ in 0..200 {
            let uv = Vec2::new(rng.next_f32() * 3.0 - 1.0, rng.next_f32() * 3.0 - 1.0);
            let g = b.grad_texels(img, uv);
            let h = 1e-3;
            let f = |d: Vec2| b.eval_texels(img, uv + d).x as f64;
            let fd = Vec2::new(
                ((f(Vec2::new(h, 0.0)) - f(Vec2::new(-h, 0.0))) / (2.0 * h as f64)) as f32,
                ((f(Vec2::new(0.0, h)) - f(Vec2::new(0.0, -h))) / (2.0 * h as f64)) as f32,
            );
            // a cell edge inside the stencil breaks the difference: skip those points
            let p = b.to_uv.apply(uv) * Vec2::new(5.0, 3.0) - 0.5;
            let frac = p - p.floor();
            let step = Vec2::new(1.5 * 5.0, 0.5 * 3.0) * h;
            if frac.x < step.x || frac.x > 1.0 - step.x || frac.y < step.y || frac.y > 1.0 - step.y
            {
                continue;
            }
            assert!(
                (g - fd).abs().max_element() <= 2e-2 * (1.0 + fd.abs().max_element()),
                "{uv}: {g} vs {fd}"
            );
        }
        let (st, t) = build(px, &[("filter_type", s("nearest")), ("to_uv", to_uv)]).unwrap();
        let at = crate::textures::SurfacePoint::at_uv(Vec2::new(0.3, 0.4));
        assert_eq!(st.eval_1_grad(t, &at), Vec2::ZERO);
    }
}
