//! `sphere`: an analytic sphere.
//!
//! | parameter          | type      | default   | meaning                                          |
//! |----------------|-----------|-----------|--------------------------------------------------|
//! | `center`       | point     | (0, 0, 0) | centre (object space)                            |
//! | `radius`       | float     | 1         | radius (object space), > 0                       |
//! | `to_world`     | transform | identity  | translation, rotation, uniform scale             |
//! | `flip_normals` | boolean   | false     | normals point inwards                            |
//!
//! As in Mitsuba 3, `to_world` is applied after `center`/`radius`: the world
//! centre is `to_world · center` and the world radius is `radius` times the
//! length of `to_world`'s x axis (a non-uniform scale does not make an
//! ellipsoid). Texture coordinates are spherical in object space:
//! `u = φ / 2π` (φ = atan2(y, x) in [0, 2π)), `v = θ / π` (θ measured from +z).
//!
//! ```xml
//! <shape type="sphere">
//!     <point name="center" x="0" y="1" z="0"/>
//!     <float name="radius" value="0.5"/>
//!     <bsdf type="diffuse"/>
//! </shape>
//! ```

use glam::{Affine3A, Mat4};

use super::record::{affine_cols, FlatShape, FLAG_FLIP};
use super::{normalize_or, AnyShape, Built, Geometry, Hit, PositionSample, Prim, ShapeRecord};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::atan;
use crate::math::warp::square_to_uniform_sphere;
use crate::math::{Aabb, Ray, Transform, Vec2, Vec3, INV_PI, INV_TWO_PI, PI, RAY_TMIN};
use crate::plugin::BuildContext;

/// An analytic sphere in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// World-space centre.
    pub center: Vec3,
    /// World-space radius.
    pub radius: f32,
    /// `flip_normals`.
    pub flip: bool,
    /// Unit sphere → world (for dp/du).
    pub to_world: Affine3A,
    /// World → unit sphere (for texture coordinates).
    pub to_local: Affine3A,
}

/// Reads a `sphere`'s parameters.
pub fn build(
    p: &Props,
    _ctx: &dyn BuildContext,
    to_world: &Transform,
    flip: bool,
) -> Result<Built> {
    let radius = p.positive_float("radius", 1.0, false)?;
    let center = p.vec3_opt("center")?.unwrap_or(Vec3::ZERO);
    if !center.is_finite() {
        let loc = p.entry_loc("center");
        return Err(Error::param(
            &loc,
            "center",
            format!("must be finite, got {center}"),
        ));
    }
    let full = to_world.m * Mat4::from_translation(center) * Mat4::from_scale(Vec3::splat(radius));
    Sphere::new(Affine3A::from_mat4(full), flip)
        .map(|s| Built::Analytic(AnyShape::Sphere(s)))
        .ok_or_else(|| {
            Error::param(
                &p.entry_loc("to_world"),
                "to_world",
                "gives a degenerate sphere",
            )
        })
}

impl Sphere {
    /// The sphere that `to_world` makes of the unit sphere; `None` if degenerate.
    pub fn new(to_world: Affine3A, flip: bool) -> Option<Self> {
        let center = to_world.transform_point3(Vec3::ZERO);
        let radius = to_world.transform_vector3(Vec3::X).length();
        let to_local = to_world.inverse();
        let ok = radius > 0.0 && radius.is_finite() && center.is_finite() && to_local.is_finite();
        ok.then_some(Sphere {
            center,
            radius,
            flip,
            to_world,
            to_local,
        })
    }

    /// World bounds.
    pub fn bounds(&self) -> Aabb {
        Aabb {
            min: self.center - Vec3::splat(self.radius),
            max: self.center + Vec3::splat(self.radius),
        }
    }

    /// Surface area.
    pub fn surface_area(&self) -> f32 {
        4.0 * PI * self.radius * self.radius
    }

