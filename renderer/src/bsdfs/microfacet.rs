//! Microfacet distributions (GGX / Trowbridge-Reitz and Beckmann, both
//! anisotropic) with Smith's separable shadowing-masking, and the parameter block
//! that `roughconductor` and `roughplastic` read (Mitsuba 3's
//! `MicrofacetDistribution`: `distribution`, `alpha`, `alpha_u`, `alpha_v`,
//! `sample_visible`; default `beckmann`, α = 0.1, visible sampling on).
//!
//! Visible-normal sampling: GGX uses Heitz 2018 ("Sampling the GGX Distribution of
//! Visible Normals", JCGT 7(4)); Beckmann uses Heitz & d'Eon 2014 (stretch, sample
//! the slope for unit roughness, rotate, unstretch) with the slope CDF inverted
//! numerically as in Mitsuba 3 (Newton iterations in the erf domain). Without
//! `sample_visible`, both sample `D(m) cos θm` (Walter et al. 2007).

use crate::desc::props::Props;
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::sincos::sin_cos_pi;
use crate::math::{Vec2, Vec3, PI};
use crate::plugin::{BuildContext, TexRef};
use crate::textures::{SurfacePoint, TextureStore};

/// Smallest roughness used at evaluation time (α = 0 is a delta lobe; keep it finite).
pub const MIN_ALPHA: f32 = 1e-4;

/// Distribution kinds as stored in records.
pub const GGX: u32 = 0;
/// See [`GGX`].
pub const BECKMANN: u32 = 1;

/// The roughness parameters of a microfacet BSDF record (plain data).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct MicrofacetParams {
    /// [`GGX`] or [`BECKMANN`].
    pub kind: u32,
    /// Roughness along the tangent.
    pub alpha_u: TexRef,
    /// Roughness along the bitangent.
    pub alpha_v: TexRef,
    /// 1: sample visible normals.
    pub sample_visible: u32,
}
device_record!(MicrofacetParams {
    kind,
    alpha_u,
    alpha_v,
    sample_visible
});

/// Reads `distribution` (ggx|beckmann) and `sample_visible`.
pub fn read_kind(p: &Props) -> Result<(u32, bool)> {
    let d = p.choice("distribution", "beckmann", &["beckmann", "ggx"])?;
    let kind = if d == "ggx" { GGX } else { BECKMANN };
    Ok((kind, p.bool("sample_visible", true)?))
}

/// Checks a scalar roughness: finite and `>= 0`.
pub fn check_alpha(p: &Props, key: &str, a: f32) -> Result<()> {
    if !(a.is_finite() && a >= 0.0) {
        return Err(Error::param(
            &p.entry_loc(key),
            key,
            format!("roughness must be a finite value >= 0, got {a}"),
        ));
    }
    Ok(())
}

impl MicrofacetParams {
    /// Reads the parameters; `alpha` and `alpha_u`/`alpha_v` are exclusive.
    pub fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let (kind, visible) = read_kind(p)?;
        let aniso = p.has("alpha_u") || p.has("alpha_v");
        if aniso && p.has("alpha") {
            return Err(Error::param(
                &p.entry_loc("alpha"),
                "alpha",
                "give either alpha or alpha_u and alpha_v, not both",
            ));
        }
        let (alpha_u, alpha_v) = if aniso {
            for key in ["alpha_u", "alpha_v"] {
                if !p.has(key) {
                    return Err(Error::param(&p.loc, key, "is required with the other one"));
                }
            }
            (tex_alpha(p, ctx, "alpha_u")?, tex_alpha(p, ctx, "alpha_v")?)
        } else {
            let a = tex_alpha(p, ctx, "alpha")?;
            (a, a)
        };
        Ok(MicrofacetParams {
            kind,
            alpha_u,
            alpha_v,
            sample_visible: visible as u32,
        })
    }

    /// The distribution at texture coordinates `uv`.
    pub fn at(&self, tex: &TextureStore, at: &SurfacePoint) -> Microfacet {
        Microfacet::new(
            self.kind,
            tex.eval_1(self.alpha_u, at),
            tex.eval_1(self.alpha_v, at),
            self.sample_visible != 0,
        )
    }
}

