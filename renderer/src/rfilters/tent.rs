//! `tent`: the tent (triangle) filter, as Mitsuba's: a sample's weight for a pixel
//! falls linearly from 1 at the pixel centre to 0 at `radius` pixels, separately along
//! x and y (the 2D weight is the product).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `radius` | float | 1 | half-width of the filter in pixels, > 0 and at most 15 |
//!
//! ```xml
//! <rfilter type="tent"><float name="radius" value="1.5"/></rfilter>
//! ```

use super::AnyFilter;
use crate::desc::ObjectDesc;
use crate::error::Result;

/// Reads a `tent` filter's radius.
pub fn build(obj: &ObjectDesc) -> Result<AnyFilter> {
    Ok(AnyFilter::Tent {
        radius: obj.props.positive_float("radius", 1.0, false)?,
    })
}
