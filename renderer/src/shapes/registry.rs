//! What each shape record kind implements for the dispatch of
//! [`AnyShape`](super::AnyShape): [`ShapeRecord`].

use super::{mesh, Geometry, Hit, PositionSample, Prim};
use crate::math::{Aabb, Ray, Vec2, Vec3};

/// What a shape record does for the scene's BVH and the integrators. `g` is the
/// geometry the record belongs to, `pr` the primitive (a mesh triangle, or the whole
/// analytic shape).
pub trait ShapeRecord {
    /// Bounds of primitive `pr`.
    fn bounds(&self, g: &Geometry, pr: Prim) -> Aabb;

    /// `(t, prim-specific coordinates)` for `RAY_TMIN < t < ray.tmax` (triangles:
    /// barycentrics `(b1, b2)`; rectangles and disks: local `(x, y)`; others unused).
    fn intersect(&self, g: &Geometry, pr: Prim, ray: &Ray) -> Option<(f32, Vec2)>;

    /// Completes a hit found by [`Self::intersect`].
    fn interaction(&self, g: &Geometry, pr: Prim, ray: &Ray, t: f32, coords: Vec2) -> Hit;

    /// A point uniformly by area on shape `shape` (`pdf = 0` for a shape without area).
    fn sample_position(&self, g: &Geometry, shape: u32, u: Vec2) -> PositionSample;

    /// Total surface area.
    fn surface_area(&self) -> f32;
}

impl ShapeRecord for super::Mesh {
    fn bounds(&self, g: &Geometry, pr: Prim) -> Aabb {
        mesh::tri_bounds(&g.mesh, pr.index)
    }
    fn intersect(&self, g: &Geometry, pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        mesh::intersect_tri(&g.mesh, pr.index, ray)
    }
    fn interaction(&self, g: &Geometry, pr: Prim, _ray: &Ray, t: f32, coords: Vec2) -> Hit {
        super::Mesh::interaction(self, &g.mesh, pr, t, coords)
    }
    fn sample_position(&self, g: &Geometry, shape: u32, u: Vec2) -> PositionSample {
        super::Mesh::sample_position(self, &g.mesh, &g.area_dists[shape as usize], u)
    }
    fn surface_area(&self) -> f32 {
        self.area
    }
}

impl ShapeRecord for super::Sphere {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        super::Sphere::bounds(self)
    }
    fn intersect(&self, _g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        super::Sphere::intersect(self, ray)
    }
    fn interaction(&self, g: &Geometry, pr: Prim, ray: &Ray, t: f32, _coords: Vec2) -> Hit {
        super::Sphere::interaction(self, pr.shape, ray, t, !g.uv_unread)
    }
    fn sample_position(&self, _g: &Geometry, _shape: u32, u: Vec2) -> PositionSample {
        super::Sphere::sample_position(self, u)
    }
    fn surface_area(&self) -> f32 {
        super::Sphere::surface_area(self)
    }
}

impl ShapeRecord for super::Rectangle {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        super::Rectangle::bounds(self)
    }
    fn intersect(&self, _g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        super::Rectangle::intersect(self, ray)
    }
    fn interaction(&self, _g: &Geometry, pr: Prim, ray: &Ray, t: f32, coords: Vec2) -> Hit {
        super::Rectangle::interaction(self, pr.shape, ray, t, coords)
    }
    fn sample_position(&self, _g: &Geometry, _shape: u32, u: Vec2) -> PositionSample {
        super::Rectangle::sample_position(self, u)
    }
    fn surface_area(&self) -> f32 {
        self.area
    }
}

impl ShapeRecord for super::Disk {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        super::Disk::bounds(self)
    }
    fn intersect(&self, _g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        super::Disk::intersect(self, ray)
    }
    fn interaction(&self, _g: &Geometry, pr: Prim, ray: &Ray, t: f32, coords: Vec2) -> Hit {
        super::Disk::interaction(self, pr.shape, ray, t, coords)
    }
    fn sample_position(&self, _g: &Geometry, _shape: u32, u: Vec2) -> PositionSample {
        super::Disk::sample_position(self, u)
    }
    fn surface_area(&self) -> f32 {
        self.area
    }
}

impl ShapeRecord for super::Cylinder {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        super::Cylinder::bounds(self)
    }
    fn intersect(&self, _g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        super::Cylinder::intersect(self, ray)
    }
    fn interaction(&self, _g: &Geometry, pr: Prim, ray: &Ray, t: f32, _coords: Vec2) -> Hit {
        super::Cylinder::interaction(self, pr.shape, ray, t)
    }
    fn sample_position(&self, _g: &Geometry, _shape: u32, u: Vec2) -> PositionSample {
        super::Cylinder::sample_position(self, u)
    }
    fn surface_area(&self) -> f32 {
        super::Cylinder::surface_area(self)
    }
}

impl ShapeRecord for super::instance::Instance {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        self.bounds
    }
    fn intersect(&self, g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        super::instance::Instance::intersect(self, &g.groups, ray)
    }
    fn interaction(&self, g: &Geometry, pr: Prim, ray: &Ray, t: f32, _coords: Vec2) -> Hit {
        let base = g.group_base.get(self.group as usize).copied();
        super::instance::Instance::interaction(self, &g.groups, base.unwrap_or(pr.shape), ray, t)
    }
    // instances never emit (emitters are refused in shape groups)
    fn sample_position(&self, _g: &Geometry, _shape: u32, _u: Vec2) -> PositionSample {
        PositionSample {
            p: Vec3::ZERO,
            n: Vec3::Z,
            uv: Vec2::ZERO,
            pdf: 0.0,
            prim: 0,
            bary: Vec2::ZERO,
        }
    }
    fn surface_area(&self) -> f32 {
        0.0
    }
}
