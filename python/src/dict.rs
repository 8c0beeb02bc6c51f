//! Mitsuba's dict scene format → [`SceneDesc`], built directly from the Python
//! objects (no XML round trip): this walks the objects; the format's rules and checks
//! are [`heliograph::desc::dict`]'s.
//!
//! Values: `bool`, `int`, `float`, `str`; `{'type': 'rgb', 'value': v}`;
//! `{'type': 'spectrum', 'value': v}` (a number or (wavelength, value) pairs, or
//! `'filename'` of an `.spd` file); lists/arrays of 3 numbers are vectors;
//! `ScalarColor3f` is a colour; `ScalarTransform4f` is a transform; `Bitmap`s, NumPy
//! arrays and tensors of rank 2 or 3 are in-memory pixels under the key the dict used.

use std::sync::Arc;

use heliograph::catalog::category_of;
use heliograph::desc::dict::{self, loc_of, Nesting, SpectrumSource, ValueDict};
use heliograph::desc::{Category, ObjectDesc, PixelArray, Props, SceneDesc, Value};
use heliograph::math::spectrum::Spectrum;
use heliograph::math::Transform;
use heliograph::tensor::HostArray;
use heliograph::{Error, Loc};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::to_py;
use crate::tensor::to_host_array;

/// A scene error at `loc`.
fn err(loc: &Loc, msg: impl Into<String>) -> PyErr {
    to_py(Error::parse(loc, msg))
}

/// Converts a scene dict.
pub fn load_dict(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<SceneDesc> {
    let kind = type_of(d, "")?;
    if kind != "scene" {
        return Err(err(
            &loc_of(""),
            format!("load_dict() takes a scene dict ('type': 'scene'), got type \"{kind}\""),
        ));
    }
    let root = object_of(py, d, Category::Scene, "scene", true)?;
    Ok(SceneDesc::new(Arc::new(root)))
}

/// Converts the dict of one plugin of `category` (the filter of `Bitmap.resample`).
pub fn load_plugin(
    py: Python<'_>,
    d: &Bound<'_, PyDict>,
    category: Category,
) -> PyResult<ObjectDesc> {
    let kind = type_of(d, "")?;
    object_of(py, d, category, &kind, false)
}

/// Converts dict `d`, an object of `category` and type `kind` (`top`: the scene).
fn object_of(
    py: Python<'_>,
    d: &Bound<'_, PyDict>,
    category: Category,
    kind: &str,
    top: bool,
) -> PyResult<ObjectDesc> {
    let mut walk = Walk {
        py,
        open: Nesting::default(),
    };
    walk.enter(d, "", |w| w.object(d, category, kind, "", top))
}

fn type_of(d: &Bound<'_, PyDict>, path: &str) -> PyResult<String> {
    let Some(t) = d.get_item("type")? else {
        return Err(err(&loc_of(path), "the dict has no 'type' entry"));
    };
    t.extract::<String>()
        .map_err(|_| err(&loc_of(path), "'type' must be a string"))
}

/// One conversion.
struct Walk<'py> {
    py: Python<'py>,
    /// The dicts on the current path, by address.
    open: Nesting,
}

