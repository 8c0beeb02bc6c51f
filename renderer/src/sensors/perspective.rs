//! `perspective`: a pinhole camera, as Mitsuba's, with everything in focus (`thinlens`
//! adds an aperture and a plane in focus). Its rays are made in [`super::camera`].
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `to_world` | transform | identity | camera-to-world (looks down local +z, +y up) |
//! | `fov` | float | — | field of view in degrees along `fov_axis` |
//! | `fov_axis` | string | `x` | `x`, `y`, `diagonal`, `smaller`, `larger` |
//! | `focal_length` | string | `50mm` | 35 mm-equivalent focal length, used when `fov` is absent (measured on the diagonal) |
//! | `near_clip`, `far_clip` | float | 0.01, 10000 | clip distances along the view axis |
//! | `focus_distance` | float | `far_clip` | accepted for compatibility (a pinhole has no focus) |
//!
//! ```xml
//! <sensor type="perspective"><float name="fov" value="45"/>
//!   <transform name="to_world"><lookat origin="0,0,5" target="0,0,0" up="0,1,0"/></transform></sensor>
//! ```

use super::camera::Camera;
use crate::desc::props::Props;
use crate::desc::ObjectDesc;
use crate::error::{Error, Result};
use crate::films::Film;

/// The horizontal field of view in degrees from `fov`/`focal_length`/`fov_axis`
/// (Mitsuba's `parse_fov`).
pub fn parse_fov(p: &Props, aspect: f32) -> Result<f32> {
    let has_fov = p.has("fov");
    if has_fov && p.has("focal_length") {
        return Err(Error::param(
            &p.entry_loc("focal_length"),
            "focal_length",
            "give either \"fov\" or \"focal_length\", not both",
        ));
    }
    let aspect = aspect as f64;
    let (fov, axis) = if has_fov {
        let fov = p.float("fov", 0.0)? as f64;
        let mut axis = p.choice(
            "fov_axis",
            "x",
            &["x", "y", "diagonal", "smaller", "larger"],
        )?;
        if axis == "smaller" {
            axis = if aspect > 1.0 { "y" } else { "x" }.into();
        } else if axis == "larger" {
            axis = if aspect > 1.0 { "x" } else { "y" }.into();
        }
        (fov, axis)
    } else {
        let s = p.string("focal_length", "50mm")?;
        let v: f64 = s.trim_end_matches("mm").trim().parse().map_err(|_| {
            Error::param(
                &p.entry_loc("focal_length"),
                "focal_length",
                format!("expected a value like \"50mm\", got \"{s}\""),
            )
        })?;
        if !(v > 0.0) || !v.is_finite() {
            return Err(Error::param(
                &p.entry_loc("focal_length"),
                "focal_length",
                format!("must be > 0, got {s}"),
            ));
        }
        p.mark_used("fov_axis");
        (
            2.0 * ((36.0f64 * 36.0 + 24.0 * 24.0).sqrt() / (2.0 * v))
                .atan()
                .to_degrees(),
            "diagonal".to_string(),
        )
    };
    let x_fov = match axis.as_str() {
        "x" => fov,
        "y" => (2.0 * ((0.5 * fov.to_radians()).tan() * aspect).atan()).to_degrees(),
        _ => {
            let diagonal = 2.0 * (0.5 * fov.to_radians()).tan();
            let width = diagonal / (1.0 + 1.0 / (aspect * aspect)).sqrt();
            (2.0 * (0.5 * width).atan()).to_degrees()
        }
    };
    if !(x_fov > 0.0 && x_fov < 180.0) {
        let key = if has_fov { "fov" } else { "focal_length" };
        return Err(Error::param(
            &p.entry_loc(key),
            key,
            format!("horizontal field of view must be in (0, 180) degrees, got {x_fov}"),
        ));
    }
    Ok(x_fov as f32)
}

/// Near and far clip distances, checked against each other.
pub fn clip_range(p: &Props) -> Result<(f32, f32)> {
    let near = p.positive_float("near_clip", 1e-2, false)?;
    let far = p.positive_float("far_clip", 1e4, false)?;
    if near >= far {
        return Err(Error::param(
            &p.entry_loc("near_clip"),
            "near_clip",
            format!("must be smaller than far_clip ({near} >= {far})"),
        ));
    }
    Ok((near, far))
}

/// Reads a `perspective` sensor's parameters.
pub fn build(obj: &ObjectDesc, film: &Film) -> Result<Camera> {
    Ok(projective(&obj.props, film)?.0)
}

/// The pinhole camera `p` describes (`to_world`, field of view, clip range) and its
/// `focus_distance` (default `far_clip`), which `thinlens` uses.
pub(crate) fn projective(p: &Props, film: &Film) -> Result<(Camera, f32)> {
    let to_world = p.transform("to_world")?;
    let x_fov = parse_fov(p, film.width as f32 / film.height as f32)?;
    let (near, far) = clip_range(p)?;
    // A pinhole camera is in focus everywhere; Mitsuba's `perspective` still accepts
    // the projective cameras' `focus_distance` (mi.cornell_box() sets it), so do we.
    let focus = p.positive_float("focus_distance", far, false)?;
    Ok((Camera::perspective(to_world, x_fov, film, near, far), focus))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Transform, Vec2, Vec3};

    #[test]
    fn centre_ray_looks_down_z_and_edges_span_the_fov() {
        let film = Film {
            width: 200,
            height: 100,
            ..Film::default()
        };
        let cam = Camera::perspective(Transform::IDENTITY, 90.0, &film, 1e-2, 1e4);
        let c = cam.sample_ray(Vec2::new(100.0, 50.0), Vec2::ZERO, &film);
        assert!((c.d - Vec3::Z).length() < 1e-6);
        // left image edge maps to local +x (Mitsuba's "left"), at 45 degrees for a 90-degree fov
        let l = cam.sample_ray(Vec2::new(0.0, 50.0), Vec2::ZERO, &film);
        assert!(
            (l.d - Vec3::new(1.0, 0.0, 1.0).normalize()).length() < 1e-5,
            "{:?}",
            l.d
        );
        // top edge maps to +y with half the tangent (aspect 2)
        let t = cam.sample_ray(Vec2::new(100.0, 0.0), Vec2::ZERO, &film);
        assert!(
            (t.d - Vec3::new(0.0, 0.5, 1.0).normalize()).length() < 1e-5,
            "{:?}",
            t.d
        );
    }
}
