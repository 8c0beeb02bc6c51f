//! Triangle meshes shared by `obj`, `ply` and `cube`: the loader-independent
//! [`TriMesh`] (validation, `to_world`, vertex normals), the per-shape
//! [`Mesh`] record, and triangle intersection / interaction / sampling.
//!
//! Every mesh declares its world-space vertex positions as parameters, under
//! Mitsuba 3.9's key `vertex_positions` (flat, `(3N,)`) and the newer `positions`
//! (`(N, 3)`); both name the same values. Writing them (property
//! [`POSITIONS_PROP`]) replaces the file's positions, makes `to_world` the identity
//! (they already include it) and, as in Mitsuba, recomputes smooth vertex normals
//! unless the mesh uses face normals. Texture coordinates and faces stay. The scene's
//! BVH is then refit over the new positions, not rebuilt
//! ([`crate::accel::Bvh::refit`]).
//!
//! Here: the scene's records of a mesh ([`Mesh`], [`StoredAttribute`]) and the queries
//! on its triangles; in `trimesh` the loaded [`TriMesh`] and its attributes, and in
//! `positions` written vertex positions (their parameters, the props they replace, the
//! in-place update). The ray–triangle test itself is [`crate::math::triangle`]'s.

mod positions;
mod trimesh;

use super::record::{FlatShape, FLAG_FLIP, FLAG_NORMALS, FLAG_UVS};
use super::{normalize_or, Geometry, Hit, MeshStore, PositionSample, Prim, ShapeRecord};
use crate::math::triangle::{intersect_tri_watertight, TriRay};
use crate::math::warp::square_to_uniform_triangle;
use crate::math::{Aabb, Distribution1D, Frame, Ray, Vec2, Vec3};

pub use positions::{declare_positions, move_in_place, POSITIONS_PROP};
pub use trimesh::{MeshAttribute, TriMesh};

/// A mesh shape's record: a range of [`MeshStore::tris`] plus its flags.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mesh {
    /// First triangle in [`MeshStore::tris`].
    pub first_tri: u32,
    /// Number of triangles.
    pub tri_count: u32,
    /// First vertex in [`MeshStore::positions`].
    pub first_vertex: u32,
    /// Number of vertices.
    pub vertex_count: u32,
    /// Whether the vertices carry shading normals.
    pub has_normals: bool,
    /// Whether the vertices carry texture coordinates.
    pub has_uvs: bool,
    /// `flip_normals`.
    pub flip: bool,
    /// Total surface area (world space).
    pub area: f32,
}

/// A mesh attribute in the scene's [`MeshStore`], laid out for lookups by triangle
/// alone: `dim` values per triangle (face attributes) or per triangle corner (vertex
/// attributes, three corners in the triangle's vertex order).
#[derive(Clone, Debug, PartialEq)]
pub struct StoredAttribute {
    /// The shape handle (in the geometry that holds the store).
    pub shape: u32,
    /// The attribute's name.
    pub name: String,
    /// Values per triangle or corner.
    pub dim: u32,
    /// Whether there are values per corner (a vertex attribute).
    pub per_corner: bool,
    /// The mesh's first triangle in [`MeshStore::tris`].
    pub first_tri: u32,
    /// The values.
    pub data: Vec<f32>,
}

/// Vertex indices and positions of triangle `tri`.
#[inline(always)]
pub fn tri_vertices(store: &MeshStore, tri: u32) -> ([u32; 3], [Vec3; 3]) {
    let t = store.tris[tri as usize];
    let p = [
        store.positions[t[0] as usize],
        store.positions[t[1] as usize],
        store.positions[t[2] as usize],
    ];
    (t, p)
}

/// Area of triangle `tri` (0 for degenerate or non-finite ones).
pub fn tri_area(store: &MeshStore, tri: u32) -> f32 {
    let (_, p) = tri_vertices(store, tri);
    let a = 0.5 * (p[1] - p[0]).cross(p[2] - p[0]).length();
    if a.is_finite() {
        a
    } else {
        0.0
    }
}

/// Bounds of triangle `tri`.
#[inline]
pub fn tri_bounds(store: &MeshStore, tri: u32) -> Aabb {
    let (_, p) = tri_vertices(store, tri);
    Aabb {
        min: p[0].min(p[1]).min(p[2]),
        max: p[0].max(p[1]).max(p[2]),
    }
}

/// Intersects triangle `tri`: `(t, (b1, b2))` for `RAY_TMIN < t < ray.tmax`.
#[inline]
pub fn intersect_tri(store: &MeshStore, tri: u32, ray: &Ray) -> Option<(f32, Vec2)> {
    let (_, p) = tri_vertices(store, tri);
    intersect_tri_watertight(p, &TriRay::new(ray), ray.tmax)
}

/// The surface of a mesh at one point of one triangle (world space).
struct MeshPoint {
    p: Vec3,
    ng: Vec3,
    n: Vec3,
    uv: Vec2,
    dpdu: Vec3,
    dpdv: Vec3,
}

