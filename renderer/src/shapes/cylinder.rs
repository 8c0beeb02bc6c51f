//! `cylinder`: an analytic open tube (no caps).
//!
//! | parameter          | type      | default   | meaning                                     |
//! |----------------|-----------|-----------|---------------------------------------------|
//! | `p0`           | point     | (0, 0, 0) | centre of the first end (object space)      |
//! | `p1`           | point     | (0, 0, 1) | centre of the second end (object space)     |
//! | `radius`       | float     | 1         | radius (object space), > 0                  |
//! | `to_world`     | transform | identity  | object-to-world transform                   |
//! | `flip_normals` | boolean   | false     | normals point inwards                       |
//!
//! As in Mitsuba 3 the shape is the unit cylinder (radius 1, z in [0, 1]) placed by
//! `to_world · translate(p0) · to_frame(p1 - p0) · scale(radius, radius, |p1 - p0|)`,
//! where `to_frame` is the orthonormal frame around the axis of Duff et al. 2017.
//! Texture coordinates: `u = φ / 2π` (φ = atan2(y, x) in [0, 2π) on the unit
//! cylinder), `v` = height along the axis in [0, 1]; dp/du = 2π ∂p/∂φ, dp/dv = the
//! axis. Normals point away from the axis (also under a mirroring `to_world`,
//! which Mitsuba compensates the same way) unless `flip_normals` is set. The
//! surface area is `2π · radius · length` with the world radius and length: like
//! Mitsuba, a `to_world` that scales x and y differently (an elliptic tube) is
//! intersected exactly but sampled as if it were circular.
//!
//! ```xml
//! <shape type="cylinder">
//!     <point name="p0" x="0" y="0" z="-1"/>
//!     <point name="p1" x="0" y="0" z="1"/>
//!     <float name="radius" value="0.3"/>
//!     <bsdf type="twosided"><bsdf type="diffuse"/></bsdf>
//! </shape>
//! ```

use glam::{Affine3A, Mat4};

use super::record::{affine_cols, FlatShape, FLAG_FLIP};
use super::{AnyShape, Built, Geometry, Hit, PositionSample, Prim, ShapeRecord};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::sincos::sin_cos_pi;
use crate::math::{Aabb, Frame, Ray, Transform, Vec2, Vec3, INV_TWO_PI, PI, RAY_TMIN};
use crate::plugin::BuildContext;

/// An analytic open cylinder in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    /// Unit cylinder → world.
    pub to_world: Affine3A,
    /// World → unit cylinder.
    pub to_local: Affine3A,
    /// World radius (length of the mapped x axis).
    pub radius: f32,
    /// World length (length of the mapped axis).
    pub length: f32,
    /// Whether normals point towards the axis: `flip_normals`, exclusive-or a
    /// mirroring `to_world` (whose cross product of the tangents points inwards).
    pub flip: bool,
}

/// Reads a `cylinder`'s parameters.
pub fn build(
    p: &Props,
    _ctx: &dyn BuildContext,
    to_world: &Transform,
    flip: bool,
) -> Result<Built> {
    let radius = p.positive_float("radius", 1.0, false)?;
    let p0 = point(p, "p0", Vec3::ZERO)?;
    let p1 = point(p, "p1", Vec3::Z)?;
    let d = p1 - p0;
    let length = d.length();
    if !(length > 0.0) || !length.is_finite() {
        return Err(Error::param(
            &p.entry_loc("p1"),
            "p1",
            format!("must differ from p0 (both are {p0})"),
        ));
    }
    let f = Frame::from_normal(d / length);
    let frame = Mat4::from_cols(
        f.s.extend(0.0),
        f.t.extend(0.0),
        f.n.extend(0.0),
        glam::Vec4::W,
    );
    let full = to_world.m
        * Mat4::from_translation(p0)
        * frame
        * Mat4::from_scale(Vec3::new(radius, radius, length));
    Cylinder::new(Affine3A::from_mat4(full), flip)
        .map(|c| Built::Analytic(AnyShape::Cylinder(c)))
        .ok_or_else(|| {
            Error::param(
                &p.entry_loc("to_world"),
                "to_world",
                "gives a degenerate cylinder",
            )
        })
}

