//! Sensors: Mitsuba 3's `perspective`, `thinlens` and `orthographic`, each a
//! [`Camera`], one file per plugin (the file stem is the scene `type`, the file's module
//! doc the plugin's manual; `heliograph plugins NAME` prints it). A [`Sensor`] bundles
//! the camera with its film, reconstruction filter and sampler, which every sensor
//! takes nested:
//!
//! ```xml
//! <sensor type="perspective"><float name="fov" value="40"/>
//!   <film type="hdrfilm"><integer name="width" value="256"/><integer name="height" value="256"/></film>
//!   <sampler type="independent"><integer name="sample_count" value="64"/></sampler></sensor>
//! ```
//!
//! # Adding a sensor plugin
//!
//! 1. **`src/sensors/<name>.rs`**: the manual (a first sentence `` `<name>`: ... ``, a
//!    `| parameter | type | default | meaning |` table, an XML example) and
//!    `pub fn build(obj: &ObjectDesc, film: &Film) -> Result<Camera>`, which reads the
//!    camera's properties (the film and sampler are built here, and every property
//!    must be read). A new camera model also needs its `camera::CAMERA_*` kind, its
//!    rays in [`camera`] and their CUDA twin (`kernels/common.cuh`, `camera_ray`).
//! 2. **One line** `"<name>" => <module>` in the `register_plugins!` list below.
//!
//! From the list, the registry derives the module, [`KNOWN`] (an unknown `type` gets a
//! "did you mean"), [`REGISTRY`] (the manuals) and the build match behind [`build`].

pub mod camera;

pub mod record;

use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::{Category, ObjectDesc};
use crate::error::{Loc, Result};
use crate::films::{self, Film};
use crate::plugin::registry::register_plugins;
use crate::plugin::BuildContext;
use crate::samplers::{self, Sampler};

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

// The registry: one line per plugin, `"<type>" => module` (the file `<type>.rs`).
register_plugins! {
    category "sensor" in "sensors";
    fn build_camera(&ObjectDesc, film: &Film) -> Camera;
    "orthographic" => orthographic,
    "perspective" => perspective,
    "thinlens" => thinlens,
}

/// Builds a `<sensor>` with its nested film and sampler.
pub fn build(obj: &ObjectDesc, ctx: &mut dyn BuildContext) -> Result<Sensor> {
    if !KNOWN.contains(&obj.kind.as_str()) {
        // before the nested objects, whose errors would hide this one
        return Err(crate::plugin::registry::unknown_plugin(
            obj, "sensor", KNOWN,
        ));
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
    let camera = build_camera(obj, &film)?;
    p.check_unused(&obj.kind)?;
    ctx.declare_transform(p, "to_world");
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
    use super::{KNOWN, REGISTRY};
    use crate::desc::xml::load_string;
    use crate::plugin::registry::testing::{check_registry, scene_error};
    use crate::scene::build_scene;

    #[test]
    fn the_registry_has_every_sensor_with_its_manual_and_suggests_the_nearest() {
        check_registry("sensor", REGISTRY, KNOWN);
        let e = scene_error(r#"<sensor type="perspectiv"/>"#);
        assert!(
            e.contains("did you mean \"perspective\"") && e.contains("<string>:2:"),
            "{e}"
        );
        // the unknown type is the error, not what is nested in it
        let e = scene_error(r#"<sensor type="thinlenz"><film type="nofilm"/></sensor>"#);
        assert!(e.contains("did you mean \"thinlens\""), "{e}");
    }

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
