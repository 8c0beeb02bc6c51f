//! `disk`: the unit disk in the z = 0 plane, normal +z, placed by `to_world`.
//!
//! | parameter          | type      | default  | meaning                              |
//! |----------------|-----------|----------|--------------------------------------|
//! | `to_world`     | transform | identity | object-to-world transform            |
//! | `flip_normals` | boolean   | false    | normal points along -z (object space)|
//!
//! Texture coordinates are polar as in Mitsuba 3: `u = r`, `v = φ / 2π` with
//! φ = atan2(y, x) in [0, 2π) for the object-space point (x, y, 0).
//!
//! ```xml
//! <shape type="disk">
//!     <transform name="to_world"><scale value="0.3"/><translate y="2"/></transform>
//!     <emitter type="area"><rgb name="radiance" value="20"/></emitter>
//! </shape>
//! ```

use super::record::{affine_cols, FlatShape};
use super::rectangle::Planar;
use super::{AnyShape, Built, Geometry, Hit, PositionSample, Prim, ShapeRecord};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::warp::square_to_uniform_disk_concentric;
use crate::math::{Aabb, Ray, Transform, Vec2, Vec3, INV_TWO_PI, PI};
use crate::plugin::BuildContext;

/// A `disk` record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Disk {
    /// Placement.
    pub plane: Planar,
    /// World area.
    pub area: f32,
}

/// Reads a `disk`'s parameters.
pub fn build(
    p: &Props,
    _ctx: &dyn BuildContext,
    to_world: &Transform,
    flip: bool,
) -> Result<Built> {
    let plane = Planar::new(to_world, flip)
        .ok_or_else(|| Error::param(&p.entry_loc("to_world"), "to_world", "flattens the disk"))?;
    let area = PI * plane.area_scale();
    Ok(Built::Analytic(AnyShape::Disk(Disk { plane, area })))
}

impl Disk {
    /// World bounds (of the enclosing square).
    pub fn bounds(&self) -> Aabb {
        self.plane.square_bounds()
    }

    /// `(t, (x, y))` in object space when the ray crosses the disk.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<(f32, Vec2)> {
        let (t, x, y) = self.plane.cross_plane(ray)?;
        (x * x + y * y <= 1.0).then_some((t, Vec2::new(x, y)))
    }

    /// uv, dp/du and dp/dv (Mitsuba's) at object-space point `xy`.
    fn eval(&self, xy: Vec2) -> (Vec2, Vec3, Vec3) {
        let r = xy.length();
        let mut v = xy.y.atan2(xy.x) * INV_TWO_PI;
        if v < 0.0 {
            v += 1.0;
        }
        let (c, s) = if r > 0.0 {
            (xy.x / r, xy.y / r)
        } else {
            (1.0, 0.0)
        };
        let dpdu = self.plane.to_world.transform_vector3(Vec3::new(c, s, 0.0));
        let dpdv = self.plane.to_world.transform_vector3(Vec3::new(-s, c, 0.0)) * (2.0 * PI * r);
        (Vec2::new(r, v), dpdu, dpdv)
    }

    /// The hit record at object-space point `xy`.
    pub fn interaction(&self, shape: u32, ray: &Ray, t: f32, xy: Vec2) -> Hit {
        let (uv, dpdu, dpdv) = self.eval(xy);
        Hit {
            t,
            p: ray.at(t),
            ng: self.plane.n,
            n: self.plane.n,
            uv,
            dpdu,
            dpdv,
            shape,
            prim: 0,
            bary: Vec2::ZERO,
        }
    }

    /// Uniform point (concentric mapping; the linear map keeps it uniform).
    pub fn sample_position(&self, u: Vec2) -> PositionSample {
        let xy = square_to_uniform_disk_concentric(u);
        let (uv, _, _) = self.eval(xy);
        PositionSample {
            p: self.plane.to_world.transform_point3(xy.extend(0.0)),
            n: self.plane.n,
            uv,
            pdf: 1.0 / self.area,
            prim: 0,
            bary: Vec2::ZERO,
        }
    }
}

impl ShapeRecord for Disk {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        Disk::bounds(self)
    }
    fn intersect(&self, _g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        Disk::intersect(self, ray)
    }
    fn interaction(&self, _g: &Geometry, pr: Prim, ray: &Ray, t: f32, coords: Vec2) -> Hit {
        Disk::interaction(self, pr.shape, ray, t, coords)
    }
    fn sample_position(&self, _g: &Geometry, _shape: u32, u: Vec2) -> PositionSample {
        Disk::sample_position(self, u)
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
    fn unit_disk_edges_polar_uv_and_normal() {
        let g = geom_of(&[shape_desc("disk", vec![])]);
        let down = |x: f32, y: f32| closest(&g, &Ray::new(Vec3::new(x, y, 1.0), -Vec3::Z));
        let h = down(0.0, 0.5).unwrap();
        assert!((h.t - 1.0).abs() < 1e-6 && h.ng == Vec3::Z);
        assert!((h.uv - Vec2::new(0.5, 0.25)).length() < 1e-6, "{:?}", h.uv);
        let h = down(-0.6, -0.0001).unwrap();
        assert!((h.uv.x - 0.6).abs() < 1e-4 && h.uv.y > 0.49 && h.uv.y < 0.51);
        assert!(down(0.0, -0.999).unwrap().uv.y > 0.74);
        assert!(
            down(0.71, 0.71).is_none(),
            "outside the disk but inside its square"
        );
        assert!(down(0.70, 0.70).is_some());
        let c = down(0.0, 0.0).unwrap();
        assert!(c.uv.x == 0.0 && c.dpdu.is_finite());
    }

    #[test]
    fn scaled_disk_area_and_sampling() {
        let tw = Transform::translate(Vec3::new(0.0, 0.0, 3.0))
            .then_after(&Transform::scale(Vec3::new(2.0, 0.5, 1.0)).unwrap());
        let g = geom_of(&[shape_desc(
            "disk",
            vec![
                ("to_world", Value::Transform(tw)),
                ("flip_normals", Value::Bool(true)),
            ],
        )]);
        assert!((g.surface_area(0) - PI).abs() < 1e-5);
        let h = closest(&g, &Ray::new(Vec3::new(1.9, 0.0, 5.0), -Vec3::Z)).unwrap();
        assert!((h.t - 2.0).abs() < 1e-5 && h.ng == -Vec3::Z);
        assert!(closest(&g, &Ray::new(Vec3::new(0.0, 0.6, 5.0), -Vec3::Z)).is_none());
        check_sampling(&g, 0, PI);
    }

    #[test]
    fn samples_are_uniform_in_area() {
        // annuli of equal area: r² uniform; plus quadrants (angle uniform)
        let g = geom_of(&[shape_desc("disk", vec![])]);
        let bin = |p: Vec3| {
            let ring = ((p.x * p.x + p.y * p.y) * 4.0) as usize;
            ring.min(3) * 2 + usize::from(p.y > 0.0)
        };
        super::super::test_util::check_bins(&g, 0, bin, &[0.125; 8]);
    }
}
