//! `null`: a surface that is not there for light. Every ray passes straight through
//! (`wo = −wi`, weight 1), as a delta lobe that counts as a bounce. It gives a shape
//! that only emits (an area light nobody should see reflect) or only bounds a medium.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | (none) | — | — | the null BSDF has no parameters |
//!
//! ```xml
//! <bsdf type="null"/>
//! ```

use super::{BsdfCtx, BsdfPlugin, BsdfSample};
use crate::desc::props::Props;
use crate::device_record;
use crate::error::Result;
use crate::math::{Color, Vec2, Vec3};
use crate::plugin::record::RecordRef;
use crate::plugin::BuildContext;

/// The null BSDF (its record has one unused word: records are never empty).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Null {
    /// Always 0.
    pub unused: u32,
}
device_record!(Null { unused });

impl BsdfPlugin for Null {
    type Record = Self;
    const DELTA: bool = true;
    const TRANSMISSION: bool = true;

    fn build(_p: &Props, _ctx: &mut dyn BuildContext) -> Result<Self> {
        Ok(Null { unused: 0 })
    }

    fn record(&self, _refs: &[RecordRef]) -> Self {
        *self
    }

    /// Straight through, with probability 1 and weight 1.
    fn sample(&self, _ctx: &BsdfCtx, wi: Vec3, _u1: f32, _u2: Vec2) -> Option<BsdfSample> {
        Some(BsdfSample {
            wo: -wi,
            pdf: 1.0,
            weight: Color::ONE,
            eta: 1.0,
            delta: true,
        })
    }

    fn eval(&self, _ctx: &BsdfCtx, _wi: Vec3, _wo: Vec3) -> Color {
        Color::ZERO
    }

    fn pdf(&self, _ctx: &BsdfCtx, _wi: Vec3, _wo: Vec3) -> f32 {
        0.0
    }

    /// Nothing is reflected.
    fn diffuse_reflectance(&self, _ctx: &BsdfCtx, _wi: Vec3) -> Color {
        Color::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    #[test]
    fn everything_passes_straight_through() {
        let s = Setup::new("null", &[]);
        assert!(s.is_delta());
        for wi in incident_dirs() {
            for w in [wi, -wi] {
                let b = s.sample(w, 0.3, Vec2::new(0.2, 0.9)).unwrap();
                assert_eq!(
                    (b.wo, b.pdf, b.weight, b.eta, b.delta),
                    (-w, 1.0, Color::ONE, 1.0, true)
                );
                assert_eq!(s.eval(w, -w), Color::ZERO);
                assert_eq!(s.pdf(w, Vec3::Z), 0.0);
            }
        }
        let e = build_err(
            "null",
            &[("reflectance", crate::desc::props::Value::Float(0.5))],
        );
        assert!(e.contains("reflectance"), "{e}");
    }
}
