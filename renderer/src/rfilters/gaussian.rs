//! `gaussian`: the Gaussian filter, Mitsuba's default reconstruction filter: a
//! Gaussian of standard deviation `stddev` pixels, truncated at `4 · stddev` and
//! shifted down so that it reaches zero there, separately along x and y (the 2D
//! weight is the product).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `stddev` | float | 0.5 | standard deviation in pixels, > 0; the support radius `4 · stddev` is at most 15 |
//!
//! ```xml
//! <rfilter type="gaussian"><float name="stddev" value="0.25"/></rfilter>
//! ```

use super::AnyFilter;
use crate::desc::ObjectDesc;
use crate::error::Result;

/// Reads a `gaussian` filter's standard deviation.
pub fn build(obj: &ObjectDesc) -> Result<AnyFilter> {
    let stddev = obj.props.positive_float("stddev", 0.5, false)?;
    Ok(AnyFilter::Gaussian {
        stddev,
        radius: 4.0 * stddev,
    })
}
