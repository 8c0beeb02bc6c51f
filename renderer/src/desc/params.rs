//! Scene parameters: the core side of Mitsuba's `traverse(scene)` and
//! `SceneParameters.update()`, shared by the Python package and the CLI.
//!
//! Plugins declare their editable parameters while they are built (through
//! the scene builder): each declaration names the key (the object's key
//! prefix, see [`super::keys`], plus the parameter's name), its current value, the
//! object that owns it and how a new value is written back into the description
//! ([`Target`]). [`ParamTable`] holds the declarations of one built scene.
//!
//! [`SceneParams`] is what `traverse(scene)` returns: a view of the table whose
//! [`SceneParams::set`] checks a new value (kind, shape, finiteness, range) and stages
//! it; nothing changes before the scene's `update` (`super::loaded::LoadedScene`)
//! applies the staged values, rebuilding only the objects that own them.

use std::any::Any;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use super::props::{PixelArray, Value};
use crate::error::{Error, Loc, Result};
use crate::math::{Color, Transform, Vec3};

/// Values that live in device memory (a backend's buffer): texture data imported
/// from another framework's GPU array. The core never reads them except through
/// [`DeviceValues::to_host`]; the backend that made them downcasts with `as_any`.
pub trait DeviceValues: Send + Sync + std::fmt::Debug {
    /// Number of `f32` values.
    fn len(&self) -> usize;
    /// Whether there are no values.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The values on the host (waits for the device work that writes them).
    fn to_host(&self) -> Result<Vec<f32>>;
    /// For the backend's downcast.
    fn as_any(&self) -> &dyn Any;
}

/// Where a tensor parameter's values are.
#[derive(Clone, Debug)]
pub enum TensorData {
    /// On the host (shared with the scene description and the texture store).
    Host(Arc<PixelArray>),
    /// In device memory.
    Device(Arc<dyn DeviceValues>),
}

/// A float32 tensor of shape (height, width, channels).
#[derive(Clone, Debug)]
pub struct TensorValue {
    /// (height, width, channels).
    pub shape: [usize; 3],
    /// The values, row-major.
    pub data: TensorData,
}

impl TensorValue {
    /// A host tensor sharing `px`.
    pub fn host(px: Arc<PixelArray>) -> TensorValue {
        TensorValue {
            shape: [px.height, px.width, px.channels],
            data: TensorData::Host(px),
        }
    }

    /// The host values, if the tensor lives on the host.
    pub fn host_data(&self) -> Option<&Arc<PixelArray>> {
        match &self.data {
            TensorData::Host(p) => Some(p),
            TensorData::Device(_) => None,
        }
    }
}

