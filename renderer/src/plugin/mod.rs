//! What a plugin is built against: the small leaf module between the plugins and the
//! scene builder.
//!
//! A plugin's `build` reads its properties ([`Props`]) and asks its [`BuildContext`]
//! for what it cannot make itself — a texture (a constant, a nested texture or a
//! reference to one), a texture's mean (sampling weights, range checks), a nested
//! BSDF or emitter, a nested film or filter, a file next to the scene, an image, a mesh
//! attribute's slot, the scene's geometry (shapes add their records to it) — and
//! declares its editable parameters there (Mitsuba's `traverse`). The scene builder
//! implements the trait; plugins import this module and never the builder, so
//! the builder can build every category through its registry without an import cycle.
//!
//! [`record`] holds what the device side needs: [`record::Pod`] records, the
//! [`device_record!`](crate::device_record) declaration that checks a record against
//! its CUDA twin, and the [`record::RecordBlob`] the records of a category live in.
//! [`PluginInfo`] describes a registered plugin for listings (`heliograph plugins`):
//! its manual is its module doc; the [`catalog`](crate::catalog) lists every
//! category's, and [`registry`] holds the registry macro of the categories whose
//! plugins are a `build` function (sensors, films, reconstruction filters,
//! integrators).

pub mod gradient;
pub mod patch;
pub mod record;
pub mod registry;

use std::path::PathBuf;
use std::sync::Arc;

