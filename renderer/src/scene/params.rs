//! Scene parameters: the core side of Mitsuba's `traverse(scene)` and
//! `SceneParameters.update()`, shared by the Python package and the CLI.
//!
//! [`SceneParams::traverse`] walks a [`SceneDesc`] and lists the editable values
//! under Mitsuba's key names (`shape.bsdf.reflectance.data`,
//! `emitter.radiance.value`, `sensor.to_world`, `sensor.x_fov`, `shape.to_world`):
//!
//! - an object's name is its `id` at the top level (dict keys are ids), else the
//!   property name it was nested under, else its category (`bsdf`, `emitter`, ...);
//!   references are not followed (the object is listed where it is defined);
//! - shapes and sensors: `to_world` (identity when absent); sensors also `x_fov`,
//!   `near_clip`, `far_clip` (read from the built scene);
//! - textures: in-memory pixels (`bitmap` / `data` property) as `data`, a tensor of
//!   shape (H, W, C) — for a bitmap read from `filename`, its decoded texels (a new
//!   value replaces the file by in-memory `data`); constant colours and floats as
//!   `<name>.value`; an `envmap` emitter's image likewise as `data`;
//! - BSDFs and emitters: colours and floats as `<name>.value` (Mitsuba wraps them in
//!   a constant texture), a few plain scalars (`int_ior`, `scale`, ...) under their own
//!   name, points and vectors of emitters; a missing texture parameter with a known
//!   default (`diffuse.reflectance`, `constant.radiance`, ...) is listed with it.
//!
//! [`SceneParams::set`] validates a new value (kind, shape, finiteness) and changes
//! nothing when it is refused; [`SceneParams::update`] writes the changed values
//! into a new description and rebuilds the scene from it. [`SceneParams::update_from`]
//! rebuilds only the sensor when only sensor parameters changed (camera animations);
//! other changes rebuild the plugin records from the description but keep the previous
//! BVH whenever the geometry is unchanged (texture, material and light updates), so
//! only a geometry change pays for a new hierarchy. Mesh files are re-read on such a
//! rebuild (a cache of loaded meshes is a further optimisation). A failed rebuild
//! leaves both the old description and the pending changes in place.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use super::builder::build_scene_reusing;
use super::builder::{resolve_relative, BuildCtx};
use super::desc::{Category, ObjectDesc, SceneDesc};
use super::props::{PixelArray, Value};
use super::{build_scene, Scene};
use crate::error::{Error, Loc, Result};
use crate::math::{Color, Transform, Vec3};
use crate::sensors;
use crate::textures::image_file;

/// One parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// A scalar, shape `()`.
    Float(f64),
    /// An RGB colour, shape `(3,)`.
    Color(Color),
    /// A point or vector, shape `(3,)`.
    Vector(Vec3),
    /// A 4×4 transform, shape `(4, 4)`.
    Transform(Transform),
    /// Pixels, shape `(H, W, C)`.
    Tensor(Arc<PixelArray>),
}

impl ParamValue {
    /// The value's shape, as NumPy would report it.
    pub fn shape(&self) -> Vec<usize> {
        match self {
            ParamValue::Float(_) => vec![],
            ParamValue::Color(_) | ParamValue::Vector(_) => vec![3],
            ParamValue::Transform(_) => vec![4, 4],
            ParamValue::Tensor(p) => vec![p.height, p.width, p.channels],
        }
    }

    /// The kind's name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            ParamValue::Float(_) => "float",
            ParamValue::Color(_) => "color",
            ParamValue::Vector(_) => "vector",
            ParamValue::Transform(_) => "transform",
            ParamValue::Tensor(_) => "tensor",
        }
    }

    fn is_finite(&self) -> bool {
        match self {
            ParamValue::Float(v) => v.is_finite(),
            ParamValue::Color(c) | ParamValue::Vector(c) => c.is_finite(),
            ParamValue::Transform(t) => t.m.is_finite(),
            ParamValue::Tensor(p) => p.data.iter().all(|v| v.is_finite()),
        }
    }

    /// The description value it becomes.
    fn to_value(&self) -> Value {
        match self {
            ParamValue::Float(v) => Value::Float(*v),
            ParamValue::Color(c) => Value::Rgb(*c),
            ParamValue::Vector(v) => Value::Vector(*v),
            ParamValue::Transform(t) => Value::Transform(*t),
            ParamValue::Tensor(p) => Value::Pixels(p.clone()),
        }
    }
}

