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

use super::registry::RecordCtx;
use super::{EmitterCtx, EmitterPlugin, EmitterSample};
use crate::desc::props::{PixelArray, Props};
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::atan;
use crate::math::sincos::sin_cos_pi;
use crate::math::{
    floor_f32, luminance, Color, Distribution2D, Mat3, Vec2, Vec3, INV_PI, INV_TWO_PI, PI,
};
use crate::plugin::gradient::TexelGradient;
use crate::plugin::BuildContext;
use std::sync::Arc;

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
    /// Index of the padded image in the texture store's images.
    pub image: u32,
    /// Width of the source image (rows hold `width + 1` texels).
    pub width: u32,
    /// Height of the image.
    pub height: u32,
    /// Sampling distribution in `EmitterCtx::dists`, or [`NO_DIST`].
    pub dist: u32,
    /// Radiance scale.
    pub scale: f32,
}

/// The record the kernels read: the map's frame, where its texels lie in the flat texel
/// array, and its sampling distribution (`dist_h` 0: none), resolved when flattened.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct EnvmapRecord {
    /// Map frame → world (a rotation), column-major.
    pub to_world: Mat3,
    /// World → map frame.
    pub to_local: Mat3,
    /// The first texel of the padded image in the flat texel array.
    pub offset: u32,
    /// Width of the source image (rows hold `width + 1` texels).
    pub width: u32,
    /// Height of the image.
    pub height: u32,
    /// Radiance scale.
    pub scale: f32,
    /// The sampling distribution's first row (a `FlatDist1D` index).
    pub dist_rows: u32,
    /// Its rows (0: a black map, nothing to sample).
    pub dist_h: u32,
    /// Its marginal (a `FlatDist1D` index).
    pub dist_marginal: u32,
}
device_record!(EnvmapRecord {
    to_world,
    to_local,
    offset,
    width,
    height,
    scale,
    dist_rows,
    dist_h,
    dist_marginal
});

impl EmitterPlugin for EnvmapEmitter {
    type Record = EnvmapRecord;
    const ENVIRONMENT: bool = true;
    const INFINITE: bool = true;

    /// Reads the plugin's parameters, storing texels and the sampling distribution in `ctx`.
    fn build(p: &Props, _shape: u32, ctx: &mut dyn BuildContext) -> Result<Self> {
        let scale = p.positive_float("scale", 1.0, true)?;
        ctx.declare_float("scale", scale);
        let (to_world, to_local) = rotation(p)?;
        ctx.declare_transform(p, "to_world");
        let img = ctx.image(p, false)?;
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
        if texels.len() > u32::MAX as usize {
            return Err(Error::param(&p.loc, "filename", "image too large"));
        }
        ctx.declare_image("data", &img);
        let dist = match sampling_distribution(&texels, img.width, img.height) {
            Some(d) => ctx.add_dist2d(d)?,
            None => NO_DIST,
        };
        let padded = PixelArray {
            width: img.width + 1,
            height: img.height,
            channels: 3,
            data: texels,
        };
        Ok(EnvmapEmitter {
            to_world,
            to_local,
            image: ctx.add_image(Arc::new(padded))?,
            width: img.width as u32,
            height: img.height as u32,
            dist,
            scale,
        })
    }

    fn record(&self, at: &RecordCtx) -> EnvmapRecord {
        let d = at.dist2d.get(self.dist as usize);
        EnvmapRecord {
            to_world: self.to_world,
            to_local: self.to_local,
            offset: at.image_offsets[self.image as usize],
            width: self.width,
            height: self.height,
            scale: self.scale,
            dist_rows: d.map_or(0, |d| d.rows),
            dist_h: d.map_or(0, |d| d.h),
            dist_marginal: d.map_or(0, |d| d.marginal),
        }
    }

    /// Radiance arriving along world ray direction `d`.
    #[inline]
    fn eval_env(&self, ctx: &EmitterCtx, d: Vec3) -> Color {
        let local = (self.to_local * d).normalize_or_zero();
        self.lookup(ctx.tex.image(self.image), direction_to_uv(local))
    }