fn point(p: &Props, key: &str, default: Vec3) -> Result<Vec3> {
    let v = p.vec3_opt(key)?.unwrap_or(default);
    if !v.is_finite() {
        let msg = format!("must be finite, got {v}");
        return Err(Error::param(&p.entry_loc(key), key, msg));
    }
    Ok(v)
}

impl Cylinder {
    /// The cylinder that `to_world` makes of the unit cylinder; `None` if degenerate.
    pub fn new(to_world: Affine3A, flip: bool) -> Option<Self> {
        let radius = to_world.transform_vector3(Vec3::X).length();
        let length = to_world.transform_vector3(Vec3::Z).length();
        let to_local = to_world.inverse();
        let det = to_world.matrix3.determinant();
        let ok = radius > 0.0 && length > 0.0 && det != 0.0 && det.is_finite();
        (ok && to_local.is_finite()).then_some(Cylinder {
            to_world,
            to_local,
            radius,
            length,
            flip: flip ^ (det < 0.0),
        })
    }

    /// World bounds: the box around the two end circles (Mitsuba's bound).
    pub fn bounds(&self) -> Aabb {
        let x1 = self.to_world.transform_vector3(Vec3::X);
        let x2 = self.to_world.transform_vector3(Vec3::Y);
        let x = (x1 * x1 + x2 * x2).powf(0.5);
        let p0 = self.to_world.transform_point3(Vec3::ZERO);
        let p1 = self.to_world.transform_point3(Vec3::Z);
        Aabb {
            min: (p0 - x).min(p1 - x),
            max: (p0 + x).max(p1 + x),
        }
    }

    /// Surface area.
    pub fn surface_area(&self) -> f32 {
        2.0 * PI * self.radius * self.length
    }

