//! `mask`: cut-outs. Where the opacity is 1 the nested BSDF scatters as it is; where it
//! is 0 the surface is not there (light passes straight through); in between, a
//! fraction `opacity` of the light meets the nested BSDF and the rest passes. Leaves,
//! fences and lace made of a single quad and an opacity map.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `opacity` | float or texture | 0.5 | fraction of the light that meets the surface, clipped to [0, 1] (a colour texture gives its luminance) |
//! | (nested bsdf) | bsdf | — | exactly one: what the opaque part is |
//!
//! As in Mitsuba 3: `eval` and `pdf` are the nested BSDF's times the opacity, and
//! sampling picks the nested BSDF with probability `opacity`, else the straight-through
//! ("null") direction `wo = −wi`, a delta lobe of weight 1 that counts as a bounce.
//! Shadow rays are blocked by masked surfaces (Mitsuba's `path` and `direct` do the
//! same): light through a cut-out is found by the BSDF-sampled paths. The null lobe
//! transmits, so `twosided` cannot wrap a `mask`; put the `twosided` inside it.
//!
//! ```xml
//! <bsdf type="mask">
//!     <texture name="opacity" type="bitmap">
//!         <string name="filename" value="textures/leaf_mask.png"/>
//!     </texture>
//!     <bsdf type="twosided"><bsdf type="diffuse"/></bsdf>
//! </bsdf>
//! ```

use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::params::Range;
use crate::desc::props::Props;
use crate::desc::Category;
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::{Color, Vec2, Vec3, ONE_MINUS_EPSILON};
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};

/// The mask adapter: its opacity and the handle of the BSDF it wraps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mask {
    /// Opacity texture (read as a float, clipped to [0, 1]).
    pub opacity: TexRef,
    /// The nested BSDF.
    pub nested: u32,
}

/// What the kernels read: where the nested BSDF's record is, and the opacity.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct MaskRecord {
    /// The nested BSDF's kind and record.
    pub nested: RecordRef,
    /// Opacity texture.
    pub opacity: TexRef,
    /// Keeps the record a whole number of `RecordRef`s (8-byte aligned).
    pub unused: u32,
}
device_record!(MaskRecord {
    nested: RecordRef,
    opacity,
    unused
});

impl BsdfPlugin for Mask {
    type Record = MaskRecord;
    const ADAPTER: bool = true;
    // the null lobe passes light straight through
    const TRANSMISSION: bool = true;

    /// Reads the opacity and builds the one nested BSDF.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let opacity = ctx.texture_in(
            p,
            "opacity",
            Some(Color::splat(0.5)),
            Range::Any,
            SpectrumUse::Reflectance,
        )?;
        let kids = ctx.children_at(p, Category::Bsdf)?;
        let [(kid, via)] = &kids[..] else {
            return Err(Error::parse(
                &p.loc,
                format!("mask needs exactly one nested BSDF, got {}", kids.len()),
            ));
        };
        let nested = ctx.bsdf_at(kid, via)?;
        Ok(Mask { opacity, nested })
    }

    fn record(&self, refs: &[RecordRef]) -> MaskRecord {
        // the nested BSDF is built (and gets its handle) before the adapter
        MaskRecord {
            nested: refs[self.nested as usize],
            opacity: self.opacity,
            unused: 0,
        }
    }

    /// The nested BSDF with probability `opacity` (its pdf scaled by it), else the
    /// null lobe.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        let opacity = self.opacity_at(ctx);
        if u1 < opacity {
            let u1 = (u1 / opacity).min(ONE_MINUS_EPSILON);
            let mut s = ctx.bsdfs[self.nested as usize].sample(ctx, wi, u1, u2)?;
            s.pdf *= opacity;
            return Some(s);
        }
        Some(BsdfSample {
            wo: -wi,
            pdf: 1.0 - opacity,
            weight: Color::ONE,
            eta: 1.0,
            delta: true,
        })
    }

    /// The nested BSDF's value times the opacity.
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        ctx.bsdfs[self.nested as usize].eval(ctx, wi, wo) * self.opacity_at(ctx)
    }

    /// The nested BSDF's density times the opacity (the null lobe is a delta).
    fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        ctx.bsdfs[self.nested as usize].pdf(ctx, wi, wo) * self.opacity_at(ctx)
    }

    /// The nested BSDF's (as Mitsuba: the opacity does not dim the albedo AOV).
    fn diffuse_reflectance(&self, ctx: &BsdfCtx, wi: Vec3) -> Color {
        ctx.bsdfs[self.nested as usize].diffuse_reflectance(ctx, wi)
    }

    /// Whether the nested BSDF is purely delta (emitter sampling is pointless then).
    fn is_delta(&self, ctx: &BsdfCtx) -> bool {
        ctx.bsdfs[self.nested as usize].is_delta(ctx)
    }

    fn nested(&self) -> Vec<u32> {
        vec![self.nested]
    }
}