    /// Nearest root in `(RAY_TMIN, tmax)`; the discriminant is computed as
    /// `r² - |oc - (oc·d̂)d̂|²`, which keeps precision for distant spheres.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<(f32, Vec2)> {
        let oc = ray.o - self.center;
        let a = ray.d.length_squared();
        let b = oc.dot(ray.d);
        let c = oc.length_squared() - self.radius * self.radius;
        let l = oc - (b / a) * ray.d;
        let disc = a * (self.radius * self.radius - l.length_squared());
        if disc.is_nan() || disc < 0.0 {
            return None;
        }
        let q = -(b + disc.sqrt().copysign(b));
        let (t0, t1) = (c / q, q / a);
        let (near, far) = if t0 <= t1 { (t0, t1) } else { (t1, t0) };
        if near > RAY_TMIN && near < ray.tmax {
            Some((near, Vec2::ZERO))
        } else if far > RAY_TMIN && far < ray.tmax {
            Some((far, Vec2::ZERO))
        } else {
            None
        }
    }

    /// Normal, uv (zero unless `uv`), dp/du and dp/dv (Mitsuba's parameterisation) at
    /// the surface point in direction `dir` from the centre.
    #[inline(always)]
    fn eval(&self, dir: Vec3, uv: bool) -> (Vec3, Vec2, Vec3, Vec3) {
        let p = self.center + dir * self.radius;
        let local = normalize_or(self.to_local.transform_point3(p), Vec3::Z);
        let uv = if uv {
            let mut phi = atan::atan2(local.y, local.x);
            if phi < 0.0 {
                phi += 2.0 * PI;
            }
            let theta = atan::acos(local.z);
            Vec2::new(phi * INV_TWO_PI, theta * INV_PI)
        } else {
            Vec2::ZERO
        };
        let dpdu = self
            .to_world
            .transform_vector3(Vec3::new(-local.y, local.x, 0.0))
            * (2.0 * PI);
        let rd = (local.x * local.x + local.y * local.y).sqrt();
        let dv = if rd > 0.0 {
            Vec3::new(local.z * local.x / rd, local.z * local.y / rd, -rd)
        } else {
            Vec3::X
        };
        let dpdv = self.to_world.transform_vector3(dv) * PI;
        let n = if self.flip { -dir } else { dir };
        (n, uv, dpdu, dpdv)
    }

    /// The hit record at distance `t` (the point is re-projected onto the sphere), its
    /// texture coordinates left at zero unless `uv`.
    pub fn interaction(&self, shape: u32, ray: &Ray, t: f32, uv: bool) -> Hit {
        let dir = normalize_or(ray.at(t) - self.center, Vec3::Z);
        let (n, uv, dpdu, dpdv) = self.eval(dir, uv);
        Hit {
            t,
            p: self.center + dir * self.radius,
            ng: n,
            n,
            uv,
            dpdu,
            dpdv,
            shape,
            prim: 0,
            bary: Vec2::ZERO,
        }
    }

    /// Uniform point on the sphere.
    pub fn sample_position(&self, u: Vec2) -> PositionSample {
        let dir = square_to_uniform_sphere(u);
        let (n, uv, _, _) = self.eval(dir, true);
        PositionSample {
            p: self.center + dir * self.radius,
            n,
            uv,
            pdf: 1.0 / self.surface_area(),
            prim: 0,
            bary: Vec2::ZERO,
        }
    }
}