use crate::desc::cache::LoadCache;
use crate::desc::params::{ParamValue, Range, Target, TensorValue};
use crate::desc::props::{PixelArray, Props, Value};
use crate::desc::{Category, ObjectDesc};
use crate::error::{Loc, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::{Color, Distribution2D, Transform, Vec3};

/// Handle of a texture record (`u32` index into the scene's textures).
pub type TexRef = u32;

/// What a plugin's `build` may ask of the scene being built (see the module docs).
pub trait BuildContext {
    /// As [`Self::texture_in`] for a reflectance with any value.
    fn texture(&mut self, p: &Props, key: &str, default: Option<Color>) -> Result<TexRef> {
        self.texture_in(p, key, default, Range::Any, SpectrumUse::Reflectance)
    }

    /// A colour parameter as a texture handle: a constant (`rgb`, `float`,
    /// `spectrum`, converted to RGB for `usage`), a nested `<texture>` or a reference
    /// to one; `default = None` makes it required. A constant (or the default) is
    /// declared as the parameter `<key>.value`, accepting values in `range`.
    fn texture_in(
        &mut self,
        p: &Props,
        key: &str,
        default: Option<Color>,
        range: Range,
        usage: SpectrumUse,
    ) -> Result<TexRef>;

    /// Adds a constant texture (no parameter declared).
    fn add_constant(&mut self, c: Color) -> Result<TexRef>;

    /// The mean of texture `t` over its domain.
    fn texture_mean(&self, t: TexRef) -> Color;

    /// Declares parameter `<object key>.<name>` of the object being built with its
    /// current `value`; `target` says how a new value is written back into the
    /// description, `range` which values it accepts.
    fn declare(&mut self, name: &str, value: ParamValue, target: Target, range: Range);

    /// Declares a relative index of refraction `eta` (written as `int_ior = eta`,
    /// `ext_ior = 1`), Mitsuba's key `eta`.
    fn declare_eta(&mut self, eta: f32) {
        let value = ParamValue::Float(eta as f64);
        self.declare("eta", value, Target::Eta, Range::Open(0.0, f64::INFINITY));
    }

    /// Nested objects of `category` in `p` (references resolved), each with where it
    /// was nested or referenced, marked as read.
    fn children_at(&self, p: &Props, category: Category) -> Result<Vec<(Arc<ObjectDesc>, Loc)>>;

    /// Builds a BSDF object nested or referenced at `via` (once per id) and returns
    /// its handle.
    fn bsdf_at(&mut self, obj: &Arc<ObjectDesc>, via: &Loc) -> Result<u32>;

    /// Whether built BSDF `h` has a transmission lobe (`AnyBsdf::transmits`).
    fn bsdf_transmits(&self, h: u32) -> bool;

    /// Nested objects of `category` in `p` (references resolved), marked as read.
    fn children(&self, p: &Props, category: Category) -> Result<Vec<Arc<ObjectDesc>>> {
        Ok(self
            .children_at(p, category)?
            .into_iter()
            .map(|(o, _)| o)
            .collect())
    }

    /// At most one nested object of `category` (a second one is an error at its place).
    fn child(&self, p: &Props, category: Category) -> Result<Option<Arc<ObjectDesc>>> {
        let mut v = self.children(p, category)?;
        if v.len() > 1 {
            return Err(crate::error::Error::parse(
                &v[1].loc,
                format!("only one nested {} is allowed here", category.tag()),
            ));
        }
        Ok(v.pop())
    }

    // ---- what emitters ask for -------------------------------------------------------

    /// The colour of texture `t` when it is a constant.
    fn texture_constant(&self, t: TexRef) -> Option<Color>;

    /// The size in pixels (width, height) of texture `t` when it is a bitmap.
    fn texture_image_size(&self, t: TexRef) -> Option<(u32, u32)>;

    /// Adds a 2D sampling distribution (an environment map's) and returns its index.
    fn add_dist2d(&mut self, d: Distribution2D) -> Result<u32>;

    /// Declares float parameter `name` (property `name`) with value `v`.
    fn declare_float(&mut self, name: &str, v: f32) {
        let value = ParamValue::Float(v as f64);
        self.declare(name, value, Target::prop(name), Range::Any);
    }

    /// Declares transform parameter `name` (property `name`; identity when absent).
    fn declare_transform(&mut self, p: &Props, name: &str) {
        let t = match p.get(name).map(|e| &e.value) {
            Some(Value::Transform(t)) => *t,
            _ => Transform::IDENTITY,
        };
        let value = ParamValue::Transform(t);
        self.declare(name, value, Target::prop(name), Range::Any);
    }

    /// Resolves filename property `key`: next to the file that wrote it, else in the
    /// scene's `<path>` folders (latest first), as Mitsuba's file resolver does.
    fn resolve_path(&self, p: &Props, key: &str) -> Result<PathBuf>;

    /// The files the scene reads, loaded once (meshes, images).
    fn cache(&self) -> &LoadCache;

    /// Whether this build replays an object for a parameter update (whose new values
    /// were checked when they were set).
    fn is_replay(&self) -> bool;

    /// The BSDF nested in (or referenced by) `p`, built once per id, or the scene's
    /// shared default (diffuse, reflectance 0.5) when there is none.
    fn bsdf_of(&mut self, p: &Props) -> Result<u32>;

    /// Builds `<emitter>` object `obj` (`shape`: the shape an area emitter is nested
    /// in) and returns its handle.
    fn emitter(&mut self, obj: &Arc<ObjectDesc>, shape: Option<u32>) -> Result<u32>;

    /// The image a plugin reads, in its stored form: `filename` (relative to the scene
    /// file; decoded once per scene) or in-memory pixels under `bitmap` or `data`
    /// ([`crate::textures::image_file::from_props`]); `raw` keeps 8/16-bit values as
    /// stored.
    fn image(&self, p: &Props, raw: bool) -> Result<Arc<PixelArray>>;

    /// Adds an image to the scene's texture store and returns its index.
    fn add_image(&mut self, img: Arc<PixelArray>) -> Result<u32>;

    /// The slot of mesh attribute `name` in the scene's attribute table (a new one the
    /// first time; `loc` is where it was asked for, for the error when no shape has it).
    fn attribute_slot(&mut self, name: &str, loc: &Loc) -> u32;

    /// Declares point/vector parameter `name` with value `v`; setting it removes the
    /// properties in `instead` (another way to give the same value).
    fn declare_vector(&mut self, name: &str, v: Vec3, instead: &[&str]) {
        let target = Target::Prop {
            set: name.to_string(),
            remove: instead.iter().map(|s| s.to_string()).collect(),
        };
        self.declare(name, ParamValue::Vector(v), target, Range::Any);
    }

    /// Declares image parameter `name` (an environment map's texels, as stored);
    /// setting it replaces the file or array the image came from.
    fn declare_image(&mut self, name: &str, img: &Arc<PixelArray>) {
        let target = Target::Prop {
            set: "data".to_string(),
            remove: vec!["filename".into(), "bitmap".into()],
        };
        let value = ParamValue::Tensor(TensorValue::host(img.clone()));
        self.declare(name, value, target, Range::Any);
    }
}

/// A registered plugin as listings show it: its scene `type` and its manual (the
/// module doc of its source file: a description, a parameter table, an example).
#[derive(Clone, Copy, Debug)]
pub struct PluginInfo {
    /// The category (`bsdf`, ...).
    pub category: &'static str,
    /// The scene `type` string (the file stem).
    pub name: &'static str,
    /// The text of its source file.
    pub source: &'static str,
}

/// One row of a plugin's parameter table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamRow {
    /// The parameter (or parameters, `eta`, `k`), without backticks.
    pub name: String,
    /// Its type(s).
    pub kind: String,
    /// Its default.
    pub default: String,
    /// What it means.
    pub meaning: String,
}

