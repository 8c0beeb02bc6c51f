//! `twosided`: makes one-sided BSDFs reflect on both sides. With one nested
//! BSDF it is used for both sides; with two, the first is the front (`+z`) and
//! the second the back. Seen from behind (`wi.z < 0`), directions are mirrored
//! through the surface (`z → −z`) before the nested BSDF is queried, and back
//! afterwards. As in Mitsuba, a nested BSDF that transmits light is refused unless
//! `allow_transmission` is set: the dielectric family, `mask`, `null`,
//! `principledthin`, a `principled` with a `spec_trans`, and adapters around them.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | (nested bsdf) | bsdf | — | one (both sides) or two (front, back) BSDFs |
//! | `allow_transmission` | boolean | false | accept nested BSDFs that transmit light |
//!
//! ```xml
//! <bsdf type="twosided">
//!     <bsdf type="diffuse"><rgb name="reflectance" value="0.8, 0.2, 0.2"/></bsdf>
//! </bsdf>
//! ```

use super::{AnyBsdf, BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::props::Props;
use crate::desc::Category;
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::{Color, Vec2, Vec3};
use crate::plugin::record::RecordRef;
use crate::plugin::BuildContext;

/// The two-sided adapter: handles of the nested BSDFs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoSided {
    /// BSDF used when `wi.z > 0`.
    pub front: u32,
    /// BSDF used when `wi.z < 0` (the same handle when only one was given).
    pub back: u32,
}

/// What the kernels read: where the nested BSDFs' records are (a copy of their
/// [`RecordRef`]s, so that reaching a nested record takes no extra load).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct TwoSidedRecord {
    /// The front BSDF's kind and record.
    pub front: RecordRef,
    /// The back BSDF's kind and record.
    pub back: RecordRef,
}
device_record!(TwoSidedRecord {
    front: RecordRef,
    back: RecordRef
});

fn flip(v: Vec3) -> Vec3 {
    Vec3::new(v.x, v.y, -v.z)
}

impl BsdfPlugin for TwoSided {
    type Record = TwoSidedRecord;
    const ADAPTER: bool = true;

    /// Builds the nested BSDFs.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let kids = ctx.children_at(p, Category::Bsdf)?;
        if kids.is_empty() || kids.len() > 2 {
            return Err(Error::parse(
                &p.loc,
                format!("twosided needs one or two nested BSDFs, got {}", kids.len()),
            ));
        }
        let allow_transmission = p.bool("allow_transmission", false)?;
        let mut handles = [0u32; 2];
        for (i, (kid, via)) in kids.iter().enumerate() {
            let h = ctx.bsdf_at(kid, via)?;
            if !allow_transmission && ctx.bsdf_transmits(h) {
                return Err(Error::parse(
                    &kid.loc,
                    format!(
                        "twosided cannot wrap this \"{}\" BSDF: it transmits light (only \
                         one-sided reflective BSDFs; set allow_transmission to true to wrap it \
                         anyway)",
                        kid.kind
                    ),
                ));
            }
            handles[i] = h;
        }
        let back = if kids.len() == 2 {
            handles[1]
        } else {
            handles[0]
        };
        Ok(TwoSided {
            front: handles[0],
            back,
        })
    }

    fn record(&self, refs: &[RecordRef]) -> TwoSidedRecord {
        // nested BSDFs are built (and get their handles) before the adapter
        TwoSidedRecord {
            front: refs[self.front as usize],
            back: refs[self.back as usize],
        }
    }

    /// Samples the BSDF of the side `wi` is on.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        if wi.z == 0.0 {
            return None;
        }
        let (b, flipped) = self.side(ctx, wi);
        if !flipped {
            return b.sample(ctx, wi, u1, u2);
        }
        let mut s = b.sample(ctx, flip(wi), u1, u2)?;
        s.wo = flip(s.wo);
        Some(s)
    }

    /// Evaluates the BSDF of the side `wi` is on.
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        match self.side(ctx, wi) {
            _ if wi.z == 0.0 => Color::ZERO,
            (b, true) => b.eval(ctx, flip(wi), flip(wo)),
            (b, false) => b.eval(ctx, wi, wo),
        }
    }

    /// Density of the BSDF of the side `wi` is on.
    fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        match self.side(ctx, wi) {
            _ if wi.z == 0.0 => 0.0,
            (b, true) => b.pdf(ctx, flip(wi), flip(wo)),
            (b, false) => b.pdf(ctx, wi, wo),
        }
    }

    /// The diffuse reflectance of the BSDF of the side `wi` is on (seen from the front).
    fn diffuse_reflectance(&self, ctx: &BsdfCtx, wi: Vec3) -> Color {
        match self.side(ctx, wi) {
            _ if wi.z == 0.0 => Color::ZERO,
            (b, true) => b.diffuse_reflectance(ctx, flip(wi)),
            (b, false) => b.diffuse_reflectance(ctx, wi),
        }
    }

    fn nested(&self) -> Vec<u32> {
        vec![self.front, self.back]
    }

    /// Whether both sides are purely delta.
    fn is_delta(&self, ctx: &BsdfCtx) -> bool {
        ctx.bsdfs[self.front as usize].is_delta(ctx) && ctx.bsdfs[self.back as usize].is_delta(ctx)
    }
}

