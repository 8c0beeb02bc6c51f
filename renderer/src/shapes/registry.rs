//! The machinery behind the shape registry in [`super`]: the `register_shapes!` macro
//! that turns the one list of records and the one list of plugins into the
//! [`AnyShape`](super::AnyShape) enum and its dispatch, the known names, the
//! registry table and the geometry build match; and [`ShapeRecord`], what each record
//! kind implements for that dispatch.

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

/// Generates the shape registry from one list of record kinds (`Variant = module::Type`,
/// each a [`ShapeRecord`]) and one list of plugin modules (see the module docs of
/// [`super`]). Each plugin module has a manual (its module doc) and
/// `pub fn build(p: &Props, ctx: &dyn BuildContext, to_world: &Transform, flip: bool)
/// -> Result<Built>`.
macro_rules! register_shapes {
    (
        records { $($variant:ident = $rmod:ident :: $record:ident),+ $(,)? }
        plugins { $($plugin:ident),+ $(,)? }
    ) => {
        /// Every kind of shape record, one variant per line of the registry's records.
        #[derive(Clone, Copy, Debug)]
        pub enum AnyShape {
            $(
                #[doc = concat!("[`", stringify!($rmod), "::", stringify!($record), "`].")]
                $variant($rmod::$record),
            )+
        }

        impl AnyShape {
            /// Bounds of primitive `pr` ([`ShapeRecord::bounds`]).
            #[inline]
            pub fn bounds(&self, g: &Geometry, pr: Prim) -> Aabb {
                match self { $(AnyShape::$variant(r) => ShapeRecord::bounds(r, g, pr),)+ }
            }

            /// Intersects primitive `pr` ([`ShapeRecord::intersect`]).
            #[inline]
            pub fn intersect(&self, g: &Geometry, pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
                match self { $(AnyShape::$variant(r) => ShapeRecord::intersect(r, g, pr, ray),)+ }
            }

            /// Completes a hit ([`ShapeRecord::interaction`]).
            #[inline]
            pub fn interaction(&self, g: &Geometry, pr: Prim, ray: &Ray, t: f32, coords: Vec2) -> Hit {
                match self {
                    $(AnyShape::$variant(r) => ShapeRecord::interaction(r, g, pr, ray, t, coords),)+
                }
            }

            /// A point uniformly by area ([`ShapeRecord::sample_position`]).
            pub fn sample_position(&self, g: &Geometry, shape: u32, u: Vec2) -> PositionSample {
                match self {
                    $(AnyShape::$variant(r) => ShapeRecord::sample_position(r, g, shape, u),)+
                }
            }

            /// Total surface area ([`ShapeRecord::surface_area`]).
            pub fn surface_area(&self) -> f32 {
                match self { $(AnyShape::$variant(r) => ShapeRecord::surface_area(r),)+ }
            }
        }

        /// Names of the shape plugins (the scene `type` strings), in registry order.
        pub const KNOWN: &[&str] = &[$(stringify!($plugin)),+];

        /// Every registered shape plugin, in registry order.
        pub static REGISTRY: &[PluginInfo] = &[$(
            PluginInfo {
                category: "shape",
                name: stringify!($plugin),
                source: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"), "/src/shapes/", stringify!($plugin), ".rs"
                )),
            },
        )+];

        /// Builds the geometry of shape `obj` (placed by `to_world`, normals flipped by
        /// `flip`) with its plugin's `build`.
        pub(crate) fn build_geometry(
            obj: &ObjectDesc,
            ctx: &dyn BuildContext,
            to_world: &Transform,
            flip: bool,
        ) -> Result<Built> {
            let p = &obj.props;
            match obj.kind.as_str() {
                $(stringify!($plugin) => $plugin::build(p, ctx, to_world, flip),)+
                _ => Err(Error::UnknownPlugin {
                    loc: obj.loc.clone(),
                    category: "shape",
                    name: obj.kind.clone(),
                    known: KNOWN.join(", "),
                }),
            }
        }
    };
}
pub(super) use register_shapes;
