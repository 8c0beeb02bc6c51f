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
//! into a new description and rebuilds the scene from it. The whole scene is
//! rebuilt (BVH included): simple and always consistent; per-object rebuilds are an
//! optimisation for later. A failed rebuild leaves both the old description and the
//! pending changes in place.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use super::builder::resolve_relative;
use super::desc::{Category, ObjectDesc, SceneDesc};
use super::props::{PixelArray, Value};
use super::{build_scene, Scene};
use crate::error::{Error, Loc, Result};
use crate::math::{Color, Transform, Vec3};
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
mod tests {
    use super::*;
    use crate::scene::props::Props;
    use crate::scene::xml::load_string;

    fn obj(cat: Category, kind: &str, id: Option<&str>, props: Vec<(&str, Value)>) -> Value {
        let loc = Loc::unknown("<dict>");
        let mut p = Props::new(loc.clone());
        for (k, v) in props {
            p.insert(k, v, loc.clone()).unwrap();
        }
        Value::Object(Arc::new(ObjectDesc {
            category: cat,
            kind: kind.into(),
            id: id.map(str::to_string),
            props: p,
            loc,
        }))
    }

    fn pixels(h: usize, w: usize, v: f32) -> Arc<PixelArray> {
        Arc::new(PixelArray {
            width: w,
            height: h,
            channels: 3,
            data: vec![v; w * h * 3],
        })
    }

    /// The seed scenario's dict, as `load_dict` builds it (top-level keys are ids).
    fn seed_desc() -> SceneDesc {
        let tex = obj(
            Category::Texture,
            "bitmap",
            None,
            vec![("bitmap", Value::Pixels(pixels(4, 6, 0.5)))],
        );
        let bsdf = obj(Category::Bsdf, "diffuse", None, vec![("reflectance", tex)]);
        let shape = obj(
            Category::Shape,
            "rectangle",
            Some("shape"),
            vec![("bsdf", bsdf)],
        );
        let emitter = obj(Category::Emitter, "constant", Some("emitter"), vec![]);
        let look = Transform::look_at(Vec3::new(0., 0., 5.), Vec3::ZERO, Vec3::Y).unwrap();
        let film = obj(
            Category::Film,
            "hdrfilm",
            None,
            vec![("width", Value::Int(8))],
        );
        let sensor = obj(
            Category::Sensor,
            "perspective",
            Some("sensor"),
            vec![("to_world", Value::Transform(look)), ("film", film)],
        );
        let root = obj(
            Category::Scene,
            "scene",
            None,
            vec![("shape", shape), ("emitter", emitter), ("sensor", sensor)],
        );
        let Value::Object(root) = root else {
            unreachable!()
        };
        SceneDesc { root }
    }

    fn camera_scene(xml_sensor: &str) -> (SceneDesc, Scene) {
        let xml = format!("<scene version=\"3.0.0\">{xml_sensor}<bsdf type=\"diffuse\" id=\"mat\"><rgb name=\"reflectance\" value=\"0.2, 0.3, 0.4\"/></bsdf></scene>");
        let desc = load_string(&xml, &[]).unwrap();
        let scene = build_scene(&desc).unwrap();
        (desc, scene)
    }

    const SENSOR: &str = r#"<sensor type="perspective"><float name="fov" value="40"/><string name="fov_axis" value="y"/>
        <film type="hdrfilm"><integer name="width" value="64"/><integer name="height" value="32"/></film></sensor>"#;

    #[test]
    fn seed_scene_keys_follow_mitsuba_names() {
        let (_, scene) = camera_scene(SENSOR);
        let p = SceneParams::traverse(&seed_desc(), &scene);
        let keys: Vec<&str> = p.keys().collect();
        for k in [
            "shape.to_world",
            "shape.bsdf.reflectance.data",
            "emitter.radiance.value",
            "sensor.to_world",
            "sensor.x_fov",
            "sensor.near_clip",
        ] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
        assert_eq!(
            p.get("shape.bsdf.reflectance.data").unwrap().shape(),
            vec![4, 6, 3]
        );
        assert_eq!(
            p.get("emitter.radiance.value").unwrap(),
            &ParamValue::Float(1.0)
        );
        assert_eq!(
            p.get("shape.to_world").unwrap(),
            &ParamValue::Transform(Transform::IDENTITY)
        );
    }

    #[test]
    fn xml_names_ids_categories_and_skips_refs() {
        let xml = r#"<scene version="3.0.0">
            <bsdf type="diffuse" id="mat"><rgb name="reflectance" value="0.1, 0.2, 0.3"/></bsdf>
            <shape type="sphere"><bsdf type="diffuse"/></shape>
            <shape type="sphere" id="ball"><ref id="mat"/><emitter type="area"><rgb name="radiance" value="2"/></emitter></shape>
            <shape type="sphere"/></scene>"#;
        let desc = load_string(xml, &[]).unwrap();
        let (_, scene) = camera_scene("");
        let p = SceneParams::traverse(&desc, &scene);
        let keys: Vec<&str> = p.keys().collect();
        assert_eq!(
            keys,
            [
                "mat.reflectance.value",
                "shape.to_world",
                "shape.bsdf.reflectance.value",
                "ball.to_world",
                "ball.emitter.radiance.value",
                "shape_1.to_world",
            ]
        );
        let c = p.get("mat.reflectance.value").unwrap();
        assert_eq!(c, &ParamValue::Color(Vec3::new(0.1, 0.2, 0.3)));
        assert_eq!(
            p.get("shape.bsdf.reflectance.value").unwrap(),
            &ParamValue::Float(0.5)
        );
    }