/// Formats a shape as NumPy does: `()`, `(3,)`, `(4, 6, 3)`.
pub fn shape_str(shape: &[usize]) -> String {
    match shape {
        [] => "()".into(),
        [n] => format!("({n},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// Where a parameter lives in the description.
#[derive(Clone, Debug)]
enum Target {
    /// Property `name` of the object at `path` (entry names from the root).
    Prop { path: Vec<String>, name: String },
    /// A perspective sensor's horizontal field of view: rewrites `fov`/`fov_axis`.
    XFov { path: Vec<String> },
    /// A bitmap texture read from `filename`: a new value replaces the file by `data`.
    BitmapFile { path: Vec<String> },
}

/// One traversed parameter.
#[derive(Clone, Debug)]
struct Param {
    key: String,
    value: ParamValue,
    target: Target,
    changed: bool,
}

/// The editable parameters of a scene, in traversal order.
#[derive(Clone, Debug, Default)]
pub struct SceneParams {
    params: Vec<Param>,
    index: HashMap<String, usize>,
}

/// Float/colour parameters of BSDFs and emitters that are plain values in Mitsuba
/// (listed under their own name, not `<name>.value`).
const PLAIN_SCALARS: &[&str] = &["int_ior", "ext_ior", "scale", "sampling_weight"];

/// Texture parameters listed even when the scene leaves them at their default.
const DEFAULTS: &[(Category, &str, &str, f64)] = &[
    (Category::Bsdf, "diffuse", "reflectance", 0.5),
    (Category::Bsdf, "plastic", "diffuse_reflectance", 0.5),
    (Category::Bsdf, "roughplastic", "diffuse_reflectance", 0.5),
    (Category::Emitter, "constant", "radiance", 1.0),
];

/// Where parameter errors point.
fn params_loc() -> Loc {
    Loc::unknown("<parameters>")
}

impl SceneParams {
    /// Lists the parameters of `desc`; `scene` (built from it) supplies derived values.
    pub fn traverse(desc: &SceneDesc, scene: &Scene) -> SceneParams {
        let mut w = Walker {
            out: SceneParams::default(),
            scene,
        };
        let mut path = Vec::new();
        w.children(&desc.root, "", &mut path, true);
        w.out
    }

    /// Keys in traversal order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.params.iter().map(|p| p.key.as_str())
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// Whether `key` exists.
    pub fn contains(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    /// The current value of `key` (an error listing the keys when it does not exist).
    pub fn get(&self, key: &str) -> Result<&ParamValue> {
        Ok(&self.params[self.find(key)?].value)
    }

    /// Keeps only the parameters whose key satisfies `keep` (Mitsuba's `params.keep`);
    /// pending changes of dropped keys are discarded.
    pub fn keep(&mut self, keep: impl Fn(&str) -> bool) {
        self.params.retain(|p| keep(&p.key));
        self.index = self
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.key.clone(), i))
            .collect();
    }

    /// Keys set since the last successful update.
    pub fn changed(&self) -> Vec<&str> {
        let it = self.params.iter().filter(|p| p.changed);
        it.map(|p| p.key.as_str()).collect()
    }

    fn find(&self, key: &str) -> Result<usize> {
        self.index.get(key).copied().ok_or_else(|| {
            let mut msg = String::from("no such parameter; the scene has: ");
            let keys: Vec<&str> = self.keys().collect();
            msg.push_str(&keys.join(", "));
            Error::param(&params_loc(), key, msg)
        })
    }

    /// Sets `key` to `value` after checking its kind, shape and finiteness; on error
    /// nothing changes. Takes effect at the next [`SceneParams::update`].
    pub fn set(&mut self, key: &str, value: ParamValue) -> Result<()> {
        let i = self.find(key)?;
        let p = &self.params[i];
        let (want, got) = (p.value.shape(), value.shape());
        let same_kind = std::mem::discriminant(&p.value) == std::mem::discriminant(&value)
            || matches!(
                (&p.value, &value),
                (ParamValue::Color(_), ParamValue::Vector(_))
                    | (ParamValue::Vector(_), ParamValue::Color(_))
            );
        if !same_kind || want != got {
            let msg = format!(
                "expected a {} of shape {}, got a {} of shape {}",
                p.value.kind(),
                shape_str(&want),
                value.kind(),
                shape_str(&got)
            );
            return Err(Error::param(&params_loc(), key, msg));
        }
        if !value.is_finite() {
            return Err(Error::param(
                &params_loc(),
                key,
                "contains NaN or infinite values",
            ));
        }
        self.check_range(i, &value)?;
        let p = &mut self.params[i];
        p.value = match (&p.value, value) {
            (ParamValue::Color(_), ParamValue::Vector(v)) => ParamValue::Color(v),
            (ParamValue::Vector(_), ParamValue::Color(v)) => ParamValue::Vector(v),
            (_, v) => v,
        };
        p.changed = true;
        Ok(())
    }

    fn check_range(&self, i: usize, value: &ParamValue) -> Result<()> {
        let p = &self.params[i];
        let bad = match (&p.target, value) {
            (Target::XFov { .. }, ParamValue::Float(v)) if !(*v > 0.0 && *v < 180.0) => {
                Some(format!("must be in (0, 180) degrees, got {v}"))
            }
            (_, ParamValue::Transform(t)) if Transform::from_matrix(t.m).is_none() => {
                Some("the matrix is singular".to_string())
            }
            _ => None,
        };
        match bad {
            Some(msg) => Err(Error::param(&params_loc(), &p.key, msg)),
            None => Ok(()),
        }
    }

    /// A copy of `desc` with every changed parameter written into it.
    pub fn apply(&self, desc: &SceneDesc) -> Result<SceneDesc> {
        let mut root = desc.root.clone();
        for p in self.params.iter().filter(|p| p.changed) {
            apply_one(&mut root, p)?;
        }
        Ok(SceneDesc { root })
    }

    /// Applies the changes to `desc` and builds the new scene. On success the changes
    /// are committed (no longer pending); on error nothing is.
    pub fn update(&mut self, desc: &SceneDesc) -> Result<(SceneDesc, Scene)> {
        let new_desc = self.apply(desc)?;
        let scene = build_scene(&new_desc)?;
        for p in &mut self.params {
            p.changed = false;
        }
        Ok((new_desc, scene))
    }

    /// As [`SceneParams::update`], but when every change is a parameter of the
    /// top-level sensor (a camera animation), only the sensor is rebuilt and the rest
    /// of `prev` (geometry, BVH, materials) is reused; other changes rebuild everything.
    pub fn update_from(&mut self, desc: &SceneDesc, prev: &Scene) -> Result<(SceneDesc, Scene)> {
        let new_desc = self.apply(desc)?;
        let scene = match self.changed_sensor(&new_desc) {
            Some(obj) => {
                let mut ctx = BuildCtx::new(&new_desc.root)?;
                let sensor = sensors::build(obj, &mut ctx)?;
                Scene {
                    sensor,
                    ..prev.clone()
                }
            }
            None => build_scene_reusing(&new_desc, Some(prev))?,
        };
        for p in &mut self.params {
            p.changed = false;
        }
        Ok((new_desc, scene))
    }

    /// The top-level sensor object, if it is the only object with pending changes.
    fn changed_sensor<'a>(&self, desc: &'a SceneDesc) -> Option<&'a ObjectDesc> {
        let mut sensor = None;
        for p in self.params.iter().filter(|p| p.changed) {
            let path = match &p.target {
                Target::Prop { path, .. } | Target::XFov { path } => path,
                Target::BitmapFile { .. } => return None,
            };
            let [name] = path.as_slice() else {
                return None;
            };
            let e = desc.root.props.entries().iter().find(|e| &e.name == name)?;
            match &e.value {
                Value::Object(o) if o.category == Category::Sensor => sensor = Some(&**o),
                _ => return None,
            }
        }
        sensor
    }

    /// A human-readable table (key, kind, shape), as the CLI's `info` prints it.
    pub fn table(&self) -> String {
        let mut s = String::new();
        for p in &self.params {
            let _ = writeln!(
                s,
                "{:<48} {:<9} {}",
                p.key,
                p.value.kind(),
                shape_str(&p.value.shape())
            );
        }
        s
    }
}

