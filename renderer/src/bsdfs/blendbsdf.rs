//! `blendbsdf`: a linear blend of two BSDFs, `(1 − weight) · first + weight · second`,
//! with a constant or textured weight (worn paint over metal, a dusty surface).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `weight` | float or texture | — | required; the second BSDF's share, clipped to [0, 1] (a colour texture gives its luminance) |
//! | (nested bsdfs) | bsdf | — | exactly two: the first (weight 0) and the second (weight 1) |
//!
//! As in Mitsuba 3: sampling picks the second BSDF with probability `weight` and the
//! first otherwise; the sample's density and weight are those of the blend (both
//! BSDFs evaluated at the sampled direction), so `weight = eval / pdf` of the blend.
//!
//! ```xml
//! <bsdf type="blendbsdf">
//!     <float name="weight" value="0.3"/>
//!     <bsdf type="diffuse"/>
//!     <bsdf type="roughconductor"/>
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

/// The blend adapter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlendBsdf {
    /// The second BSDF's share.
    pub weight: TexRef,
    /// The first nested BSDF.
    pub bsdf_0: u32,
    /// The second nested BSDF.
    pub bsdf_1: u32,
}

/// What the kernels read.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct BlendBsdfRecord {
    /// The first BSDF's kind and record.
    pub bsdf_0: RecordRef,
    /// The second BSDF's kind and record.
    pub bsdf_1: RecordRef,
    /// The weight texture.
    pub weight: TexRef,
    /// Keeps the record a whole number of `RecordRef`s (8-byte aligned).
    pub unused: u32,
}
device_record!(BlendBsdfRecord {
    bsdf_0: RecordRef,
    bsdf_1: RecordRef,
    weight,
    unused
});

impl BsdfPlugin for BlendBsdf {
    type Record = BlendBsdfRecord;
    const ADAPTER: bool = true;

    /// Reads the weight and builds the two nested BSDFs.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        if !p.has("weight") {
            return Err(Error::param(
                &p.loc,
                "weight",
                "is required (a float or a texture)",
            ));
        }
        let weight = ctx.texture_in(p, "weight", None, Range::Any, SpectrumUse::Reflectance)?;
        let kids = ctx.children_at(p, Category::Bsdf)?;
        let [(k0, v0), (k1, v1)] = &kids[..] else {
            return Err(Error::parse(
                &p.loc,
                format!(
                    "blendbsdf needs exactly two nested BSDFs, got {}",
                    kids.len()
                ),
            ));
        };
        let bsdf_0 = ctx.bsdf_at(k0, v0)?;
        let bsdf_1 = ctx.bsdf_at(k1, v1)?;
        Ok(BlendBsdf {
            weight,
            bsdf_0,
            bsdf_1,
        })
    }

    fn record(&self, refs: &[RecordRef]) -> BlendBsdfRecord {
        BlendBsdfRecord {
            bsdf_0: refs[self.bsdf_0 as usize],
            bsdf_1: refs[self.bsdf_1 as usize],
            weight: self.weight,
            unused: 0,
        }
    }

    /// Picks a BSDF by the weight, samples it, and weighs the sample by the blend.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        let w = self.weight_at(ctx);
        let (b0, b1) = (
            &ctx.bsdfs[self.bsdf_0 as usize],
            &ctx.bsdfs[self.bsdf_1 as usize],
        );
        // the sampled BSDF, its share, and the other BSDF with its share
        let (picked, share, other, other_share, u) = if u1 > w {
            (b0, 1.0 - w, b1, w, (u1 - w) / (1.0 - w))
        } else {
            (b1, w, b0, 1.0 - w, u1 / w)
        };
        let mut s = picked.sample(ctx, wi, u.min(ONE_MINUS_EPSILON), u2)?;
        let pdf = other_share * other.pdf(ctx, wi, s.wo) + share * s.pdf;
        if !(pdf > 0.0) {
            return None;
        }
        let f = other.eval(ctx, wi, s.wo) * other_share + s.weight * (share * s.pdf);
        s.weight = f / pdf;
        s.pdf = pdf;
        Some(s)
    }

    /// `(1 − w) · first + w · second`.
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        let w = self.weight_at(ctx);
        ctx.bsdfs[self.bsdf_0 as usize].eval(ctx, wi, wo) * (1.0 - w)
            + ctx.bsdfs[self.bsdf_1 as usize].eval(ctx, wi, wo) * w
    }

    /// The blend of the two densities.
    fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        let w = self.weight_at(ctx);
        ctx.bsdfs[self.bsdf_0 as usize].pdf(ctx, wi, wo) * (1.0 - w)
            + ctx.bsdfs[self.bsdf_1 as usize].pdf(ctx, wi, wo) * w
    }

    /// The blend of the two.
    fn diffuse_reflectance(&self, ctx: &BsdfCtx, wi: Vec3) -> Color {
        let w = self.weight_at(ctx);
        ctx.bsdfs[self.bsdf_0 as usize].diffuse_reflectance(ctx, wi) * (1.0 - w)
            + ctx.bsdfs[self.bsdf_1 as usize].diffuse_reflectance(ctx, wi) * w
    }

    /// Whether both are purely delta.
    fn is_delta(&self, ctx: &BsdfCtx) -> bool {
        ctx.bsdfs[self.bsdf_0 as usize].is_delta(ctx)
            && ctx.bsdfs[self.bsdf_1 as usize].is_delta(ctx)
    }

    fn nested(&self) -> Vec<u32> {
        vec![self.bsdf_0, self.bsdf_1]
    }
}

