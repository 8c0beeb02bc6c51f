//! `envmap`: an image-based environment light in latitude–longitude format,
//! importance-sampled by luminance.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `filename` | string | — | radiance image (OpenEXR for HDR; PNG/JPEG are sRGB-decoded) |
//! | `bitmap` / `data` | bitmap array | — | in-memory linear RGB pixels instead of `filename` |
//! | `scale` | float | 1 | factor on the radiance |
//! | `to_world` | transform | identity | rotation from the map's frame to the world |
//!
//! Mapping (Mitsuba 3's `envmap.cpp`): in the map's frame, `uv` ↦ direction
//! `(sin φ sin θ, cos θ, −cos φ sin θ)` with `φ = 2π u`, `θ = π v`, so the top
//! row is +y, `u = 0` is −z, `u = ¼` is +x and `u = ½` is +z. Pixel `(x, y)` of a
//! `w × h` image sits at `u = (x + ½) / w`, `v = y / (h − 1)`; radiance is
//! interpolated bilinearly between pixels, periodic in `u`. The image must be
//! at least 2×3 pixels. `to_world` may include a uniform scale but no shear.
//!
//! ```xml
//! <emitter type="envmap">
//!     <string name="filename" value="textures/sky.exr"/>
//!     <transform name="to_world"><rotate y="1" angle="90"/></transform>
//! </emitter>
//! ```

use super::{EmitterCtx, EmitterSample};
use crate::error::{Error, Result};
use crate::math::{luminance, Color, Distribution2D, Mat3, Vec2, Vec3, INV_PI, INV_TWO_PI, PI};
use crate::scene::builder::BuildCtx;
use crate::scene::props::Props;
use crate::textures::image_file::{self, Image};

/// [`EnvmapEmitter::dist`] of a black map (nothing to sample).
pub const NO_DIST: u32 = u32::MAX;

/// The environment map record. Texels (RGB) are stored with one extra column
/// that repeats the first, so bilinear lookups never wrap.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct EnvmapEmitter {
    /// Map frame → world (a rotation).
    pub to_world: Mat3,
    /// World → map frame.
    pub to_local: Mat3,
    /// Index of the first value in the texel array.
    pub offset: u32,
    /// Width of the source image (rows hold `width + 1` texels).
    pub width: u32,
    /// Height of the image.
    pub height: u32,
    /// Sampling distribution in `EmitterCtx::dists`, or [`NO_DIST`].
    pub dist: u32,
    /// Radiance scale.
    pub scale: f32,
}

impl EnvmapEmitter {
    /// Reads the plugin's parameters, storing texels and the sampling distribution in `ctx`.
    pub fn build(p: &Props, ctx: &mut BuildCtx) -> Result<Self> {
        let scale = p.positive_float("scale", 1.0, true)?;
        let (to_world, to_local) = rotation(p)?;
        let img = image_file::from_props(p, ctx, false)?;
        if img.width < 2 || img.height < 3 {
            return Err(Error::param(
                &p.loc,
                if p.has("filename") {
                    "filename"
                } else {
                    "bitmap"
                },
                format!(
                    "an environment map needs at least 2x3 pixels, got {}x{}",
                    img.width, img.height
                ),
            ));
        }
        let texels = padded_rgb(&img);
        let offset = ctx.textures.texels.len();
        if offset + texels.len() > u32::MAX as usize {
            return Err(Error::param(&p.loc, "filename", "image too large"));
        }
        ctx.textures.texels.extend_from_slice(&texels);
        let dist = match sampling_distribution(&texels, img.width, img.height) {
            Some(d) => {
                ctx.dists2d.push(d);
                (ctx.dists2d.len() - 1) as u32
            }
            None => NO_DIST,
        };
        Ok(EnvmapEmitter {
            to_world,
            to_local,
            offset: offset as u32,
            width: img.width as u32,
            height: img.height as u32,
            dist,
            scale,
        })
    }

    /// Half a pixel in `u`: pixel centres sit at `(x + ½) / w`.
    #[inline]
    fn half_texel(&self) -> f32 {
        0.5 / self.width as f32
    }

    /// Bilinear radiance lookup at map coordinates `uv` (periodic in u).
    #[inline]
    pub fn lookup(&self, texels: &[f32], uv: Vec2) -> Color {
        let (w, h) = (self.width as usize, self.height as usize);
        let u = uv.x - self.half_texel();
        let u = u - u.floor();
        let x = u * w as f32;
        let y = uv.y.clamp(0.0, 1.0) * (h - 1) as f32;
        // `as usize` maps NaN to 0; the min keeps the +1 neighbours in range
        let (ix, iy) = ((x as usize).min(w - 1), (y as usize).min(h - 2));
        let (fx, fy) = (x - ix as f32, y - iy as f32);
        let row = w + 1;
        let at = |i: usize, j: usize| {
            let k = self.offset as usize + 3 * (j * row + i);
            Color::new(texels[k], texels[k + 1], texels[k + 2])
        };
        let top = at(ix, iy) * (1.0 - fx) + at(ix + 1, iy) * fx;
        let bot = at(ix, iy + 1) * (1.0 - fx) + at(ix + 1, iy + 1) * fx;
        (top * (1.0 - fy) + bot * fy) * self.scale
    }

