//! `aov`: arbitrary output variables. Writes what the camera rays see first (distance,
//! position, normals, texture coordinates, the material's albedo, which shape and
//! triangle) into extra film channels, next to the image of an optional nested
//! integrator, as Mitsuba's `aov` integrator.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `aovs` | string | (required) | `name:type` pairs separated by commas (or spaces), e.g. `"dd.y:depth,nn:sh_normal"`; may be empty when there is a nested integrator |
//! | (nested integrator) | integrator | none | at most one (`direct`, `path`, `depth`, `moment`), whose image the render carries too |
//!
//! The AOV types, with the channels each adds (named `name.R`, `name.X`, ...):
//!
//! | type | channels | value |
//! |---|---|---|
//! | `albedo` | R, G, B | the diffuse reflectance of the material (Mitsuba's `eval_diffuse_reflectance`: the `reflectance` / `diffuse_reflectance` texture of `diffuse`, `plastic`, `roughplastic`; π · f(wi, n) cos for the others; through `twosided`, the side the camera sees) |
//! | `depth` | T | the distance along the camera ray from its origin (the near clip plane) to the surface |
//! | `position` | X, Y, Z | the world-space hit point |
//! | `uv` | U, V | texture coordinates |
//! | `geo_normal` | X, Y, Z | the geometric normal (outward, or as `flip_normals` makes it) |
//! | `sh_normal` | X, Y, Z | the shading normal (interpolated vertex normals where the mesh has them) |
//! | `prim_index` | I | the triangle's index within its mesh; 0 for analytic shapes |
//! | `shape_index` | I | 1 + the shape's position in the scene's shape list |
//!
//! A ray that hits nothing gives 0 in every AOV channel. Each channel is filtered like
//! the image (the weighted mean of its samples), so at silhouettes values blend with
//! the 0 of the misses, and integer AOVs become fractional there (as in Mitsuba).
//! Mitsuba's `dp_du`, `dp_dv`, `duv_dx` and `duv_dy` are not supported (an error says so).
//!
//! The film then holds, in this order (Mitsuba's film layout): the base channels `R, G,
//! B` (and `A` with `pixel_format` `rgba`) with the nested integrator's image (zero
//! without one); `NAME.R, NAME.G, NAME.B, NAME.A`, the nested image again under the
//! nested integrator's name (its dict key or XML `name`, `_arg_0` when unnamed); then
//! the AOV channels. The CLI writes all of them to a multi-channel EXR. A Python
//! `render` returns the base channels and the AOV channels, or the AOV channels alone
//! without a nested integrator, as Mitsuba's `render` does; `sensor.film().bitmap()`
//! holds every film channel. The nested image is the same as a render of the nested
//! integrator alone with the same seed: AOVs draw no random numbers.
//!
//! ```xml
//! <integrator type="aov">
//!     <string name="aovs" value="dd.y:depth,nn:sh_normal"/>
//!     <integrator type="path" name="my_image"/>
//! </integrator>
//! ```
//!
//! The CPU backend renders it; the CUDA backend refuses it (backend/cuda/mod.rs).

use super::{AnyIntegrator, Built};
use crate::desc::ObjectDesc;
use crate::error::{Error, Result};
use crate::math::{Color, Ray, Vec3};
use crate::scene::Scene;
use crate::shapes::{AnyShape, Hit};

/// One kind of arbitrary output variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AovKind {
    /// The material's diffuse reflectance.
    Albedo,
    /// Ray distance to the hit.
    Depth,
    /// World-space hit point.
    Position,
    /// Texture coordinates.
    Uv,
    /// Geometric normal.
    GeoNormal,
    /// Shading normal.
    ShNormal,
    /// Triangle index within its mesh.
    PrimIndex,
    /// 1 + index of the shape.
    ShapeIndex,
}

/// Every AOV type: its name in `aovs` and the suffixes of its channels.
const KINDS: [(&str, AovKind, &[&str]); 8] = [
    ("albedo", AovKind::Albedo, &["R", "G", "B"]),
    ("depth", AovKind::Depth, &["T"]),
    ("position", AovKind::Position, &["X", "Y", "Z"]),
    ("uv", AovKind::Uv, &["U", "V"]),
    ("geo_normal", AovKind::GeoNormal, &["X", "Y", "Z"]),
    ("sh_normal", AovKind::ShNormal, &["X", "Y", "Z"]),
    ("prim_index", AovKind::PrimIndex, &["I"]),
    ("shape_index", AovKind::ShapeIndex, &["I"]),
];

/// Mitsuba's AOV types that heliograph does not compute.
const UNSUPPORTED: [&str; 4] = ["dp_du", "dp_dv", "duv_dx", "duv_dy"];

impl AovKind {
    /// The kind named `name` in an `aovs` list.
    pub fn from_name(name: &str) -> Option<AovKind> {
        KINDS.iter().find(|k| k.0 == name).map(|k| k.1)
    }

