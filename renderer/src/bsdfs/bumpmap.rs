//! `bumpmap`: tilts the shading normal of the BSDF it wraps by the slope of a height
//! texture: relief (tiles, stucco, scratches) from a grey image.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | (nested texture) | texture | — | exactly one, under any name: the height, read as a float (use a `bitmap` with `raw` = true); only a bilinear `bitmap` has a slope, any other texture leaves the surface flat |
//! | `scale` | float | 1 | multiplies the height |
//! | `flip_invalid_normals` | boolean | true | a normal that faces away from `wi` is mirrored about the unperturbed normal (its x and y negated) |
//! | `use_shadowing_function` | boolean | true | attenuates the light near the terminator by Estevez et al.'s microfacet shadowing term (Ray Tracing Gems, 2019), as Mitsuba does |
//! | (nested bsdf) | bsdf | — | exactly one: the BSDF whose normal is tilted |
//!
//! As in Mitsuba 3.9: with `h` the scaled height and its uv gradient `(h_u, h_v)`, the
//! surface's derivatives become `∂p/∂u + n (h_u − n·∂p/∂u)` and likewise for v; the
//! tilted normal is their normalised cross product, turned to the side of the
//! geometric normal. The nested BSDF is then queried in that normal's frame as
//! `normalmap` does. The slope of a height image is measured per unit of uv, so the
//! same `scale` gives steeper relief on a surface whose uv map is denser.
//!
//! ```xml
//! <bsdf type="bumpmap">
//!     <texture name="height" type="bitmap">
//!         <boolean name="raw" value="true"/>
//!         <string name="filename" value="textures/tiles_height.png"/>
//!     </texture>
//!     <float name="scale" value="0.02"/>
//!     <bsdf type="diffuse"/>
//! </bsdf>
//! ```

