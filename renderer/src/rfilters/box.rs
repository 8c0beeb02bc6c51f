//! `box`: the box filter, as Mitsuba's: every sample within `radius` pixels of a
//! pixel centre (along x and along y) counts fully for that pixel, others not at all.
//! With the default radius each sample lands in exactly one pixel.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `radius` | float | 0.5 | half-width of the filter in pixels, > 0 and at most 15 |
//!
//! ```xml
//! <film type="hdrfilm"><rfilter type="box"/></film>
//! ```

use super::AnyFilter;
use crate::desc::ObjectDesc;
use crate::error::Result;

/// Reads a `box` filter's radius.
pub fn build(obj: &ObjectDesc) -> Result<AnyFilter> {
    Ok(AnyFilter::Box {
        radius: obj.props.positive_float("radius", 0.5, false)?,
    })
}