/// Writes one parameter into the tree under `root`, cloning shared nodes on the way.
fn apply_one(root: &mut Arc<ObjectDesc>, p: &Param) -> Result<()> {
    match &p.target {
        Target::Prop { path, name } => {
            let o = node_mut(root, path, &p.key)?;
            let value = p.value.to_value();
            match o.props.value_mut(name) {
                Some(v) => *v = value,
                None => o.props.set(name, value, o.loc.clone()),
            }
        }
        Target::XFov { path } => {
            let ParamValue::Float(fov) = p.value else {
                return Err(Error::param(&params_loc(), &p.key, "expected a float"));
            };
            let o = node_mut(root, path, &p.key)?;
            let loc = o.loc.clone();
            o.props.remove("focal_length");
            o.props.set("fov", Value::Float(fov), loc.clone());
            o.props.set("fov_axis", Value::String("x".into()), loc);
        }
        Target::BitmapFile { path } => {
            let o = node_mut(root, path, &p.key)?;
            o.props.remove("filename");
            o.props.set("data", p.value.to_value(), o.loc.clone());
        }
    }
    Ok(())
}

/// The object at `path` (entry names from `root`), made unique for editing.
fn node_mut<'a>(
    root: &'a mut Arc<ObjectDesc>,
    path: &[String],
    key: &str,
) -> Result<&'a mut ObjectDesc> {
    let mut node = root;
    for name in path {
        node = match Arc::make_mut(node).props.value_mut(name) {
            Some(Value::Object(child)) => child,
            _ => {
                let msg = "the scene description no longer has this object";
                return Err(Error::param(&params_loc(), key, msg));
            }
        };
    }
    Ok(Arc::make_mut(node))
}

