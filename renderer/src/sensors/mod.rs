//! Sensors. Only `perspective` exists; a [`Sensor`] bundles the camera with its
//! film, reconstruction filter and sampler.

pub mod perspective;

use crate::error::{Error, Loc, Result};
use crate::films::{self, Film};
use crate::samplers::{self, Sampler};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::{Category, ObjectDesc};
use crate::scene::params::{ParamValue, Range, Target};

pub use perspective::Perspective;

/// A camera with its film and sampler.
#[derive(Clone, Copy, Debug)]
pub struct Sensor {
    /// The camera model.
    pub camera: Perspective,
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
            camera: Perspective::new(Default::default(), 39.597755, &film, 1e-2, 1e4),
            film,
            sampler: Sampler::default(),
        })
    }
}

/// Names of the sensor plugins.
pub const KNOWN: &[&str] = &["perspective"];

/// Builds a `<sensor>` with its nested film and sampler.
pub fn build(obj: &ObjectDesc, ctx: &mut BuildCtx) -> Result<Sensor> {
    if obj.kind != "perspective" {
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
    let camera = perspective::build(p, &film)?;
    p.check_unused(&obj.kind)?;
    ctx.declare_transform(p, "to_world")?;
    let x_fov = ParamValue::Float(camera.x_fov as f64);
    ctx.declare("x_fov", x_fov, Target::XFov, Range::Open(0.0, 180.0));
    for (name, v) in [
        ("near_clip", camera.near_clip),
        ("far_clip", camera.far_clip),
    ] {
        let v = ParamValue::Float(v as f64);
        ctx.declare(name, v, Target::prop(name), Range::Open(0.0, f64::INFINITY));
    }
    Ok(Sensor {
        camera,
        film,
        sampler,
    })
}