    /// The suffixes of this kind's channels (`R, G, B`, `T`, `X, Y, Z`, ...).
    pub fn suffixes(self) -> &'static [&'static str] {
        KINDS.iter().find(|k| k.1 == self).map_or(&[], |k| k.2)
    }
}

/// One entry of the `aovs` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AovOutput {
    /// The channel prefix.
    pub name: String,
    /// What it records.
    pub kind: AovKind,
}

/// The `aov` integrator: its outputs and the name of the nested integrator, whose
/// record is the scene's [`AnyIntegrator`].
#[derive(Clone, Debug, PartialEq)]
pub struct Aov {
    /// The nested integrator's name (its channels' prefix), if there is one.
    pub nested: Option<String>,
    /// The AOVs in `aovs` order.
    pub outputs: Vec<AovOutput>,
}

/// Builds an `aov` integrator object: the nested integrator (the scene's) and the AOVs.
pub fn build(obj: &ObjectDesc) -> Result<Built> {
    let (aov, nested) = Aov::build(obj)?;
    Ok((nested, Some(aov)))
}

impl Aov {
    /// Builds an `aov` object: the AOV list and the nested integrator (or the default
    /// one, which then does not run).
    pub fn build(obj: &ObjectDesc) -> Result<(Aov, AnyIntegrator)> {
        let p = &obj.props;
        let list = p.string_opt("aovs")?.ok_or_else(|| {
            Error::param(
                &obj.loc,
                "aovs",
                "missing: the aov integrator needs a list of <name>:<type> pairs, e.g. \
                 \"albedo:albedo,normals:sh_normal\"",
            )
        })?;
        let outputs = parse_list(&list, &p.entry_loc("aovs"))?;
        let (nested, integrator) = nested(obj)?;
        if outputs.is_empty() && nested.is_none() {
            return Err(Error::param(
                &p.entry_loc("aovs"),
                "aovs",
                "the aov integrator has nothing to output: give at least one <name>:<type> \
                 pair or a nested integrator",
            ));
        }
        let aov = Aov { nested, outputs };
        aov.check_unique_channels(&obj.loc)?;
        Ok((aov, integrator))
    }

    /// Names of the AOV channels (`albedo.R`, ..., `dd.T`), in order.
    pub fn channel_names(&self) -> Vec<String> {
        self.outputs
            .iter()
            .flat_map(|o| o.kind.suffixes().iter().map(|s| format!("{}.{s}", o.name)))
            .collect()
    }

    /// Number of AOV channels.
    pub fn channel_count(&self) -> usize {
        self.outputs.iter().map(|o| o.kind.suffixes().len()).sum()
    }

    /// Names of the film's channels: the base channels (`R, G, B`, and `A` when `alpha`),
    /// the nested integrator's `NAME.R, .G, .B, .A`, then the AOV channels.
    pub fn film_names(&self, alpha: bool) -> Vec<String> {
        let base = ["R", "G", "B", "A"];
        let mut names: Vec<String> = base[..3 + alpha as usize]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if let Some(n) = &self.nested {
            names.extend(base.iter().map(|s| format!("{n}.{s}")));
        }
        names.extend(self.channel_names());
        names
    }

    /// The film channels that a render returns (Mitsuba's rendered tensor): the base
    /// channels and the AOVs, or the AOVs alone without a nested integrator.
    pub fn output_channels(&self, alpha: bool) -> Vec<usize> {
        let base = 3 + alpha as usize;
        let aovs = base + if self.nested.is_some() { 4 } else { 0 };
        let first = if self.nested.is_some() { 0..base } else { 0..0 };
        first.chain(aovs..aovs + self.channel_count()).collect()
    }