impl Mask {
    /// The opacity at the shading point, clipped to [0, 1].
    fn opacity_at(&self, ctx: &BsdfCtx) -> f32 {
        ctx.tex.eval_1(self.opacity, &ctx.at).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::desc::props::Value;
    use crate::math::{Pcg32, INV_PI};
    use crate::scene::builder::BuildCtx;

    fn diffuse(r: f64) -> std::sync::Arc<crate::desc::ObjectDesc> {
        obj("diffuse", &[("reflectance", Value::Float(r))])
    }

    fn mask(opacity: f64, nested: std::sync::Arc<crate::desc::ObjectDesc>) -> Setup {
        Setup::from_obj(&obj_with(
            "mask",
            &[("opacity", Value::Float(opacity))],
            vec![nested],
        ))
    }

    #[test]
    fn eval_and_pdf_are_the_nested_ones_times_the_opacity() {
        let s = mask(0.3, diffuse(0.8));
        let mut rng = Pcg32::new(1, 2);
        for _ in 0..100 {
            let (a, b) = (random_upper(&mut rng), random_upper(&mut rng));
            let f = s.eval(a, b);
            assert!((f.x - 0.3 * 0.8 * INV_PI * b.z).abs() < 1e-6, "{f}");
            assert!((s.pdf(a, b) - 0.3 * INV_PI * b.z).abs() < 1e-6);
            // one-sided like its nested BSDF
            assert_eq!(s.eval(-a, b), Color::ZERO);
        }
        assert!(!s.is_delta());
        // the default opacity is one half; opacities outside [0, 1] are clipped
        let half = Setup::from_obj(&obj_with("mask", &[], vec![diffuse(0.8)]));
        let (a, b) = (Vec3::Z, Vec3::new(0.6, 0.0, 0.8));
        assert!((half.eval(a, b).x - 0.5 * 0.8 * INV_PI * 0.8).abs() < 1e-6);
        assert_eq!(
            mask(1.7, diffuse(0.8)).eval(a, b),
            mask(1.0, diffuse(0.8)).eval(a, b)
        );
        assert_eq!(mask(-0.2, diffuse(0.8)).eval(a, b), Color::ZERO);
    }

    #[test]
    fn sampling_passes_straight_through_with_probability_one_minus_opacity() {
        let s = mask(0.3, diffuse(0.8));
        let wi = Vec3::new(0.3, -0.4, 0.866).normalize();
        let (n, mut null) = (20_000, 0usize);
        let mut rng = Pcg32::new(7, 1);
        for _ in 0..n {
            let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
            let b = s.sample(wi, u1, u2).unwrap();
            if b.delta {
                assert_eq!((b.wo, b.weight, b.eta), (-wi, Color::ONE, 1.0));
                assert!((b.pdf - 0.7).abs() < 1e-6);
                null += 1;
            } else {
                // the nested diffuse sample, its density scaled by the opacity
                assert!((b.pdf - 0.3 * INV_PI * b.wo.z).abs() < 1e-5);
                assert!((b.weight.x - 0.8).abs() < 1e-6);
            }
        }
        // binomial: 0.7 n ± 5 sigma
        let sigma = (n as f64 * 0.7 * 0.3).sqrt();
        assert!(
            ((null as f64) - 0.7 * n as f64).abs() < 5.0 * sigma,
            "{null}"
        );
        for wi in incident_dirs() {
            assert!(s.chi2(wi, 4).is_ok(), "{wi}: {:?}", s.chi2(wi, 4));
            assert!(s.check_consistency(wi, 2000) > 400);
        }
        // all or nothing
        let opaque = mask(1.0, diffuse(0.8));
        assert!(opaque
            .sample(wi, 0.999_999_9, Vec2::splat(0.5))
            .is_some_and(|b| !b.delta));
        let gone = mask(0.0, diffuse(0.8));
        let b = gone.sample(wi, 0.0, Vec2::splat(0.5)).unwrap();
        assert!(b.delta && b.pdf == 1.0 && b.weight == Color::ONE);
        assert_eq!(gone.eval(wi, Vec3::Z), Color::ZERO);
    }

    #[test]
    fn the_mean_weight_is_the_nested_albedo_blended_with_passing_through() {
        // diffuse albedo 0.8: a fraction 0.3 meets it, 0.7 passes with weight 1
        let s = mask(0.3, diffuse(0.8));
        let (alb, err) = s.albedo(Vec3::new(0.5, 0.0, 0.866).normalize(), 200_000);
        let want = 0.3 * 0.8 + 0.7;
        assert!(
            (alb.x - want).abs() < 5.0 * err + 1e-4,
            "{alb} vs {want} ± {err}"
        );
    }

    #[test]
    fn wraps_twosided_and_a_delta_bsdf() {
        let two = obj_with("twosided", &[], vec![diffuse(0.6)]);
        let s = mask(0.4, two);
        let (a, b) = (Vec3::new(0.0, 0.6, -0.8), Vec3::new(0.6, 0.0, -0.8));
        assert!((s.eval(a, b).x - 0.4 * 0.6 * INV_PI * 0.8).abs() < 1e-6);
        assert!(s.chi2(-Vec3::Z, 4).is_ok());
        let m = mask(0.25, obj("conductor", &[]));
        assert!(m.is_delta());
        let wi = Vec3::new(0.6, 0.0, 0.8);
        let b = m.sample(wi, 0.1, Vec2::ZERO).unwrap();
        assert!(b.delta && (b.wo - Vec3::new(-0.6, 0.0, 0.8)).length() < 1e-6);
        assert!(
            (b.pdf - 0.25).abs() < 1e-6,
            "the mirror's probability times the opacity"
        );
        assert_eq!(m.sample(wi, 0.5, Vec2::ZERO).unwrap().wo, -wi);
    }

    #[test]
    fn a_textured_opacity_is_read_where_the_ray_hits() {
        let o = obj_with(
            "mask",
            &[("opacity", checker(0.2, 0.9))],
            vec![diffuse(1.0)],
        );
        let s = Setup::from_obj(&o);
        // a float read of Mitsuba's checkerboard swaps its colours (as Mitsuba 3.9.1's
        // `eval_1` does): 0.9 where the colour read gives color0
        for (uv, want) in [(Vec2::new(0.25, 0.25), 0.9), (Vec2::new(0.75, 0.25), 0.2)] {
            let ctx = BsdfCtx {
                at: crate::textures::SurfacePoint::at_uv(uv),
                ..s.ctx()
            };
            let f = s.bsdf().eval(&ctx, Vec3::Z, Vec3::Z);
            assert!((f.x - want * INV_PI).abs() < 1e-6, "{uv}: {f}");
        }
    }

    /// Mitsuba 3.9.1 (`scalar_rgb`), `mask` (opacity 0.35) around `roughconductor`
    /// (ggx, alpha 0.3, default material), wi = normalize(0.3, -0.2, 0.9):
    /// `bsdf.eval(ctx, si, wo)` and `bsdf.pdf(ctx, si, wo)` at normalize(wo).
    #[test]
    fn values_match_mitsuba() {
        let rough = obj(
            "roughconductor",
            &[
                ("distribution", Value::String("ggx".into())),
                ("alpha", Value::Float(0.3)),
            ],
        );
        let s = mask(0.35, rough);
        let wi = Vec3::new(0.3, -0.2, 0.9).normalize();
        for (wo, f, pdf) in [
            (Vec3::new(-0.3, 0.2, 0.9), 0.330_991_9, 0.332_182_9),
            (Vec3::new(-0.5, 0.1, 0.7), 0.206_339_2, 0.208_773_9),
            (Vec3::new(0.1, 0.4, 0.6), 0.086_711_96, 0.087_623_7),
            (Vec3::new(-0.2, 0.25, 0.95), 0.306_402_1, 0.307_183_1),
        ] {
            let wo = wo.normalize();
            let got = s.eval(wi, wo);
            assert!(
                (got - Color::splat(f)).abs().max_element() <= 1e-4 * f,
                "{wo}: {got} vs {f}"
            );
            let p = s.pdf(wi, wo);
            assert!((p - pdf).abs() <= 1e-4 * pdf, "{wo}: {p} vs {pdf}");
        }
    }

    #[test]
    fn errors() {
        let mut ctx = BuildCtx::default();
        let e = ctx
            .bsdf(&obj_with("mask", &[], vec![]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly one nested BSDF, got 0"), "{e}");
        let two = vec![diffuse(0.5), diffuse(0.2)];
        let e = ctx
            .bsdf(&obj_with("mask", &[], two))
            .unwrap_err()
            .to_string();
        assert!(e.contains("got 2"), "{e}");
        // the null lobe transmits: twosided refuses it, as Mitsuba does
        let m = obj_with("mask", &[], vec![diffuse(0.5)]);
        let e = ctx
            .bsdf(&obj_with("twosided", &[], vec![m]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"mask\""), "{e}");
        let e = build_err("mask", &[("opacity", Value::String("lots".into()))]);
        assert!(e.contains("opacity"), "{e}");
    }

    #[test]
    fn adapters_nest_at_most_the_kernels_depth() {
        use crate::bsdfs::registry::MAX_ADAPTER_DEPTH;
        let mut o = diffuse(0.5);
        for _ in 0..MAX_ADAPTER_DEPTH {
            o = obj_with("mask", &[], vec![o]);
        }
        let s = Setup::from_obj(&o);
        assert!((s.eval(Vec3::Z, Vec3::Z).x - 0.5f32.powi(5) * INV_PI).abs() < 1e-7);
        let e = BuildCtx::default()
            .bsdf(&obj_with("mask", &[], vec![o]))
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("more than {MAX_ADAPTER_DEPTH}")), "{e}");
    }
}