fn tex_alpha(p: &Props, ctx: &mut dyn BuildContext, key: &str) -> Result<TexRef> {
    let t = ctx.texture(p, key, Some(crate::math::Color::splat(0.1)))?;
    let m = ctx.texture_mean(t).min_element();
    check_alpha(p, key, m)?;
    Ok(t)
}

/// An evaluated microfacet distribution.
#[derive(Clone, Copy, Debug)]
pub struct Microfacet {
    /// [`GGX`] or [`BECKMANN`].
    pub kind: u32,
    /// Roughness along x.
    pub au: f32,
    /// Roughness along y.
    pub av: f32,
    /// Visible-normal sampling.
    pub visible: bool,
}

impl Microfacet {
    /// A distribution; roughness is clamped to [`MIN_ALPHA`].
    pub fn new(kind: u32, au: f32, av: f32, visible: bool) -> Self {
        Microfacet {
            kind,
            au: au.max(MIN_ALPHA),
            av: av.max(MIN_ALPHA),
            visible,
        }
    }

    /// Normal distribution `D(m)` (projected area normalised: ∫ D cos θm dω = 1).
    pub fn d(&self, m: Vec3) -> f32 {
        if m.z <= 0.0 {
            return 0.0;
        }
        let (x, y) = (m.x / self.au, m.y / self.av);
        let z2 = m.z * m.z;
        let r = if self.kind == GGX {
            let s = x * x + y * y + z2;
            1.0 / (PI * self.au * self.av * s * s)
        } else {
            (-(x * x + y * y) / z2).exp() / (PI * self.au * self.av * z2 * z2)
        };
        if r.is_finite() {
            r
        } else {
            0.0
        }
    }

    /// Smith's monodirectional shadowing `G1(v, m)` (zero on the wrong side).
    pub fn g1(&self, v: Vec3, m: Vec3) -> f32 {
        if v.dot(m) * v.z <= 0.0 {
            return 0.0;
        }
        let xy2 = (self.au * v.x).powi(2) + (self.av * v.y).powi(2);
        if xy2 == 0.0 {
            return 1.0;
        }
        let tan2 = xy2 / (v.z * v.z);
        if self.kind == GGX {
            2.0 / (1.0 + (1.0 + tan2).sqrt())
        } else {
            // rational fit of the Beckmann Smith term (Walter et al. 2007)
            let a = 1.0 / tan2.sqrt();
            if a >= 1.6 {
                1.0
            } else {
                (3.535 * a + 2.181 * a * a) / (1.0 + 2.276 * a + 2.577 * a * a)
            }
        }
    }

    /// Separable Smith shadowing-masking `G1(wi, m) G1(wo, m)`.
    pub fn g(&self, wi: Vec3, wo: Vec3, m: Vec3) -> f32 {
        self.g1(wi, m) * self.g1(wo, m)
    }

    /// Samples a microfacet normal seen from `wi` (`wi.z > 0`).
    pub fn sample(&self, wi: Vec3, u: Vec2) -> Vec3 {
        match (self.visible, self.kind) {
            (true, GGX) => self.sample_ggx_visible(wi, u),
            (true, _) => self.sample_beckmann_visible(wi, u),
            _ => self.sample_all(u),
        }
    }

    /// Density of [`Self::sample`] over microfacet normals (solid angle).
    pub fn pdf(&self, wi: Vec3, m: Vec3) -> f32 {
        if self.visible {
            if wi.z <= 0.0 {
                return 0.0;
            }
            self.g1(wi, m) * wi.dot(m).max(0.0) * self.d(m) / wi.z
        } else {
            self.d(m) * m.z.max(0.0)
        }
    }

