//! `checkerboard`: a procedural two-colour checkerboard with one 2×2 tile per unit uv square.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `color0` | rgb, float or texture | 0.4 | colour of the cells where `u mod 1` and `v mod 1` are both ≤ ½ or both > ½ |
//! | `color1` | rgb, float or texture | 0.2 | colour of the other two cells |
//! | `to_uv` | transform | identity | affine uv map: the 2×2 linear part and x/y translation of the 4×4 (as Mitsuba) |
//!
//! As in Mitsuba 3, a texture used as a scalar (`eval_1`: roughness, ...) swaps the
//! two colours (Mitsuba keeps that legacy convention in its scalar path).
//! Nested textures are evaluated at the untransformed uv.
//!
//! ```xml
//! <texture type="checkerboard" name="reflectance">
//!     <rgb name="color0" value="0.8"/>
//!     <rgb name="color1" value="0.1"/>
//!     <transform name="to_uv"><scale x="8" y="8"/></transform>
//! </texture>
//! ```

use super::{RecordCtx, SurfacePoint, TexRef, TexturePlugin, TextureStore, UvTransform};
use crate::desc::props::Props;
use crate::error::Result;
use crate::math::{Color, Vec2};
use crate::plugin::BuildContext;

/// The checkerboard record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Checkerboard {
    /// Colour of the "even" cells (contains uv (¼, ¼)).
    pub color0: TexRef,
    /// Colour of the "odd" cells.
    pub color1: TexRef,
    /// Applied to surface uv before the pattern test.
    pub to_uv: UvTransform,
}
crate::device_record!(Checkerboard {
    color0,
    color1,
    to_uv: UvTransform
});

impl Checkerboard {
    /// Whether `uv` lies in a `color0` cell.
    #[inline]
    pub fn is_color0(&self, uv: Vec2) -> bool {
        let t = self.to_uv.apply(uv);
        let f = t - t.floor();
        (f.x > 0.5) == (f.y > 0.5)
    }
}

impl TexturePlugin for Checkerboard {
    type Record = Self;
    const PICKS: bool = true;
    const READS_UV: bool = true;

    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        Ok(Checkerboard {
            color0: ctx.texture(p, "color0", Some(Color::splat(0.4)))?,
            color1: ctx.texture(p, "color1", Some(Color::splat(0.2)))?,
            to_uv: UvTransform::from_props(p, "to_uv")?,
        })
    }

    fn record(&self, _at: &RecordCtx) -> Self {
        *self
    }

    #[inline]
    fn eval(&self, st: &TextureStore, at: &SurfacePoint) -> Color {
        let which = if self.is_color0(at.uv) {
            self.color0
        } else {
            self.color1
        };
        st.eval(which, at)
    }

    #[inline]
    fn eval_1(&self, st: &TextureStore, at: &SurfacePoint) -> f32 {
        let which = if self.is_color0(at.uv) {
            self.color1
        } else {
            self.color0
        };
        st.eval_1(which, at)
    }

    fn mean(&self, st: &TextureStore) -> Color {
        0.5 * (st.mean(self.color0) + st.mean(self.color1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desc::props::Value;
    use crate::desc::{Category, ObjectDesc};
    use crate::error::Loc;
    use crate::scene::builder::BuildCtx;
    use crate::textures::{build, TextureStore};
    use std::sync::Arc;

    fn checker(props: &[(&str, Value)]) -> (TextureStore, TexRef) {
        let mut p = Props::new(Loc::new("c.xml", 1, 1));
        for (i, (k, v)) in props.iter().enumerate() {
            p.insert(k, v.clone(), Loc::new("c.xml", 2 + i as u32, 1))
                .unwrap();
        }
        let obj = ObjectDesc {
            category: Category::Texture,
            kind: "checkerboard".into(),
            id: None,
            props: p,
            loc: Loc::new("c.xml", 1, 1),
        };
        let mut ctx = BuildCtx::default();
        let t = build(&obj, &mut ctx).unwrap();
        let t = ctx.add_texture(t).unwrap();
        (ctx.textures, t)
    }

    #[test]
    fn cells_follow_mitsubas_pattern() {
        let (st, t) = checker(&[]);
        let c = |u: f32, v: f32| {
            st.eval(t, &crate::textures::SurfacePoint::at_uv(Vec2::new(u, v)))
                .x
        };
        assert_eq!(c(0.25, 0.25), 0.4);
        assert_eq!(c(0.75, 0.25), 0.2);
        assert_eq!(c(0.25, 0.75), 0.2);
        assert_eq!(c(0.75, 0.75), 0.4);
        // period 1, also for negative uv
        assert_eq!(c(-0.25, 0.25), 0.2);
        assert_eq!(c(1.25, 2.25), 0.4);
        // exactly 0.5 belongs to the lower half (test is "> 0.5")
        assert_eq!(c(0.5, 0.25), 0.4);
        assert!((st.mean(t).x - 0.3).abs() < 1e-6);
        // the scalar path keeps Mitsuba's swapped convention
        assert_eq!(
            st.eval_1(
                t,
                &crate::textures::SurfacePoint::at_uv(Vec2::new(0.25, 0.25))
            ),
            0.2
        );
    }

    #[test]
    fn nested_textures_and_to_uv() {
        let inner = Arc::new(ObjectDesc {
            category: Category::Texture,
            kind: "checkerboard".into(),
            id: None,
            props: {
                let mut p = Props::new(Loc::new("c.xml", 9, 1));
                p.insert(
                    "color0",
                    Value::Rgb(Color::new(1.0, 0.0, 0.0)),
                    Loc::new("c.xml", 10, 1),
                )
                .unwrap();
                p
            },
            loc: Loc::new("c.xml", 9, 1),
        });
        let scale = crate::math::Transform::scale(crate::math::Vec3::new(2.0, 2.0, 1.0)).unwrap();
        let (st, t) = checker(&[
            ("color1", Value::Object(inner)),
            ("to_uv", Value::Transform(scale)),
        ]);
        let c = |u: f32, v: f32| st.eval(t, &crate::textures::SurfacePoint::at_uv(Vec2::new(u, v)));
        assert_eq!(c(0.1, 0.1), Color::splat(0.4));
        // outer cell 1 at uv (0.3, 0.1) (scaled to 0.6, 0.2); inner (unscaled) cell 0 there
        assert_eq!(c(0.3, 0.1), Color::new(1.0, 0.0, 0.0));
        // outer cell 1 at (0.8, 0.1) (1.6, 0.2); inner cell 1 at (0.8, 0.1): its default 0.2
        assert_eq!(c(0.8, 0.1), Color::splat(0.2));
    }
}
