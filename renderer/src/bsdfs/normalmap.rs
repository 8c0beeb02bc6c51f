//! `normalmap`: tilts the shading normal of the BSDF it wraps by a tangent-space normal
//! map. Fine relief (tiles, fabric, scratches) without more triangles.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `normalmap` | texture | — | required; the normal in the shading frame, each component mapped from [0, 1] to [−1, 1] (use a `bitmap` with `raw` = true, or a `rawconstant`) |
//! | `flip_invalid_normals` | boolean | true | a normal that faces away from `wi` is mirrored about the unperturbed normal (its x and y negated) |
//! | `use_shadowing_function` | boolean | true | attenuates the light near the terminator by Estevez et al.'s microfacet shadowing term (Ray Tracing Gems, 2019), as Mitsuba does |
//! | (nested bsdf) | bsdf | — | exactly one: the BSDF whose normal is tilted |
//!
//! As in Mitsuba 3.9: the map's normal `n` (x along the shading frame's tangent, which
//! follows the surface's ∂p/∂u) defines a frame `s = normalize(x̂ − n·n.x)`, `t = n × s`;
//! the nested BSDF is queried with `wi` and `wo` in that frame, and a direction on the
//! other side of the unperturbed surface than in the tilted frame is black. A map value
//! of (0.5, 0.5, 1) leaves the BSDF as it is.
//!
//! ```xml
//! <bsdf type="normalmap">
//!     <texture name="normalmap" type="bitmap">
//!         <boolean name="raw" value="true"/>
//!         <string name="filename" value="textures/tiles_normal.png"/>
//!     </texture>
//!     <bsdf type="roughconductor"/>
//! </bsdf>
//! ```

use super::{tilted, BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::props::Props;
use crate::desc::Category;
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::{Color, Frame, Vec2, Vec3};
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};
use crate::shapes::normalize_or;

/// The normal-map adapter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalMap {
    /// The tangent-space normal texture (read raw).
    pub normalmap: TexRef,
    /// `flip_invalid_normals`.
    pub flip_invalid: bool,
    /// `use_shadowing_function`.
    pub shadowing: bool,
    /// The nested BSDF.
    pub nested: u32,
}

/// What the kernels read.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct NormalMapRecord {
    /// The nested BSDF's kind and record.
    pub nested: RecordRef,
    /// The normal texture.
    pub normalmap: TexRef,
    /// Bit 0: `flip_invalid_normals`; bit 1: `use_shadowing_function`.
    pub flags: u32,
}
device_record!(NormalMapRecord {
    nested: RecordRef,
    normalmap,
    flags
});

/// `NormalMapRecord::flags` bit: `flip_invalid_normals`.
pub const FLIP_INVALID: u32 = 1;
/// `NormalMapRecord::flags` bit: `use_shadowing_function`.
pub const SHADOWING: u32 = 2;

impl BsdfPlugin for NormalMap {
    type Record = NormalMapRecord;
    const ADAPTER: bool = true;

    /// Reads the map and the switches and builds the one nested BSDF.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        if !p.has("normalmap") {
            return Err(Error::param(&p.loc, "normalmap", "is required (a texture)"));
        }
        let normalmap = ctx.texture(p, "normalmap", None)?;
        let flip_invalid = p.bool("flip_invalid_normals", true)?;
        let shadowing = p.bool("use_shadowing_function", true)?;
        let kids = ctx.children_at(p, Category::Bsdf)?;
        let [(kid, via)] = &kids[..] else {
            return Err(Error::parse(
                &p.loc,
                format!(
                    "normalmap needs exactly one nested BSDF, got {}",
                    kids.len()
                ),
            ));
        };
        let nested = ctx.bsdf_at(kid, via)?;
        Ok(NormalMap {
            normalmap,
            flip_invalid,
            shadowing,
            nested,
        })
    }

    fn record(&self, refs: &[RecordRef]) -> NormalMapRecord {
        NormalMapRecord {
            nested: refs[self.nested as usize],
            normalmap: self.normalmap,
            flags: self.flip_invalid as u32 * FLIP_INVALID + self.shadowing as u32 * SHADOWING,
        }
    }

    /// Samples the nested BSDF in the tilted frame.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        let f = self.frame(ctx, wi);
        tilted::sample(ctx, self.nested, &f, self.shadowing, wi, u1, u2)
    }

    /// The nested BSDF in the tilted frame, times the shadowing term.
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        let f = self.frame(ctx, wi);
        tilted::eval(ctx, self.nested, &f, self.shadowing, wi, wo)
    }

    /// The nested BSDF's density in the tilted frame.
    fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        tilted::pdf(ctx, self.nested, &self.frame(ctx, wi), wi, wo)
    }

    /// The nested BSDF's.
    fn diffuse_reflectance(&self, ctx: &BsdfCtx, wi: Vec3) -> Color {
        ctx.bsdfs[self.nested as usize].diffuse_reflectance(ctx, wi)
    }

    /// Whether the nested BSDF is purely delta.
    fn is_delta(&self, ctx: &BsdfCtx) -> bool {
        ctx.bsdfs[self.nested as usize].is_delta(ctx)
    }

    fn nested(&self) -> Vec<u32> {
        vec![self.nested]
    }
}

