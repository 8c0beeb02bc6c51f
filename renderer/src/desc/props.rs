//! `Props`: the typed property bag of one scene object. Plugins read what they
//! need, with their defaults at the call site; every read marks the key as used,
//! and [`Props::check_unused`] turns leftover keys into an error naming the file
//! and line (typo protection, as Mitsuba's `Properties`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::ObjectDesc;
use crate::error::{Error, Loc, Result};
use crate::math::spectrum::{Spectrum, SpectrumUse};
use crate::math::{Color, Transform, Vec3};

/// In-memory pixel data (from Python arrays): row-major, `height × width × channels`, linear.
#[derive(Clone, Debug, PartialEq)]
pub struct PixelArray {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Channels per pixel (1, 3 or 4).
    pub channels: usize,
    /// `width * height * channels` values.
    pub data: Vec<f32>,
}

impl From<crate::io::Image> for PixelArray {
    fn from(img: crate::io::Image) -> Self {
        PixelArray {
            width: img.width,
            height: img.height,
            channels: img.channels,
            data: img.data,
        }
    }
}

/// One property value.
#[derive(Clone, Debug)]
pub enum Value {
    /// `<float>`.
    Float(f64),
    /// `<integer>`.
    Int(i64),
    /// `<boolean>`.
    Bool(bool),
    /// `<string>`.
    String(String),
    /// `<rgb>`.
    Rgb(Color),
    /// `<spectrum>`: a uniform value or wavelength:value pairs, converted to RGB where
    /// a plugin reads it (the conversion depends on the parameter's use).
    Spectrum(Spectrum),
    /// `<point>`.
    Point(Vec3),
    /// `<vector>`.
    Vector(Vec3),
    /// `<transform>`.
    Transform(Transform),
    /// A nested object.
    Object(Arc<ObjectDesc>),
    /// `<ref id="..."/>`: resolved by the builder.
    Ref(String),
    /// In-memory pixels (a `Bitmap` or array from Python).
    Pixels(Arc<PixelArray>),
    /// A mesh's world-space vertex positions, written by a parameter update: they
    /// replace the positions of the file (see [`crate::shapes::mesh`]).
    Positions(Arc<Vec<Vec3>>),
}

impl Value {
    /// The property type's name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Float(_) => "float",
            Value::Int(_) => "integer",
            Value::Bool(_) => "boolean",
            Value::String(_) => "string",
            Value::Rgb(_) => "rgb",
            Value::Spectrum(_) => "spectrum",
            Value::Point(_) => "point",
            Value::Vector(_) => "vector",
            Value::Transform(_) => "transform",
            Value::Object(o) => o.category.tag(),
            Value::Ref(_) => "reference",
            Value::Pixels(_) => "bitmap array",
            Value::Positions(_) => "vertex positions",
        }
    }
}

/// One named entry in a [`Props`] bag.
#[derive(Debug)]
pub struct Entry {
    /// The `name` attribute; nested objects without one get `"_arg_N"`.
    pub name: String,
    /// The value.
    pub value: Value,
    /// Where the property was written.
    pub loc: Loc,
    // Atomic only so that descriptions can be shared across threads (Arc);
    // reads happen on the builder's thread.
    used: AtomicBool,
}

impl Clone for Entry {
    fn clone(&self) -> Self {
        Entry {
            name: self.name.clone(),
            value: self.value.clone(),
            loc: self.loc.clone(),
            used: AtomicBool::new(self.is_used()),
        }
    }
}

impl Entry {
    /// Whether a plugin has read this entry.
    pub fn is_used(&self) -> bool {
        self.used.load(Ordering::Relaxed)
    }

    /// Marks this entry as read.
    pub fn mark_used(&self) {
        self.used.store(true, Ordering::Relaxed)
    }
}

/// The property bag of one object.
#[derive(Clone, Debug, Default)]
pub struct Props {
    entries: Vec<Entry>,
    /// Location of the owning object (for errors about missing keys).
    pub loc: Loc,
}

impl Props {
    /// An empty bag for an object at `loc`.
    pub fn new(loc: Loc) -> Self {
        Props {
            entries: Vec::new(),
            loc,
        }
    }

    /// Adds a property; a duplicate name is an error (as in Mitsuba).
    pub fn insert(&mut self, name: &str, value: Value, loc: Loc) -> Result<()> {
        if let Some(prev) = self.entries.iter().find(|e| e.name == name) {
            return Err(Error::param(
                &loc,
                name,
                format!("specified twice (first at {})", prev.loc),
            ));
        }
        self.entries.push(Entry {
            name: name.to_string(),
            value,
            loc,
            used: AtomicBool::new(false),
        });
        Ok(())
    }

    /// Adds a nested object without a name under a generated `_arg_N` key.
    pub fn push_object(&mut self, obj: Arc<ObjectDesc>, loc: Loc) {
        self.push_unnamed(Value::Object(obj), loc);
    }