    #[test]
    fn refused_values_name_key_and_shapes_and_change_nothing() {
        let (_, scene) = camera_scene(SENSOR);
        let mut p = SceneParams::traverse(&seed_desc(), &scene);
        let key = "shape.bsdf.reflectance.data";
        let e = p
            .set(key, ParamValue::Tensor(pixels(5, 5, 0.1)))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(key) && e.contains("(4, 6, 3)") && e.contains("(5, 5, 3)"),
            "{e}"
        );
        let e = p.set(key, ParamValue::Float(1.0)).unwrap_err().to_string();
        assert!(
            e.contains("expected a tensor") && e.contains("got a float of shape ()"),
            "{e}"
        );
        let mut nan = (*pixels(4, 6, 0.1)).clone();
        nan.data[7] = f32::NAN;
        let e = p
            .set(key, ParamValue::Tensor(Arc::new(nan)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("NaN"), "{e}");
        let e = p
            .set("sensor.x_fov", ParamValue::Float(180.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("(0, 180)"), "{e}");
        let e = p.get("nope").unwrap_err().to_string();
        assert!(
            e.contains("\"nope\"") && e.contains("sensor.to_world"),
            "{e}"
        );
        assert!(p.changed().is_empty());
        assert_eq!(p.get(key).unwrap(), &ParamValue::Tensor(pixels(4, 6, 0.5)));
    }

    #[test]
    fn apply_writes_new_values_without_touching_the_old_description() {
        let (_, scene) = camera_scene(SENSOR);
        let desc = seed_desc();
        let mut p = SceneParams::traverse(&desc, &scene);
        p.set(
            "shape.bsdf.reflectance.data",
            ParamValue::Tensor(pixels(4, 6, 0.25)),
        )
        .unwrap();
        p.set("emitter.radiance.value", ParamValue::Float(3.0))
            .unwrap();
        assert_eq!(
            p.changed(),
            ["shape.bsdf.reflectance.data", "emitter.radiance.value"]
        );
        let new = p.apply(&desc).unwrap();
        let fresh = SceneParams::traverse(&new, &scene);
        assert_eq!(
            fresh.get("shape.bsdf.reflectance.data").unwrap(),
            &ParamValue::Tensor(pixels(4, 6, 0.25))
        );
        assert_eq!(
            fresh.get("emitter.radiance.value").unwrap(),
            &ParamValue::Float(3.0)
        );
        let old = SceneParams::traverse(&desc, &scene);
        assert_eq!(
            old.get("shape.bsdf.reflectance.data").unwrap(),
            &ParamValue::Tensor(pixels(4, 6, 0.5))
        );
    }

    #[test]
    fn x_fov_reads_the_built_camera_and_update_rebuilds() {
        let (desc, scene) = camera_scene(SENSOR);
        let mut p = SceneParams::traverse(&desc, &scene);
        // fov 40 degrees on the y axis of a 2:1 film
        let want = 2.0 * ((20f64).to_radians().tan() * 2.0).atan().to_degrees();
        let ParamValue::Float(got) = *p.get("sensor.x_fov").unwrap() else {
            panic!()
        };
        assert!((got - want).abs() < 1e-3, "{got} vs {want}");
        p.set("sensor.x_fov", ParamValue::Float(30.0)).unwrap();
        p.set(
            "mat.reflectance.value",
            ParamValue::Vector(Vec3::new(0.9, 0.8, 0.7)),
        )
        .unwrap();
        let (new_desc, new_scene) = p.update(&desc).unwrap();
        assert!((new_scene.sensor.camera.x_fov - 30.0).abs() < 1e-4);
        assert!(p.changed().is_empty());
        let again = SceneParams::traverse(&new_desc, &new_scene);
        let c = again.get("mat.reflectance.value").unwrap();
        assert_eq!(c, &ParamValue::Color(Vec3::new(0.9, 0.8, 0.7)));
    }

    #[test]
    fn file_bitmaps_are_parameters_and_updates_replace_the_file() {
        let dir = std::env::temp_dir().join(format!("hg_params_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("tex.exr");
        let img = crate::io::Image {
            width: 3,
            height: 2,
            channels: 3,
            data: (0..18).map(|i| i as f32 / 18.0).collect(),
        };
        crate::io::write_image(&file, &img).unwrap();
        let xml = format!(
            r#"<scene version="3.0.0"><bsdf type="diffuse" id="mat"><texture type="bitmap" name="reflectance">
            <string name="filename" value="{}"/></texture></bsdf></scene>"#,
            file.display()
        );
        let desc = load_string(&xml, &[]).unwrap();
        let scene = build_scene(&desc).unwrap();
        let mut p = SceneParams::traverse(&desc, &scene);
        let ParamValue::Tensor(px) = p.get("mat.reflectance.data").unwrap().clone() else {
            panic!("not a tensor")
        };
        assert_eq!((px.height, px.width, px.channels), (2, 3, 3));
        assert_eq!(px.data, img.data);
        p.set(
            "mat.reflectance.data",
            ParamValue::Tensor(pixels(2, 3, 0.25)),
        )
        .unwrap();
        let (new_desc, new_scene) = p.update(&desc).unwrap();
        let again = SceneParams::traverse(&new_desc, &new_scene);
        assert_eq!(
            again.get("mat.reflectance.data").unwrap(),
            &ParamValue::Tensor(pixels(2, 3, 0.25))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn shapes_format_as_numpy() {
        assert_eq!(shape_str(&[]), "()");
        assert_eq!(shape_str(&[3]), "(3,)");
        assert_eq!(shape_str(&[4, 6, 3]), "(4, 6, 3)");
    }
}
