//! `rectangle`: the square `[-1, 1]²` in the z = 0 plane, normal +z, placed by `to_world`.
//!
//! | parameter          | type      | default  | meaning                              |
//! |----------------|-----------|----------|--------------------------------------|
//! | `to_world`     | transform | identity | object-to-world transform            |
//! | `flip_normals` | boolean   | false    | normal points along -z (object space)|
//!
//! Texture coordinates as Mitsuba 3: `uv = ((x + 1) / 2, (y + 1) / 2)` for the
//! object-space point (x, y, 0); the normal is `to_world`'s inverse transpose
//! applied to +z.
//!
//! ```xml
//! <shape type="rectangle">
//!     <transform name="to_world">
//!         <scale value="2"/>
//!         <rotate x="1" angle="-90"/>
//!     </transform>
//!     <emitter type="area"><rgb name="radiance" value="10"/></emitter>
//! </shape>
//! ```

use glam::Affine3A;

use super::record::{affine_cols, FlatShape};
use super::{normalize_or, AnyShape, Built, Geometry, Hit, PositionSample, Prim, ShapeRecord};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::{Aabb, Ray, Transform, Vec2, Vec3, RAY_TMIN};
use crate::plugin::BuildContext;

/// A planar shape's placement: object ↔ world transforms, world normal and area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Planar {
    /// Object → world.
    pub to_world: Affine3A,
    /// World → object.
    pub to_local: Affine3A,
    /// World unit normal (after `flip_normals`).
    pub n: Vec3,
    /// Rows x, y, z of `to_local` as (linear part, translation), for [`Self::cross_plane`].
    rows: [(Vec3, f32); 3],
}

impl Planar {
    /// From a transform; `None` when it squashes the plane.
    pub fn new(to_world: &Transform, flip: bool) -> Option<Self> {
        let n = normalize_or(to_world.normal(Vec3::Z), Vec3::ZERO);
        let tw = Affine3A::from_mat4(to_world.m);
        let tl = Affine3A::from_mat4(to_world.inv);
        let ok = n != Vec3::ZERO && tw.is_finite() && tl.is_finite();
        let m = to_world.inv;
        let row = |i: usize| {
            (
                Vec3::new(m.x_axis[i], m.y_axis[i], m.z_axis[i]),
                m.w_axis[i],
            )
        };
        ok.then_some(Planar {
            to_world: tw,
            to_local: tl,
            n: if flip { -n } else { n },
            rows: [row(0), row(1), row(2)],
        })
    }

    /// `|X × Y|`: the world area of a unit of object-space area.
    pub fn area_scale(&self) -> f32 {
        let x = self.to_world.transform_vector3(Vec3::X);
        let y = self.to_world.transform_vector3(Vec3::Y);
        x.cross(y).length()
    }

    /// World bounds of the object-space square `[-1, 1]²`.
    pub fn square_bounds(&self) -> Aabb {
        let mut b = Aabb::EMPTY;
        for (x, y) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)] {
            b.expand(self.to_world.transform_point3(Vec3::new(x, y, 0.0)));
        }
        b
    }

    /// Where the ray crosses z = 0 in object space, for `RAY_TMIN < t < ray.tmax`:
    /// `(t, x, y)`. The object-space depth is computed first so that rays crossing the
    /// plane out of range are rejected before the in-plane coordinates are needed.
    #[inline]
    pub fn cross_plane(&self, ray: &Ray) -> Option<(f32, f32, f32)> {
        let [(rx, wx), (ry, wy), (rz, wz)] = self.rows;
        let t = -(rz.dot(ray.o) + wz) / rz.dot(ray.d);
        if !(t > RAY_TMIN && t < ray.tmax) {
            return None;
        }
        let p = ray.o + t * ray.d;
        Some((t, rx.dot(p) + wx, ry.dot(p) + wy))
    }
}

/// A `rectangle` record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rectangle {
    /// Placement.
    pub plane: Planar,
    /// World area.
    pub area: f32,
}

/// Reads a `rectangle`'s parameters.
pub fn build(
    p: &Props,
    _ctx: &dyn BuildContext,
    to_world: &Transform,
    flip: bool,
) -> Result<Built> {
    let plane = Planar::new(to_world, flip).ok_or_else(|| {
        Error::param(
            &p.entry_loc("to_world"),
            "to_world",
            "flattens the rectangle",
        )
    })?;
    let area = 4.0 * plane.area_scale();
    Ok(Built::Analytic(AnyShape::Rectangle(Rectangle {
        plane,
        area,
    })))
}

impl Rectangle {
    /// World bounds.
    pub fn bounds(&self) -> Aabb {
        self.plane.square_bounds()
    }

