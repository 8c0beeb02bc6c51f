//! Mitsuba's dict scene format → [`SceneDesc`], built directly from the Python
//! objects (no XML round trip).
//!
//! - `{'type': 'scene', key: {...}, ...}` is the root; each nested dict with a
//!   `'type'` is an object whose category comes from the plugin registries.
//! - Top-level objects get their key as `id` (so `{'type': 'ref', 'id': key}`
//!   finds them); an explicit `'id'` wins. Keys may not contain `.` (reserved as
//!   the separator of parameter paths, as in Mitsuba).
//! - Values: `bool`, `int`, `float`, `str`; `{'type': 'rgb', 'value': v}`;
//!   `{'type': 'spectrum', 'value': v}` (a number or (wavelength, value) pairs, or
//!   `'filename'` of an `.spd` file); lists/arrays of 3 numbers are
//!   vectors; `ScalarColor3f` is a colour; `ScalarTransform4f` is a transform; `Bitmap`s, NumPy arrays and
//!   tensors of rank 2 or 3 are in-memory pixels under the key the dict used.
//! - Errors name the key path, e.g. `<dict>[shape.bsdf]: parameter "reflectance": ...`.
//! - Hostile input is an error, never a crash: a dict that contains itself is a
//!   reference cycle, dicts nest at most 128 levels (the XML element limit), and
//!   numbers must be finite in single precision (NaN, inf and |x| > 3.4e38 are
//!   refused here, once, rather than by each plugin).

use std::sync::Arc;

use heliograph::desc::{Category, ObjectDesc, PixelArray, Props, SceneDesc, Value};
use heliograph::math::spectrum::Spectrum;
use heliograph::math::{Color, Transform, Vec3};
use heliograph::Loc;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::SceneError;
use crate::tensor::to_host_array;
use heliograph::desc::xml::MAX_DEPTH;

/// Every plugin category with the names it knows, for `type` → category.
fn registries() -> [(Category, &'static [&'static str]); 9] {
    use heliograph::*;
    [
        (Category::Shape, shapes::KNOWN),
        (Category::Bsdf, bsdfs::KNOWN),
        (Category::Texture, textures::KNOWN),
        (Category::Emitter, emitters::KNOWN),
        (Category::Integrator, integrators::KNOWN),
        (Category::Sensor, sensors::KNOWN),
        (Category::Film, films::KNOWN),
        (Category::Rfilter, rfilters::KNOWN),
        (Category::Sampler, samplers::KNOWN),
    ]
}

fn category_of(kind: &str, loc: &Loc) -> PyResult<Category> {
    for (cat, names) in registries() {
        if names.contains(&kind) {
            return Ok(cat);
        }
    }
    if heliograph::integrators::ALIASES
        .iter()
        .any(|(a, _)| *a == kind)
    {
        return Ok(Category::Integrator);
    }
    let mut known: Vec<&str> = registries()
        .iter()
        .flat_map(|r| r.1.iter().copied())
        .collect();
    known.sort();
    let suggestion = heliograph::error::did_you_mean(kind, known.iter().copied());
    Err(SceneError::new_err(format!(
        "{loc}: unknown plugin type \"{kind}\" (known: {}){suggestion}",
        known.join(", ")
    )))
}