impl PartialEq for TensorValue {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape
            && match (&self.data, &other.data) {
                (TensorData::Host(a), TensorData::Host(b)) => a.data == b.data,
                (TensorData::Device(a), TensorData::Device(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

/// A float32 array of any shape on the host (a mesh's vertex positions: `(N, 3)` under
/// the key `positions`, flat `(3N,)` under `vertex_positions`).
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayValue {
    /// The shape, C order.
    pub shape: Vec<usize>,
    /// The values.
    pub data: Arc<Vec<f32>>,
}

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
    Tensor(TensorValue),
    /// Any other array, on the host.
    Array(ArrayValue),
}

impl ParamValue {
    /// The value's shape, as NumPy would report it.
    pub fn shape(&self) -> Vec<usize> {
        match self {
            ParamValue::Float(_) => vec![],
            ParamValue::Color(_) | ParamValue::Vector(_) => vec![3],
            ParamValue::Transform(_) => vec![4, 4],
            ParamValue::Tensor(t) => t.shape.to_vec(),
            ParamValue::Array(a) => a.shape.clone(),
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
            ParamValue::Array(_) => "array",
        }
    }

    /// The kind's name with its article, for error messages: "a float", "an array".
    pub fn kind_a(&self) -> String {
        let k = self.kind();
        format!("{} {k}", crate::error::a_or_an(k))
    }

    /// What a new value for this one must be: "expected a color of shape (3,)".
    pub fn expected(&self) -> String {
        format!(
            "expected {} of shape {}",
            self.kind_a(),
            shape_str(&self.shape())
        )
    }

    /// Whether every value is finite (device values are checked where they are made).
    fn is_finite(&self) -> bool {
        match self {
            ParamValue::Float(v) => v.is_finite(),
            ParamValue::Color(c) | ParamValue::Vector(c) => c.is_finite(),
            ParamValue::Transform(t) => t.m.is_finite(),
            ParamValue::Tensor(t) => match &t.data {
                TensorData::Host(p) => crate::math::all_finite(&p.data),
                TensorData::Device(_) => true,
            },
            ParamValue::Array(a) => crate::math::all_finite(&a.data),
        }
    }

    /// The description value it becomes (`None` for device tensors, which the
    /// description cannot hold); `like` is the value it replaces, whose variant a
    /// point or vector keeps.
    pub(crate) fn to_value(&self, like: Option<&Value>) -> Option<Value> {
        Some(match self {
            ParamValue::Float(v) => Value::Float(*v),
            ParamValue::Color(c) => Value::Rgb(*c),
            ParamValue::Vector(v) => match like {
                Some(Value::Point(_)) => Value::Point(*v),
                _ => Value::Vector(*v),
            },
            ParamValue::Transform(t) => Value::Transform(*t),
            ParamValue::Tensor(t) => Value::Pixels(t.host_data()?.clone()),
            ParamValue::Array(a) => Value::Positions(Arc::new(
                a.data
                    .chunks_exact(3)
                    .map(|c| Vec3::new(c[0], c[1], c[2]))
                    .collect(),
            )),
        })
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

/// How a new value is written into the owning object's description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Property `set` takes the value; the properties in `remove` (alternative ways
    /// to give the same thing, such as `to_world` for a point light's `position`, or
    /// for a mesh's written vertex positions, which include it) are removed; a
    /// removed property's own transform parameter then shows the identity.
    Prop {
        /// The property written.
        set: String,
        /// Properties removed.
        remove: Vec<String>,
    },
    /// A perspective sensor's horizontal field of view: `fov` with `fov_axis = "x"`,
    /// replacing `focal_length`.
    XFov,
    /// A relative index of refraction `eta`: `int_ior = eta`, `ext_ior = 1`.
    Eta,
}

impl Target {
    /// Property `name`, nothing removed.
    pub fn prop(name: &str) -> Target {
        Target::Prop {
            set: name.to_string(),
            remove: Vec::new(),
        }
    }
}

/// A value check beyond kind, shape and finiteness.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// Any finite value.
    Any,
    /// Strictly between the bounds.
    Open(f64, f64),
    /// At least the bound.
    AtLeast(f64),
    /// Every component at least 0.
    NonNegative,
}

impl Range {
    fn check(self, v: &ParamValue) -> Option<String> {
        let scalars: Vec<f64> = match v {
            ParamValue::Float(x) => vec![*x],
            ParamValue::Color(c) | ParamValue::Vector(c) => {
                c.to_array().iter().map(|&x| x as f64).collect()
            }
            _ => return None,
        };
        let bad = |ok: &dyn Fn(f64) -> bool| scalars.iter().any(|&x| !ok(x));
        match self {
            Range::Any => None,
            Range::Open(lo, hi) if bad(&|x| x > lo && x < hi) => Some(format!(
                "must be in ({lo}, {hi}), got {}",
                fmt_scalars(&scalars)
            )),
            Range::AtLeast(lo) if bad(&|x| x >= lo) => Some(format!(
                "must be at least {lo}, got {}",
                fmt_scalars(&scalars)
            )),
            Range::NonNegative if bad(&|x| x >= 0.0) => Some(format!(
                "must be non-negative, got {}",
                fmt_scalars(&scalars)
            )),
            _ => None,
        }
    }
}

/// The message for a tensor of `shape` (H, W, C) whose element `i` (C order) is the
/// first non-finite one.
pub fn non_finite_msg(shape: &[usize; 3], i: usize) -> String {
    let [_, w, c] = *shape;
    let (pixel, channel) = (i / c.max(1), i % c.max(1));
    format!(
        "contains NaN or infinite values (the first at row {}, column {}, channel {channel})",
        pixel / w.max(1),
        pixel % w.max(1)
    )
}

fn fmt_scalars(v: &[f64]) -> String {
    match v {
        [x] => x.to_string(),
        _ => format!(
            "[{}]",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// One declared parameter.
#[derive(Clone, Debug)]
pub struct ParamDecl {
    /// The key, e.g. `shape.bsdf.reflectance.data`.
    pub key: String,
    /// The current value.
    pub value: ParamValue,
    /// The object that declared it (an index into the scene's build log).
    pub owner: usize,
    /// How a new value is written into the description.
    pub target: Target,
    /// Which values are accepted.
    pub range: Range,
    /// For the value of a constant texture (`reflectance.value`, ...): that texture's
    /// record, which differentiable rendering differentiates ([`crate::diff`]).
    pub texture: Option<u32>,
}

/// The declared parameters of one built scene, in declaration order.
#[derive(Clone, Debug, Default)]
pub struct ParamTable {
    decls: Vec<ParamDecl>,
    index: HashMap<String, usize>,
}

impl ParamTable {
    /// Adds a declaration; a key declared before keeps its first declaration (as in
    /// Mitsuba, where a key names one object).
    pub fn declare(&mut self, d: ParamDecl) {
        if self.index.contains_key(&d.key) {
            return;
        }
        self.index.insert(d.key.clone(), self.decls.len());
        self.decls.push(d);
    }

    /// The declarations, in order.
    pub fn decls(&self) -> &[ParamDecl] {
        &self.decls
    }

    /// Records that `key`'s value is that of constant texture `texture`.
    pub fn set_texture(&mut self, key: &str, texture: u32) {
        if let Some(&i) = self.index.get(key) {
            self.decls[i].texture = Some(texture);
        }
    }

    /// The index of `key`.
    pub fn find(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    /// Sets the value of declaration `i` (after a successful update).
    pub(crate) fn commit(&mut self, i: usize, value: ParamValue) {
        self.decls[i].value = value;
    }
}

/// Where parameter errors point.
fn params_loc() -> Loc {
    Loc::unknown("<parameters>")
}

/// What `traverse(scene)` returns: the parameters of a scene with staged new values.
#[derive(Clone, Debug, Default)]
pub struct SceneParams {
    table: Arc<ParamTable>,
    /// The keys that are listed (`keep` drops some).
    listed: Vec<usize>,
    staged: Vec<(usize, ParamValue)>,
}

impl SceneParams {
    /// A view of `table` with nothing staged.
    pub fn new(table: &Arc<ParamTable>) -> SceneParams {
        SceneParams {
            table: table.clone(),
            listed: (0..table.decls.len()).collect(),
            staged: Vec::new(),
        }
    }

    /// Keys in traversal order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.listed
            .iter()
            .map(|&i| self.table.decls[i].key.as_str())
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.listed.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.listed.is_empty()
    }

    /// Whether `key` exists.
    pub fn contains(&self, key: &str) -> bool {
        self.index(key).is_ok()
    }

    fn index(&self, key: &str) -> Result<usize> {
        match self.table.find(key) {
            Some(i) if self.listed.contains(&i) => Ok(i),
            _ => {
                let keys: Vec<&str> = self.keys().collect();
                let msg = format!("no such parameter; the scene has: {}", keys.join(", "));
                Err(Error::param(&params_loc(), key, msg))
            }
        }
    }

    /// What a lookup of a key that is not listed says (Python raises it as a
    /// `KeyError`): the key and every key listed.
    pub fn missing(&self, key: &str) -> String {
        let keys: Vec<&str> = self.keys().collect();
        format!(
            "'{key}' is not a parameter of this scene; it has: {}",
            keys.join(", ")
        )
    }

    /// The value of `key`: the staged one if there is one, else the scene's.
    pub fn get(&self, key: &str) -> Result<&ParamValue> {
        let i = self.index(key)?;
        let staged = self.staged.iter().find(|(j, _)| *j == i);
        Ok(staged.map_or(&self.table.decls[i].value, |(_, v)| v))
    }

    /// Keeps only the parameters whose key satisfies `keep` (Mitsuba's `params.keep`);
    /// staged changes of dropped keys are discarded.
    pub fn keep(&mut self, keep: impl Fn(&str) -> bool) {
        let decls = &self.table.decls;
        self.listed.retain(|&i| keep(&decls[i].key));
        let listed = &self.listed;
        self.staged.retain(|(i, _)| listed.contains(i));
    }

    /// Keys set since the last successful update, in the order they were first set.
    pub fn changed(&self) -> Vec<&str> {
        let decls = &self.table.decls;
        self.staged
            .iter()
            .map(|(i, _)| decls[*i].key.as_str())
            .collect()
    }

    /// The staged changes (declaration index, value), in the order the keys were first
    /// set, the last value per key.
    pub fn staged(&self) -> Vec<(usize, ParamValue)> {
        self.staged.clone()
    }

    /// The declaration behind index `i`.
    pub fn decl(&self, i: usize) -> &ParamDecl {
        &self.table.decls[i]
    }

    /// Checks `value` against `key`'s kind, shape, finiteness and range without
    /// staging it; returns the value as `key` stores it (a vector given for a colour
    /// becomes a colour).
    pub fn check(&self, key: &str, value: ParamValue) -> Result<ParamValue> {
        let d = &self.table.decls[self.index(key)?];
        let (want, got) = (d.value.shape(), value.shape());
        let same_kind = std::mem::discriminant(&d.value) == std::mem::discriminant(&value)
            || matches!(
                (&d.value, &value),
                (ParamValue::Color(_), ParamValue::Vector(_))
                    | (ParamValue::Vector(_), ParamValue::Color(_))
            );
        if !same_kind || want != got {
            let msg = format!(
                "{}, got {} of shape {}",
                d.value.expected(),
                value.kind_a(),
                shape_str(&got)
            );
            return Err(Error::param(&params_loc(), key, msg));
        }
        if !value.is_finite() {
            let at = match &value {
                ParamValue::Tensor(TensorValue {
                    data: TensorData::Host(p),
                    ..
                }) => p.data.iter().position(|v| !v.is_finite()),
                _ => None,
            };
            let at = at.or_else(|| match &value {
                ParamValue::Array(a) => a.data.iter().position(|v| !v.is_finite()),
                _ => None,
            });
            let msg = match (at, &value) {
                (Some(i), ParamValue::Tensor(t)) => non_finite_msg(&t.shape, i),
                (Some(i), ParamValue::Array(a)) => format!(
                    "contains NaN or infinite values (the first at flat index {i}{})",
                    match a.shape[..] {
                        [_, c] if c > 0 => format!(", row {}, column {}", i / c, i % c),
                        _ => String::new(),
                    }
                ),
                _ => "contains NaN or infinite values".to_string(),
            };
            return Err(Error::param(&params_loc(), key, msg));
        }
        let bad = match (&d.target, &value) {
            (Target::XFov, ParamValue::Float(v)) if !(*v > 0.0 && *v < 180.0) => {
                Some(format!("must be in (0, 180) degrees, got {v}"))
            }
            (_, ParamValue::Transform(t)) if Transform::from_matrix(t.m).is_none() => {
                Some("the matrix is singular".to_string())
            }
            _ => d.range.check(&value),
        };
        if let Some(msg) = bad {
            return Err(Error::param(&params_loc(), key, msg));
        }
        Ok(match (&d.value, value) {
            (ParamValue::Color(_), ParamValue::Vector(v)) => ParamValue::Color(v),
            (ParamValue::Vector(_), ParamValue::Color(v)) => ParamValue::Vector(v),
            (_, v) => v,
        })
    }

    /// Stages `value` for `key` after [`Self::check`]; on error nothing changes. Takes
    /// effect at the scene's next update.
    pub fn set(&mut self, key: &str, value: ParamValue) -> Result<()> {
        let value = self.check(key, value)?;
        let i = self.index(key)?;
        match self.staged.iter_mut().find(|(j, _)| *j == i) {
            Some(slot) => slot.1 = value,
            None => self.staged.push((i, value)),
        }
        Ok(())
    }

    /// Reads current values from `table`, the scene's table now (another view of the
    /// same scene may have updated it); staged values stay staged.
    pub fn refresh(&mut self, table: &Arc<ParamTable>) {
        self.table = table.clone();
    }

    /// After a successful update: the staged values are now the scene's.
    pub fn commit(&mut self, table: &Arc<ParamTable>) {
        self.refresh(table);
        self.staged.clear();
    }

    /// A human-readable table (key, kind, shape), as the CLI's `info` prints it.
    pub fn table(&self) -> String {
        let mut s = String::new();
        for i in &self.listed {
            let d = &self.table.decls[*i];
            let _ = writeln!(
                s,
                "{:<48} {:<9} {}",
                d.key,
                d.value.kind(),
                shape_str(&d.value.shape())
            );
        }
        s
    }
}

#[cfg(test)]
mod tests;
