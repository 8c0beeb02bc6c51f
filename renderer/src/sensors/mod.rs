//! Sensors: `perspective`, `thinlens` and `orthographic`, each a [`Camera`]; a
//! [`Sensor`] bundles the camera with its film, reconstruction filter and sampler.

pub mod camera;
pub mod orthographic;
pub mod perspective;

use crate::error::{Error, Loc, Result};
use crate::films::{self, Film};
use crate::samplers::{self, Sampler};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::{Category, ObjectDesc};
use crate::scene::params::{ParamValue, Range, Target};

pub use camera::Camera;

/// A camera with its film and sampler.
#[derive(Clone, Copy, Debug)]
pub struct Sensor {
    /// The camera model.
    pub camera: Camera,
    /// The film.
    pub film: Film,
    /// The sampler.
    pub sampler: Sampler,
}

impl Sensor {
    /// The sensor of a scene that declares none (as Mitsuba: a perspective camera
    /// at the origin looking down +z, default film and sampler).
    pub fn default_for(_loc: &Loc) -> Result<Sensor> {
        let film = Film::default();
        Ok(Sensor {
            camera: Camera::perspective(Default::default(), 39.597755, &film, 1e-2, 1e4),
            film,
            sampler: Sampler::default(),
        })
    }
}

/// Names of the sensor plugins.
pub const KNOWN: &[&str] = &["orthographic", "perspective", "thinlens"];

/// Builds a `<sensor>` with its nested film and sampler.
pub fn build(obj: &ObjectDesc, ctx: &mut BuildCtx) -> Result<Sensor> {
    if !KNOWN.contains(&obj.kind.as_str()) {
        return Err(Error::UnknownPlugin {
            loc: obj.loc.clone(),
            category: "sensor",
            name: obj.kind.clone(),
            known: KNOWN.join(", "),
        });
    }
    let p = &obj.props;
    let film = match ctx.child(p, Category::Film)? {
        Some(f) => films::build(&f, ctx)?,
        None => Film::default(),
    };
    let sampler = match ctx.child(p, Category::Sampler)? {
        Some(s) => samplers::build(&s)?,
        None => Sampler::default(),
    };
    let camera = match obj.kind.as_str() {
        "orthographic" => orthographic::build(p, &film)?,
        kind => perspective::build(p, &film, kind == "thinlens")?,
    };
    p.check_unused(&obj.kind)?;
    ctx.declare_transform(p, "to_world")?;
    if camera.kind != camera::CAMERA_ORTHOGRAPHIC {
        let x_fov = ParamValue::Float(camera.x_fov as f64);
        ctx.declare("x_fov", x_fov, Target::XFov, Range::Open(0.0, 180.0));
    }
    let mut floats = vec![
        (
            "near_clip",
            camera.near_clip,
            Range::Open(0.0, f64::INFINITY),
        ),
        ("far_clip", camera.far_clip, Range::Open(0.0, f64::INFINITY)),
    ];
    if camera.needs_aperture_sample() {
        floats.push((
            "aperture_radius",
            camera.aperture_radius,
            Range::AtLeast(0.0),
        ));
        floats.push((
            "focus_distance",
            camera.focus_distance,
            Range::Open(0.0, f64::INFINITY),
        ));
    }
    for (name, v, range) in floats {
        ctx.declare(name, ParamValue::Float(v as f64), Target::prop(name), range);
    }
    Ok(Sensor {
        camera,
        film,
        sampler,
    })
}

#[cfg(test)]
mod tests {
    use crate::scene::{build_scene, xml::load_string};

    fn error(sensor: &str) -> String {
        let xml = format!("<scene version=\"3.0.0\">\n{sensor}\n</scene>");
        match load_string(&xml, &[]).and_then(|d| build_scene(&d)) {
            Ok(_) => panic!("expected an error for {sensor}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn bad_sensors_say_what_and_where() {
        for (sensor, want) in [
            (r#"<sensor type="thinlens"/>"#, "<string>:2:"),
            (r#"<sensor type="thinlens"/>"#, "needs its aperture radius"),
            (
                r#"<sensor type="thinlens"><float name="aperture_radius" value="-1"/></sensor>"#,
                "must be a finite value >= 0, got -1",
            ),
            (
                "<sensor type=\"thinlens\"><float name=\"aperture_radius\" value=\"0.1\"/>\n\
                 <transform name=\"to_world\"><scale value=\"2\"/></transform></sensor>",
                "<string>:3:",
            ),
            (
                "<sensor type=\"thinlens\"><float name=\"aperture_radius\" value=\"0.1\"/>\n\
                 <transform name=\"to_world\"><scale value=\"2\"/></transform></sensor>",
                "must not scale",
            ),
            (
                r#"<sensor type="orthographic"><float name="fov" value="40"/></sensor>"#,
                "fov",
            ),
            (
                r#"<sensor type="orthographic"><float name="near_clip" value="5"/><float name="far_clip" value="1"/></sensor>"#,
                "must be smaller than far_clip",
            ),
            (
                r#"<sensor type="fisheye"/>"#,
                "orthographic, perspective, thinlens",
            ),
        ] {
            let e = error(sensor);
            assert!(e.contains(want), "{sensor}: {e}");
        }
    }
}