    /// Picks a direction by luminance × sin θ (piecewise constant between pixels).
    #[inline]
    fn sample_direction(&self, ctx: &EmitterCtx, _p: Vec3, u: Vec2) -> Option<EmitterSample> {
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
            radiance: self.lookup(ctx.tex.image(self.image), uv),
            delta: false,
            uv: Vec2::ZERO,
        })
    }

    /// Solid-angle density of [`Self::sample_direction`] producing world direction `d`.
    #[inline]
    fn pdf_env(&self, ctx: &EmitterCtx, d: Vec3) -> f32 {
        let local = (self.to_local * d).normalize_or_zero();
        self.pdf_local(ctx, local, direction_to_uv(local))
    }

    /// Radiance and density of `d` from one conversion to map coordinates.
    #[inline]
    fn eval_pdf_env(&self, ctx: &EmitterCtx, d: Vec3) -> (Color, f32) {
        let local = (self.to_local * d).normalize_or_zero();
        let uv = direction_to_uv(local);
        let radiance = self.lookup(ctx.tex.image(self.image), uv);
        (radiance, self.pdf_local(ctx, local, uv))
    }
}

impl EnvmapEmitter {
    /// [`EmitterPlugin::pdf_env`] of the map-frame unit direction `local`, whose map
    /// coordinates are `uv`.
    #[inline]
    fn pdf_local(&self, ctx: &EmitterCtx, local: Vec3, uv: Vec2) -> f32 {
        let Some(dist) = ctx.dists.get(self.dist as usize) else {
            return 0.0;
        };
        let sin_theta = (local.x * local.x + local.z * local.z).sqrt();
        if !(sin_theta > 0.0) {
            return 0.0;
        }
        let su = uv.x - self.half_texel();
        let s = Vec2::new(su - floor_f32(su), uv.y);
        dist.pdf(s) / (2.0 * PI * PI * sin_theta)
    }

    /// Half a pixel in `u`: pixel centres sit at `(x + ½) / w`.
    #[inline]
    fn half_texel(&self) -> f32 {
        0.5 / self.width as f32
    }

    /// Bilinear radiance lookup at map coordinates `uv` (periodic in u).
    #[inline]
    pub fn lookup(&self, texels: &[f32], uv: Vec2) -> Color {
        self.unscaled(texels, uv) * self.scale
    }

    /// [`Self::lookup`] without the scale.
    #[inline]
    fn unscaled(&self, texels: &[f32], uv: Vec2) -> Color {
        let (ix, iy, fx, fy) = self.cell(uv);
        let row = self.width as usize + 1;
        // texels ix and ix + 1 of a row are neighbours (the padded column repeats the
        // first): one slice of six floats per row, one bounds check each
        let pair = |j: usize| {
            let k = 3 * (j * row + ix);
            let p: &[f32; 6] = texels[k..k + 6].try_into().expect("six floats");
            (Color::new(p[0], p[1], p[2]), Color::new(p[3], p[4], p[5]))
        };
        let ((a, b), (c, d)) = (pair(iy), pair(iy + 1));
        let top = a * (1.0 - fx) + b * fx;
        let bot = c * (1.0 - fx) + d * fx;
        top * (1.0 - fy) + bot * fy
    }

    /// The texel cell of a lookup at `uv`: the padded image's column and row of its
    /// top-left texel and the fractions towards the next ones.
    #[inline]
    fn cell(&self, uv: Vec2) -> (usize, usize, f32, f32) {
        let (w, h) = (self.width as usize, self.height as usize);
        let u = uv.x - self.half_texel();
        let u = u - floor_f32(u);
        let x = u * w as f32;
        let y = uv.y.clamp(0.0, 1.0) * (h - 1) as f32;
        // the columns and rows of `(x as usize).min(w - 1)` and `.min(h - 2)` (NaN and
        // negatives to 0), clamped as floats first so that the conversions need no
        // saturation
        let clamp = |v: f32, hi: usize| {
            // SAFETY: 0 <= v <= hi as f32 <= 2^30 after the clamp (max maps NaN to 0; the
            // padded image holds fewer than 2^32 floats in three or more rows)
            let i = unsafe { v.max(0.0).min(hi as f32).to_int_unchecked::<u32>() };
            (i as usize).min(hi) // `hi as f32` rounds above 2^24
        };
        let (ix, iy) = (clamp(x, w - 1), clamp(y, h - 2));
        (ix, iy, x - ix as f32, y - iy as f32)
    }