impl Mesh {
    /// Position, normals, uv and the position derivatives at barycentrics `b` of
    /// triangle `tri`. With texture coordinates dp/du and dp/dv are Mitsuba's (zero dp/du
    /// and a tangent dp/dv where the uv map is degenerate); without them uv are the
    /// barycentrics, dp/du the normal's frame (as Mitsuba) and dp/dv its bitangent.
    fn eval(&self, store: &MeshStore, tri: u32, b: Vec2) -> MeshPoint {
        let (t, p) = tri_vertices(store, tri);
        let b0 = 1.0 - b.x - b.y;
        let pos = p[0] * b0 + p[1] * b.x + p[2] * b.y;
        let (e1, e2) = (p[1] - p[0], p[2] - p[0]);
        let mut ng = normalize_or(e1.cross(e2), Vec3::Z);
        let mut n = ng;
        if self.has_normals {
            let nv = t.map(|i| store.normals[i as usize]);
            n = normalize_or(nv[0] * b0 + nv[1] * b.x + nv[2] * b.y, ng);
        }
        let (uv, dpdu, dpdv) = if self.has_uvs {
            let w = t.map(|i| store.uvs[i as usize]);
            let uv = w[0] * b0 + w[1] * b.x + w[2] * b.y;
            let (d1, d2) = (w[1] - w[0], w[2] - w[0]);
            let det = d1.x * d2.y - d1.y * d2.x;
            if det != 0.0 {
                (
                    uv,
                    (e1 * d2.y - e2 * d1.y) / det,
                    (e2 * d1.x - e1 * d2.x) / det,
                )
            } else {
                (uv, Vec3::ZERO, Frame::from_normal(ng).t)
            }
        } else {
            // Mitsuba's defaults: uv = barycentrics, dp/du from the normal's frame.
            let f = Frame::from_normal(ng);
            (b, f.s, f.t)
        };
        if self.flip {
            ng = -ng;
            n = -n;
        }
        MeshPoint {
            p: pos,
            ng,
            n,
            uv,
            dpdu,
            dpdv,
        }
    }

    /// The hit record at barycentrics `coords` of primitive `pr`.
    pub fn interaction(&self, store: &MeshStore, pr: Prim, t: f32, coords: Vec2) -> Hit {
        let m = self.eval(store, pr.index, coords);
        Hit {
            t,
            p: m.p,
            ng: m.ng,
            n: m.n,
            uv: m.uv,
            dpdu: m.dpdu,
            dpdv: m.dpdv,
            shape: pr.shape,
            prim: pr.index,
            bary: coords,
        }
    }

    /// Uniform-by-area point: a triangle by area (`u.y`, reused), then uniform barycentrics.
    pub fn sample_position(
        &self,
        store: &MeshStore,
        dist: &Distribution1D,
        u: Vec2,
    ) -> PositionSample {
        if dist.is_empty() || self.area.is_nan() || self.area <= 0.0 {
            return PositionSample {
                p: Vec3::ZERO,
                n: Vec3::Z,
                uv: Vec2::ZERO,
                pdf: 0.0,
                prim: 0,
                bary: Vec2::ZERO,
            };
        }
        let (i, _, u_reused) = dist.sample(u.y);
        let b = square_to_uniform_triangle(Vec2::new(u.x, u_reused));
        let prim = self.first_tri + i as u32;
        let m = self.eval(store, prim, b);
        PositionSample {
            p: m.p,
            n: m.n,
            uv: m.uv,
            pdf: 1.0 / self.area,
            prim,
            bary: b,
        }
    }
}

impl ShapeRecord for Mesh {
    fn bounds(&self, g: &Geometry, pr: Prim) -> Aabb {
        tri_bounds(&g.mesh, pr.index)
    }
    fn intersect(&self, g: &Geometry, pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        intersect_tri(&g.mesh, pr.index, ray)
    }
    fn interaction(&self, g: &Geometry, pr: Prim, _ray: &Ray, t: f32, coords: Vec2) -> Hit {
        Mesh::interaction(self, &g.mesh, pr, t, coords)
    }
    fn sample_position(&self, g: &Geometry, shape: u32, u: Vec2) -> PositionSample {
        Mesh::sample_position(self, &g.mesh, &g.area_dists[shape as usize], u)
    }
    fn surface_area(&self) -> f32 {
        self.area
    }
    fn flatten(&self, f: &mut FlatShape) {
        f.flags = (u32::from(self.flip) * FLAG_FLIP)
            | (u32::from(self.has_normals) * FLAG_NORMALS)
            | (u32::from(self.has_uvs) * FLAG_UVS);
        f.first_tri = self.first_tri;
        f.tri_count = self.tri_count;
        f.area = self.area;
    }
}

#[cfg(test)]
mod tests;
