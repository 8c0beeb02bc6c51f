//! `thinlens`: a camera with a circular lens aperture and a plane in focus, as
//! Mitsuba's. The `perspective` camera's rays start at a point of the aperture disk
//! and pass through where the pinhole ray meets the plane at `focus_distance`, so what
//! lies off that plane is blurred (rays: [`super::camera`]).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `to_world` | transform | identity | camera-to-world (looks down local +z, +y up); must not scale |
//! | `fov` | float | — | field of view in degrees along `fov_axis` |
//! | `fov_axis` | string | `x` | `x`, `y`, `diagonal`, `smaller`, `larger` |
//! | `focal_length` | string | `50mm` | 35 mm-equivalent focal length, used when `fov` is absent (measured on the diagonal) |
//! | `near_clip`, `far_clip` | float | 0.01, 10000 | clip distances along the view axis |
//! | `focus_distance` | float | `far_clip` | distance of the plane in focus |
//! | `aperture_radius` | float | — (required) | radius of the lens aperture, in scene units, >= 0 |
//!
//! ```xml
//! <sensor type="thinlens"><float name="fov" value="45"/>
//!   <float name="aperture_radius" value="0.1"/><float name="focus_distance" value="5"/>
//!   <transform name="to_world"><lookat origin="0,0,5" target="0,0,0" up="0,1,0"/></transform></sensor>
//! ```

use super::camera::{Camera, CAMERA_THINLENS};
use super::perspective::projective;
use crate::desc::ObjectDesc;
use crate::error::{Error, Result};
use crate::films::Film;

/// Reads a `thinlens` sensor's parameters.
pub fn build(obj: &ObjectDesc, film: &Film) -> Result<Camera> {
    let p = &obj.props;
    let (mut cam, focus) = projective(p, film)?;
    if !p.has("aperture_radius") {
        return Err(Error::param(
            &p.loc,
            "aperture_radius",
            "a thinlens sensor needs its aperture radius (in scene units), e.g. <float name=\"aperture_radius\" value=\"0.1\"/>",
        ));
    }
    let radius = p.float("aperture_radius", 0.0)?;
    if !(radius >= 0.0) || !radius.is_finite() {
        return Err(Error::param(
            &p.entry_loc("aperture_radius"),
            "aperture_radius",
            format!("must be a finite value >= 0, got {radius}"),
        ));
    }
    if p.transform("to_world")?.has_scale() {
        return Err(Error::param(
            &p.entry_loc("to_world"),
            "to_world",
            "a thinlens camera's transform must not scale (as in Mitsuba): the aperture and \
             focus distance are in scene units",
        ));
    }
    cam.kind = CAMERA_THINLENS;
    cam.aperture_radius = radius;
    cam.focus_distance = focus;
    Ok(cam)
}
