//! The scene description: the layer below every plugin.
//!
//! A scene file ([`xml`]) or a Python dict ([`dict`]'s rules) becomes a [`SceneDesc`], a tree of objects,
//! each a category, a plugin name and a [`Props`] bag with file:line; nothing here is
//! typed by plugin. Beside the tree stand what a build reads and declares through it:
//! the typed property bag ([`props`]), the parameter keys of objects ([`keys`]), the
//! parameter declarations and values ([`params`]), the files a scene reads, loaded
//! once ([`cache`]), and where they are found ([`paths`]). The builder (in `scene`)
//! consumes the tree; plugins read their `Props` from it.

pub mod cache;
pub mod dict;
pub mod keys;
pub mod params;
pub mod paths;
pub mod props;
pub mod xml;

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::Loc;
pub use params::{ParamValue, SceneParams, TensorData, TensorValue};
pub use props::{PixelArray, Props, Value};

/// The object categories of a scene, named as Mitsuba's XML tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// `<scene>`, the root.
    Scene,
    /// `<shape>`.
    Shape,
    /// `<bsdf>`.
    Bsdf,
    /// `<texture>`.
    Texture,
    /// `<emitter>`.
    Emitter,
    /// `<integrator>`.
    Integrator,
    /// `<sensor>`.
    Sensor,
    /// `<film>`.
    Film,
    /// `<rfilter>`.
    Rfilter,
    /// `<sampler>`.
    Sampler,
}

impl Category {
    /// Every category that may appear as an object tag.
    pub const ALL: [Category; 10] = [
        Category::Scene,
        Category::Shape,
        Category::Bsdf,
        Category::Texture,
        Category::Emitter,
        Category::Integrator,
        Category::Sensor,
        Category::Film,
        Category::Rfilter,
        Category::Sampler,
    ];

    /// The XML tag / dict category name.
    pub fn tag(self) -> &'static str {
        match self {
            Category::Scene => "scene",
            Category::Shape => "shape",
            Category::Bsdf => "bsdf",
            Category::Texture => "texture",
            Category::Emitter => "emitter",
            Category::Integrator => "integrator",
            Category::Sensor => "sensor",
            Category::Film => "film",
            Category::Rfilter => "rfilter",
            Category::Sampler => "sampler",
        }
    }

    /// The category for an XML tag, if it is an object tag.
    pub fn from_tag(tag: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.tag() == tag)
    }
}

/// One object of the scene: `<bsdf type="diffuse" id="x"> ... </bsdf>`.
#[derive(Clone, Debug)]
pub struct ObjectDesc {
    /// Its category (tag).
    pub category: Category,
    /// The plugin name (`type` attribute); `"scene"` for the root.
    pub kind: String,
    /// The `id` attribute, if any.
    pub id: Option<String>,
    /// Properties and nested objects, in file order.
    pub props: Props,
    /// Where the object's tag starts.
    pub loc: Loc,
}

/// A parsed scene: the root object plus every object that declared an `id`,
/// so references can be resolved by the builder.
#[derive(Clone, Debug)]
pub struct SceneDesc {
    /// The `<scene>` object; its props hold the top-level objects.
    pub root: Arc<ObjectDesc>,
    /// Folders declared with `<path value="..."/>`, searched (latest first) for file
    /// names that are not found next to the file that names them.
    pub search_paths: Vec<PathBuf>,
}

impl SceneDesc {
    /// A description without search paths (Python dicts, tests).
    pub fn new(root: Arc<ObjectDesc>) -> Self {
        SceneDesc {
            root,
            search_paths: Vec::new(),
        }
    }
}