    /// For differentiable rendering: the radiance along world direction `d` without
    /// the scale, its derivative with respect to the scale.
    pub fn scale_derivative(&self, texels: &[f32], d: Vec3) -> Color {
        self.unscaled(
            texels,
            direction_to_uv((self.to_local * d).normalize_or_zero()),
        )
    }

    /// For differentiable rendering: the source image's texels (index `y · width + x`)
    /// a lookup along world direction `d` interpolates, with their weights times the
    /// scale (the lookup's derivative with respect to each texel's value, per channel).
    pub fn texel_weights(&self, d: Vec3) -> [(usize, f32); 4] {
        let uv = direction_to_uv((self.to_local * d).normalize_or_zero());
        let (ix, iy, fx, fy) = self.cell(uv);
        let w = self.width as usize;
        // the padded column `w` repeats column 0
        let at = |i: usize, j: usize| j * w + i % w;
        let s = self.scale;
        [
            (at(ix, iy), (1.0 - fx) * (1.0 - fy) * s),
            (at(ix + 1, iy), fx * (1.0 - fy) * s),
            (at(ix, iy + 1), (1.0 - fx) * fy * s),
            (at(ix + 1, iy + 1), fx * fy * s),
        ]
    }
}

impl TexelGradient for EnvmapEmitter {
    type At = Vec3;

    /// Scatters the derivative of the radiance along world direction `d` with
    /// [`EnvmapEmitter::texel_weights`].
    fn add_texel_gradient(&self, d: Vec3, s: [f32; 3], channels: usize, grad: &mut [f32]) {
        for (texel, w) in self.texel_weights(d) {
            for c in 0..channels {
                grad[channels * texel + c] += w * s[c];
            }
        }
    }
}

/// Map-frame direction of lat–long coordinates `uv`, with sin θ.
#[inline]
pub fn uv_to_direction(uv: Vec2) -> (Vec3, f32) {
    let (sin_t, cos_t) = sin_cos_pi(uv.y);
    let (sin_p, cos_p) = sin_cos_pi(2.0 * uv.x);
    (Vec3::new(sin_p * sin_t, cos_t, -cos_p * sin_t), sin_t)
}