/// The value of `name` in `obj`'s props, without marking it used.
fn peek<'a>(obj: &'a ObjectDesc, name: &str) -> Option<&'a Value> {
    let e = obj.props.entries().iter().find(|e| e.name == name)?;
    Some(&e.value)
}

/// Traversal state.
struct Walker<'a> {
    out: SceneParams,
    scene: &'a Scene,
}

impl Walker<'_> {
    fn push(&mut self, key: String, value: ParamValue, target: Target) {
        if self.out.index.contains_key(&key) {
            return; // first definition wins (as Mitsuba, where a key names one object)
        }
        self.out.index.insert(key.clone(), self.out.params.len());
        self.out.params.push(Param {
            key,
            value,
            target,
            changed: false,
        });
    }

    /// Visits the nested objects of `obj`, naming each one.
    fn children(&mut self, obj: &ObjectDesc, prefix: &str, path: &mut Vec<String>, top: bool) {
        let mut used: HashMap<String, usize> = HashMap::new();
        for e in obj.props.entries() {
            let Value::Object(child) = &e.value else {
                continue;
            };
            let generated = e.name.starts_with("_arg_");
            let base = match (&child.id, generated) {
                (Some(id), _) if top => id.clone(),
                (_, false) => e.name.clone(),
                _ => child.category.tag().to_string(),
            };
            let n = used.entry(base.clone()).or_insert(0);
            let name = if *n == 0 { base } else { format!("{base}_{n}") };
            *n += 1;
            path.push(e.name.clone());
            self.object(child, &format!("{prefix}{name}"), path);
            path.pop();
        }
    }

    /// Lists the parameters of one object named `key`, then its children.
    fn object(&mut self, obj: &ObjectDesc, key: &str, path: &mut Vec<String>) {
        let prop = |name: &str| Target::Prop {
            path: path.clone(),
            name: name.to_string(),
        };
        match obj.category {
            Category::Shape => self.push_to_world(obj, key, prop("to_world")),
            Category::Sensor => {
                self.push_to_world(obj, key, prop("to_world"));
                let cam = &self.scene.sensor.camera;
                let (fov, near, far) = (cam.x_fov, cam.near_clip, cam.far_clip);
                let xfov = Target::XFov { path: path.clone() };
                self.push(format!("{key}.x_fov"), ParamValue::Float(fov as f64), xfov);
                self.push(
                    format!("{key}.near_clip"),
                    ParamValue::Float(near as f64),
                    prop("near_clip"),
                );
                self.push(
                    format!("{key}.far_clip"),
                    ParamValue::Float(far as f64),
                    prop("far_clip"),
                );
            }
            Category::Texture | Category::Bsdf | Category::Emitter => {
                self.values(obj, key, path);
            }
            _ => {}
        }
        self.children(obj, &format!("{key}."), path, false);
    }

    /// A bitmap texture's (or environment map's) file, read and decoded as the plugin
    /// does (`raw` only exists on bitmaps) so that its texels are a parameter like
    /// in-memory ones. An unreadable file is skipped:
    /// the scene was built from it, so this only happens if it changed on disk.
    fn bitmap_file(&mut self, obj: &ObjectDesc, key: &str, path: &[String]) {
        let Some(Value::String(name)) = peek(obj, "filename") else {
            return;
        };
        let raw = matches!(peek(obj, "raw"), Some(Value::Bool(true)));
        let file = resolve_relative(&obj.props.entry_loc("filename"), name);
        let Ok(img) = image_file::load(&file, raw) else {
            return;
        };
        let px = PixelArray {
            width: img.width,
            height: img.height,
            channels: img.channels,
            data: img.data,
        };
        let target = Target::BitmapFile {
            path: path.to_vec(),
        };
        self.push(
            format!("{key}.data"),
            ParamValue::Tensor(Arc::new(px)),
            target,
        );
    }

    fn push_to_world(&mut self, obj: &ObjectDesc, key: &str, target: Target) {
        let entry = obj.props.entries().iter().find(|e| e.name == "to_world");
        let t = match entry.map(|e| &e.value) {
            Some(Value::Transform(t)) => *t,
            Some(_) => return,
            None => Transform::IDENTITY,
        };
        self.push(format!("{key}.to_world"), ParamValue::Transform(t), target);
    }

    /// Values of textures, BSDFs and emitters.
    fn values(&mut self, obj: &ObjectDesc, key: &str, path: &[String]) {
        let prop = |name: &str| Target::Prop {
            path: path.to_vec(),
            name: name.to_string(),
        };
        for e in obj.props.entries() {
            let name = e.name.as_str();
            let plain = PLAIN_SCALARS.contains(&name);
            let v = match &e.value {
                Value::Pixels(p) => {
                    self.push(
                        format!("{key}.data"),
                        ParamValue::Tensor(p.clone()),
                        prop(name),
                    );
                    continue;
                }
                Value::Float(v) => ParamValue::Float(*v),
                Value::Int(v) => ParamValue::Float(*v as f64),
                Value::Rgb(c) => ParamValue::Color(*c),
                Value::Point(v) | Value::Vector(v) if obj.category == Category::Emitter => {
                    ParamValue::Vector(*v)
                }
                Value::Transform(t) if name == "to_world" => ParamValue::Transform(*t),
                _ => continue,
            };
            let k = match (&v, plain) {
                (ParamValue::Float(_) | ParamValue::Color(_), false) => {
                    format!("{key}.{name}.value")
                }
                _ => format!("{key}.{name}"),
            };
            self.push(k, v, prop(name));
        }
        let file_image = matches!(
            (obj.category, obj.kind.as_str()),
            (Category::Texture, "bitmap") | (Category::Emitter, "envmap")
        );
        if file_image {
            self.bitmap_file(obj, key, path);
        }
        for &(cat, kind, name, default) in DEFAULTS {
            if obj.category == cat && obj.kind == kind && !obj.props.has(name) {
                let k = format!("{key}.{name}.value");
                self.push(k, ParamValue::Float(default), prop(name));
            }
        }
    }
}

#[cfg(test)]
mod tests;