impl PluginInfo {
    /// The manual: the leading `//!` lines of the source, without the markers.
    pub fn manual(&self) -> String {
        let mut out = String::new();
        for line in self.source.lines() {
            let Some(text) = line.strip_prefix("//!") else {
                break;
            };
            out.push_str(text.strip_prefix(' ').unwrap_or(text));
            out.push('\n');
        }
        out
    }

    /// The first sentence of the manual, without the leading `` `name`: `` (a sentence
    /// ends at a full stop followed by a capital letter, not at "et al. 2007").
    pub fn summary(&self) -> String {
        let manual = self.manual();
        let para: Vec<&str> = manual
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .collect();
        let text = para.join(" ");
        let text = text
            .strip_prefix(&format!("`{}`: ", self.name))
            .unwrap_or(&text);
        let end = text
            .match_indices(". ")
            .find(|(i, _)| text[i + 2..].starts_with(|c: char| c.is_uppercase()))
            .map(|(i, _)| i + 1)
            .unwrap_or(text.len());
        text[..end].to_string()
    }

    /// The rows of the manual's parameter table (`| parameter | type | default |
    /// meaning |`), in order.
    pub fn parameters(&self) -> Vec<ParamRow> {
        let manual = self.manual();
        let mut lines = manual.lines().skip_while(|l| !l.starts_with("| parameter"));
        lines.next();
        lines
            .skip_while(|l| l.starts_with("|---"))
            .take_while(|l| l.starts_with('|'))
            .filter_map(|l| {
                let cells: Vec<String> = l
                    .trim()
                    .trim_matches('|')
                    .split(" | ")
                    .map(|c| c.trim().replace('`', ""))
                    .collect();
                match cells.as_slice() {
                    [name, kind, default, meaning] => Some(ParamRow {
                        name: name.clone(),
                        kind: kind.clone(),
                        default: default.clone(),
                        meaning: meaning.clone(),
                    }),
                    _ => None,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manual_is_the_module_doc_and_its_table_the_parameters() {
        let info = PluginInfo {
            category: "bsdf",
            name: "glow",
            source: "//! `glow`: a test plugin (Walter et al. 2007). It glows.\n//!\n\
                     //! | parameter | type | default | meaning |\n//! |---|---|---|---|\n\
                     //! | `radiance` | rgb | 1 | how much |\n//! | `eta`, `k` | float | 0, 1 | pair |\n\
                     //!\n//! More.\n\nuse x;\n//! not the manual\n",
        };
        assert!(info.manual().starts_with("`glow`: a test plugin"));
        assert!(info.manual().ends_with("More.\n") && !info.manual().contains("not the"));
        assert_eq!(info.summary(), "a test plugin (Walter et al. 2007).");
        let rows = info.parameters();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[1],
            ParamRow {
                name: "eta, k".into(),
                kind: "float".into(),
                default: "0, 1".into(),
                meaning: "pair".into()
            }
        );
    }
}
