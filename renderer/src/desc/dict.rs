//! The rules of Mitsuba's dict scene format, for the loader that walks the Python
//! objects (in the binding): key paths and their locations, nesting and cycles, the
//! allowed keys of value dicts, and the checks of numbers, colours, spectra,
//! transforms and image arrays. The XML parser ([`super::xml`]) applies the same
//! limits to its elements: [`MAX_DEPTH`] levels, numbers finite in single precision
//! ([`crate::math::fits_f32`]).
//!
//! - `{'type': 'scene', key: {...}, ...}` is the root; each nested dict with a
//!   `'type'` is an object whose category comes from the plugin registries.
//! - Top-level objects get their key as `id` (so `{'type': 'ref', 'id': key}`
//!   finds them); an explicit `'id'` wins. Keys may not contain `.` (reserved as
//!   the separator of parameter paths, as in Mitsuba).
//! - Errors name the key path, e.g. `<dict>[shape.bsdf]: parameter "reflectance": ...`.
//! - Hostile input is an error, never a crash: a dict that contains itself is a
//!   reference cycle, dicts nest at most [`MAX_DEPTH`] levels (the XML element limit),
//!   and numbers must be finite in single precision (NaN, inf and |x| > 3.4e38 are
//!   refused here, once, rather than by each plugin).

use super::params::shape_str;
use super::props::{PixelArray, Value};
use super::xml::MAX_DEPTH;
use crate::error::{Error, Loc, Result};
use crate::math::spectrum::Spectrum;
use crate::math::{fits_f32, Transform, Vec3};

/// The location of the value at key path `path` (`a.b.c`; empty for the root).
pub fn loc_of(path: &str) -> Loc {
    if path.is_empty() {
        Loc::unknown("<dict>")
    } else {
        Loc::unknown(&format!("<dict>[{path}]"))
    }
}

/// The key path of `key` inside the dict at `path`.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The dicts being converted, outermost first, so that a dict containing itself is
/// reported instead of recursing until the stack overflows.
#[derive(Default)]
pub struct Nesting {
    /// Identity (the object's address) and key path of each dict on the current path.
    open: Vec<(usize, String)>,
}

impl Nesting {
    /// Puts the dict `id` at `path` on the open path: an error if it is already on it
    /// (a cycle) or the path is deeper than the XML parser allows. Pair with
    /// [`Nesting::leave`].
    pub fn enter(&mut self, id: usize, path: &str) -> Result<()> {
        if let Some((_, outer)) = self.open.iter().find(|(a, _)| *a == id) {
            return Err(Error::parse(
                &loc_of(path),
                format!(
                    "reference cycle: this is the same dict as {} which contains it \
                     (share an object with {{'type': 'ref', 'id': ...}} instead)",
                    loc_of(outer)
                ),
            ));
        }
        if self.open.len() >= MAX_DEPTH {
            return Err(Error::parse(
                &loc_of(path),
                format!(
                    "dicts are nested more than {MAX_DEPTH} levels deep (the limit of \
                     scene descriptions, as for XML elements)"
                ),
            ));
        }
        self.open.push((id, path.to_string()));
        Ok(())
    }

    /// Takes the innermost dict off the open path.
    pub fn leave(&mut self) {
        self.open.pop();
    }
}

/// Keys may not contain the parameter-path separator nor look generated.
pub fn check_key(key: &str, loc: &Loc) -> Result<()> {
    if key.contains('.') {
        return Err(Error::parse(
            loc,
            format!("the key \"{key}\" contains a '.', which separates parameter paths; use '_' instead"),
        ));
    }
    if key.starts_with("_arg_") {
        return Err(Error::parse(
            loc,
            format!("the key \"{key}\" is reserved (names starting with \"_arg_\" are generated)"),
        ));
    }
    Ok(())
}

/// What a dict with a `'type'` stands for, besides a plugin object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDict {
    /// `{'type': 'ref', 'id': ...}`.
    Ref,
    /// `{'type': 'spectrum', 'value'|'filename': ...}`.
    Spectrum,
    /// `{'type': 'rgb', 'value': ...}`.
    Rgb,
}

/// The value dict of type `kind` with these keys, or `None` for a plugin object; an
/// error for a key the value dict does not take or a nested scene.
pub fn value_dict(kind: &str, keys: &[String], loc: &Loc) -> Result<Option<ValueDict>> {
    let (which, allowed): (_, &[&str]) = match kind {
        "ref" => (ValueDict::Ref, &["type", "id"]),
        "spectrum" => (ValueDict::Spectrum, &["type", "value", "filename"]),
        "rgb" => (ValueDict::Rgb, &["type", "value"]),
        "scene" => return Err(Error::parse(loc, "a scene cannot be nested")),
        _ => return Ok(None),
    };
    if let Some(k) = keys.iter().find(|k| !allowed.contains(&k.as_str())) {
        return Err(Error::parse(
            loc,
            format!(
                "unexpected key \"{k}\" in a '{kind}' dict (allowed: {})",
                allowed.join(", ")
            ),
        ));
    }
    Ok(Some(which))
}