fn loc_of(path: &str) -> Loc {
    if path.is_empty() {
        Loc::unknown("<dict>")
    } else {
        Loc::unknown(&format!("<dict>[{path}]"))
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Converts a scene dict.
pub fn load_dict(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<SceneDesc> {
    let kind = type_of(d, "")?;
    if kind != "scene" {
        return Err(SceneError::new_err(format!(
            "<dict>: load_dict() takes a scene dict ('type': 'scene'), got type \"{kind}\""
        )));
    }
    let mut walk = Walk {
        py,
        open: Vec::new(),
    };
    let root = walk.enter(d, "", |w| w.object(d, Category::Scene, "scene", "", true))?;
    Ok(SceneDesc::new(Arc::new(root)))
}

fn type_of(d: &Bound<'_, PyDict>, path: &str) -> PyResult<String> {
    let Some(t) = d.get_item("type")? else {
        return Err(SceneError::new_err(format!(
            "{}: the dict has no 'type' entry",
            loc_of(path)
        )));
    };
    t.extract::<String>()
        .map_err(|_| SceneError::new_err(format!("{}: 'type' must be a string", loc_of(path))))
}

/// One conversion: the dicts being converted, outermost first, so that a dict
/// containing itself is reported instead of recursing until the stack overflows.
struct Walk<'py> {
    py: Python<'py>,
    /// Address and key path of each dict on the current path.
    open: Vec<(usize, String)>,
}

impl<'py> Walk<'py> {
    /// Runs `f` with `d` on the open path: an error if `d` is already on it (a cycle)
    /// or the path is deeper than the XML parser allows.
    fn enter<T>(
        &mut self,
        d: &Bound<'_, PyDict>,
        path: &str,
        f: impl FnOnce(&mut Self) -> PyResult<T>,
    ) -> PyResult<T> {
        let addr = d.as_ptr() as usize;
        if let Some((_, outer)) = self.open.iter().find(|(a, _)| *a == addr) {
            return Err(SceneError::new_err(format!(
                "{}: reference cycle: this is the same dict as {} which contains it \
                 (share an object with {{'type': 'ref', 'id': ...}} instead)",
                loc_of(path),
                loc_of(outer)
            )));
        }
        if self.open.len() >= MAX_DEPTH {
            return Err(SceneError::new_err(format!(
                "{}: dicts are nested more than {MAX_DEPTH} levels deep (the limit of \
                 scene descriptions, as for XML elements)",
                loc_of(path)
            )));
        }
        self.open.push((addr, path.to_string()));
        let r = f(self);
        self.open.pop();
        r
    }

    /// Builds one object from its dict.
    fn object(
        &mut self,
        d: &Bound<'_, PyDict>,
        category: Category,
        kind: &str,
        path: &str,
        top: bool,
    ) -> PyResult<ObjectDesc> {
        let loc = loc_of(path);
        let mut props = Props::new(loc.clone());
        let mut id = None;
        // a snapshot: converting a value may run Python code that edits the dict
        for item in d.items().iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let key: String = k.extract().map_err(|_| {
                SceneError::new_err(format!(
                    "{loc}: dict keys must be strings, got {}",
                    k.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?;
            match key.as_str() {
                "type" => continue,
                "id" if category != Category::Scene => {
                    id = Some(v.extract::<String>().map_err(|_| {
                        SceneError::new_err(format!("{loc}: 'id' must be a string"))
                    })?);
                    continue;
                }
                _ => {}
            }
            check_key(&key, &loc)?;
            let child_path = join(path, &key);
            let value = self.value(&v, &child_path, top && category == Category::Scene)?;
            props
                .insert(&key, value, loc_of(&child_path))
                .map_err(crate::errors::to_py)?;
        }
        Ok(ObjectDesc {
            category,
            kind: kind.to_string(),
            id,
            props,
            loc,
        })
    }

    /// Converts one dict value at `path`; `top` marks the scene's direct children.
    fn value(&mut self, v: &Bound<'_, PyAny>, path: &str, top: bool) -> PyResult<Value> {
        let loc = loc_of(path);
        if let Ok(d) = v.cast::<PyDict>() {
            return self.enter(d, path, |w| w.dict_value(d, path, top));
        }
        if v.is_instance_of::<PyBool>() {
            return Ok(Value::Bool(v.extract()?));
        }
        if v.is_instance_of::<PyInt>() {
            return Ok(Value::Int(v.extract().map_err(|_| {
                SceneError::new_err(format!("{loc}: integer out of range"))
            })?));
        }
        if v.is_instance_of::<PyFloat>() {
            return Ok(Value::Float(finite(v.extract()?, &loc)?));
        }
        if v.is_instance_of::<PyString>() {
            return Ok(Value::String(v.extract()?));
        }
        if let Some(t) = transform_of(v, &loc.to_string())? {
            return Ok(Value::Transform(t));
        }
        if let Ok(c) = v.getattr("__heliograph_color__") {
            let c: [f64; 3] = c.extract()?;
            return Ok(Value::Rgb(finite3(&c, &loc)?));
        }
        if let Ok(px) = v.getattr("__heliograph_pixels__") {
            // a Bitmap: validated when it was made
            let a = to_host_array(self.py, &px)?;
            return Ok(Value::Pixels(Arc::new(pixels(a, &loc)?)));
        }
        self.array_value(v, &loc)
    }

    /// A list, tuple or array: 3 numbers are a vector, rank 2 or 3 an image.
    fn array_value(&mut self, v: &Bound<'_, PyAny>, loc: &Loc) -> PyResult<Value> {
        let array_like = v.is_instance_of::<PyList>()
            || v.is_instance_of::<PyTuple>()
            || v.hasattr("__dlpack__")?
            || v.hasattr("__array__")?;
        if !array_like {
            let ty = v.get_type().name()?;
            return Err(SceneError::new_err(format!(
                "{loc}: unsupported value of type {ty} (expected a dict, number, bool, string, list of 3 numbers, ScalarTransform4f, Bitmap or array)"
            )));
        }
        let a =
            to_host_array(self.py, v).map_err(|e| SceneError::new_err(format!("{loc}: {e}")))?;
        if a.shape == [3] {
            let c = [a.data[0] as f64, a.data[1] as f64, a.data[2] as f64];
            return Ok(Value::Vector(finite3(&c, loc)?));
        }
        if !matches!(a.shape.len(), 2 | 3) {
            return Err(SceneError::new_err(format!(
                "{loc}: an array value must be 3 numbers (a vector) or an image of shape (H, W) or (H, W, C), got {}",
                heliograph::desc::params::shape_str(&a.shape)
            )));
        }
        Ok(Value::Pixels(Arc::new(pixels(a, loc)?)))
    }

    /// A nested dict: an object, a reference or a colour.
    fn dict_value(&mut self, d: &Bound<'_, PyDict>, path: &str, top: bool) -> PyResult<Value> {
        let loc = loc_of(path);
        let kind = type_of(d, path)?;
        let only = |allowed: &[&str]| -> PyResult<()> {
            for k in d.keys() {
                let k: String = k.extract().unwrap_or_default();
                if !allowed.contains(&k.as_str()) {
                    return Err(SceneError::new_err(format!(
                        "{loc}: unexpected key \"{k}\" in a '{kind}' dict (allowed: {})",
                        allowed.join(", ")
                    )));
                }
            }
            Ok(())
        };
        match kind.as_str() {
            "ref" => {
                only(&["type", "id"])?;
                let id = d.get_item("id")?.and_then(|i| i.extract::<String>().ok());
                let id = id.ok_or_else(|| {
                    SceneError::new_err(format!("{loc}: a 'ref' needs a string 'id'"))
                })?;
                Ok(Value::Ref(id))
            }
            "spectrum" => {
                only(&["type", "value", "filename"])?;
                spectrum(d, &loc).map(Value::Spectrum)
            }
            "rgb" => {
                only(&["type", "value"])?;
                let v = d.get_item("value")?.ok_or_else(|| {
                    SceneError::new_err(format!("{loc}: a '{kind}' needs a 'value'"))
                })?;
                Ok(Value::Rgb(color(self.py, &v, &loc, &kind)?))
            }
            "scene" => Err(SceneError::new_err(format!(
                "{loc}: a scene cannot be nested"
            ))),
            _ => {
                let cat = category_of(&kind, &loc)?;
                let mut obj = self.object(d, cat, &kind, path, false)?;
                if top && obj.id.is_none() {
                    obj.id = path.rsplit('.').next().map(str::to_string);
                }
                Ok(Value::Object(Arc::new(obj)))
            }
        }
    }
}

/// Keys may not contain the parameter-path separator nor look generated.
fn check_key(key: &str, loc: &Loc) -> PyResult<()> {
    if key.contains('.') {
        return Err(SceneError::new_err(format!(
            "{loc}: the key \"{key}\" contains a '.', which separates parameter paths; use '_' instead"
        )));
    }
    if key.starts_with("_arg_") {
        return Err(SceneError::new_err(format!(
            "{loc}: the key \"{key}\" is reserved (names starting with \"_arg_\" are generated)"
        )));
    }
    Ok(())
}

/// Scene numbers are rendered in single precision: NaN, infinities and magnitudes
/// beyond `f32::MAX` are refused where a dict value is converted (as the XML parser
/// does), so every plugin sees finite numbers and every error names the key.
fn finite(v: f64, loc: &Loc) -> PyResult<f64> {
    if v.is_finite() && (v as f32).is_finite() {
        return Ok(v);
    }
    Err(SceneError::new_err(format!(
        "{loc}: {v:?} is not a finite number (NaN, infinities and magnitudes above \
         3.4e38, the single-precision limit, are not allowed)"
    )))
}

/// Three finite numbers (a colour or a vector).
fn finite3(c: &[f64; 3], loc: &Loc) -> PyResult<Vec3> {
    if c.iter().all(|&x| x.is_finite() && (x as f32).is_finite()) {
        return Ok(Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32));
    }
    Err(SceneError::new_err(format!(
        "{loc}: [{:?}, {:?}, {:?}] has a component that is not a finite number (NaN, \
         infinities and magnitudes above 3.4e38, the single-precision limit, are not allowed)",
        c[0], c[1], c[2]
    )))
}

fn color(py: Python<'_>, v: &Bound<'_, PyAny>, loc: &Loc, kind: &str) -> PyResult<Color> {
    if let Ok(x) = v.extract::<f64>() {
        return finite3(&[x; 3], loc);
    }
    let a = to_host_array(py, v).map_err(|e| SceneError::new_err(format!("{loc}: {e}")))?;
    if a.shape != [3] {
        return Err(SceneError::new_err(format!(
            "{loc}: a '{kind}' value must be a number or 3 numbers, got shape {}",
            heliograph::desc::params::shape_str(&a.shape)
        )));
    }
    let c = [a.data[0] as f64, a.data[1] as f64, a.data[2] as f64];
    finite3(&c, loc)
}

/// `{'type': 'spectrum', 'value': 0.5}`, `'value': [(400, 0.5), (700, 0.8)]` or
/// `'filename': 'x.spd'`; converted to RGB where a plugin reads it, as from XML.
fn spectrum(d: &Bound<'_, PyDict>, loc: &Loc) -> PyResult<Spectrum> {
    let err = |m: String| SceneError::new_err(format!("{loc}: 'spectrum': {m}"));
    let finite = |x: f64| x.is_finite() && (x as f32).is_finite();
    match (d.get_item("value")?, d.get_item("filename")?) {
        (Some(v), None) => {
            if let Ok(x) = v.extract::<f64>() {
                return match finite(x) {
                    true => Ok(Spectrum::Uniform(x)),
                    false => Err(err(format!("{x} is not a finite number"))),
                };
            }
            let pairs: Vec<(f64, f64)> = v.extract().map_err(|_| {
                err("'value' must be a number or a list of (wavelength, value) pairs".into())
            })?;
            if let Some(p) = pairs.iter().find(|(w, x)| !finite(*w) || !finite(*x)) {
                return Err(err(format!("{p:?} is not a pair of finite numbers")));
            }
            let (w, x) = pairs.into_iter().unzip();
            Spectrum::sampled(w, x).map_err(err)
        }
        (None, Some(f)) => {
            let f: String = f
                .extract()
                .map_err(|_| err("'filename' must be a string".into()))?;
            let text =
                std::fs::read_to_string(&f).map_err(|e| err(format!("cannot read {f}: {e}")))?;
            Spectrum::parse_spd(&text).map_err(|m| err(format!("{f}: {m}")))
        }
        _ => Err(err(
            "needs either a 'value' or a 'filename' (not both)".into()
        )),
    }
}

/// A `ScalarTransform4f` (anything with a `__heliograph_matrix__` of 4×4 rows);
/// `what` starts the error message (the key path or parameter).
pub fn transform_of(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<Transform>> {
    let Ok(m) = v.getattr("__heliograph_matrix__") else {
        return Ok(None);
    };
    let rows: [[f64; 4]; 4] = m.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "{what}: __heliograph_matrix__ must be 4 rows of 4 floats"
        ))
    })?;
    let flat = rows.as_flattened();
    if let Some(x) = flat
        .iter()
        .find(|x| !(x.is_finite() && (**x as f32).is_finite()))
    {
        return Err(SceneError::new_err(format!(
            "{what}: the transform matrix has an entry {x:?} that is not a finite number \
             (NaN, infinities and magnitudes above 3.4e38 are not allowed)"
        )));
    }
    let rows = rows.map(|r| r.map(|x| x as f32));
    Transform::from_rows(rows).map(Some).ok_or_else(|| {
        SceneError::new_err(format!(
            "{what}: the transform matrix is singular (not invertible) or its inverse overflows"
        ))
    })
}

/// Validates an image array: rank 2 or 3, 1/3/4 channels, float or uint8, finite.
/// uint8 data is 8-bit sRGB (decoded to linear, as Mitsuba does for 8-bit bitmaps).
pub fn pixels(a: crate::dlpack::HostArray, loc: &Loc) -> PyResult<PixelArray> {
    let (h, w, c) = match a.shape[..] {
        [h, w] => (h, w, 1),
        [h, w, c] => (h, w, c),
        _ => {
            return Err(SceneError::new_err(format!(
                "{loc}: a bitmap array must have shape (H, W) or (H, W, C), got {}",
                heliograph::desc::params::shape_str(&a.shape)
            )))
        }
    };
    if !matches!(c, 1 | 3 | 4) || h == 0 || w == 0 {
        return Err(SceneError::new_err(format!(
            "{loc}: a bitmap needs a non-empty image with 1, 3 or 4 channels, got shape {}",
            heliograph::desc::params::shape_str(&a.shape)
        )));
    }
    let (is_u8, is_float, dtype) = (a.is_u8(), a.is_float(), a.dtype_name());
    let mut data = a.data;
    if is_u8 {
        for (i, v) in data.iter_mut().enumerate() {
            let alpha = c == 4 && i % 4 == 3;
            let x = *v / 255.0;
            *v = if alpha {
                x
            } else {
                heliograph::io::srgb_to_linear(x)
            };
        }
    } else if !is_float {
        return Err(SceneError::new_err(format!(
            "{loc}: bitmap arrays must be float16/32/64 or uint8, got {dtype}"
        )));
    }
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(SceneError::new_err(format!(
            "{loc}: the bitmap array contains NaN or infinite values (first at flat index {i})"
        )));
    }
    Ok(PixelArray {
        width: w,
        height: h,
        channels: c,
        data,
    })
}
