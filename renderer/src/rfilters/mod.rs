//! Reconstruction filters: how a sample at a film position spreads its weight over
//! neighbouring pixels. Mitsuba 3's `box`, `tent` and `gaussian` (the default, with
//! `stddev` 0.5), one file each (the file stem is the scene `type`, the file's module
//! doc the plugin's manual; `heliograph plugins NAME` prints it).
//!
//! ```xml
//! <rfilter type="tent"><float name="radius" value="1.5"/></rfilter>
//! ```
//!
//! # Adding a reconstruction filter
//!
//! 1. **`src/rfilters/<name>.rs`**: the manual (a first sentence `` `<name>`: ... ``, a
//!    `| parameter | type | default | meaning |` table, an XML example) and
//!    `pub fn build(obj: &ObjectDesc) -> Result<AnyFilter>`, which reads the
//!    properties (the registry checks that every one was read and the radius limit).
//! 2. **A variant of [`AnyFilter`]** with its [`AnyFilter::radius`] and
//!    [`AnyFilter::eval`] arms, and its flattening (`crate::films::record::flatten_film`) and
//!    CUDA twin (`kernels/film.cuh`), which the GPU film reads.
//! 3. **One line** `"<name>" => <module>` in the `register_plugins!` list below.
//!
//! From the list, the registry derives the modules, [`KNOWN`] (an unknown `type` gets
//! a "did you mean"), [`REGISTRY`] (the manuals) and the build match.

use crate::desc::ObjectDesc;
use crate::error::{Error, Result};
use crate::plugin::registry::register_plugins;

/// A reconstruction filter.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, u32)]
pub enum AnyFilter {
    /// Box of half-width `radius`.
    Box {
        /// Half-width in pixels.
        radius: f32,
    },
    /// Triangle of half-width `radius`.
    Tent {
        /// Half-width in pixels.
        radius: f32,
    },
    /// Truncated Gaussian, shifted to reach zero at its radius.
    Gaussian {
        /// Standard deviation in pixels.
        stddev: f32,
        /// Support radius (4 · stddev).
        radius: f32,
    },
}

impl Default for AnyFilter {
    fn default() -> Self {
        AnyFilter::Gaussian {
            stddev: 0.5,
            radius: 2.0,
        }
    }
}

impl AnyFilter {
    /// Support radius in pixels.
    pub fn radius(&self) -> f32 {
        match *self {
            AnyFilter::Box { radius }
            | AnyFilter::Tent { radius }
            | AnyFilter::Gaussian { radius, .. } => radius,
        }
    }

    /// The 1D filter value at offset `x` (pixels); 2D filters are separable products.
    #[inline]
    pub fn eval(&self, x: f32) -> f32 {
        match *self {
            AnyFilter::Box { radius } => {
                if x.abs() <= radius {
                    1.0
                } else {
                    0.0
                }
            }
            AnyFilter::Tent { radius } => (1.0 - x.abs() / radius).max(0.0),
            AnyFilter::Gaussian { stddev, radius } => {
                let a = -0.5 / (stddev * stddev);
                ((a * x * x).exp() - (a * radius * radius).exp()).max(0.0)
            }
        }
    }
}

impl crate::io::bitmap::Filter1D for AnyFilter {
    fn radius(&self) -> f32 {
        AnyFilter::radius(self)
    }

    fn eval(&self, x: f32) -> f32 {
        AnyFilter::eval(self, x)
    }
}

// The registry: one line per plugin, `"<type>" => module` (the file `<type>.rs`).
register_plugins! {
    category "rfilter" in "rfilters";
    fn build_kind(&ObjectDesc) -> AnyFilter;
    "box" => r#box,
    "tent" => tent,
    "gaussian" => gaussian,
}

/// Largest supported filter radius in pixels (the film's splat footprint is bounded).
pub const MAX_RADIUS: f32 = 15.0;

/// Builds an `<rfilter>`.
pub fn build(obj: &ObjectDesc) -> Result<AnyFilter> {
    let p = &obj.props;
    let f = build_kind(obj)?;
    if f.radius() > MAX_RADIUS {
        let key = if obj.kind == "gaussian" {
            "stddev"
        } else {
            "radius"
        };
        return Err(Error::param(
            &p.entry_loc(key),
            key,
            format!(
                "filter radius {} exceeds the supported maximum of {MAX_RADIUS} pixels",
                f.radius()
            ),
        ));
    }
    p.check_unused(&obj.kind)?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::registry::testing::{check_registry, scene_error};

    #[test]
    fn the_registry_has_every_filter_with_its_manual_and_suggests_the_nearest() {
        check_registry("rfilter", REGISTRY, KNOWN);
        let e = scene_error(
            r#"<sensor type="perspective"><film type="hdrfilm"><rfilter type="gausian"/></film></sensor>"#,
        );
        assert!(
            e.contains("did you mean \"gaussian\"") && e.contains("<string>:2:"),
            "{e}"
        );
    }

    #[test]
    fn filters_read_their_parameters_and_refuse_radii_past_the_limit() {
        let ok = |body: &str| {
            let xml = format!(
                "<scene version=\"3.0.0\"><sensor type=\"perspective\"><film type=\"hdrfilm\">{body}</film></sensor></scene>"
            );
            let d = crate::desc::xml::load_string(&xml, &[]).unwrap();
            crate::scene::build_scene(&d).unwrap().sensor.film.rfilter
        };
        assert_eq!(
            ok(r#"<rfilter type="box"/>"#),
            AnyFilter::Box { radius: 0.5 }
        );
        assert_eq!(
            ok(r#"<rfilter type="tent"><float name="radius" value="1.5"/></rfilter>"#),
            AnyFilter::Tent { radius: 1.5 }
        );
        assert_eq!(
            ok(r#"<rfilter type="gaussian"><float name="stddev" value="0.25"/></rfilter>"#),
            AnyFilter::Gaussian {
                stddev: 0.25,
                radius: 1.0
            }
        );
        assert_eq!(ok(""), AnyFilter::default());
        let e = scene_error(
            r#"<sensor type="perspective"><film type="hdrfilm"><rfilter type="gaussian"><float name="stddev" value="4"/></rfilter></film></sensor>"#,
        );
        assert!(e.contains("stddev") && e.contains("exceeds"), "{e}");
        let e = scene_error(
            r#"<sensor type="perspective"><film type="hdrfilm"><rfilter type="box"><float name="stddev" value="1"/></rfilter></film></sensor>"#,
        );
        assert!(e.contains("stddev"), "{e}");
    }

    #[test]
    fn filters_vanish_at_radius_and_peak_at_zero() {
        for f in [
            AnyFilter::Box { radius: 0.5 },
            AnyFilter::Tent { radius: 1.0 },
            AnyFilter::default(),
        ] {
            assert!(f.eval(0.0) > 0.0);
            assert_eq!(f.eval(f.radius() + 1e-3), 0.0);
            assert!(f.eval(0.1) <= f.eval(0.0));
        }
    }
}