impl<'py> Walk<'py> {
    /// Runs `f` with `d` on the open path (see [`Nesting::enter`]).
    fn enter<T>(
        &mut self,
        d: &Bound<'_, PyDict>,
        path: &str,
        f: impl FnOnce(&mut Self) -> PyResult<T>,
    ) -> PyResult<T> {
        self.open.enter(d.as_ptr() as usize, path).map_err(to_py)?;
        let r = f(self);
        self.open.leave();
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
                let repr = k.repr().map(|r| r.to_string()).unwrap_or_default();
                err(&loc, format!("dict keys must be strings, got {repr}"))
            })?;
            match key.as_str() {
                "type" => continue,
                "id" if category != Category::Scene => {
                    id = Some(
                        v.extract::<String>()
                            .map_err(|_| err(&loc, "'id' must be a string"))?,
                    );
                    continue;
                }
                _ => {}
            }
            dict::check_key(&key, &loc).map_err(to_py)?;
            let child_path = dict::join(path, &key);
            let value = self.value(&v, &child_path, top && category == Category::Scene)?;
            props
                .insert(&key, value, loc_of(&child_path))
                .map_err(to_py)?;
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
            return Ok(Value::Int(
                v.extract().map_err(|_| err(&loc, "integer out of range"))?,
            ));
        }
        if v.is_instance_of::<PyFloat>() {
            return Ok(Value::Float(
                dict::finite(v.extract()?, &loc).map_err(to_py)?,
            ));
        }
        if v.is_instance_of::<PyString>() {
            return Ok(Value::String(v.extract()?));
        }
        if let Some(t) = transform_of(v, &loc.to_string())? {
            return Ok(Value::Transform(t));
        }
        if let Ok(c) = v.getattr("__heliograph_color__") {
            let c: [f64; 3] = c.extract()?;
            return Ok(Value::Rgb(dict::finite3(&c, &loc).map_err(to_py)?));
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
            return Err(err(loc, format!(
                "unsupported value of type {ty} (expected a dict, number, bool, string, list of 3 numbers, ScalarTransform4f, Bitmap or array)"
            )));
        }
        let a = to_host_array(self.py, v).map_err(|e| err(loc, e.to_string()))?;
        let texels = a.texels();
        dict::array_value(&a.shape, a.data, texels, loc).map_err(to_py)
    }

    /// A nested dict: an object, a reference or a colour.
    fn dict_value(&mut self, d: &Bound<'_, PyDict>, path: &str, top: bool) -> PyResult<Value> {
        let loc = loc_of(path);
        let kind = type_of(d, path)?;
        let keys: Vec<String> = d
            .keys()
            .iter()
            .map(|k| k.extract().unwrap_or_default())
            .collect();
        match dict::value_dict(&kind, &keys, &loc).map_err(to_py)? {
            Some(ValueDict::Ref) => {
                let id = d.get_item("id")?.and_then(|i| i.extract::<String>().ok());
                let id = id.ok_or_else(|| err(&loc, "a 'ref' needs a string 'id'"))?;
                Ok(Value::Ref(id))
            }
            Some(ValueDict::Spectrum) => spectrum(d, &loc).map(Value::Spectrum),
            Some(ValueDict::Rgb) => {
                let v = d
                    .get_item("value")?
                    .ok_or_else(|| err(&loc, format!("a '{kind}' needs a 'value'")))?;
                if let Ok(x) = v.extract::<f64>() {
                    return Ok(Value::Rgb(dict::finite3(&[x; 3], &loc).map_err(to_py)?));
                }
                let a = to_host_array(self.py, &v).map_err(|e| err(&loc, e.to_string()))?;
                Ok(Value::Rgb(
                    dict::rgb(&a.shape, &a.data, &loc).map_err(to_py)?,
                ))
            }
            None => {
                let cat = category_of(&kind, &loc).map_err(to_py)?;
                let mut obj = self.object(d, cat, &kind, path, false)?;
                if top && obj.id.is_none() {
                    obj.id = path.rsplit('.').next().map(str::to_string);
                }
                Ok(Value::Object(Arc::new(obj)))
            }
        }
    }
}

/// `{'type': 'spectrum', 'value': 0.5}`, `'value': [(400, 0.5), (700, 0.8)]` or
/// `'filename': 'x.spd'`.
fn spectrum(d: &Bound<'_, PyDict>, loc: &Loc) -> PyResult<Spectrum> {
    let bad = |m: &str| to_py(dict::spectrum_error(loc, m));
    let source = match (d.get_item("value")?, d.get_item("filename")?) {
        (Some(v), None) => match v.extract::<f64>() {
            Ok(x) => SpectrumSource::Uniform(x),
            Err(_) => SpectrumSource::Pairs(v.extract().map_err(|_| {
                bad("'value' must be a number or a list of (wavelength, value) pairs")
            })?),
        },
        (None, Some(f)) => SpectrumSource::File(
            f.extract()
                .map_err(|_| bad("'filename' must be a string"))?,
        ),
        _ => return Err(bad("needs either a 'value' or a 'filename' (not both)")),
    };
    dict::spectrum(source, loc).map_err(to_py)
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
    dict::transform(rows, what).map(Some).map_err(to_py)
}

/// An image array, validated (see [`dict::pixels`]).
pub fn pixels(a: HostArray, loc: &Loc) -> PyResult<PixelArray> {
    let texels = a.texels();
    dict::pixels(&a.shape, a.data, texels, loc).map_err(to_py)
}