    /// Adds an unnamed `<ref id="..."/>` under a generated `_arg_N` key.
    pub fn push_ref(&mut self, id: &str, loc: Loc) {
        self.push_unnamed(Value::Ref(id.to_string()), loc);
    }

    fn push_unnamed(&mut self, value: Value, loc: Loc) {
        let name = format!("_arg_{}", self.entries.len());
        self.entries.push(Entry {
            name,
            value,
            loc,
            used: AtomicBool::new(false),
        });
    }

    /// Adds a property, replacing any previous value (used for `-D` style overrides).
    pub fn set(&mut self, name: &str, value: Value, loc: Loc) {
        self.entries.retain(|e| e.name != name);
        self.entries.push(Entry {
            name: name.to_string(),
            value,
            loc,
            used: AtomicBool::new(false),
        });
    }

    /// The value of `name` for in-place edits (parameter updates), keeping its position.
    pub fn value_mut(&mut self, name: &str) -> Option<&mut Value> {
        let e = self.entries.iter_mut().find(|e| e.name == name)?;
        Some(&mut e.value)
    }

    /// Removes `name`, returning its value (parameter updates that replace a key).
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let i = self.entries.iter().position(|e| e.name == name)?;
        Some(self.entries.remove(i).value)
    }

    /// All entries, in insertion order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Whether `key` is present (does not mark it used).
    pub fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|e| e.name == key)
    }

    /// The raw entry for `key`, marking it used.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        let e = self.entries.iter().find(|e| e.name == key)?;
        e.mark_used();
        Some(e)
    }

    /// Marks `key` as read without interpreting it.
    pub fn mark_used(&self, key: &str) {
        self.get(key);
    }

    fn wrong_type(e: &Entry, expected: &str) -> Error {
        Error::param(
            &e.loc,
            &e.name,
            format!("expected {expected}, got {}", e.value.type_name()),
        )
    }

    /// An optional float (integers are accepted).
    pub fn float_opt(&self, key: &str) -> Result<Option<f32>> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => match &e.value {
                Value::Float(v) => Ok(Some(*v as f32)),
                Value::Int(v) => Ok(Some(*v as f32)),
                _ => Err(Self::wrong_type(e, "float")),
            },
        }
    }

    /// A float with a default.
    pub fn float(&self, key: &str, default: f32) -> Result<f32> {
        Ok(self.float_opt(key)?.unwrap_or(default))
    }

    /// A float that must be finite and `> 0` (or `>= 0` when `allow_zero`).
    pub fn positive_float(&self, key: &str, default: f32, allow_zero: bool) -> Result<f32> {
        let v = self.float(key, default)?;
        let ok = v.is_finite() && (v > 0.0 || (allow_zero && v == 0.0));
        if !ok {
            let loc = self.entry_loc(key);
            let want = if allow_zero { ">= 0" } else { "> 0" };
            return Err(Error::param(
                &loc,
                key,
                format!("must be a finite value {want}, got {v}"),
            ));
        }
        Ok(v)
    }

    /// An optional integer.
    pub fn int_opt(&self, key: &str) -> Result<Option<i64>> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => match &e.value {
                Value::Int(v) => Ok(Some(*v)),
                Value::Float(v) if v.fract() == 0.0 && v.is_finite() => Ok(Some(*v as i64)),
                _ => Err(Self::wrong_type(e, "integer")),
            },
        }
    }

    /// An integer with a default, checked against `[min, max]`.
    pub fn int_in(&self, key: &str, default: i64, min: i64, max: i64) -> Result<i64> {
        let v = self.int_opt(key)?.unwrap_or(default);
        if v < min || v > max {
            let loc = self.entry_loc(key);
            return Err(Error::param(
                &loc,
                key,
                format!("must be in [{min}, {max}], got {v}"),
            ));
        }
        Ok(v)
    }

    /// A boolean with a default.
    pub fn bool(&self, key: &str, default: bool) -> Result<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(e) => match &e.value {
                Value::Bool(b) => Ok(*b),
                _ => Err(Self::wrong_type(e, "boolean")),
            },
        }
    }

    /// An optional string.
    pub fn string_opt(&self, key: &str) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => match &e.value {
                Value::String(s) => Ok(Some(s.clone())),
                _ => Err(Self::wrong_type(e, "string")),
            },
        }
    }

    /// A string with a default.
    pub fn string(&self, key: &str, default: &str) -> Result<String> {
        Ok(self.string_opt(key)?.unwrap_or_else(|| default.to_string()))
    }

    /// A string that must be one of `choices`.
    pub fn choice(&self, key: &str, default: &str, choices: &[&str]) -> Result<String> {
        let s = self.string(key, default)?;
        if !choices.contains(&s.as_str()) {
            let loc = self.entry_loc(key);
            return Err(Error::param(
                &loc,
                key,
                format!("\"{s}\" is not one of: {}", choices.join(", ")),
            ));
        }
        Ok(s)
    }

    /// An optional point or vector (`<point>`, `<vector>`, or an rgb triple from dicts).
    pub fn vec3_opt(&self, key: &str) -> Result<Option<Vec3>> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => match &e.value {
                Value::Point(v) | Value::Vector(v) => Ok(Some(*v)),
                _ => Err(Self::wrong_type(e, "point or vector")),
            },
        }
    }

    /// An optional constant reflectance-like colour (`<rgb>`, `<spectrum>`, or a float
    /// meaning grey). Returns an error if the key holds a texture: use the builder's
    /// texture helper for those.
    pub fn color_opt(&self, key: &str) -> Result<Option<Color>> {
        self.color_as(key, SpectrumUse::Reflectance)
    }

    /// As [`Self::color_opt`], converting a `<spectrum>` for `usage`.
    pub fn color_as(&self, key: &str, usage: SpectrumUse) -> Result<Option<Color>> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => match &e.value {
                Value::Rgb(c) => Ok(Some(*c)),
                Value::Spectrum(s) => Ok(Some(s.to_rgb(usage))),
                Value::Float(v) => Ok(Some(Vec3::splat(*v as f32))),
                Value::Int(v) => Ok(Some(Vec3::splat(*v as f32))),
                _ => Err(Self::wrong_type(e, "rgb or float")),
            },
        }
    }

    /// A transform, the identity when absent.
    pub fn transform(&self, key: &str) -> Result<Transform> {
        match self.get(key) {
            None => Ok(Transform::IDENTITY),
            Some(e) => match &e.value {
                Value::Transform(t) => Ok(*t),
                _ => Err(Self::wrong_type(e, "transform")),
            },
        }
    }

    /// Nested objects (and references) in file order, with their names, marking them used.
    /// References are returned as `Value::Ref`; the builder resolves them.
    pub fn objects(&self) -> Vec<&Entry> {
        let v: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| matches!(e.value, Value::Object(_) | Value::Ref(_)))
            .collect();
        v
    }

    /// The location of `key`'s entry, or of the object when it is absent.
    pub fn entry_loc(&self, key: &str) -> Loc {
        self.entries
            .iter()
            .find(|e| e.name == key)
            .map(|e| e.loc.clone())
            .unwrap_or_else(|| self.loc.clone())
    }

    /// Error for every property no plugin read.
    pub fn check_unused(&self, plugin: &str) -> Result<()> {
        if let Some(e) = self.entries.iter().find(|e| !e.is_used()) {
            let what = match &e.value {
                Value::Object(o) => format!(
                    "nested {} is not used by plugin \"{plugin}\"",
                    o.category.tag()
                ),
                _ => format!("unused parameter: plugin \"{plugin}\" has no parameter of this name"),
            };
            return Err(Error::param(&e.loc, &e.name, what));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(l: u32) -> Loc {
        Loc::new("t.xml", l, 1)
    }

    #[test]
    fn typed_reads_mark_used_and_report_leftovers() {
        let mut p = Props::new(loc(1));
        p.insert("alpha", Value::Float(0.25), loc(2)).unwrap();
        p.insert("count", Value::Int(3), loc(3)).unwrap();
        p.insert("typo_key", Value::Bool(true), loc(4)).unwrap();
        assert_eq!(p.float("alpha", 1.0).unwrap(), 0.25);
        assert_eq!(p.int_in("count", 1, 1, 10).unwrap(), 3);
        assert_eq!(p.float("missing", 7.0).unwrap(), 7.0);
        let err = p.check_unused("diffuse").unwrap_err().to_string();
        assert!(err.contains("t.xml:4") && err.contains("typo_key"), "{err}");
    }

    #[test]
    fn wrong_types_and_ranges_name_key_and_line() {
        let mut p = Props::new(loc(1));
        p.insert("alpha", Value::String("x".into()), loc(5))
            .unwrap();
        p.insert("n", Value::Int(-2), loc(6)).unwrap();
        p.insert("r", Value::Float(-1.0), loc(7)).unwrap();
        let e = p.float("alpha", 0.1).unwrap_err().to_string();
        assert!(
            e.contains("t.xml:5") && e.contains("alpha") && e.contains("expected float"),
            "{e}"
        );
        let e = p.int_in("n", 1, 1, 100).unwrap_err().to_string();
        assert!(e.contains("t.xml:6") && e.contains("[1, 100]"), "{e}");
        let e = p.positive_float("r", 1.0, false).unwrap_err().to_string();
        assert!(e.contains("t.xml:7") && e.contains("> 0"), "{e}");
        let e = p
            .insert("n", Value::Int(1), loc(9))
            .unwrap_err()
            .to_string();
        assert!(e.contains("twice") && e.contains("t.xml:6"), "{e}");
    }
}
