//! Affine transforms with a cached inverse, built the way Mitsuba's
//! `<transform>` tag and `ScalarTransform4f` build them.

use glam::{DVec3, Mat3, Mat4, Vec3, Vec4};

/// A 4×4 transform and its inverse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// The matrix (column-major, acting on column vectors).
    pub m: Mat4,
    /// Its inverse.
    pub inv: Mat4,
}

impl Default for Transform {
    fn default() -> Self {
        Transform::IDENTITY
    }
}

impl Transform {
    /// The identity.
    pub const IDENTITY: Transform = Transform {
        m: Mat4::IDENTITY,
        inv: Mat4::IDENTITY,
    };

    /// Wraps a matrix; `None` when it is singular or not finite.
    pub fn from_matrix(m: Mat4) -> Option<Self> {
        let det = m.determinant();
        if !det.is_finite() || det.abs() < 1e-30 {
            return None;
        }
        let inv = m.inverse();
        if !inv.is_finite() {
            return None;
        }
        Some(Transform { m, inv })
    }

    /// A translation.
    pub fn translate(v: Vec3) -> Self {
        Transform {
            m: Mat4::from_translation(v),
            inv: Mat4::from_translation(-v),
        }
    }

    /// A scale; `None` if a factor is zero.
    pub fn scale(v: Vec3) -> Option<Self> {
        Transform::from_matrix(Mat4::from_scale(v))
    }

    /// A rotation by `angle_deg` degrees about `axis` (right-handed), as Mitsuba's `rotate`.
    pub fn rotate(axis: Vec3, angle_deg: f32) -> Option<Self> {
        // in double precision: the length of a huge finite axis overflows f32
        let axis = axis.as_dvec3().normalize_or_zero().as_vec3();
        if axis == Vec3::ZERO || !angle_deg.is_finite() {
            return None;
        }
        let m = Mat4::from_axis_angle(axis, angle_deg.to_radians());
        Some(Transform {
            m,
            inv: m.transpose(),
        })
    }

    /// Mitsuba's `look_at`: local +z looks at `target`, +y is `up`, +x is "left".
    /// `None` when `origin == target` or `up` is parallel to the view direction.
    pub fn look_at(origin: Vec3, target: Vec3, up: Vec3) -> Option<Self> {
        // in double precision: `target - origin` and the cross product of huge
        // finite inputs overflow f32, their directions do not
        let dir = (target.as_dvec3() - origin.as_dvec3()).normalize_or_zero();
        let left = up.as_dvec3().cross(dir).normalize_or_zero();
        if dir == DVec3::ZERO || left == DVec3::ZERO {
            return None;
        }
        let (dir, left) = (dir.as_vec3(), left.as_vec3());
        let new_up = dir.cross(left);
        let m = Mat4::from_cols(
            left.extend(0.0),
            new_up.extend(0.0),
            dir.extend(0.0),
            origin.extend(1.0),
        );
        Transform::from_matrix(m)
    }

    /// `self` applied after `first` (matrix product `self * first`).
    pub fn then_after(&self, first: &Transform) -> Transform {
        Transform {
            m: self.m * first.m,
            inv: first.inv * self.inv,
        }
    }

    /// Transforms a point.
    pub fn point(&self, p: Vec3) -> Vec3 {
        let r = self.m * p.extend(1.0);
        if r.w != 1.0 && r.w != 0.0 {
            r.truncate() / r.w
        } else {
            r.truncate()
        }
    }

    /// Transforms a direction (ignores translation).
    pub fn vector(&self, v: Vec3) -> Vec3 {
        Mat3::from_mat4(self.m) * v
    }

    /// Whether the linear part changes some length: a basis vector's image is longer or
    /// shorter than 1 by more than 1e-3 (Mitsuba's `has_scale`).
    pub fn has_scale(&self) -> bool {
        let m = Mat3::from_mat4(self.m);
        [m.x_axis, m.y_axis, m.z_axis]
            .iter()
            .any(|c| (c.length_squared() - 1.0).abs() > 1e-3)
    }

    /// Transforms a normal (inverse transpose); the result is not normalised.
    pub fn normal(&self, n: Vec3) -> Vec3 {
        Mat3::from_mat4(self.inv).transpose() * n
    }

    /// The inverse transform.
    pub fn inverse(&self) -> Transform {
        Transform {
            m: self.inv,
            inv: self.m,
        }
    }

    /// Row-major 4×4 values, as written in scene files.
    pub fn to_rows(&self) -> [[f32; 4]; 4] {
        let t = self.m.transpose();
        [
            t.x_axis.into(),
            t.y_axis.into(),
            t.z_axis.into(),
            t.w_axis.into(),
        ]
    }

    /// From row-major 4×4 values; `None` if singular.
    pub fn from_rows(r: [[f32; 4]; 4]) -> Option<Self> {
        let m = Mat4::from_cols(
            Vec4::from(r[0]),
            Vec4::from(r[1]),
            Vec4::from(r[2]),
            Vec4::from(r[3]),
        )
        .transpose();
        Transform::from_matrix(m)
    }

    /// Whether the transform flips orientation (negative determinant of the linear part).
    pub fn flips_handedness(&self) -> bool {
        Mat3::from_mat4(self.m).determinant() < 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_at_matches_mitsuba_convention() {
        // Camera at (0,0,5) looking at the origin: +z maps to -z world, "left" = +x local.
        let t = Transform::look_at(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y).unwrap();
        assert!((t.vector(Vec3::Z) - Vec3::new(0.0, 0.0, -1.0)).length() < 1e-6);
        assert!((t.vector(Vec3::Y) - Vec3::Y).length() < 1e-6);
        // left = up × dir = (0,1,0) × (0,0,-1) = (-1,0,0)
        assert!((t.vector(Vec3::X) - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-6);
        assert!((t.point(Vec3::ZERO) - Vec3::new(0.0, 0.0, 5.0)).length() < 1e-6);
        assert!(Transform::look_at(Vec3::ZERO, Vec3::ZERO, Vec3::Y).is_none());
    }

    #[test]
    fn rows_round_trip_and_inverse() {
        let t = Transform::translate(Vec3::new(1.0, 2.0, 3.0))
            .then_after(&Transform::rotate(Vec3::Z, 30.0).unwrap())
            .then_after(&Transform::scale(Vec3::new(2.0, 1.0, 0.5)).unwrap());
        let r = Transform::from_rows(t.to_rows()).unwrap();
        assert!((r.m - t.m).abs_diff_eq(Mat4::ZERO, 1e-6));
        let p = Vec3::new(0.3, -0.2, 0.9);
        assert!((t.inverse().point(t.point(p)) - p).length() < 1e-5);
        // normals stay perpendicular to transformed tangents
        let (n, tan) = (Vec3::Z, Vec3::X);
        assert!(t.normal(n).dot(t.vector(tan)).abs() < 1e-5);
    }
}