    /// Radiance arriving along world ray direction `d`.
    #[inline]
    pub fn eval(&self, ctx: &EmitterCtx, d: Vec3) -> Color {
        let local = (self.to_local * d).normalize_or_zero();
        self.lookup(&ctx.tex.texels, direction_to_uv(local))
    }

    /// Picks a direction by luminance × sin θ (piecewise constant between pixels).
    #[inline]
    pub fn sample_direction(&self, ctx: &EmitterCtx, u: Vec2) -> Option<EmitterSample> {
        let dist = ctx.dists.get(self.dist as usize)?;
        let (s, pdf_uv) = dist.sample(u);
        let uv = Vec2::new(s.x + self.half_texel(), s.y);
        let (local, sin_theta) = uv_to_direction(uv);
        let pdf = pdf_uv / (2.0 * PI * PI * sin_theta);
        if !(pdf_uv > 0.0) || !(sin_theta > 0.0) || !pdf.is_finite() {
            return None;
        }
        Some(EmitterSample {
            d: (self.to_world * local).normalize(),
            dist: f32::INFINITY,
            pdf,
            radiance: self.lookup(&ctx.tex.texels, uv),
            delta: false,
        })
    }

    /// Solid-angle density of [`Self::sample_direction`] producing world direction `d`.
    #[inline]
    pub fn pdf(&self, ctx: &EmitterCtx, d: Vec3) -> f32 {
        let Some(dist) = ctx.dists.get(self.dist as usize) else {
            return 0.0;
        };
        let local = (self.to_local * d).normalize_or_zero();
        let sin_theta = (local.x * local.x + local.z * local.z).sqrt();
        if !(sin_theta > 0.0) {
            return 0.0;
        }
        let uv = direction_to_uv(local);
        let su = uv.x - self.half_texel();
        let s = Vec2::new(su - su.floor(), uv.y);
        dist.pdf(s) / (2.0 * PI * PI * sin_theta)
    }
}

/// Map-frame direction of lat–long coordinates `uv`, with sin θ.
#[inline]
pub fn uv_to_direction(uv: Vec2) -> (Vec3, f32) {
    let (sin_t, cos_t) = (PI * uv.y).sin_cos();
    let (sin_p, cos_p) = (2.0 * PI * uv.x).sin_cos();
    (Vec3::new(sin_p * sin_t, cos_t, -cos_p * sin_t), sin_t)
}

/// Lat–long coordinates of a unit map-frame direction (`u` in `(-½, ½]`).
#[inline]
pub fn direction_to_uv(d: Vec3) -> Vec2 {
    Vec2::new(
        d.x.atan2(-d.z) * INV_TWO_PI,
        d.y.clamp(-1.0, 1.0).acos() * INV_PI,
    )
}

/// The linear part of `to_world`, normalised to unit scale, and its inverse;
/// an error unless it is a rotation (or reflection) times a uniform scale.
fn rotation(p: &Props) -> Result<(Mat3, Mat3)> {
    let m = Mat3::from_mat4(p.transform("to_world")?.m);
    let det = m.determinant();
    let m = m / det.abs().cbrt();
    let err = (m.transpose() * m - Mat3::IDENTITY).to_cols_array();
    if !det.is_finite() || det == 0.0 || err.iter().any(|e| !(e.abs() < 1e-3)) {
        return Err(Error::param(
            &p.entry_loc("to_world"),
            "to_world",
            "an environment map's transform must be a rotation (no shear or non-uniform scale)",
        ));
    }
    Ok((m, m.transpose()))
}

/// RGB texels with an extra last column repeating the first.
fn padded_rgb(img: &Image) -> Vec<f32> {
    let mut out = Vec::with_capacity((img.width + 1) * img.height * 3);
    for y in 0..img.height {
        for x in 0..=img.width {
            out.extend_from_slice(&img.rgb(x % img.width, y));
        }
    }
    out
}

/// A piecewise-constant density over the `w × (h−1)` cells between pixel
/// centres: mean corner luminance × sin θ at the cell's centre (the Jacobian
/// of the lat–long map). `None` for a black map.
fn sampling_distribution(texels: &[f32], w: usize, h: usize) -> Option<Distribution2D> {
    let lum = |x: usize, y: usize| {
        let k = 3 * (y * (w + 1) + x);
        luminance(Color::new(texels[k], texels[k + 1], texels[k + 2])).max(0.0)
    };
    let mut func = Vec::with_capacity(w * (h - 1));
    for j in 0..h - 1 {
        let sin_theta = (PI * (j as f32 + 0.5) / (h - 1) as f32).sin();
        for i in 0..w {
            let l = lum(i, j) + lum(i + 1, j) + lum(i, j + 1) + lum(i + 1, j + 1);
            func.push(0.25 * l * sin_theta);
        }
    }
    Distribution2D::new(&func, w, h - 1)
}
