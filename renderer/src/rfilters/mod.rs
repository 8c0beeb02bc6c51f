//! Reconstruction filters: how a sample at a film position spreads its weight
//! over neighbouring pixels (`box`, `tent`, `gaussian`; Mitsuba's default is
//! `gaussian` with `stddev` 0.5).
//!
//! | plugin | parameters (default) |
//! |---|---|
//! | `box` | `radius` (0.5) |
//! | `tent` | `radius` (1.0) |
//! | `gaussian` | `stddev` (0.5); support radius 4·stddev |
//!
//! ```xml
//! <rfilter type="tent"><float name="radius" value="1.5"/></rfilter>
//! ```

use crate::error::{Error, Result};
use crate::scene::desc::ObjectDesc;

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

/// Largest supported filter radius in pixels (the film's splat footprint is bounded).
pub const MAX_RADIUS: f32 = 15.0;

/// Names of the filter plugins.
pub const KNOWN: &[&str] = &["box", "tent", "gaussian"];

/// Builds an `<rfilter>`.
pub fn build(obj: &ObjectDesc) -> Result<AnyFilter> {
    let p = &obj.props;
    let f = match obj.kind.as_str() {
        "box" => AnyFilter::Box {
            radius: p.positive_float("radius", 0.5, false)?,
        },
        "tent" => AnyFilter::Tent {
            radius: p.positive_float("radius", 1.0, false)?,
        },
        "gaussian" => {
            let stddev = p.positive_float("stddev", 0.5, false)?;
            AnyFilter::Gaussian {
                stddev,
                radius: 4.0 * stddev,
            }
        }
        _ => {
            return Err(Error::UnknownPlugin {
                loc: obj.loc.clone(),
                category: "rfilter",
                name: obj.kind.clone(),
                known: KNOWN.join(", "),
            })
        }
    };
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