impl ShapeRecord for Sphere {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        Sphere::bounds(self)
    }
    fn intersect(&self, _g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        Sphere::intersect(self, ray)
    }
    fn interaction(&self, g: &Geometry, pr: Prim, ray: &Ray, t: f32, _coords: Vec2) -> Hit {
        Sphere::interaction(self, pr.shape, ray, t, !g.uv_unread)
    }
    fn sample_position(&self, _g: &Geometry, _shape: u32, u: Vec2) -> PositionSample {
        Sphere::sample_position(self, u)
    }
    fn surface_area(&self) -> f32 {
        Sphere::surface_area(self)
    }
    fn flatten(&self, f: &mut FlatShape) {
        f.flags = u32::from(self.flip) * FLAG_FLIP;
        f.area = self.surface_area();
        f.radius = self.radius;
        f.center = self.center.to_array();
        f.to_world = affine_cols(&self.to_world);
        f.to_local = affine_cols(&self.to_local);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{check_sampling, closest, geom_of, shape_desc, try_build};
    use super::*;
    use crate::desc::props::Value;

    fn sphere(props: Vec<(&str, Value)>) -> crate::shapes::Geometry {
        geom_of(&[shape_desc("sphere", props)])
    }

    #[test]
    fn hits_from_outside_and_inside_at_analytic_distances() {
        let to_world = Transform::translate(Vec3::new(1.0, 0.0, 0.0));
        let g = sphere(vec![
            ("radius", Value::Float(2.0)),
            ("to_world", Value::Transform(to_world)),
        ]);
        let h = closest(&g, &Ray::new(Vec3::new(1.0, 0.0, -10.0), Vec3::Z)).unwrap();
        assert!((h.t - 8.0).abs() < 1e-5 && (h.ng - -Vec3::Z).length() < 1e-6);
        // inside: from the centre the far root at r is taken
        let h = closest(&g, &Ray::new(Vec3::new(1.0, 0.0, 0.0), Vec3::Y)).unwrap();
        assert!((h.t - 2.0).abs() < 1e-5 && (h.ng - Vec3::Y).length() < 1e-6);
        // an off-centre chord: x = 1 + 2 cos, hit at y = sqrt(4 - 1)
        let h = closest(&g, &Ray::new(Vec3::new(2.0, -5.0, 0.0), Vec3::Y)).unwrap();
        assert!((h.t - (5.0 - 3f32.sqrt())).abs() < 1e-5);
        // misses: beside it, pointing away, and too short
        assert!(closest(&g, &Ray::new(Vec3::new(3.5, 0.0, -10.0), Vec3::Z)).is_none());
        assert!(closest(&g, &Ray::new(Vec3::new(1.0, 0.0, -10.0), -Vec3::Z)).is_none());
        let mut r = Ray::new(Vec3::new(1.0, 0.0, -10.0), Vec3::Z);
        r.tmax = 7.9;
        assert!(closest(&g, &r).is_none());
        // a far-away sphere stays accurate
        let far = sphere(vec![("center", Value::Point(Vec3::new(0.0, 0.0, 1e4)))]);
        let h = closest(&far, &Ray::new(Vec3::ZERO, Vec3::Z)).unwrap();
        assert!((h.t - (1e4 - 1.0)).abs() < 2e-3, "{}", h.t);
    }

    #[test]
    fn center_radius_and_to_world_compose_like_mitsuba() {
        // to_world = translate(0,0,5) · scale(2); center (1,0,0), radius 0.5
        let tw = Transform::translate(Vec3::new(0.0, 0.0, 5.0))
            .then_after(&Transform::scale(Vec3::splat(2.0)).unwrap());
        let g = sphere(vec![
            ("center", Value::Point(Vec3::X)),
            ("radius", Value::Float(0.5)),
            ("to_world", Value::Transform(tw)),
        ]);
        let crate::shapes::AnyShape::Sphere(s) = g.shapes[0].geom else {
            panic!()
        };
        assert!((s.center - Vec3::new(2.0, 0.0, 5.0)).length() < 1e-6);
        assert!((s.radius - 1.0).abs() < 1e-6);
    }

    #[test]
    fn uv_follows_mitsuba_spherical_coordinates() {
        let g = sphere(vec![]);
        let at = |o: Vec3| closest(&g, &Ray::new(o * 3.0, -o)).unwrap();
        let h = at(Vec3::X);
        assert!((h.uv - Vec2::new(0.0, 0.5)).length() < 1e-5, "{:?}", h.uv);
        let h = at(Vec3::Y);
        assert!((h.uv - Vec2::new(0.25, 0.5)).length() < 1e-5, "{:?}", h.uv);
        assert!((h.dpdu - Vec3::new(-2.0 * PI, 0.0, 0.0)).length() < 1e-4);
        let h = at(-Vec3::Y);
        assert!((h.uv - Vec2::new(0.75, 0.5)).length() < 1e-5, "{:?}", h.uv);
        let h = at(Vec3::new(0.0, 1.0, 1.0).normalize());
        assert!((h.uv - Vec2::new(0.25, 0.25)).length() < 1e-5, "{:?}", h.uv);
        // rotated 90° about z: world -x is object +y, so u = 1/4 there
        let rot = Transform::rotate(Vec3::Z, 90.0).unwrap();
        let g = sphere(vec![("to_world", Value::Transform(rot))]);
        let h = closest(&g, &Ray::new(-Vec3::X * 3.0, Vec3::X)).unwrap();
        assert!((h.uv - Vec2::new(0.25, 0.5)).length() < 1e-5, "{:?}", h.uv);
    }

    #[test]
    fn flip_normals_points_inwards_and_sampling_is_uniform() {
        let g = sphere(vec![("flip_normals", Value::Bool(true))]);
        let h = closest(&g, &Ray::new(Vec3::new(0.0, 0.0, -3.0), Vec3::Z)).unwrap();
        assert!((h.ng - Vec3::Z).length() < 1e-6 && h.n == h.ng);
        check_sampling(&g, 0, 4.0 * PI);
        let g = sphere(vec![
            ("radius", Value::Float(1.5)),
            ("center", Value::Point(Vec3::new(0.3, -2.0, 1.0))),
        ]);
        check_sampling(&g, 0, 4.0 * PI * 2.25);
    }

    #[test]
    fn bad_radius_is_an_error_with_location() {
        let e = try_build(&[shape_desc("sphere", vec![("radius", Value::Float(-1.0))])])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("test.xml:10") && e.contains("radius"), "{e}");
        let e = try_build(&[shape_desc("sphere", vec![("radiuss", Value::Float(1.0))])])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("radiuss") && e.contains("sphere"), "{e}");
    }

    #[test]
    fn samples_are_uniform_in_height() {
        // Archimedes: on a sphere, z is uniform over [-r, r]
        let g = sphere(vec![("radius", Value::Float(2.0))]);
        let bin = |p: Vec3| (((p.z / 2.0 + 1.0) * 5.0) as usize).min(9);
        super::super::test_util::check_bins(&g, 0, bin, &[0.1; 10]);
    }
}
