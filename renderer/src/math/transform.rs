//! Affine transforms with a cached inverse, built the way Mitsuba's
//! `<transform>` tag and `ScalarTransform4f` build them.
//!
//! The matrix builders and the maps of points, vectors and normals are written once,
//! for both precisions: [`single`] (f32) serves scene files and the renderer through
//! [`Transform`]; [`double`] (f64) serves the Python package's `ScalarTransform4f`,
//! which keeps its matrices in double precision until a scene takes them.

use glam::{Mat3, Mat4, Vec3};

/// The builders and maps over one precision's glam types.
macro_rules! affine {
    ($(#[$doc:meta])* $name:ident: $s:ty, $V:ty, $M3:ty, $M:ty) => {
        $(#[$doc])*
        pub mod $name {
            use glam::DVec3;

            /// A vector in double precision (exact).
            fn wide(v: $V) -> DVec3 {
                DVec3::new(v.x as f64, v.y as f64, v.z as f64)
            }

            /// A double-precision vector in this precision (rounded).
            fn narrow(v: DVec3) -> $V {
                <$V>::new(v.x as $s, v.y as $s, v.z as $s)
            }

            /// The matrix of 4 rows of 4 values, as scene files and Python write it.
            pub fn from_rows(rows: [[$s; 4]; 4]) -> $M {
                <$M>::from_cols_array_2d(&rows).transpose()
            }

            /// The 4 rows of `m`.
            pub fn to_rows(m: $M) -> [[$s; 4]; 4] {
                m.transpose().to_cols_array_2d()
            }

            /// A translation by `v`.
            pub fn translate(v: $V) -> $M {
                <$M>::from_translation(v)
            }

            /// A scale by `v`; `None` if a factor is zero.
            pub fn scale(v: $V) -> Option<$M> {
                (!v.cmpeq(<$V>::ZERO).any()).then(|| <$M>::from_scale(v))
            }

            /// A right-handed rotation by `angle_deg` degrees about `axis`, as Mitsuba's
            /// `rotate`; `None` for a zero axis or an angle that is not finite.
            pub fn rotate(axis: $V, angle_deg: $s) -> Option<$M> {
                // in double precision: the length of a huge finite axis overflows f32
                let axis = narrow(wide(axis).normalize_or_zero());
                if axis == <$V>::ZERO || !angle_deg.is_finite() {
                    return None;
                }
                Some(<$M>::from_axis_angle(axis, angle_deg.to_radians()))
            }

            /// Mitsuba's `look_at`: local +z looks at `target`, +y is `up`, +x is
            /// "left". `None` when `origin == target` or `up` is parallel to the view.
            pub fn look_at(origin: $V, target: $V, up: $V) -> Option<$M> {
                // in double precision: `target - origin` and the cross product of huge
                // finite inputs overflow f32, their directions do not
                let dir = (wide(target) - wide(origin)).normalize_or_zero();
                let left = wide(up).cross(dir).normalize_or_zero();
                if dir == DVec3::ZERO || left == DVec3::ZERO {
                    return None;
                }
                let (dir, left) = (narrow(dir), narrow(left));
                let new_up = dir.cross(left);
                Some(<$M>::from_cols(
                    left.extend(0.0),
                    new_up.extend(0.0),
                    dir.extend(0.0),
                    origin.extend(1.0),
                ))
            }

            /// `m`'s inverse; `None` when `m` is singular or not finite.
            pub fn inverse(m: $M) -> Option<$M> {
                let det = m.determinant();
                if !det.is_finite() || det.abs() < 1e-30 {
                    return None;
                }
                let inv = m.inverse();
                inv.is_finite().then_some(inv)
            }

            /// Point `p` mapped by `m` (divided by w unless w is 0 or 1).
            pub fn point(m: $M, p: $V) -> $V {
                let r = m * p.extend(1.0);
                if r.w != 1.0 && r.w != 0.0 {
                    r.truncate() / r.w
                } else {
                    r.truncate()
                }
            }

            /// Direction `v` mapped by `m` (no translation).
            pub fn vector(m: $M, v: $V) -> $V {
                <$M3>::from_mat4(m) * v
            }

            /// Normal `n` mapped by the inverse transpose; `inv` is the matrix's
            /// inverse. The result is not normalised.
            pub fn normal(inv: $M, n: $V) -> $V {
                <$M3>::from_mat4(inv).transpose() * n
            }
        }
    };
}

affine!(
    /// The builders and maps in single precision (scene files, the renderer).
    single: f32, glam::Vec3, glam::Mat3, glam::Mat4
);
affine!(
    /// The builders and maps in double precision (the Python `ScalarTransform4f`).
    double: f64, glam::DVec3, glam::DMat3, glam::DMat4
);

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
        Some(Transform {
            m,
            inv: single::inverse(m)?,
        })
    }

    /// A translation.
    pub fn translate(v: Vec3) -> Self {
        Transform {
            m: single::translate(v),
            inv: single::translate(-v),
        }
    }

    /// A scale; `None` if a factor is zero.
    pub fn scale(v: Vec3) -> Option<Self> {
        single::scale(v).and_then(Transform::from_matrix)
    }

    /// A rotation by `angle_deg` degrees about `axis` (right-handed), as Mitsuba's `rotate`.
    pub fn rotate(axis: Vec3, angle_deg: f32) -> Option<Self> {
        let m = single::rotate(axis, angle_deg)?;
        Some(Transform {
            m,
            inv: m.transpose(),
        })
    }

    /// Mitsuba's `look_at`: local +z looks at `target`, +y is `up`, +x is "left".
    /// `None` when `origin == target` or `up` is parallel to the view direction.
    pub fn look_at(origin: Vec3, target: Vec3, up: Vec3) -> Option<Self> {
        single::look_at(origin, target, up).and_then(Transform::from_matrix)
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
        single::point(self.m, p)
    }

    /// Transforms a direction (ignores translation).
    pub fn vector(&self, v: Vec3) -> Vec3 {
        single::vector(self.m, v)
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
        single::normal(self.inv, n)
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
        single::to_rows(self.m)
    }

    /// From row-major 4×4 values; `None` if singular.
    pub fn from_rows(r: [[f32; 4]; 4]) -> Option<Self> {
        Transform::from_matrix(single::from_rows(r))
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
    fn double_precision_builders_are_the_single_ones_to_rounding() {
        // a quarter turn about z takes x to y (to f64 rounding)
        let r = double::rotate(glam::DVec3::Z, 90.0).unwrap();
        let y = double::vector(r, glam::DVec3::X);
        assert!((y - glam::DVec3::Y).length() < 1e-15, "{y}");
        let (o, t, up) = (
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(-0.5, 0.25, 0.0),
            Vec3::Y,
        );
        let wide = |v: Vec3| v.as_dvec3();
        let pairs = [
            (
                single::look_at(o, t, up).unwrap(),
                double::look_at(wide(o), wide(t), wide(up)).unwrap(),
            ),
            (
                single::rotate(o, 33.0).unwrap(),
                double::rotate(wide(o), 33.0).unwrap(),
            ),
            (single::scale(o).unwrap(), double::scale(wide(o)).unwrap()),
        ];
        for (s, d) in pairs {
            let inv = double::inverse(d).unwrap();
            assert!((d * inv).abs_diff_eq(glam::DMat4::IDENTITY, 1e-14));
            assert!(s.abs_diff_eq(d.as_mat4(), 1e-6), "{s} vs {d}");
            let p = glam::DVec3::new(0.3, -0.7, 2.0);
            let back = double::point(inv, double::point(d, p));
            assert!((back - p).length() < 1e-14);
        }
        assert!(double::scale(glam::DVec3::new(1.0, 0.0, 1.0)).is_none());
        assert!(double::inverse(glam::DMat4::ZERO).is_none());
        assert!(double::rotate(glam::DVec3::ZERO, 1.0).is_none());
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