impl TwoSided {
    /// The nested BSDF for the side `wi` lies on, and whether directions are mirrored.
    fn side<'a>(&self, ctx: &'a BsdfCtx, wi: Vec3) -> (&'a AnyBsdf, bool) {
        if wi.z < 0.0 {
            (&ctx.bsdfs[self.back as usize], true)
        } else {
            (&ctx.bsdfs[self.front as usize], false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::desc::props::Value;
    use crate::desc::ObjectDesc;
    use crate::scene::builder::BuildCtx;
    use std::sync::Arc;

    fn rough() -> std::sync::Arc<ObjectDesc> {
        obj(
            "roughconductor",
            &[
                ("distribution", Value::String("ggx".into())),
                ("alpha", Value::Float(0.3)),
            ],
        )
    }

    #[test]
    fn symmetric_with_one_child() {
        let s = Setup::from_obj(&obj_with("twosided", &[], vec![rough()]));
        let mut rng = crate::math::Pcg32::new(3, 3);
        for _ in 0..200 {
            let (a, b) = (random_upper(&mut rng), random_upper(&mut rng));
            let front = s.eval(a, b);
            assert!(front.max_element() > 0.0);
            assert_eq!(front, s.eval(flip(a), flip(b)));
            assert_eq!(s.pdf(a, b), s.pdf(flip(a), flip(b)));
            // never leaks through the surface
            assert_eq!(s.eval(a, flip(b)), Color::ZERO);
        }
        for wi in incident_dirs() {
            let back = flip(wi);
            assert!(s.chi2(back, 4).is_ok(), "{back}: {:?}", s.chi2(back, 4));
            assert!(s.check_consistency(back, 2000) > 500);
            let f = s.sample(wi, 0.4, Vec2::new(0.3, 0.7)).unwrap();
            let b = s.sample(back, 0.4, Vec2::new(0.3, 0.7)).unwrap();
            assert!(b.wo.z < 0.0 && b.wo == flip(f.wo) && b.weight == f.weight);
        }
        assert!(!s.is_delta());
    }

    #[test]
    fn two_children_pick_by_side() {
        let front = obj("diffuse", &[("reflectance", Value::Float(0.8))]);
        let back = obj("diffuse", &[("reflectance", Value::Float(0.2))]);
        let s = Setup::from_obj(&obj_with("twosided", &[], vec![front, back]));
        let (a, b) = (Vec3::new(0.0, 0.6, 0.8), Vec3::Z);
        let pi = std::f32::consts::PI;
        assert!((s.eval(a, b).x - 0.8 / pi).abs() < 1e-6);
        assert!((s.eval(flip(a), flip(b)).x - 0.2 / pi).abs() < 1e-6);
        let (alb, _) = s.albedo(flip(a), 1000);
        assert!((alb.x - 0.2).abs() < 1e-4, "{alb}");
        let m = Setup::from_obj(&obj_with("twosided", &[], vec![obj("conductor", &[])]));
        assert!(m.is_delta());
        let bs = m
            .sample(Vec3::new(0.6, 0.0, -0.8), 0.5, Vec2::ZERO)
            .unwrap();
        assert!((bs.wo - Vec3::new(-0.6, 0.0, -0.8)).length() < 1e-6 && bs.weight == Color::ONE);
    }

    #[test]
    fn errors() {
        let mut ctx = BuildCtx::default();
        let e = ctx
            .bsdf(&obj_with("twosided", &[], vec![]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("one or two"), "{e}");
        let e = ctx
            .bsdf(&obj_with("twosided", &[], vec![obj("dielectric", &[])]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("dielectric"), "{e}");
        let kids = vec![rough(), rough(), rough()];
        let e = ctx
            .bsdf(&obj_with("twosided", &[], kids))
            .unwrap_err()
            .to_string();
        assert!(e.contains("got 3"), "{e}");
    }

    #[test]
    fn transmission_is_decided_per_instance_as_mitsuba_does() {
        let ok = |kid: Arc<ObjectDesc>, extra: &[(&str, Value)]| {
            BuildCtx::default()
                .bsdf(&obj_with("twosided", extra, vec![kid]))
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let diffuse = || obj("diffuse", &[]);
        let spec_trans = |v: f64| obj("principled", &[("spec_trans", Value::Float(v))]);
        // reflective instances, adapters around them included
        assert!(ok(spec_trans(0.0), &[]).is_ok());
        assert!(ok(obj("principled", &[]), &[]).is_ok());
        assert!(ok(obj_with("twosided", &[], vec![diffuse()]), &[]).is_ok());
        let weight = [("weight", Value::Float(0.3))];
        let blend = obj_with("blendbsdf", &weight, vec![diffuse(), rough()]);
        assert!(ok(blend, &[]).is_ok());
        // transmitting ones, and adapters around them
        for kid in [
            spec_trans(0.3),
            obj("principledthin", &[]),
            obj_with("mask", &[], vec![diffuse()]),
            obj("null", &[]),
            obj_with(
                "blendbsdf",
                &weight,
                vec![diffuse(), obj("thindielectric", &[])],
            ),
        ] {
            let kind = kid.kind.clone();
            let e = ok(kid.clone(), &[]).unwrap_err();
            assert!(e.contains(&kind) && e.contains("allow_transmission"), "{e}");
            assert!(ok(kid, &[("allow_transmission", Value::Bool(true))]).is_ok());
        }
    }
}