    /// Nearest crossing of the tube in `(RAY_TMIN, tmax)`, in object space (the ray is
    /// not renormalised, so `t` is the world distance parameter). The quadratic is
    /// solved in double precision (as Mitsuba's CPU variants do): near-tangent rays
    /// then keep their hits. The GPU twin (`kernels/shapes/cylinder.cuh`) repeats it.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<(f32, Vec2)> {
        let o = self.to_local.transform_point3(ray.o);
        let d = self.to_local.transform_vector3(ray.d);
        let (ox, oy, oz) = (f64::from(o.x), f64::from(o.y), f64::from(o.z));
        let (dx, dy, dz) = (f64::from(d.x), f64::from(d.y), f64::from(d.z));
        let a = dx * dx + dy * dy;
        let b = 2.0 * (dx * ox + dy * oy);
        let c = ox * ox + oy * oy - 1.0;
        let (near, far) = solve_quadratic(a, b, c)?;
        for t in [near, far] {
            let (z, tf) = (oz + dz * t, t as f32);
            if tf > RAY_TMIN && tf < ray.tmax && (0.0..=1.0).contains(&z) {
                return Some((tf, Vec2::ZERO));
            }
        }
        None
    }

    /// Point, normal, uv, dp/du and dp/dv at object-space point `local` (on the unit tube).
    fn eval(&self, local: Vec3) -> (Vec3, Vec3, Vec2, Vec3, Vec3) {
        let p = self.to_world.transform_point3(local);
        let dpdu = self
            .to_world
            .transform_vector3(Vec3::new(-local.y, local.x, 0.0))
            * (2.0 * PI);
        let dpdv = self.to_world.transform_vector3(Vec3::Z);
        let n = super::normalize_or(dpdu.cross(dpdv), Vec3::Z);
        let n = if self.flip { -n } else { n };
        let mut phi = local.y.atan2(local.x);
        if phi < 0.0 {
            phi += 2.0 * PI;
        }
        (p, n, Vec2::new(phi * INV_TWO_PI, local.z), dpdu, dpdv)
    }

    /// The hit record at distance `t` (the point is re-projected onto the tube).
    pub fn interaction(&self, shape: u32, ray: &Ray, t: f32) -> Hit {
        let q = self.to_local.transform_point3(ray.at(t));
        let r = (q.x * q.x + q.y * q.y).sqrt();
        let local = if r > 0.0 {
            Vec3::new(q.x / r, q.y / r, q.z)
        } else {
            Vec3::new(1.0, 0.0, q.z)
        };
        let (p, n, uv, dpdu, dpdv) = self.eval(local);
        Hit {
            t,
            p,
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

    /// A point uniform in (φ, height), which is uniform by area on a circular tube;
    /// `u.x` is the height and `u.y` the angle, as in Mitsuba (`uv = (u.y, u.x)`).
    pub fn sample_position(&self, u: Vec2) -> PositionSample {
        let (s, c) = sin_cos_pi(2.0 * u.y);
        let (p, n, uv, _, _) = self.eval(Vec3::new(c, s, u.x));
        PositionSample {
            p,
            n,
            uv,
            pdf: 1.0 / self.surface_area(),
            prim: 0,
            bary: Vec2::ZERO,
        }
    }
}

/// Roots `(near, far)` of `a t² + b t + c` (Mitsuba's `math::solve_quadratic`): the
/// numerically stable form, the linear case when `a = 0`, `None` without real roots.
#[inline]
pub(crate) fn solve_quadratic(a: f64, b: f64, c: f64) -> Option<(f64, f64)> {
    if a == 0.0 {
        if b == 0.0 {
            return None;
        }
        let t = -c / b;
        return Some((t, t));
    }
    let disc = b * b - 4.0 * a * c;
    if !(disc >= 0.0) {
        return None;
    }
    let q = -0.5 * (b + disc.sqrt().copysign(b));
    let (x0, x1) = (q / a, c / q);
    Some(if x0 <= x1 { (x0, x1) } else { (x1, x0) })
}

impl ShapeRecord for Cylinder {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        Cylinder::bounds(self)
    }
    fn intersect(&self, _g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        Cylinder::intersect(self, ray)
    }
    fn interaction(&self, _g: &Geometry, pr: Prim, ray: &Ray, t: f32, _coords: Vec2) -> Hit {
        Cylinder::interaction(self, pr.shape, ray, t)
    }
    fn sample_position(&self, _g: &Geometry, _shape: u32, u: Vec2) -> PositionSample {
        Cylinder::sample_position(self, u)
    }
    fn surface_area(&self) -> f32 {
        Cylinder::surface_area(self)
    }
    fn flatten(&self, f: &mut FlatShape) {
        f.flags = u32::from(self.flip) * FLAG_FLIP;
        f.area = self.surface_area();
        f.radius = self.radius;
        f.to_world = affine_cols(&self.to_world);
        f.to_local = affine_cols(&self.to_local);
    }
    // no affine image of a unit planar shape
    fn walks_bvh(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{
        check_bins, check_sampling, closest, geom_of, shape_desc, try_build,
    };
    use super::*;
    use crate::desc::props::Value;

    fn cylinder(props: Vec<(&str, Value)>) -> crate::shapes::Geometry {
        geom_of(&[shape_desc("cylinder", props)])
    }

    #[test]
    fn hits_match_an_independent_line_circle_computation() {
        // axis along world z through (1, 2, *), radius 0.5, z in [-1, 3]
        let g = cylinder(vec![
            ("p0", Value::Point(Vec3::new(1.0, 2.0, -1.0))),
            ("p1", Value::Point(Vec3::new(1.0, 2.0, 3.0))),
            ("radius", Value::Float(0.5)),
        ]);
        let mut rng = crate::math::Pcg32::new(5, 1);
        let mut hits = 0;
        for _ in 0..2000 {
            let o = Vec3::new(
                rng.next_f32() * 6.0 - 2.0,
                rng.next_f32() * 6.0 - 1.0,
                rng.next_f32() * 8.0 - 3.0,
            );
            let d = (Vec3::new(1.0, 2.0, rng.next_f32() * 4.0 - 1.0) - o).normalize()
                + Vec3::splat(0.1) * (rng.next_f32() - 0.5);
            let d = d.normalize();
            // independent truth: |(o + t d - c)_xy| = r as a plain f64 quadratic
            let (px, py) = (f64::from(o.x) - 1.0, f64::from(o.y) - 2.0);
            let (dx, dy) = (f64::from(d.x), f64::from(d.y));
            let a = dx * dx + dy * dy;
            let b = px * dx + py * dy;
            let c = px * px + py * py - 0.25;
            let disc = b * b - a * c;
            let truth = (disc >= 0.0)
                .then(|| [(-b - disc.sqrt()) / a, (-b + disc.sqrt()) / a])
                .and_then(|ts| {
                    ts.into_iter().find(|&t| {
                        let z = f64::from(o.z) + t * f64::from(d.z);
                        t > 1e-4 && (-1.0..=3.0).contains(&z)
                    })
                });
            let got = closest(&g, &Ray::new(o, d));
            match (truth, got) {
                (Some(t), Some(h)) => {
                    hits += 1;
                    assert!((h.t as f64 - t).abs() < 1e-4, "{} vs {t}", h.t);
                    let radial = (h.p - Vec3::new(1.0, 2.0, h.p.z)).normalize();
                    assert!((h.n - radial).length() < 1e-4, "{:?} vs {radial:?}", h.n);
                    assert!((h.uv.y - (h.p.z + 1.0) / 4.0).abs() < 1e-5);
                }
                (None, None) => {}
                // rays grazing an end rim may differ by rounding
                (t, h) => {
                    let z = h
                        .map(|h| h.p.z)
                        .unwrap_or_else(|| (f64::from(o.z) + t.unwrap() * f64::from(d.z)) as f32);
                    assert!(
                        (z + 1.0).abs() < 1e-4 || (z - 3.0).abs() < 1e-4,
                        "{t:?} vs {h:?}"
                    );
                }
            }
        }
        assert!(hits > 500, "{hits}");
    }

    #[test]
    fn fixed_rays_give_mitsubas_t_uv_and_normal() {
        // Mitsuba 3.9.1 scalar_rgb: cylinder p0 = (0.1, -0.2, -1), p1 = (0.3, 0.4, 1.5),
        // radius 0.7, to_world = translate(0.5, 0, 0)·rotate(x, 30°); rays below
        let tw = Transform::translate(Vec3::new(0.5, 0.0, 0.0))
            .then_after(&Transform::rotate(Vec3::X, 30.0).unwrap());
        let g = cylinder(vec![
            ("p0", Value::Point(Vec3::new(0.1, -0.2, -1.0))),
            ("p1", Value::Point(Vec3::new(0.3, 0.4, 1.5))),
            ("radius", Value::Float(0.7)),
            ("to_world", Value::Transform(tw)),
        ]);
        for &(o, d, t, uv, n) in super::mitsuba_reference::RAYS {
            let h = closest(&g, &Ray::new(Vec3::from(o), Vec3::from(d).normalize()));
            let h = h.unwrap_or_else(|| panic!("no hit for {o:?} {d:?}"));
            assert!((h.t - t).abs() < 1e-4, "t {} vs {t}", h.t);
            assert!(
                (h.uv - Vec2::from(uv)).length() < 1e-4,
                "uv {:?} vs {uv:?}",
                h.uv
            );
            assert!(
                (h.n - Vec3::from(n)).length() < 1e-4,
                "n {:?} vs {n:?}",
                h.n
            );
        }
        for &(o, d) in super::mitsuba_reference::MISSES {
            assert!(closest(&g, &Ray::new(Vec3::from(o), Vec3::from(d).normalize())).is_none());
        }
    }

    #[test]
    fn flips_sampling_and_errors() {
        let g = cylinder(vec![("flip_normals", Value::Bool(true))]);
        let h = closest(&g, &Ray::new(Vec3::new(-3.0, 0.0, 0.5), Vec3::X)).unwrap();
        assert!((h.t - 2.0).abs() < 1e-6 && (h.n - Vec3::X).length() < 1e-6);
        // a mirroring to_world keeps the normals outside, as Mitsuba does
        let mirror = Transform::scale(Vec3::new(-1.0, 1.0, 1.0)).unwrap();
        let g = cylinder(vec![("to_world", Value::Transform(mirror))]);
        let h = closest(&g, &Ray::new(Vec3::new(-3.0, 0.0, 0.5), Vec3::X)).unwrap();
        assert!((h.n + Vec3::X).length() < 1e-6, "{:?}", h.n);
        // inside the tube the far wall is hit from within
        let h = closest(&g, &Ray::new(Vec3::new(0.0, 0.0, 0.5), Vec3::Y)).unwrap();
        assert!((h.t - 1.0).abs() < 1e-6 && (h.uv - Vec2::new(0.25, 0.5)).length() < 1e-6);
        let g = cylinder(vec![
            ("radius", Value::Float(0.5)),
            ("p1", Value::Point(Vec3::new(1.0, 1.0, 1.0))),
        ]);
        check_sampling(&g, 0, 2.0 * PI * 0.5 * 3f32.sqrt());
        // uniform in height along the axis: 5 bins of the projection
        let axis = Vec3::ONE.normalize();
        let bin = |p: Vec3| ((p.dot(axis) / 3f32.sqrt() * 5.0) as usize).min(4);
        check_bins(&g, 0, bin, &[0.2; 5]);
        let e = try_build(&[shape_desc(
            "cylinder",
            vec![("p1", Value::Point(Vec3::ZERO))],
        )])
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("p1") && e.contains("test.xml:10"), "{e}");
        let e = try_build(&[shape_desc("cylinder", vec![("radius", Value::Float(0.0))])])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("radius"), "{e}");
    }

    #[test]
    fn bounds_hold_every_sample() {
        let tw = Transform::rotate(Vec3::new(1.0, 2.0, 0.5), 40.0).unwrap();
        let g = cylinder(vec![
            ("to_world", Value::Transform(tw)),
            ("radius", Value::Float(2.0)),
        ]);
        let b = g.bounds();
        let mut rng = crate::math::Pcg32::new(1, 2);
        for _ in 0..1000 {
            let ps = g.sample_position(0, Vec2::new(rng.next_f32(), rng.next_f32()));
            assert!((ps.p.cmpge(b.min - 1e-5) & ps.p.cmple(b.max + 1e-5)).all());
        }
    }
}