/// Scene numbers are rendered in single precision: NaN, infinities and magnitudes
/// beyond `f32::MAX` are refused where a dict value is converted (as the XML parser
/// does), so every plugin sees finite numbers and every error names the key.
pub fn finite(v: f64, loc: &Loc) -> Result<f64> {
    if fits_f32(v) {
        return Ok(v);
    }
    Err(Error::parse(
        loc,
        format!(
            "{v:?} is not a finite number (NaN, infinities and magnitudes above \
             3.4e38, the single-precision limit, are not allowed)"
        ),
    ))
}

/// Three finite numbers (a colour or a vector).
pub fn finite3(c: &[f64; 3], loc: &Loc) -> Result<Vec3> {
    if c.iter().all(|&x| fits_f32(x)) {
        return Ok(Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32));
    }
    Err(Error::parse(
        loc,
        format!(
            "[{:?}, {:?}, {:?}] has a component that is not a finite number (NaN, \
             infinities and magnitudes above 3.4e38, the single-precision limit, are not allowed)",
            c[0], c[1], c[2]
        ),
    ))
}

/// The value of an `'rgb'` dict given as an array: 3 finite numbers.
pub fn rgb(shape: &[usize], data: &[f32], loc: &Loc) -> Result<Vec3> {
    if shape != [3] {
        return Err(Error::parse(
            loc,
            format!(
                "a 'rgb' value must be a number or 3 numbers, got shape {}",
                shape_str(shape)
            ),
        ));
    }
    finite3(&[data[0] as f64, data[1] as f64, data[2] as f64], loc)
}

/// How the element type of an image array is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Texels {
    /// Floating point: linear values.
    Linear,
    /// 8-bit unsigned: sRGB-encoded (decoded to linear, as Mitsuba does for 8-bit
    /// bitmaps; alpha stays linear).
    Srgb8,
    /// Any other element type, by name: refused.
    Other(String),
}

/// A value given as an array (a list, a tuple, a NumPy array, a tensor): 3 numbers
/// are a vector, rank 2 or 3 an image.
pub fn array_value(shape: &[usize], data: Vec<f32>, texels: Texels, loc: &Loc) -> Result<Value> {
    if shape == [3] {
        let c = [data[0] as f64, data[1] as f64, data[2] as f64];
        return Ok(Value::Vector(finite3(&c, loc)?));
    }
    if !matches!(shape.len(), 2 | 3) {
        return Err(Error::parse(
            loc,
            format!(
                "an array value must be 3 numbers (a vector) or an image of shape (H, W) or (H, W, C), got {}",
                shape_str(shape)
            ),
        ));
    }
    Ok(Value::Pixels(std::sync::Arc::new(pixels(
        shape, data, texels, loc,
    )?)))
}

/// Validates an image array: rank 2 or 3, 1/3/4 channels, float or uint8, finite.
pub fn pixels(
    shape: &[usize],
    mut data: Vec<f32>,
    texels: Texels,
    loc: &Loc,
) -> Result<PixelArray> {
    let (h, w, c) = match shape[..] {
        [h, w] => (h, w, 1),
        [h, w, c] => (h, w, c),
        _ => {
            return Err(Error::parse(
                loc,
                format!(
                    "a bitmap array must have shape (H, W) or (H, W, C), got {}",
                    shape_str(shape)
                ),
            ))
        }
    };
    if !matches!(c, 1 | 3 | 4) || h == 0 || w == 0 {
        return Err(Error::parse(
            loc,
            format!(
                "a bitmap needs a non-empty image with 1, 3 or 4 channels, got shape {}",
                shape_str(shape)
            ),
        ));
    }
    match texels {
        Texels::Linear => {}
        Texels::Srgb8 => {
            for (i, v) in data.iter_mut().enumerate() {
                let alpha = c == 4 && i % 4 == 3;
                let x = *v / 255.0;
                *v = if alpha {
                    x
                } else {
                    crate::io::srgb_to_linear(x)
                };
            }
        }
        Texels::Other(dtype) => {
            return Err(Error::parse(
                loc,
                format!("bitmap arrays must be float16/32/64 or uint8, got {dtype}"),
            ))
        }
    }
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(Error::parse(
            loc,
            format!("the bitmap array contains NaN or infinite values (first at flat index {i})"),
        ));
    }
    Ok(PixelArray {
        width: w,
        height: h,
        channels: c,
        data,
    })
}

/// What a `{'type': 'spectrum', ...}` dict gives.
#[derive(Clone, Debug, PartialEq)]
pub enum SpectrumSource {
    /// `'value': 0.5`.
    Uniform(f64),
    /// `'value': [(400, 0.5), (700, 0.8)]`: (wavelength, value) pairs.
    Pairs(Vec<(f64, f64)>),
    /// `'filename': 'x.spd'`.
    File(String),
}