impl BlendBsdf {
    /// The weight at the shading point, clipped to [0, 1].
    fn weight_at(&self, ctx: &BsdfCtx) -> f32 {
        ctx.tex.eval_1(self.weight, &ctx.at).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::desc::props::Value;
    use crate::desc::ObjectDesc;
    use crate::math::{Pcg32, INV_PI};
    use crate::scene::builder::BuildCtx;
    use std::sync::Arc;

    fn rough() -> Arc<ObjectDesc> {
        obj(
            "roughconductor",
            &[
                ("distribution", Value::String("ggx".into())),
                ("alpha", Value::Float(0.3)),
            ],
        )
    }

    fn blend(w: f64, a: Arc<ObjectDesc>, b: Arc<ObjectDesc>) -> Setup {
        Setup::from_obj(&obj_with(
            "blendbsdf",
            &[("weight", Value::Float(w))],
            vec![a, b],
        ))
    }

    #[test]
    fn eval_and_pdf_blend_linearly() {
        let d = obj("diffuse", &[("reflectance", Value::Float(0.6))]);
        let s = blend(0.3, d.clone(), rough());
        let (sd, sr) = (Setup::from_obj(&d), Setup::from_obj(&rough()));
        let mut rng = Pcg32::new(3, 8);
        for _ in 0..200 {
            let (a, b) = (random_upper(&mut rng), random_upper(&mut rng));
            let want = sd.eval(a, b) * 0.7 + sr.eval(a, b) * 0.3;
            assert!((s.eval(a, b) - want).abs().max_element() < 1e-5);
            let pdf = sd.pdf(a, b) * 0.7 + sr.pdf(a, b) * 0.3;
            assert!((s.pdf(a, b) - pdf).abs() < 1e-5 * pdf.max(1.0));
        }
        for wi in incident_dirs() {
            assert!(s.chi2(wi, 4).is_ok(), "{wi}: {:?}", s.chi2(wi, 4));
            assert!(s.check_consistency(wi, 2000) > 1500);
        }
        // the furnace: a blend of a white diffuse and a mirror-like rough conductor
        // reflects the blend of their albedos
        let white = obj("diffuse", &[("reflectance", Value::Float(1.0))]);
        let b = blend(
            0.5,
            white,
            obj("diffuse", &[("reflectance", Value::Float(0.2))]),
        );
        // (every sample weighs exactly the blend here: the error is the f32 sum's)
        let (alb, err) = b.albedo(Vec3::new(0.3, 0.0, 0.95).normalize(), 20_000);
        assert!((alb.x - 0.6).abs() < 5.0 * err + 2e-4, "{alb} ± {err}");
        // weights 0 and 1 are the nested BSDFs themselves
        let d0 = blend(0.0, d.clone(), rough());
        let (a, b) = (Vec3::new(0.1, 0.2, 0.97).normalize(), Vec3::Z);
        assert!((d0.eval(a, b).x - 0.6 * INV_PI).abs() < 1e-6);
        assert_eq!(blend(1.0, d, rough()).eval(a, b), sr.eval(a, b));
    }

    /// Mitsuba 3.9.1 (`scalar_rgb`): `blendbsdf` weight 0.3 of `diffuse` (0.6) and
    /// `roughconductor` (ggx, alpha 0.3), wi = normalize(0.3, -0.2, 0.9): `eval`, `pdf`
    /// at normalize(wo).
    #[test]
    fn values_match_mitsuba() {
        let d = obj("diffuse", &[("reflectance", Value::Float(0.6))]);
        let s = blend(0.3, d, rough());
        let wi = Vec3::new(0.3, -0.2, 0.9).normalize();
        for (wo, f, pdf) in MITSUBA {
            let wo = Vec3::from(wo).normalize();
            let got = s.eval(wi, wo);
            assert!(
                (got - Color::splat(f)).abs().max_element() <= 1e-3 * f,
                "{wo}: {got} vs {f}"
            );
            let p = s.pdf(wi, wo);
            assert!((p - pdf).abs() <= 1e-3 * pdf, "{wo}: {p} vs {pdf}");
        }
    }

    const MITSUBA: [([f32; 3], f32, f32); 4] = [
        ([-0.3, 0.2, 0.9], 0.407_809_1, 0.491_564_5),
        ([-0.5, 0.1, 0.7], 0.284_922_6, 0.359_049_8),
        ([0.1, 0.4, 0.6], 0.184_507_1, 0.258_743_6),
        ([-0.6, -0.3, 0.5], 0.116_293_1, 0.170_975_3),
    ];

    #[test]
    fn errors() {
        let mut ctx = BuildCtx::default();
        let d = obj("diffuse", &[]);
        let w = [("weight", Value::Float(0.5))];
        let e = ctx
            .bsdf(&obj_with("blendbsdf", &w, vec![d.clone()]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly two nested BSDFs, got 1"), "{e}");
        let e = ctx
            .bsdf(&obj_with("blendbsdf", &[], vec![d.clone(), d]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"weight\"") && e.contains("required"), "{e}");
    }
}
