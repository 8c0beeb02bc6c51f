//! Shapes. Analytic shapes (`sphere`, `rectangle`, `disk`) keep their own
//! records; `obj`, `ply` and `cube` become triangles in the shared
//! [`MeshStore`]. Every shape is split into BVH primitives ([`Prim`]).
//!
//! Shared parameters: `to_world`, `flip_normals`, a nested or referenced
//! `bsdf` (default: diffuse 0.5), a nested `area` emitter.

use crate::error::{Error, Result};
use crate::math::{Aabb, Distribution1D, Ray, Vec2, Vec3};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::ObjectDesc;

/// `Shape::emitter` when the shape does not emit.
pub const NO_EMITTER: u32 = u32::MAX;

/// A ray–surface intersection, in world space.
#[derive(Clone, Copy, Debug)]
pub struct Hit {
    /// Ray distance.
    pub t: f32,
    /// Position.
    pub p: Vec3,
    /// Geometric normal (unit; follows winding / outward side, and `flip_normals`).
    pub ng: Vec3,
    /// Shading normal (unit; interpolated vertex normals where present, else `ng`).
    pub n: Vec3,
    /// Texture coordinates.
    pub uv: Vec2,
    /// Position derivative along u (for anisotropic frames); may be zero.
    pub dpdu: Vec3,
    /// The shape that was hit.
    pub shape: u32,
}

/// A point sampled on a shape's surface.
#[derive(Clone, Copy, Debug)]
pub struct PositionSample {
    /// Position.
    pub p: Vec3,
    /// Unit normal at `p` (the emitting side for area lights).
    pub n: Vec3,
    /// Texture coordinates at `p`.
    pub uv: Vec2,
    /// Density with respect to area.
    pub pdf: f32,
}

/// One BVH primitive: a triangle of a mesh shape, or a whole analytic shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Prim {
    /// Owning shape.
    pub shape: u32,
    /// Triangle index in [`MeshStore::tris`] (meshes) or 0.
    pub index: u32,
}

/// Vertex and index data of every mesh of the scene.
#[derive(Clone, Debug, Default)]
pub struct MeshStore {
    /// World-space positions.
    pub positions: Vec<Vec3>,
    /// World-space unit normals (empty slice for meshes without normals).
    pub normals: Vec<Vec3>,
    /// Texture coordinates.
    pub uvs: Vec<Vec2>,
    /// Triangles as absolute vertex indices.
    pub tris: Vec<[u32; 3]>,
}

/// A shape record: its geometry plus material and emitter handles.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Shape {
    /// Geometry.
    pub geom: AnyShape,
    /// BSDF handle.
    pub bsdf: u32,
    /// Emitter handle or [`NO_EMITTER`].
    pub emitter: u32,
}

/// Analytic and mesh geometry (filled in by the shapes helper).
#[derive(Clone, Copy, Debug)]
pub enum AnyShape {
    /// Placeholder until the shape plugins land.
    None,
}

/// All geometry of a scene.
#[derive(Clone, Debug, Default)]
pub struct Geometry {
    /// Shape records.
    pub shapes: Vec<Shape>,
    /// Mesh data.
    pub mesh: MeshStore,
    /// BVH primitives.
    pub prims: Vec<Prim>,
    /// Per-shape area distributions over triangles (index = shape; empty for analytic shapes).
    pub area_dists: Vec<Distribution1D>,
}

impl Geometry {
    /// Bounds of one primitive.
    pub fn prim_bounds(&self, _prim: u32) -> Aabb {
        Aabb::EMPTY
    }

    /// Intersects one primitive: `(t, prim-specific coordinates)` for `t < ray.tmax`.
    pub fn intersect_prim(&self, _prim: u32, _ray: &Ray) -> Option<(f32, Vec2)> {
        None
    }

    /// Completes a hit found by [`Self::intersect_prim`].
    pub fn surface_interaction(&self, prim: u32, ray: &Ray, t: f32, _coords: Vec2) -> Hit {
        let p = ray.at(t);
        Hit {
            t,
            p,
            ng: Vec3::Z,
            n: Vec3::Z,
            uv: Vec2::ZERO,
            dpdu: Vec3::ZERO,
            shape: self.prims[prim as usize].shape,
        }
    }

    /// Samples a point uniformly by area on shape `shape`.
    pub fn sample_position(&self, _shape: u32, _u: Vec2) -> PositionSample {
        PositionSample {
            p: Vec3::ZERO,
            n: Vec3::Z,
            uv: Vec2::ZERO,
            pdf: 0.0,
        }
    }

    /// Total surface area of shape `shape`.
    pub fn surface_area(&self, _shape: u32) -> f32 {
        0.0
    }

    /// Bounds of everything.
    pub fn bounds(&self) -> Aabb {
        (0..self.prims.len() as u32).fold(Aabb::EMPTY, |b, i| b.union(&self.prim_bounds(i)))
    }
}

/// Names of the shape plugins, for error messages.
pub const KNOWN: &[&str] = &[];

/// Builds a `<shape>` object: adds its geometry, primitives, BSDF and area
/// emitter to the context.
pub fn build(obj: &ObjectDesc, _ctx: &mut BuildCtx) -> Result<()> {
    Err(Error::UnknownPlugin {
        loc: obj.loc.clone(),
        category: "shape",
        name: obj.kind.clone(),
        known: KNOWN.join(", "),
    })
}