    /// `(t, (x, y))` in object space when the ray crosses the square.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<(f32, Vec2)> {
        let (t, x, y) = self.plane.cross_plane(ray)?;
        (x.abs() <= 1.0 && y.abs() <= 1.0).then_some((t, Vec2::new(x, y)))
    }

    /// The hit record at object-space point `xy`.
    pub fn interaction(&self, shape: u32, ray: &Ray, t: f32, xy: Vec2) -> Hit {
        Hit {
            t,
            p: ray.at(t),
            ng: self.plane.n,
            n: self.plane.n,
            uv: xy * 0.5 + Vec2::splat(0.5),
            dpdu: self.plane.to_world.transform_vector3(Vec3::X) * 2.0,
            dpdv: self.plane.to_world.transform_vector3(Vec3::Y) * 2.0,
            shape,
            prim: 0,
            bary: Vec2::ZERO,
        }
    }

    /// Uniform point: `u` is the texture coordinate of the sample.
    pub fn sample_position(&self, u: Vec2) -> PositionSample {
        let local = Vec3::new(2.0 * u.x - 1.0, 2.0 * u.y - 1.0, 0.0);
        PositionSample {
            p: self.plane.to_world.transform_point3(local),
            n: self.plane.n,
            uv: u,
            pdf: 1.0 / self.area,
            prim: 0,
            bary: Vec2::ZERO,
        }
    }
}

impl ShapeRecord for Rectangle {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        Rectangle::bounds(self)
    }
    fn intersect(&self, _g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        Rectangle::intersect(self, ray)
    }
    fn interaction(&self, _g: &Geometry, pr: Prim, ray: &Ray, t: f32, coords: Vec2) -> Hit {
        Rectangle::interaction(self, pr.shape, ray, t, coords)
    }
    fn sample_position(&self, _g: &Geometry, _shape: u32, u: Vec2) -> PositionSample {
        Rectangle::sample_position(self, u)
    }
    fn surface_area(&self) -> f32 {
        self.area
    }
    fn flatten(&self, f: &mut FlatShape) {
        f.area = self.area;
        f.normal = self.plane.n.to_array();
        f.to_world = affine_cols(&self.plane.to_world);
        f.to_local = affine_cols(&self.plane.to_local);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{check_sampling, closest, geom_of, shape_desc};
    use super::*;
    use crate::desc::props::Value;

    #[test]
    fn unit_rectangle_hits_edges_and_uvs() {
        let g = geom_of(&[shape_desc("rectangle", vec![])]);
        let down = |x: f32, y: f32| closest(&g, &Ray::new(Vec3::new(x, y, 2.0), -Vec3::Z));
        let h = down(0.5, -0.5).unwrap();
        assert!((h.t - 2.0).abs() < 1e-6 && h.ng == Vec3::Z);
        assert!((h.uv - Vec2::new(0.75, 0.25)).length() < 1e-6);
        assert!(
            (down(1.0, 1.0).unwrap().uv - Vec2::ONE).length() < 1e-6,
            "corner counts"
        );
        assert!((down(-1.0, -1.0).unwrap().uv - Vec2::ZERO).length() < 1e-6);
        assert!(down(1.001, 0.0).is_none() && down(0.0, -1.001).is_none());
        // from below: hit, same normal (the BSDF decides about one-sidedness)
        let h = closest(&g, &Ray::new(Vec3::new(0.0, 0.0, -1.0), Vec3::Z)).unwrap();
        assert!((h.t - 1.0).abs() < 1e-6 && h.ng == Vec3::Z);
        // parallel to the plane: never a hit, never NaN
        assert!(closest(&g, &Ray::new(Vec3::new(-2.0, 0.0, 0.0), Vec3::X)).is_none());
        assert!(closest(&g, &Ray::new(Vec3::new(-2.0, 0.0, 1.0), Vec3::X)).is_none());
    }

    #[test]
    fn transformed_rectangle_normal_area_and_sampling() {
        // scale (2, 3, 1), then rotate -90° about x: the plane y = 1 facing +y
        let tw = Transform::translate(Vec3::new(0.0, 1.0, 0.0))
            .then_after(&Transform::rotate(Vec3::X, -90.0).unwrap())
            .then_after(&Transform::scale(Vec3::new(2.0, 3.0, 1.0)).unwrap());
        let g = geom_of(&[shape_desc(
            "rectangle",
            vec![("to_world", Value::Transform(tw))],
        )]);
        assert!((g.surface_area(0) - 24.0).abs() < 1e-4);
        let h = closest(&g, &Ray::new(Vec3::new(1.0, 5.0, 0.0), -Vec3::Y)).unwrap();
        assert!((h.t - 4.0).abs() < 1e-5 && (h.ng - Vec3::Y).length() < 1e-6);
        // object (x, y) = (0.5, 0): uv (0.75, 0.5)
        assert!((h.uv - Vec2::new(0.75, 0.5)).length() < 1e-5, "{:?}", h.uv);
        let b = g.bounds();
        assert!(
            (b.min - Vec3::new(-2.0, 1.0, -3.0)).length() < 1e-5,
            "{b:?}"
        );
        check_sampling(&g, 0, 24.0);
        let f = geom_of(&[shape_desc(
            "rectangle",
            vec![("flip_normals", Value::Bool(true))],
        )]);
        assert_eq!(f.sample_position(0, Vec2::splat(0.3)).n, -Vec3::Z);
        check_sampling(&f, 0, 4.0);
    }
}