/// Lat–long coordinates of a unit map-frame direction (`u` in `(-½, ½]`).
#[inline]
pub fn direction_to_uv(d: Vec3) -> Vec2 {
    Vec2::new(
        atan::atan2(d.x, -d.z) * INV_TWO_PI,
        atan::acos(d.y) * INV_PI,
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

/// RGB texels (grey repeated) with an extra last column repeating the first.
fn padded_rgb(img: &PixelArray) -> Vec<f32> {
    let (w, c) = (img.width, img.channels);
    let mut out = Vec::with_capacity((w + 1) * img.height * 3);
    for y in 0..img.height {
        for x in 0..=w {
            let k = c * (y * w + x % w);
            let px = &img.data[k..k + c];
            out.extend_from_slice(&[px[0], px[1.min(c - 1)], px[2.min(c - 1)]]);
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

#[cfg(test)]
mod tests {
    use super::super::test_util::{build_err, build_one, ectx};
    use super::*;
    use crate::desc::props::{PixelArray, Value};
    use crate::emitters::AnyEmitter;
    use crate::math::chi2::{chi2_test, Chi2Config};
    use crate::math::{Pcg32, Transform};
    use std::sync::Arc;

    /// A w×h RGB array from a per-pixel function.
    fn pixels(w: usize, h: usize, f: impl Fn(usize, usize) -> [f32; 3]) -> Value {
        let f = &f;
        let data = (0..h)
            .flat_map(|y| (0..w).flat_map(move |x| f(x, y)))
            .collect();
        Value::Pixels(Arc::new(PixelArray {
            width: w,
            height: h,
            channels: 3,
            data,
        }))
    }

    /// Mitsuba's documented lat-long mapping, written out independently.
    fn mitsuba_dir(u: f32, v: f32) -> Vec3 {
        let (theta, phi) = (std::f32::consts::PI * v, 2.0 * std::f32::consts::PI * u);
        Vec3::new(
            phi.sin() * theta.sin(),
            theta.cos(),
            -phi.cos() * theta.sin(),
        )
    }

    /// A smooth but strongly non-uniform map: a bright blob plus a dim gradient.
    fn blobby(w: usize, h: usize) -> Value {
        pixels(w, h, |x, y| {
            let (u, v) = ((x as f32 + 0.5) / w as f32, y as f32 / (h - 1) as f32);
            let blob = 40.0 * (-((u - 0.3).powi(2) + (v - 0.4).powi(2)) / 0.01).exp();
            let base = 0.05 + 0.5 * u;
            [base + blob, base + 0.5 * blob, 0.2 * base]
        })
    }

    #[test]
    fn pixels_sit_where_mitsuba_puts_them() {
        // 4x3 map, pixel (x, y) = (x + 1, y + 1, 10 x + y) except a constant top/bottom row
        let map = pixels(4, 3, |x, y| match y {
            0 => [7.0; 3],
            2 => [3.0; 3],
            _ => [x as f32 + 1.0, y as f32 + 1.0, 10.0 * x as f32 + y as f32],
        });
        let (e, ctx) =
            build_one("envmap", &[("bitmap", map), ("scale", Value::Float(2.0))]).unwrap();
        let c = ectx(&ctx);
        let ev = |d: Vec3| e.eval_env(&c, d) / 2.0;
        assert_eq!(ev(Vec3::Y), Vec3::splat(7.0), "+y is the top row");
        assert_eq!(ev(-Vec3::Y), Vec3::splat(3.0), "-y is the bottom row");
        // each middle pixel centre (u = (x + 1/2) / 4, v = 1/2) returns that pixel
        for x in 0..4 {
            let d = mitsuba_dir((x as f32 + 0.5) / 4.0, 0.5);
            let want = Vec3::new(x as f32 + 1.0, 2.0, 10.0 * x as f32 + 1.0);
            assert!(
                (ev(d) - want).length() < 1e-4,
                "pixel {x}: {} vs {want}",
                ev(d)
            );
        }
        // u = 1/4 is +x: halfway between pixel centres 0 and 1; u = 0 (-z) wraps 3 <-> 0
        let mid = |a: f32, b: f32| Vec3::new((a + b) / 2.0 + 1.0, 2.0, 10.0 * (a + b) / 2.0 + 1.0);
        assert!(
            (ev(Vec3::X) - mid(0.0, 1.0)).length() < 1e-4,
            "{}",
            ev(Vec3::X)
        );
        assert!((ev(Vec3::Z) - mid(1.0, 2.0)).length() < 1e-4);
        assert!((ev(-Vec3::X) - mid(2.0, 3.0)).length() < 1e-4);
        let wrap = ev(-Vec3::Z);
        assert!((wrap - Vec3::new(2.5, 2.0, 16.0)).length() < 1e-4, "{wrap}");
        // halfway between the middle and top rows at pixel column 1
        let d = mitsuba_dir(0.375, 0.25);
        assert!((ev(d) - (Vec3::splat(7.0) + Vec3::new(2.0, 2.0, 11.0)) / 2.0).length() < 1e-4);
    }

    #[test]
    fn to_world_rotates_the_map() {
        // rotating +90 deg about y takes map +z to world +x
        let t = Transform::rotate(Vec3::Y, 90.0).unwrap();
        let (plain, c0) = build_one("envmap", &[("bitmap", blobby(16, 9))]).unwrap();
        let (rot, c1) = build_one(
            "envmap",
            &[("bitmap", blobby(16, 9)), ("to_world", Value::Transform(t))],
        )
        .unwrap();
        for d in [Vec3::Z, Vec3::X, Vec3::new(0.3, -0.5, 0.8).normalize()] {
            let want = plain.eval_env(&ectx(&c0), d);
            let got = rot.eval_env(&ectx(&c1), t.vector(d));
            assert!(
                (got - want).length() < 1e-4 * want.length(),
                "{got} vs {want}"
            );
        }
        let skew = Transform::scale(Vec3::new(1.0, 2.0, 1.0)).unwrap();
        let err = build_err(
            "envmap",
            &[
                ("bitmap", blobby(4, 3)),
                ("to_world", Value::Transform(skew)),
            ],
        );
        assert!(err.contains("e.xml:3") && err.contains("rotation"), "{err}");
    }

    fn rotated_blobby() -> (AnyEmitter, crate::scene::builder::BuildCtx) {
        let t = Transform::rotate(Vec3::new(1.0, 2.0, -0.5), 63.0).unwrap();
        build_one(
            "envmap",
            &[
                ("bitmap", blobby(32, 17)),
                ("to_world", Value::Transform(t)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn sampling_passes_chi2_with_a_rotated_map() {
        let (e, ctx) = rotated_blobby();
        let c = ectx(&ctx);
        let cfg = Chi2Config {
            theta_bins: 20,
            phi_bins: 40,
            ..Chi2Config::default()
        };
        let res = chi2_test(
            &cfg,
            |_, u| e.sample_direction(&c, Vec3::ZERO, u).map(|s| s.d),
            |d| e.pdf_env(&c, d),
        );
        assert!(res.is_ok(), "{res:?}");
    }

    #[test]
    fn eval_and_pdf_together_are_eval_and_pdf_to_the_bit() {
        let (e, ctx) = rotated_blobby();
        let c = ectx(&ctx);
        let mut rng = Pcg32::new(5, 9);
        let mut dirs = vec![Vec3::Y, -Vec3::Y, Vec3::X, -Vec3::Z, Vec3::ZERO];
        dirs.extend((0..10_000).map(|_| {
            let u = Vec2::new(rng.next_f32(), rng.next_f32());
            crate::math::warp::square_to_uniform_sphere(u) * (0.5 + rng.next_f32())
        }));
        for d in dirs {
            let (l, p) = e.eval_pdf_env(&c, d);
            let (l2, p2) = (e.eval_env(&c, d), e.pdf_env(&c, d));
            assert_eq!(
                (l.to_array().map(f32::to_bits), p.to_bits()),
                (l2.to_array().map(f32::to_bits), p2.to_bits()),
                "{d}"
            );
        }
    }

    #[test]
    fn samples_agree_with_eval_and_pdf_and_integrate_the_map() {
        let (e, ctx) = rotated_blobby();
        let c = ectx(&ctx);
        let mut rng = Pcg32::new(11, 2);
        let n = 200_000;
        let (mut est, mut est2) = (Vec3::ZERO.as_dvec3(), Vec3::ZERO.as_dvec3());
        let mut off_pdf = 0;
        for _ in 0..n {
            let u = Vec2::new(rng.next_f32(), rng.next_f32());
            let Some(s) = e.sample_direction(&c, Vec3::ONE, u) else {
                continue;
            };
            assert!(s.dist.is_infinite() && !s.delta);
            let (l, p) = (e.eval_env(&c, s.d), e.pdf_env(&c, s.d));
            assert!(
                (l - s.radiance).length() <= 1e-3 * l.length().max(1e-3),
                "{l} vs {}",
                s.radiance
            );
            // a sample within rounding of a cell edge may read the neighbour's density
            if (p - s.pdf).abs() > 1e-3 * p {
                off_pdf += 1;
            }
            let f = (s.radiance / s.pdf).as_dvec3();
            est += f;
            est2 += f * f;
        }
        assert!(
            off_pdf <= n / 10_000,
            "{off_pdf} samples disagree with pdf_env"
        );
        let est = est / n as f64;
        let sigma = ((est2 / n as f64 - est * est) / n as f64).powf(0.5);
        // brute force: midpoint rule of the radiance over (cos θ, φ) in world space
        let m = 400;
        let mut reference = Vec3::ZERO.as_dvec3();
        for i in 0..m {
            let z = -1.0 + (i as f32 + 0.5) * 2.0 / m as f32;
            let r = (1.0 - z * z).sqrt();
            for j in 0..2 * m {
                let phi = (j as f32 + 0.5) * PI / m as f32;
                let d = Vec3::new(r * phi.cos(), r * phi.sin(), z);
                reference += e.eval_env(&c, d).as_dvec3();
            }
        }
        let reference = reference * (4.0 * std::f64::consts::PI / (2 * m * m) as f64);
        // within 4 standard errors plus the quadrature's own error
        let tol = 4.0 * sigma + 1e-3 * reference;
        assert!(
            (est - reference).abs().cmple(tol).all(),
            "{est} vs {reference} (tolerance {tol})"
        );
    }

    #[test]
    fn pdf_integrates_to_one() {
        let (e, ctx) = rotated_blobby();
        let c = ectx(&ctx);
        let m = 400;
        let mut total = 0.0f64;
        for i in 0..m {
            let z = -1.0 + (i as f32 + 0.5) * 2.0 / m as f32;
            let r = (1.0 - z * z).sqrt();
            for j in 0..2 * m {
                let phi = (j as f32 + 0.5) * PI / m as f32;
                total += e.pdf_env(&c, Vec3::new(r * phi.cos(), r * phi.sin(), z)) as f64;
            }
        }
        let total = total * 4.0 * std::f64::consts::PI / (2 * m * m) as f64;
        assert!((total - 1.0).abs() < 5e-3, "{total}");
    }

    #[test]
    fn bad_inputs_are_rejected_with_their_location() {
        let err = build_err("envmap", &[("bitmap", blobby(4, 2))]);
        assert!(err.contains("2x3") && err.contains("4x2"), "{err}");
        let err = build_err("envmap", &[]);
        assert!(
            err.contains("filename") && err.contains("required"),
            "{err}"
        );
        let err = build_err(
            "envmap",
            &[("filename", Value::String("nope/sky.exr".into()))],
        );
        assert!(
            err.contains("e.xml:2") && err.contains("nope/sky.exr"),
            "{err}"
        );
        let err = build_err(
            "envmap",
            &[("bitmap", blobby(4, 3)), ("scale", Value::Float(-1.0))],
        );
        assert!(err.contains("scale"), "{err}");
        // a black map is valid: it emits and samples nothing
        let (e, ctx) = build_one("envmap", &[("bitmap", pixels(4, 3, |_, _| [0.0; 3]))]).unwrap();
        let c = ectx(&ctx);
        assert!(e
            .sample_direction(&c, Vec3::ZERO, Vec2::splat(0.5))
            .is_none());
        assert_eq!(
            (e.pdf_env(&c, Vec3::X), e.eval_env(&c, Vec3::X)),
            (0.0, Vec3::ZERO)
        );
        assert!(e.is_environment());
    }

    #[test]
    fn loads_an_exr_file() {
        let dir = crate::textures::image_file::tests::scratch("envmap_exr");
        let path = dir.join("sky.exr");
        let data: Vec<f32> = (0..4 * 3).flat_map(|i| [i as f32, 1.0, 0.5]).collect();
        let buf = image::Rgb32FImage::from_raw(4, 3, data).unwrap();
        image::DynamicImage::ImageRgb32F(buf).save(&path).unwrap();
        let fname = Value::String(path.to_str().unwrap().into());
        let (e, ctx) = build_one("envmap", &[("filename", fname)]).unwrap();
        // +y is the top row, whose centre u = 1/2 lies between pixels 1 and 2
        assert!((e.eval_env(&ectx(&ctx), Vec3::Y) - Vec3::new(1.5, 1.0, 0.5)).length() < 1e-5);
    }
}
