//! `orthographic`: a parallel projection, as Mitsuba's. Its rays are made in
//! [`super::camera`]. The film spans [−1, 1] along local x and [−1/aspect, 1/aspect] along y; scale
//! `to_world` to see more.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `to_world` | transform | identity | camera-to-world (looks down local +z, +y up) |
//! | `near_clip`, `far_clip` | float | 0.01, 10000 | clip distances along the view axis |
//!
//! ```xml
//! <sensor type="orthographic">
//!   <transform name="to_world"><scale value="2"/><lookat origin="0,0,5" target="0,0,0" up="0,1,0"/></transform></sensor>
//! ```

use super::camera::{Camera, CAMERA_ORTHOGRAPHIC};
use super::perspective::clip_range;
use crate::desc::ObjectDesc;
use crate::error::Result;
use crate::films::Film;

/// Reads an `orthographic` sensor's parameters.
pub fn build(obj: &ObjectDesc, film: &Film) -> Result<Camera> {
    let p = &obj.props;
    let to_world = p.transform("to_world")?;
    let (near, far) = clip_range(p)?;
    Ok(Camera {
        kind: CAMERA_ORTHOGRAPHIC,
        x_fov: 0.0,
        tan_half_x: 0.0,
        ..Camera::perspective(to_world, 90.0, film, near, far)
    })
}