    /// Heitz 2018: stretch to the unit-roughness configuration, sample the
    /// projected hemisphere seen from there, unstretch.
    fn sample_ggx_visible(&self, wi: Vec3, u: Vec2) -> Vec3 {
        let vh = Vec3::new(self.au * wi.x, self.av * wi.y, wi.z).normalize();
        let len2 = vh.x * vh.x + vh.y * vh.y;
        let t1 = if len2 > 0.0 {
            Vec3::new(-vh.y, vh.x, 0.0) / len2.sqrt()
        } else {
            Vec3::X
        };
        let t2 = vh.cross(t1);
        let r = u.x.sqrt();
        let (sin_phi, cos_phi) = sin_cos_pi(2.0 * u.y);
        let p1 = r * cos_phi;
        let s = 0.5 * (1.0 + vh.z);
        let p2 = (1.0 - s) * (1.0 - p1 * p1).max(0.0).sqrt() + s * r * sin_phi;
        let nh = p1 * t1 + p2 * t2 + (1.0 - p1 * p1 - p2 * p2).max(0.0).sqrt() * vh;
        Vec3::new(self.au * nh.x, self.av * nh.y, nh.z.max(1e-7)).normalize()
    }

    /// Heitz & d'Eon 2014 for Beckmann: in the stretched configuration (α = 1),
    /// sample the slope distribution seen from `wi`, then rotate and unstretch.
    fn sample_beckmann_visible(&self, wi: Vec3, u: Vec2) -> Vec3 {
        let w = Vec3::new(self.au * wi.x, self.av * wi.y, wi.z).normalize();
        let sin_t = (1.0 - w.z * w.z).max(0.0).sqrt();
        let (cos_p, sin_p) = if sin_t > 1e-7 {
            (w.x / sin_t, w.y / sin_t)
        } else {
            (1.0, 0.0)
        };
        let (sx, sy) = beckmann_slope_11(w.z, u);
        let (x, y) = (
            (cos_p * sx - sin_p * sy) * self.au,
            (sin_p * sx + cos_p * sy) * self.av,
        );
        Vec3::new(-x, -y, 1.0).normalize()
    }

    /// Samples `D(m) cos θm`: azimuth from tan φ = (αv/αu) tan 2πu, then the slope.
    fn sample_all(&self, u: Vec2) -> Vec3 {
        let (sin_t, cos_t) = sin_cos_pi(2.0 * u.y);
        let phi = (self.av * sin_t).atan2(self.au * cos_t);
        let (sp, cp) = phi.sin_cos();
        let a2 = 1.0 / ((cp / self.au).powi(2) + (sp / self.av).powi(2));
        let tan2 = if self.kind == GGX {
            a2 * u.x / (1.0 - u.x).max(1e-12)
        } else {
            -a2 * (1.0 - u.x).max(1e-12).ln()
        };
        let cos_t = 1.0 / (1.0 + tan2).sqrt();
        let sin_t = (1.0 - cos_t * cos_t).max(0.0).sqrt();
        Vec3::new(sin_t * cp, sin_t * sp, cos_t)
    }
}

/// Slopes of the unit-roughness Beckmann distribution of visible normals for
/// incident cosine `cos_i`: the x slope inverts the CDF
/// `(1 + erf x + tanθ e^{-x²}/√π) / norm` by three Newton steps in `erf` space,
/// the y slope is Gaussian.
fn beckmann_slope_11(cos_i: f32, u: Vec2) -> (f32, f32) {
    const INV_SQRT_PI: f32 = 0.564_189_6;
    let tan_i = (1.0 - cos_i * cos_i).max(0.0).sqrt() / cos_i;
    let cot_i = 1.0 / tan_i;
    let maxval = erf(cot_i);
    let (ux, uy) = (u.x.clamp(1e-6, 1.0 - 1e-6), u.y.clamp(1e-6, 1.0 - 1e-6));
    // initial guess: the exact inverse for grazing incidence
    let mut x = maxval - (maxval + 1.0) * erf((-ux.ln()).sqrt());
    let target = ux * (1.0 + maxval + INV_SQRT_PI * tan_i * (-cot_i * cot_i).exp());
    for _ in 0..3 {
        let slope = erfinv(x);
        let value = 1.0 + x + INV_SQRT_PI * tan_i * (-slope * slope).exp() - target;
        x -= value / (1.0 - slope * tan_i);
    }
    (erfinv(x), erfinv(2.0 * uy - 1.0))
}