/// An error of a `'spectrum'` dict.
pub fn spectrum_error(loc: &Loc, msg: &str) -> Error {
    Error::parse(loc, format!("'spectrum': {msg}"))
}

/// The spectrum of a `'spectrum'` dict; converted to RGB where a plugin reads it, as
/// from XML.
pub fn spectrum(source: SpectrumSource, loc: &Loc) -> Result<Spectrum> {
    let err = |m: String| spectrum_error(loc, &m);
    match source {
        SpectrumSource::Uniform(x) if fits_f32(x) => Ok(Spectrum::Uniform(x)),
        SpectrumSource::Uniform(x) => Err(err(format!("{x} is not a finite number"))),
        SpectrumSource::Pairs(pairs) => {
            if let Some(p) = pairs.iter().find(|(w, x)| !fits_f32(*w) || !fits_f32(*x)) {
                return Err(err(format!("{p:?} is not a pair of finite numbers")));
            }
            let (w, x) = pairs.into_iter().unzip();
            Spectrum::sampled(w, x).map_err(err)
        }
        SpectrumSource::File(f) => {
            let text =
                std::fs::read_to_string(&f).map_err(|e| err(format!("cannot read {f}: {e}")))?;
            Spectrum::parse_spd(&text).map_err(|m| err(format!("{f}: {m}")))
        }
    }
}

/// A transform from the 4×4 rows of a `ScalarTransform4f`: finite in single precision
/// and invertible; `what` starts the error message (the key path or parameter).
pub fn transform(rows: [[f64; 4]; 4], what: &str) -> Result<Transform> {
    let at = Loc::unknown(what);
    if let Some(x) = rows.as_flattened().iter().find(|x| !fits_f32(**x)) {
        return Err(Error::parse(
            &at,
            format!(
                "the transform matrix has an entry {x:?} that is not a finite number \
                 (NaN, infinities and magnitudes above 3.4e38 are not allowed)"
            ),
        ));
    }
    let rows = rows.map(|r| r.map(|x| x as f32));
    Transform::from_rows(rows).ok_or_else(|| {
        Error::parse(
            &at,
            "the transform matrix is singular (not invertible) or its inverse overflows",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dict_on_the_open_path_is_a_cycle_and_depth_is_bounded() {
        let mut n = Nesting::default();
        n.enter(1, "").unwrap();
        n.enter(2, "a").unwrap();
        let e = n.enter(1, "a.b").unwrap_err().to_string();
        assert!(e.starts_with("<dict>[a.b]: reference cycle"), "{e}");
        assert!(e.contains("same dict as <dict> which"), "{e}");
        n.leave();
        n.enter(3, "c").unwrap();
        let mut deep = Nesting::default();
        for i in 0..MAX_DEPTH {
            deep.enter(i, "x").unwrap();
        }
        let e = deep.enter(MAX_DEPTH, "x").unwrap_err().to_string();
        assert!(e.contains("nested more than 128 levels"), "{e}");
    }

    #[test]
    fn keys_and_value_dicts_are_checked() {
        let loc = loc_of("a.b");
        assert_eq!(join("a", "b"), "a.b");
        assert!(check_key("x.y", &loc).is_err());
        assert!(check_key("_arg_0", &loc).is_err());
        assert!(check_key("x_y", &loc).is_ok());
        let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ok = value_dict("rgb", &keys(&["type", "value"]), &loc).unwrap();
        assert_eq!(ok, Some(ValueDict::Rgb));
        assert_eq!(value_dict("diffuse", &keys(&["x"]), &loc).unwrap(), None);
        let e = value_dict("ref", &keys(&["type", "name"]), &loc).unwrap_err();
        assert_eq!(
            e.to_string(),
            "<dict>[a.b]: unexpected key \"name\" in a 'ref' dict (allowed: type, id)"
        );
        assert!(value_dict("scene", &[], &loc).is_err());
    }

    #[test]
    fn numbers_arrays_and_transforms_must_be_finite_in_single_precision() {
        let loc = loc_of("k");
        assert!(finite(1e39, &loc).is_err());
        assert!(finite3(&[0.0, f64::NAN, 1.0], &loc).is_err());
        let v = array_value(&[3], vec![1.0, 2.0, 3.0], Texels::Linear, &loc).unwrap();
        assert!(matches!(v, Value::Vector(_)));
        let px = pixels(&[1, 1, 4], vec![255.0; 4], Texels::Srgb8, &loc).unwrap();
        assert_eq!(px.data, vec![1.0; 4]);
        assert!(pixels(&[1, 1], vec![0.0], Texels::Other("int32".into()), &loc).is_err());
        let mut rows = [[0.0; 4]; 4];
        assert!(transform(rows, "t").is_err(), "singular");
        rows[0][0] = f64::INFINITY;
        assert!(transform(rows, "t")
            .unwrap_err()
            .to_string()
            .starts_with("t: "));
    }
}