impl NormalMap {
    /// The tilted frame in the shading frame, for incident direction `wi`.
    fn frame(&self, ctx: &BsdfCtx, wi: Vec3) -> Frame {
        let c = ctx.tex.eval(self.normalmap, &ctx.at);
        let mut n = Vec3::new(2.0 * c.x - 1.0, 2.0 * c.y - 1.0, 2.0 * c.z - 1.0);
        if self.flip_invalid && wi.z * wi.dot(n) <= 0.0 {
            n = Vec3::new(-n.x, -n.y, n.z);
        }
        // a map value of (0.5, 0.5, 0.5) has no direction: keep the surface's
        tilted::frame(normalize_or(n, Vec3::Z))
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

    /// A `rawconstant` texture of `v`.
    fn raw(v: Vec3) -> Arc<ObjectDesc> {
        let mut t = obj("rawconstant", &[("value", Value::Vector(v))]);
        Arc::make_mut(&mut t).category = Category::Texture;
        t
    }

    fn normalmap(n: Vec3, nested: Arc<ObjectDesc>, extra: &[(&str, Value)]) -> Setup {
        let mut params = vec![("normalmap", Value::Object(raw(n)))];
        params.extend(extra.iter().cloned());
        Setup::from_obj(&obj_with("normalmap", &params, vec![nested]))
    }

    fn rough() -> Arc<ObjectDesc> {
        obj(
            "roughconductor",
            &[
                ("distribution", Value::String("ggx".into())),
                ("alpha_u", Value::Float(0.25)),
                ("alpha_v", Value::Float(0.05)),
            ],
        )
    }

    #[test]
    fn the_identity_map_leaves_the_nested_bsdf_unchanged() {
        let s = normalmap(Vec3::new(0.5, 0.5, 1.0), rough(), &[]);
        let plain = Setup::from_obj(&rough());
        let mut rng = Pcg32::new(4, 4);
        for _ in 0..200 {
            let (a, b) = (random_upper(&mut rng), random_upper(&mut rng));
            let (f, g) = (s.eval(a, b), plain.eval(a, b));
            assert!(
                (f - g).abs().max_element() <= 1e-5 * g.max_element().max(1.0),
                "{f} {g}"
            );
            assert!((s.pdf(a, b) - plain.pdf(a, b)).abs() <= 1e-5 * plain.pdf(a, b).max(1.0));
        }
    }

    #[test]
    fn a_tilted_normal_tilts_a_lambertian_lobe() {
        // n tilted 30° towards +x: a diffuse surface seen through it is cos(wo, n) / π
        // times the shadowing term, zero where wo is below either surface
        let (sn, cn) = (30f32.to_radians().sin(), 30f32.to_radians().cos());
        let tex = Vec3::new(0.5 + 0.5 * sn, 0.5, 0.5 + 0.5 * cn);
        let d = obj("diffuse", &[("reflectance", Value::Float(1.0))]);
        let s = normalmap(tex, d.clone(), &[]);
        let plain = normalmap(tex, d, &[("use_shadowing_function", Value::Bool(false))]);
        let n = Vec3::new(sn, 0.0, cn);
        let wi = Vec3::new(0.2, 0.3, 0.9).normalize();
        let mut rng = Pcg32::new(9, 2);
        for _ in 0..200 {
            let wo = random_upper(&mut rng);
            let want = (wo.dot(n)).max(0.0) * INV_PI;
            let got = plain.eval(wi, wo).x;
            assert!((got - want).abs() < 1e-5, "{wo}: {got} vs {want}");
            let shadow = tilted::shadow_terminator(n, wo);
            assert!((s.eval(wi, wo).x - want * shadow).abs() < 1e-5);
            assert!(shadow > 0.0 && shadow <= 1.0);
        }
        for wi in incident_dirs() {
            assert!(s.chi2(wi, 4).is_ok(), "{wi}: {:?}", s.chi2(wi, 4));
            assert!(s.check_consistency(wi, 2000) > 500);
        }
    }

    #[test]
    fn normals_facing_away_are_mirrored_unless_told_not_to() {
        // n leans towards −x; wi comes from far +x, where wi · n < 0
        let tex = Vec3::new(0.1, 0.5, 0.6);
        let d = obj("diffuse", &[]);
        let wi = Vec3::new(0.95, 0.0, 0.2).normalize();
        let wo = Vec3::new(0.5, 0.0, 0.5).normalize();
        let flip = normalmap(
            tex,
            d.clone(),
            &[("use_shadowing_function", Value::Bool(false))],
        );
        let keep = normalmap(
            tex,
            d,
            &[
                ("use_shadowing_function", Value::Bool(false)),
                ("flip_invalid_normals", Value::Bool(false)),
            ],
        );
        let n = Vec3::new(-0.8, 0.0, 0.2).normalize();
        let mirrored = Vec3::new(0.8, 0.0, 0.2).normalize();
        assert!(
            (keep.eval(wi, wo).x - 0.0).abs() < 1e-6,
            "wi below the tilted surface"
        );
        let want = 0.5 * INV_PI * wo.dot(mirrored);
        assert!(
            (flip.eval(wi, wo).x - want).abs() < 1e-5,
            "{}",
            flip.eval(wi, wo)
        );
        assert!(wi.dot(n) < 0.0);
    }

    /// Mitsuba 3.9.1 (`scalar_rgb`): `normalmap` with a `rawconstant` (0.7, 0.4, 0.8)
    /// around a `roughconductor` (ggx, alpha_u 0.25, alpha_v 0.05), si with the
    /// shading frame (x, y, z) and uv (0.3, 0.6), wi = normalize(0.3, -0.2, 0.9);
    /// `bsdf.eval(ctx, si, wo)` and `bsdf.pdf(ctx, si, wo)` at normalize(wo).
    #[test]
    fn values_match_mitsuba() {
        let s = normalmap(Vec3::new(0.7, 0.4, 0.8), rough(), &[]);
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

    const MITSUBA: [([f32; 3], f32, f32); 5] = [
        ([-0.3, 0.2, 0.9], 0.003_193_716, 0.003_290_631),
        ([-0.5, 0.1, 0.7], 0.004_858_887, 0.005_463_975),
        ([0.1, 0.4, 0.6], 0.000_753_050_5, 0.000_761_509_3),
        ([-0.2, 0.25, 0.95], 0.002_641_839, 0.002_691_958),
        ([-0.6, -0.3, 0.5], 0.057_131_22, 0.076_903_88),
    ];

    #[test]
    fn errors() {
        let mut ctx = BuildCtx::default();
        let d = obj("diffuse", &[]);
        let e = ctx
            .bsdf(&obj_with("normalmap", &[], vec![d.clone()]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("normalmap") && e.contains("required"), "{e}");
        let m = [("normalmap", Value::Object(raw(Vec3::Z)))];
        let e = ctx
            .bsdf(&obj_with("normalmap", &m, vec![]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly one nested BSDF, got 0"), "{e}");
        let e = ctx
            .bsdf(&obj_with("normalmap", &m, vec![d.clone(), d]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("got 2"), "{e}");
    }
}