/// The error function (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7).
pub fn erf(x: f32) -> f32 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let r = 1.0 - poly * (-x * x).exp();
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// Inverse error function on (−1, 1) (Giles 2010, single-precision fit).
pub fn erfinv(x: f32) -> f32 {
    let x = x.clamp(-1.0 + 1e-7, 1.0 - 1e-7);
    let mut w = -((1.0 - x) * (1.0 + x)).ln();
    let p = if w < 5.0 {
        w -= 2.5;
        [
            2.810_226_4e-8,
            3.432_739_4e-7,
            -3.523_387_7e-6,
            -4.391_506_5e-6,
            2.185_808_7e-4,
            -1.253_725e-3,
            -4.177_681_6e-3,
            0.246_640_73,
            1.501_409_4,
        ]
        .iter()
        .fold(0.0, |acc, &c| acc * w + c)
    } else {
        w = w.sqrt() - 3.0;
        [
            -2.002_142_6e-4,
            1.009_505_6e-4,
            1.349_343_2e-3,
            -3.673_428_4e-3,
            5.739_507_7e-3,
            -7.622_461e-3,
            9.438_870_5e-3,
            1.001_674,
            2.832_976_8,
        ]
        .iter()
        .fold(0.0, |acc, &c| acc * w + c)
    };
    p * x
}

#[cfg(test)]
mod tests {
    use super::super::testutil::chi2_fine;
    use super::*;

    fn dists() -> Vec<Microfacet> {
        let mut v = Vec::new();
        for kind in [GGX, BECKMANN] {
            for (au, av) in [(0.2, 0.2), (0.5, 0.5), (0.2, 0.7)] {
                for visible in [false, true] {
                    v.push(Microfacet::new(kind, au, av, visible));
                }
            }
        }
        v
    }

    #[test]
    fn erf_and_erfinv() {
        // reference values of erf (Abramowitz & Stegun table 7.1)
        for (x, want) in [
            (0.1f32, 0.112_462_9f32),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
        ] {
            assert!(
                (erf(x) - want).abs() < 2e-6 && (erf(-x) + want).abs() < 2e-6,
                "erf({x})"
            );
        }
        for x in [-2.5f32, -1.0, -0.3, 0.0, 0.2, 0.9, 1.7, 2.8] {
            let y = erf(x);
            assert!(
                (erfinv(y) - x).abs() < 2e-3 * (1.0 + x.abs()),
                "erfinv(erf({x})) = {}",
                erfinv(y)
            );
        }
    }

    #[test]
    fn projected_area_normalisation() {
        // ∫ D(m) cos θm dω = 1 and, for the visible normals, ∫ D_wi(m) dω = 1
        // (midpoint rule in (cos θ, φ))
        let wi = Vec3::new(0.5, 0.3, 0.8).normalize();
        for d in dists() {
            let (n, mut s1, mut s2) = (800, 0.0f64, 0.0f64);
            for i in 0..n {
                let z = (i as f32 + 0.5) / n as f32;
                let r = (1.0 - z * z).sqrt();
                for j in 0..n {
                    let phi = 2.0 * PI * (j as f32 + 0.5) / n as f32;
                    let m = Vec3::new(r * phi.cos(), r * phi.sin(), z);
                    let dw = (2.0 * PI / (n * n) as f32) as f64;
                    s1 += (d.d(m) * z) as f64 * dw;
                    s2 += (d.g1(wi, m) * wi.dot(m).max(0.0) * d.d(m) / wi.z) as f64 * dw;
                }
            }
            assert!((s1 - 1.0).abs() < 0.01, "{d:?}: ∫D cos = {s1}");
            // Smith G1 for Beckmann is a fit: allow ~1 %
            assert!((s2 - 1.0).abs() < 0.015, "{d:?}: ∫D_wi = {s2}");
        }
    }

    #[test]
    fn normal_sampling_chi2() {
        let ds = dists();
        let wis = [
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(0.7, -0.4, 0.3).normalize(),
        ];
        let n = ds.len() * wis.len();
        for d in &ds {
            for wi in wis {
                let r = chi2_fine(n, |_, u| Some(d.sample(wi, u)), |m| d.pdf(wi, m));
                assert!(r.is_ok(), "{d:?} wi {wi}: {r:?}");
            }
        }
    }
}