    /// Two channels of one name could not be told apart (or written to an EXR).
    fn check_unique_channels(&self, loc: &crate::error::Loc) -> Result<()> {
        let names = self.film_names(true);
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return Err(Error::param(
                    loc,
                    "aovs",
                    format!(
                        "two film channels would be named \"{n}\" (the AOV names and the \
                         nested integrator's name must differ)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Writes the AOVs of camera ray `ray` into `out` ([`Self::channel_count`] values):
    /// the first surface it hits, zeros when it hits none.
    pub fn eval(&self, scene: &Scene, ray: &Ray, out: &mut [f32]) {
        let hit = scene
            .bvh
            .intersect(&*scene.geom, ray)
            .map(|(prim, t, coords)| {
                let h = scene.geom.surface_interaction(prim, ray, t, coords);
                (h, prim_index(scene, prim))
            });
        let mut k = 0;
        for o in &self.outputs {
            let n = o.kind.suffixes().len();
            let v = match &hit {
                Some((h, prim)) => value(o.kind, scene, ray, h, *prim),
                None => [0.0; 3],
            };
            out[k..k + n].copy_from_slice(&v[..n]);
            k += n;
        }
    }
}

/// The triangle index of BVH primitive `prim` within its mesh (0 for analytic shapes).
fn prim_index(scene: &Scene, prim: u32) -> u32 {
    let pr = scene.geom.prims[prim as usize];
    match &scene.geom.shapes[pr.shape as usize].geom {
        AnyShape::Mesh(m) => pr.index - m.first_tri,
        _ => 0,
    }
}

/// The value of one AOV at hit `h` of camera ray `ray` (up to 3 channels).
fn value(kind: AovKind, scene: &Scene, ray: &Ray, h: &Hit, prim: u32) -> [f32; 3] {
    let v3 = |v: Vec3| v.to_array();
    match kind {
        AovKind::Albedo => albedo(scene, ray, h).to_array(),
        AovKind::Depth => [h.t, 0.0, 0.0],
        AovKind::Position => v3(h.p),
        AovKind::Uv => [h.uv.x, h.uv.y, 0.0],
        AovKind::GeoNormal => v3(h.ng),
        AovKind::ShNormal => v3(h.n),
        AovKind::PrimIndex => [prim as f32, 0.0, 0.0],
        AovKind::ShapeIndex => [(h.shape + 1) as f32, 0.0, 0.0],
    }
}

/// The diffuse reflectance of the material at `h`, seen along `ray`.
fn albedo(scene: &Scene, ray: &Ray, h: &Hit) -> Color {
    let bsdf = &scene.bsdfs[scene.geom.shapes[h.shape as usize].bsdf as usize];
    let frame = super::shading_frame(h);
    let wi = frame.to_local(-ray.d);
    bsdf.diffuse_reflectance(&scene.bsdf_ctx(h, &frame), wi)
}

/// Parses `aovs`: `name:type` pairs separated by commas or spaces (empty entries are
/// skipped, as Mitsuba's tokenizer does).
pub fn parse_list(list: &str, loc: &crate::error::Loc) -> Result<Vec<AovOutput>> {
    list.split([',', ' ', '\t', '\n'])
        .filter(|t| !t.is_empty())
        .map(|entry| parse_entry(entry, loc))
        .collect()
}

fn parse_entry(entry: &str, loc: &crate::error::Loc) -> Result<AovOutput> {
    let bad = |msg: String| Error::param(loc, "aovs", msg);
    let (name, ty) = match entry.split(':').collect::<Vec<_>>()[..] {
        [name, ty] if !name.is_empty() && !ty.is_empty() => (name, ty),
        _ => {
            return Err(bad(format!(
                "entry \"{entry}\" is not a <name>:<type> pair (e.g. \"normals:sh_normal\")"
            )))
        }
    };
    let known = || KINDS.map(|k| k.0).join(", ");
    let kind = AovKind::from_name(ty).ok_or_else(|| {
        if UNSUPPORTED.contains(&ty) {
            bad(format!(
                "entry \"{entry}\": the AOV type \"{ty}\" is not supported by heliograph \
                 (supported: {})",
                known()
            ))
        } else {
            bad(format!(
                "entry \"{entry}\": unknown AOV type \"{ty}\"{} (known: {})",
                crate::error::did_you_mean(ty, KINDS.map(|k| k.0)),
                known()
            ))
        }
    })?;
    Ok(AovOutput {
        name: name.to_string(),
        kind,
    })
}

/// The name Mitsuba gives entry `name` of `obj`: an unnamed object is `_arg_K` there,
/// K counting only the unnamed objects before it (heliograph's description counts
/// every entry).
fn mitsuba_name(obj: &ObjectDesc, name: &str) -> String {
    if !name.starts_with("_arg_") {
        return name.to_string();
    }
    let entries = obj.props.entries();
    let before = entries
        .iter()
        .take_while(|e| e.name != name)
        .filter(|e| e.name.starts_with("_arg_"))
        .count();
    format!("_arg_{before}")
}

/// The nested integrator (at most one) and its name; the default integrator when none.
fn nested(obj: &ObjectDesc) -> Result<(Option<String>, AnyIntegrator)> {
    let kids = super::nested_integrators(obj);
    match kids[..] {
        [] => Ok((None, AnyIntegrator::default())),
        [(e, inner)] => {
            e.mark_used();
            let (integrator, aov) = super::build(inner)?;
            if aov.is_some() {
                return Err(Error::parse(
                    &inner.loc,
                    "an aov integrator cannot nest another aov integrator in heliograph; \
                     list all the AOVs in one \"aovs\"",
                ));
            }
            Ok((Some(mitsuba_name(obj, &e.name)), integrator))
        }
        [_, (_, second), ..] => Err(Error::parse(
            &second.loc,
            format!(
                "an aov integrator takes at most one nested integrator in heliograph, \
                 found {}",
                kids.len()
            ),
        )),
    }
}

#[cfg(test)]
#[path = "aov_tests.rs"]
mod tests;