use super::{tilted, BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::props::Props;
use crate::desc::Category;
use crate::device_record;
use crate::error::{Error, Result};
use crate::math::{Color, Frame, Vec2, Vec3};
use crate::plugin::record::RecordRef;
use crate::plugin::{BuildContext, TexRef};
use crate::shapes::normalize_or;

/// The bump-map adapter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BumpMap {
    /// The height texture (read as a float).
    pub height: TexRef,
    /// `scale`.
    pub scale: f32,
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
pub struct BumpMapRecord {
    /// The nested BSDF's kind and record.
    pub nested: RecordRef,
    /// The height texture.
    pub height: TexRef,
    /// Bit 0: `flip_invalid_normals`; bit 1: `use_shadowing_function`.
    pub flags: u32,
    /// `scale`.
    pub scale: f32,
    /// Padding.
    pub unused: u32,
}
device_record!(BumpMapRecord {
    nested: RecordRef,
    height,
    flags,
    scale,
    unused
});

/// `BumpMapRecord::flags` bit: `flip_invalid_normals`.
pub const FLIP_INVALID: u32 = 1;
/// `BumpMapRecord::flags` bit: `use_shadowing_function`.
pub const SHADOWING: u32 = 2;

impl BsdfPlugin for BumpMap {
    type Record = BumpMapRecord;
    const ADAPTER: bool = true;

    /// Reads the height texture, the scale and the switches and builds the one nested
    /// BSDF.
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let textures = ctx.children_at(p, Category::Texture)?;
        let [(_, via)] = &textures[..] else {
            return Err(Error::parse(
                &p.loc,
                format!(
                    "bumpmap needs exactly one nested texture (the height), got {}",
                    textures.len()
                ),
            ));
        };
        let key = p
            .entries()
            .iter()
            .find(|e| e.loc == *via)
            .map(|e| e.name.clone())
            .unwrap_or_default();
        let height = ctx.texture(p, &key, None)?;
        let scale = p.float("scale", 1.0)?;
        if !scale.is_finite() {
            let msg = format!("must be finite, got {scale}");
            return Err(Error::param(&p.entry_loc("scale"), "scale", msg));
        }
        let value = ParamValue::Float(scale as f64);
        ctx.declare("scale", value, Target::prop("scale"), Range::Any);
        let flip_invalid = p.bool("flip_invalid_normals", true)?;
        let shadowing = p.bool("use_shadowing_function", true)?;
        let kids = ctx.children_at(p, Category::Bsdf)?;
        let [(kid, via)] = &kids[..] else {
            return Err(Error::parse(
                &p.loc,
                format!("bumpmap needs exactly one nested BSDF, got {}", kids.len()),
            ));
        };
        let nested = ctx.bsdf_at(kid, via)?;
        Ok(BumpMap {
            height,
            scale,
            flip_invalid,
            shadowing,
            nested,
        })
    }

    fn record(&self, refs: &[RecordRef]) -> BumpMapRecord {
        BumpMapRecord {
            nested: refs[self.nested as usize],
            height: self.height,
            flags: self.flip_invalid as u32 * FLIP_INVALID + self.shadowing as u32 * SHADOWING,
            scale: self.scale,
            unused: 0,
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

impl BumpMap {
    /// The tilted frame in the shading frame, for incident direction `wi`.
    fn frame(&self, ctx: &BsdfCtx, wi: Vec3) -> Frame {
        let at = &ctx.at;
        let g = ctx.tex.eval_1_grad(self.height, at) * self.scale;
        // in the shading frame the normal is +z: n (g − n·∂p) replaces the z part
        let dpdu = Vec3::new(at.dpdu.x, at.dpdu.y, g.x);
        let dpdv = Vec3::new(at.dpdv.x, at.dpdv.y, g.y);
        let mut n = normalize_or(dpdu.cross(dpdv), Vec3::Z);
        if at.ng.dot(n) < 0.0 {
            n = -n;
        }
        if self.flip_invalid && wi.z * wi.dot(n) <= 0.0 {
            n = Vec3::new(-n.x, -n.y, n.z);
        }
        tilted::frame(n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::desc::props::{PixelArray, Value};
    use crate::desc::ObjectDesc;
    use crate::math::{Pcg32, INV_PI};
    use crate::scene::builder::BuildCtx;
    use std::sync::Arc;

    /// A bilinear `bitmap` of one row of `w` texels holding `a x` at texel x: inside the
    /// image its height is `a (u w − 1/2)`, a slope of `a w` per unit u and none in v.
    fn ramp(w: usize, a: f32) -> Arc<ObjectDesc> {
        let px = PixelArray {
            width: w,
            height: 1,
            channels: 1,
            data: (0..w).map(|x| a * x as f32).collect(),
        };
        let mut t = obj("bitmap", &[("data", Value::Pixels(Arc::new(px)))]);
        Arc::make_mut(&mut t).category = Category::Texture;
        t
    }

    fn bumpmap(height: Arc<ObjectDesc>, scale: f64, extra: &[(&str, Value)]) -> Setup {
        let mut params = vec![
            ("height", Value::Object(height)),
            ("scale", Value::Float(scale)),
        ];
        params.extend(extra.iter().cloned());
        let d = obj("diffuse", &[("reflectance", Value::Float(1.0))]);
        Setup::from_obj(&obj_with("bumpmap", &params, vec![d]))
    }

    #[test]
    fn a_slope_tilts_the_normal_by_its_gradient() {
        // the test context's surface has dp/du = x, dp/dv = y: a height slope of g per
        // unit u makes dp/du = (1, 0, g), so the normal is (−g, 0, 1) normalised, and a
        // Lambertian surface seen through it is cos(wo, n) / π
        let (w, a, scale) = (8, 0.1, 1.5);
        let g = scale as f32 * a * w as f32;
        let n = Vec3::new(-g, 0.0, 1.0).normalize();
        let s = bumpmap(
            ramp(w, a),
            scale,
            &[("use_shadowing_function", Value::Bool(false))],
        );
        let mut rng = Pcg32::new(3, 3);
        for _ in 0..200 {
            let wo = random_upper(&mut rng);
            let want = INV_PI * wo.dot(n).max(0.0);
            let f = s.eval(Vec3::Z, wo);
            assert!((f.x - want).abs() < 1e-5, "{wo}: {f} vs {want}");
            assert!((s.pdf(Vec3::Z, wo) - want).abs() < 1e-5);
        }
        assert!(s.chi2(Vec3::Z, 4).is_ok(), "{:?}", s.chi2(Vec3::Z, 4));
        let shadowed = bumpmap(ramp(w, a), scale, &[]);
        assert!(shadowed.check_consistency(Vec3::new(0.3, 0.1, 0.9).normalize(), 2000) > 400);
    }

    #[test]
    fn a_flat_height_leaves_the_nested_bsdf_unchanged() {
        let mut c = obj("rawconstant", &[("value", Value::Float(0.7))]);
        Arc::make_mut(&mut c).category = Category::Texture;
        let s = bumpmap(c, 3.0, &[]);
        let plain = Setup::from_obj(&obj("diffuse", &[("reflectance", Value::Float(1.0))]));
        let mut rng = Pcg32::new(5, 5);
        for _ in 0..100 {
            let (a, b) = (random_upper(&mut rng), random_upper(&mut rng));
            assert!((s.eval(a, b) - plain.eval(a, b)).abs().max_element() < 1e-6);
        }
    }

    #[test]
    fn errors() {
        let mut ctx = BuildCtx::default();
        let d = obj("diffuse", &[]);
        let h = Value::Object(ramp(4, 1.0));
        let e = ctx
            .bsdf(&obj_with("bumpmap", &[], vec![d.clone()]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("exactly one nested texture") && e.contains("got 0"),
            "{e}"
        );
        let two = [("a", h.clone()), ("b", h.clone())];
        let e = ctx
            .bsdf(&obj_with("bumpmap", &two, vec![d.clone()]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("got 2"), "{e}");
        let e = ctx
            .bsdf(&obj_with("bumpmap", &[("h", h.clone())], vec![]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly one nested BSDF, got 0"), "{e}");
        let bad = [("h", h), ("scale", Value::Float(f64::NAN))];
        let e = ctx
            .bsdf(&obj_with("bumpmap", &bad, vec![d]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("scale") && e.contains("finite"), "{e}");
    }
}