/// Hits of fixed rays on one cylinder as Mitsuba 3.9.1 reports them
/// (`ray_intersect`: t, uv, n); see the test that reads them.
#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod mitsuba_reference {
    type V = [f32; 3];
    pub const RAYS: &[(V, V, f32, [f32; 2], V)] = &[
        (
            [3.544, 0.091, 3.81],
            [-0.745, 0.073, -0.663],
            3.652728,
            [0.2377149, 0.8759648],
            [0.06774225, 0.9580798, 0.2783776],
        ),
        (
            [2.415, -2.604, 2.973],
            [-0.397, 0.745, -0.537],
            4.258438,
            [0.2468973, 0.5902795],
            [0.01027357, 0.9589747, 0.2833054],
        ),
        (
            [-0.556, 2.312, 3.873],
            [0.175, -0.324, -0.93],
            4.665283,
            [0.3359967, 0.1235785],
            [-0.5207079, 0.8061306, 0.2810991],
        ),
        (
            [-2.578, 0.871, 1.639],
            [0.862, -0.045, -0.505],
            3.394951,
            [0.3211841, 0.2795915],
            [-0.4394399, 0.8509266, 0.2877783],
        ),
        (
            [-0.017, -0.051, 0.002],
            [0.953, -0.05, -0.298],
            0.0009477409,
            [0.5184499, 0.381699],
            [-0.9891949, -0.1415074, 0.03832932],
        ),
        (
            [0.177, 1.129, 3.513],
            [0.105, -0.552, -0.827],
            3.552596,
            [0.7048228, 0.6968641],
            [-0.2704092, -0.9288345, -0.2532692],
        ),
        (
            [3.074, -0.942, 1.916],
            [-0.824, 0.463, -0.327],
            2.032665,
            [0.07299085, 0.882015],
            [0.8898715, 0.4520153, 0.06173097],
        ),
        (
            [2.562, -1.792, -0.991],
            [-0.621, 0.744, 0.246],
            2.124679,
            [0.9087679, 0.2629052],
            [0.8425583, -0.4939559, -0.2147164],
        ),
    ];
    pub const MISSES: &[(V, V)] = &[
        ([-0.066, 1.406, -0.192], [-0.287, -0.495, 0.82]),
        ([-2.474, -0.321, -1.105], [0.603, -0.04, 0.797]),
        ([-0.002, 3.648, 3.226], [-0.002, -0.869, -0.495]),
    ];
}
