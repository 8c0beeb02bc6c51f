//! `moment`: Mitsuba's moment integrator, accepted as in its test scenes: it wraps
//! exactly one integrator, whose image (the mean) is rendered. Mitsuba's second-moment
//! output is not produced.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | (nested) | integrator | required | exactly one integrator, whose image is rendered |
//!
//! ```xml
//! <integrator type="moment">
//!     <integrator type="path"><integer name="max_depth" value="2"/></integrator>
//! </integrator>
//! ```

use super::Built;
use crate::desc::ObjectDesc;
use crate::error::{Error, Result};

/// Builds a `moment` integrator object: the one nested integrator.
pub fn build(obj: &ObjectDesc) -> Result<Built> {
    let nested = super::nested_integrators(obj);
    match nested[..] {
        [(e, inner)] => {
            e.mark_used();
            super::build(inner)
        }
        _ => Err(Error::parse(
            &obj.loc,
            format!(
                "a moment integrator must contain exactly one nested <integrator> \
                 (heliograph renders its mean image), found {}",
                nested.len()
            ),
        )),
    }
}
