//! The matrices of `ScalarTransform4f` (`python/heliograph/_transform.py`): built,
//! composed, inverted and applied by the core's double-precision transforms
//! ([`heliograph::math::transform::double`]). A matrix crosses as 4 rows of 4 numbers;
//! `None` says the core refused it (a zero scale or axis, a singular matrix), and the
//! package words the error.

use glam::DVec3;
use heliograph::math::transform::double::{self, from_rows as matrix, to_rows as rows};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

type Rows = [[f64; 4]; 4];

/// A translation by `v`.
#[pyfunction]
pub fn _transform_translate(v: [f64; 3]) -> Rows {
    rows(double::translate(DVec3::from(v)))
}

/// A scale by `v`; `None` if a factor is zero.
#[pyfunction]
pub fn _transform_scale(v: [f64; 3]) -> Option<Rows> {
    double::scale(DVec3::from(v)).map(rows)
}

/// A rotation by `angle` degrees about `axis`; `None` for a zero axis or infinite angle.
#[pyfunction]
pub fn _transform_rotate(axis: [f64; 3], angle: f64) -> Option<Rows> {
    double::rotate(DVec3::from(axis), angle).map(rows)
}

/// Mitsuba's `look_at`; `None` when `up` is parallel to the view (or the points coincide).
#[pyfunction]
pub fn _transform_look_at(origin: [f64; 3], target: [f64; 3], up: [f64; 3]) -> Option<Rows> {
    let v = DVec3::from;
    double::look_at(v(origin), v(target), v(up)).map(rows)
}

/// `a` after `b` (the product `a b`).
#[pyfunction]
pub fn _transform_compose(a: Rows, b: Rows) -> Rows {
    rows(matrix(a) * matrix(b))
}

/// The inverse; `None` when the matrix is singular.
#[pyfunction]
pub fn _transform_inverse(a: Rows) -> Option<Rows> {
    double::inverse(matrix(a)).map(rows)
}

/// The `points` mapped by `a` as points, vectors or normals (`kind`); `None` when a
/// normal meets a singular matrix.
#[pyfunction]
pub fn _transform_apply(
    a: Rows,
    kind: &str,
    points: Vec<[f64; 3]>,
) -> PyResult<Option<Vec<[f64; 3]>>> {
    let m = matrix(a);
    let inv = match kind {
        "point" | "vector" => m,
        "normal" => match double::inverse(m) {
            Some(inv) => inv,
            None => return Ok(None),
        },
        _ => {
            return Err(PyValueError::new_err(format!(
                "ScalarTransform4f: unknown kind \"{kind}\" (point, vector or normal)"
            )))
        }
    };
    let map = |p: [f64; 3]| {
        let p = DVec3::from(p);
        match kind {
            "point" => double::point(m, p),
            "vector" => double::vector(m, p),
            _ => double::normal(inv, p),
        }
        .to_array()
    };
    Ok(Some(points.into_iter().map(map).collect()))
}

/// Adds the functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_transform_translate, m)?)?;
    m.add_function(wrap_pyfunction!(_transform_scale, m)?)?;
    m.add_function(wrap_pyfunction!(_transform_rotate, m)?)?;
    m.add_function(wrap_pyfunction!(_transform_look_at, m)?)?;
    m.add_function(wrap_pyfunction!(_transform_compose, m)?)?;
    m.add_function(wrap_pyfunction!(_transform_inverse, m)?)?;
    m.add_function(wrap_pyfunction!(_transform_apply, m)?)?;
    Ok(())
}
