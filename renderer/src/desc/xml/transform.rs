//! `<transform name="...">` and its operations. Each operation is applied after
//! the ones before it: `M = op_n · … · op_1`, as in Mitsuba.

use std::collections::HashMap;

use glam::{Mat3, Mat4};

use super::elem::{Elem, Source};
use super::values::{parse_f32, parse_floats, parse_vec3, xyz};
use crate::error::{Error, Loc, Result};
use crate::math::{Frame, Transform, Vec3};

/// The tags allowed inside `<transform>`.
pub(super) const OPS: [&str; 5] = ["translate", "rotate", "scale", "matrix", "lookat"];

/// Parses a `<transform>` element: its name and the composed transform.
pub(super) fn parse_transform(
    src: &Source,
    el: &Elem,
    params: &HashMap<String, String>,
) -> Result<(String, Transform)> {
    el.allow(&["name"])?;
    let name = el.name_attr()?.to_string();
    let mut acc = Transform::IDENTITY;
    for child in el.node.children() {
        if child.is_comment() || child.is_pi() {
            continue;
        }
        if child.is_text() {
            super::check_blank_text(src, child)?;
            continue;
        }
        let op = Elem::new(src, child, params)?;
        if !OPS.contains(&op.tag) {
            return Err(Error::parse(
                &op.loc,
                format!(
                    "<{}> is not allowed inside <transform> (allowed: {})",
                    op.tag,
                    OPS.join(", ")
                ),
            ));
        }
        let t = parse_op(&op)
            .map_err(|(loc, m)| Error::param(&loc, &name, format!("<{}>: {m}", op.tag)))?;
        acc = t.then_after(&acc);
        if !(acc.m.is_finite() && acc.inv.is_finite()) {
            return Err(Error::param(
                &op.loc,
                &name,
                format!("<{}>: the composed transform overflows", op.tag),
            ));
        }
    }
    Ok((name, acc))
}

/// A location and message, wrapped by the caller with the transform's name.
type OpResult<T> = std::result::Result<T, (Loc, String)>;

fn parse_op(op: &Elem) -> OpResult<Transform> {
    let allowed: &[&str] = match op.tag {
        "translate" | "scale" => &["value", "x", "y", "z"],
        "rotate" => &["value", "x", "y", "z", "angle"],
        "matrix" => &["value"],
        _ => &["origin", "target", "up"],
    };
    op.allow(allowed).map_err(split_err)?;
    let vec = |missing: f32| {
        xyz(op, missing).map_err(|(attr, m)| {
            let loc = op.get(&attr).map_or(op.loc.clone(), |a| a.loc.clone());
            (loc, m)
        })
    };
    match op.tag {
        "translate" => Ok(Transform::translate(vec(0.0)?)),
        "scale" => {
            let s = vec(1.0)?;
            Transform::scale(s).ok_or_else(|| {
                (
                    op.loc.clone(),
                    format!("degenerate scale {s} (factors must be non-zero)"),
                )
            })
        }
        "rotate" => rotate(op, vec(0.0)?),
        "matrix" => matrix(op),
        _ => lookat(op),
    }
}

fn split_err(e: Error) -> (Loc, String) {
    match e {
        Error::Parse { loc, msg } => (loc, msg),
        other => (Loc::default(), other.to_string()),
    }
}

fn rotate(op: &Elem, axis: Vec3) -> OpResult<Transform> {
    let a = op.req("angle").map_err(split_err)?;
    let angle = parse_f32(&a.value).map_err(|m| (a.loc.clone(), m))?;
    Transform::rotate(axis, angle).ok_or_else(|| {
        (
            op.loc.clone(),
            "the rotation axis must be non-zero (give x, y and/or z)".to_string(),
        )
    })
}

/// 16 numbers (4×4) or 9 (3×3 linear part), row-major.
fn matrix(op: &Elem) -> OpResult<Transform> {
    let a = op.req("value").map_err(split_err)?;
    let v = parse_floats(&a.value, &[16, 9], None).map_err(|m| (a.loc.clone(), m))?;
    let m = if v.len() == 16 {
        Mat4::from_cols_slice(&v).transpose()
    } else {
        Mat4::from_mat3(Mat3::from_cols_slice(&v).transpose())
    };
    Transform::from_matrix(m).ok_or_else(|| {
        (
            a.loc.clone(),
            "the matrix is singular (not invertible)".to_string(),
        )
    })
}

/// `origin`, `target` and an optional `up`; without `up` (or with a zero one) a
/// vector perpendicular to the view direction is chosen, as Mitsuba does.
fn lookat(op: &Elem) -> OpResult<Transform> {
    let point = |name: &str| -> OpResult<Vec3> {
        let a = op.req(name).map_err(split_err)?;
        parse_vec3(&a.value).map_err(|m| (a.loc.clone(), format!("\"{name}\": {m}")))
    };
    let origin = point("origin")?;
    let target = point("target")?;
    // a unit vector (computed in double precision, so far-apart points do not overflow)
    let dir = (target.as_dvec3() - origin.as_dvec3())
        .normalize_or_zero()
        .as_vec3();
    if dir == Vec3::ZERO {
        return Err((
            op.loc.clone(),
            format!("origin and target are the same point {origin}"),
        ));
    }
    let mut up = match op.get("up") {
        Some(_) => point("up")?,
        None => Vec3::ZERO,
    };
    if up.length_squared() == 0.0 {
        up = Frame::from_normal(dir).s;
    }
    Transform::look_at(origin, target, up).ok_or_else(|| {
        (
            op.loc.clone(),
            format!("up {up} is parallel to the viewing direction {dir}"),
        )
    })
}
