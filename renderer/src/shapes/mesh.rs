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

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use crate::parallel::on_process_pool;

use super::AnyShape;
use super::{normalize_or, Geometry, Hit, MeshStore, PositionSample, Prim, Shape, NO_EMITTER};
use crate::desc::params::{ArrayValue, ParamValue, Range, Target};
use crate::desc::props::{Props, Value};
use crate::error::{Error, Result};
use crate::math::triangle::{intersect_tri_watertight, TriRay};
use crate::math::warp::square_to_uniform_triangle;
use crate::math::{Aabb, Distribution1D, Frame, Ray, Transform, Vec2, Vec3};
use crate::plugin::BuildContext;

/// The property that holds written vertex positions ([`crate::desc::props::Value::Positions`]).
pub const POSITIONS_PROP: &str = "vertex_positions";

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

/// A loaded triangle mesh before it joins the scene.
#[derive(Clone, Debug, Default)]
pub struct TriMesh {
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Optional per-vertex normals.
    pub normals: Option<Vec<Vec3>>,
    /// Optional per-vertex texture coordinates.
    pub uvs: Option<Vec<Vec2>>,
    /// Triangles (indices into the vertex arrays).
    pub tris: Vec<[u32; 3]>,
    /// Named per-vertex or per-triangle values (a PLY file's extra properties), read by
    /// the `mesh_attribute` texture.
    pub attributes: Vec<MeshAttribute>,
}

/// One named attribute of a mesh: `dim` values per vertex (`vertex_*` names) or per
/// triangle (`face_*` names), as in Mitsuba 3.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshAttribute {
    /// `vertex_<prefix>` or `face_<prefix>`.
    pub name: String,
    /// Values per vertex or triangle (1 to 4).
    pub dim: u32,
    /// `dim` values per vertex, or per triangle for a face attribute.
    pub data: Vec<f32>,
}

impl MeshAttribute {
    /// Whether the values are per triangle.
    pub fn is_face(&self) -> bool {
        self.name.starts_with("face_")
    }
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

impl TriMesh {
    /// Checks the data read from `path`: at least one face, indices in range,
    /// finite positions and texture coordinates, attribute arrays of the right length.
    pub fn validate(&self, path: &Path) -> Result<()> {
        let n = self.positions.len();
        if self.tris.is_empty() {
            return Err(Error::io(path, "the mesh has no faces"));
        }
        if let Some((i, p)) = self
            .positions
            .iter()
            .enumerate()
            .find(|(_, p)| !p.is_finite())
        {
            return Err(Error::io(
                path,
                format!("vertex {i} has a non-finite position {p}"),
            ));
        }
        for (i, t) in self.tris.iter().enumerate() {
            if let Some(&v) = t.iter().find(|&&v| v as usize >= n) {
                return Err(Error::io(
                    path,
                    format!("face {i} refers to vertex {v}, but there are only {n} vertices"),
                ));
            }
        }
        let bad_len =
            |what: &str, len: usize| Error::io(path, format!("{len} {what} for {n} vertices"));
        if let Some(nr) = &self.normals {
            if nr.len() != n {
                return Err(bad_len("normals", nr.len()));
            }
        }
        if let Some(uv) = &self.uvs {
            if uv.len() != n {
                return Err(bad_len("texture coordinates", uv.len()));
            }
            if let Some(i) = uv.iter().position(|t| !t.is_finite()) {
                return Err(Error::io(
                    path,
                    format!("vertex {i} has non-finite texture coordinates"),
                ));
            }
        }
        for a in &self.attributes {
            let count = if a.is_face() { self.tris.len() } else { n };
            if !(1..=4).contains(&a.dim) || a.data.len() != count * a.dim as usize {
                return Err(Error::io(
                    path,
                    format!(
                        "attribute \"{}\" has {} values for {count} {} of {} values each",
                        a.name,
                        a.data.len(),
                        if a.is_face() { "faces" } else { "vertices" },
                        a.dim
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Replaces the positions with written ones ([`POSITIONS_PROP`] in `p`, world
    /// space) and drops the file's normals, which no longer fit them.
    pub fn with_written_positions(mut self, p: &Props, path: &Path) -> Result<Self> {
        let Some(e) = p.get(POSITIONS_PROP) else {
            return Ok(self);
        };
        let Value::Positions(v) = &e.value else {
            return Err(Error::param(
                &e.loc,
                POSITIONS_PROP,
                format!("expected vertex positions, got a {}", e.value.type_name()),
            ));
        };
        if v.len() != self.positions.len() {
            return Err(Error::param(
                &e.loc,
                POSITIONS_PROP,
                format!(
                    "{} vertex positions for a mesh of {} vertices ({})",
                    v.len(),
                    self.positions.len(),
                    path.display()
                ),
            ));
        }
        self.positions.clone_from(v);
        self.normals = None;
        Ok(self)
    }

    /// Validates, applies `to_world` (normals by the inverse transpose) and, as
    /// Mitsuba does, computes smooth vertex normals for meshes without any unless
    /// `face_normals` is set (which also discards normals from the file).
    pub fn finish(mut self, path: &Path, to_world: &Transform, face_normals: bool) -> Result<Self> {
        self.validate(path)?;
        if face_normals {
            self.normals = None;
        }
        self.transform(to_world);
        if !face_normals && self.normals.is_none() {
            self.compute_vertex_normals()?;
        }
        Ok(self)
    }

    /// Applies `t` to positions and normals.
    pub fn transform(&mut self, t: &Transform) {
        if *t == Transform::IDENTITY {
            return;
        }
        for p in &mut self.positions {
            *p = t.point(*p);
        }
        if let Some(ns) = &mut self.normals {
            for n in ns {
                *n = normalize_or(t.normal(*n), Vec3::ZERO);
            }
        }
    }

    /// Smooth vertex normals: face normals weighted by the angle at each corner. The
    /// corners' weighted normals are computed in parallel and summed per vertex in
    /// triangle order (the same bits whatever the thread count).
    pub fn compute_vertex_normals(&mut self) -> Result<()> {
        let (pos, tris) = (&self.positions, &self.tris);
        let corners: Vec<[Vec3; 3]> = on_process_pool(|| {
            tris.par_iter()
                .map(|t| {
                    let p = t.map(|i| pos[i as usize]);
                    let nf = normalize_or((p[1] - p[0]).cross(p[2] - p[0]), Vec3::ZERO);
                    if nf == Vec3::ZERO {
                        return [Vec3::ZERO; 3];
                    }
                    std::array::from_fn(|k| {
                        let a = normalize_or(p[(k + 1) % 3] - p[k], Vec3::ZERO);
                        let b = normalize_or(p[(k + 2) % 3] - p[k], Vec3::ZERO);
                        nf * a.dot(b).clamp(-1.0, 1.0).acos()
                    })
                })
                .collect()
        })?;
        let mut acc = vec![Vec3::ZERO; pos.len()];
        for (t, c) in self.tris.iter().zip(&corners) {
            for k in 0..3 {
                acc[t[k] as usize] += c[k];
            }
        }
        for n in &mut acc {
            *n = normalize_or(*n, Vec3::ZERO);
        }
        self.normals = Some(acc);
        Ok(())
    }

    /// Appends the mesh to `geom` as one shape (triangles with zero area get no
    /// BVH primitive) and returns the shape handle.
    pub fn add_to(self, geom: &mut Geometry, flip: bool, bsdf: u32) -> u32 {
        let handle = geom.shapes.len() as u32;
        let store = &mut geom.mesh;
        let v0 = store.positions.len();
        let nv = self.positions.len();
        let first_tri = store.tris.len() as u32;
        let (has_normals, has_uvs) = (self.normals.is_some(), self.uvs.is_some());
        append_attr(&mut store.normals, self.normals, v0, nv);
        append_attr(&mut store.uvs, self.uvs, v0, nv);
        for a in self.attributes {
            let d = a.dim as usize;
            let per_corner = !a.is_face();
            let data = if per_corner {
                let corner = |v: u32| &a.data[v as usize * d..(v as usize + 1) * d];
                self.tris
                    .iter()
                    .flat_map(|t| t.iter().flat_map(|&v| corner(v)))
                    .copied()
                    .collect()
            } else {
                a.data
            };
            store.attributes.push(StoredAttribute {
                shape: handle,
                name: a.name,
                dim: a.dim,
                per_corner,
                first_tri,
                data,
            });
        }
        store.positions.extend_from_slice(&self.positions);
        let mut areas = Vec::with_capacity(self.tris.len());
        for (k, t) in self.tris.iter().enumerate() {
            let abs = t.map(|i| i + v0 as u32);
            store.tris.push(abs);
            let a = tri_area(store, first_tri + k as u32);
            areas.push(a);
            if a > 0.0 {
                geom.prims.push(Prim {
                    shape: handle,
                    index: first_tri + k as u32,
                });
            }
        }
        let dist = Distribution1D::new(&areas).unwrap_or_default();
        let rec = Mesh {
            first_tri,
            tri_count: self.tris.len() as u32,
            first_vertex: v0 as u32,
            vertex_count: nv as u32,
            has_normals,
            has_uvs,
            flip,
            area: if dist.is_empty() { 0.0 } else { dist.sum },
        };
        geom.shapes.push(Shape {
            geom: AnyShape::Mesh(rec),
            bsdf,
            emitter: NO_EMITTER,
        });
        geom.area_dists.push(dist);
        handle
    }
}

/// Moves shape `handle`'s mesh in `geom` to the positions of `m` (the same mesh,
/// rebuilt from its description after its positions were written): positions,
/// normals, the area distribution and the area, in place; the primitives stay.
///
/// Returns `false` when `m` does not fit in place: another vertex or triangle count,
/// normals gained or lost, or a triangle that became degenerate or stopped being so
/// (the primitive set changes, which needs a BVH build). `geom` is then partly
/// written and must be discarded.
pub fn move_in_place(geom: &mut Geometry, handle: u32, m: &TriMesh) -> bool {
    let Some(AnyShape::Mesh(rec)) = geom.shapes.get(handle as usize).map(|s| s.geom) else {
        return false;
    };
    let (v0, nv) = (rec.first_vertex as usize, rec.vertex_count as usize);
    if m.positions.len() != nv
        || m.tris.len() != rec.tri_count as usize
        || m.normals.is_some() != rec.has_normals
    {
        return false;
    }
    let store = &mut geom.mesh;
    let was_prim: Vec<bool> = (0..rec.tri_count)
        .map(|k| tri_area(store, rec.first_tri + k) > 0.0)
        .collect();
    store.positions[v0..v0 + nv].copy_from_slice(&m.positions);
    if let Some(n) = &m.normals {
        store.normals[v0..v0 + nv].copy_from_slice(n);
    }
    let areas: Vec<f32> = (0..rec.tri_count)
        .map(|k| tri_area(store, rec.first_tri + k))
        .collect();
    if areas.iter().zip(&was_prim).any(|(&a, &p)| (a > 0.0) != p) {
        return false;
    }
    let dist = Distribution1D::new(&areas).unwrap_or_default();
    let area = if dist.is_empty() { 0.0 } else { dist.sum };
    geom.area_dists[handle as usize] = dist;
    geom.shapes[handle as usize].geom = AnyShape::Mesh(Mesh { area, ..rec });
    true
}

/// Declares the world-space vertex positions `positions` of the mesh being built, under
/// both keys (see the module docs).
pub fn declare_positions(ctx: &mut dyn BuildContext, positions: &[Vec3]) {
    let data: Arc<Vec<f32>> = Arc::new(positions.iter().flat_map(|p| p.to_array()).collect());
    let n = positions.len();
    for (name, shape) in [("vertex_positions", vec![3 * n]), ("positions", vec![n, 3])] {
        let value = ParamValue::Array(ArrayValue {
            shape,
            data: data.clone(),
        });
        let target = Target::Prop {
            set: POSITIONS_PROP.to_string(),
            remove: vec!["to_world".to_string()],
        };
        ctx.declare(name, value, target, Range::Any);
    }
}

/// Appends one mesh's optional attribute to a store array that is either empty
/// or parallel to the positions (`v0` existing vertices, `nv` new ones).
fn append_attr<T: Copy + Default>(dst: &mut Vec<T>, src: Option<Vec<T>>, v0: usize, nv: usize) {
    match src {
        Some(v) => {
            dst.resize(v0, T::default());
            dst.extend_from_slice(&v);
        }
        None if !dst.is_empty() => dst.resize(v0 + nv, T::default()),
        None => {}
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn one_tri(flip: bool, normals: Option<Vec<Vec3>>, uvs: Option<Vec<Vec2>>) -> Geometry {
        let m = TriMesh {
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            normals,
            uvs,
            tris: vec![[0, 1, 2]],
            attributes: Vec::new(),
        };
        let mut g = Geometry::default();
        m.add_to(&mut g, flip, 0);
        g
    }

    #[test]
    fn ccw_triangle_faces_plus_z_and_barycentric_uv() {
        let g = one_tri(false, None, None);
        let ray = Ray::new(Vec3::new(0.25, 0.5, 2.0), -Vec3::Z);
        let (t, c) = g.intersect_prim(0, &ray).expect("hit");
        assert!((t - 2.0).abs() < 1e-6);
        let h = g.surface_interaction(0, &ray, t, c);
        assert!((h.ng - Vec3::Z).length() < 1e-6 && (h.n - Vec3::Z).length() < 1e-6);
        // without uvs the uv is the barycentric (b1, b2) = (x, y) for this triangle
        assert!((h.uv - Vec2::new(0.25, 0.5)).length() < 1e-6);
        // edges and misses
        assert!(g
            .intersect_prim(0, &Ray::new(Vec3::new(0.6, 0.6, 1.0), -Vec3::Z))
            .is_none());
        let mut short = ray;
        short.tmax = 1.5;
        assert!(g.intersect_prim(0, &short).is_none());
        // parallel ray: no hit, no NaN
        assert!(g
            .intersect_prim(0, &Ray::new(Vec3::new(-1.0, 0.2, 0.0), Vec3::X))
            .is_none());
        let f = one_tri(true, None, None);
        let h = f.surface_interaction(0, &ray, t, c);
        assert!((h.ng + Vec3::Z).length() < 1e-6 && (h.n + Vec3::Z).length() < 1e-6);
    }

    #[test]
    fn shading_normals_and_uvs_interpolate() {
        let n = vec![Vec3::Z, Vec3::new(1.0, 0.0, 1.0).normalize(), Vec3::Z];
        let uv = vec![
            Vec2::new(0.0, 0.0),
            Vec2::new(2.0, 0.0),
            Vec2::new(0.0, 4.0),
        ];
        let g = one_tri(false, Some(n.clone()), Some(uv));
        let ray = Ray::new(Vec3::new(0.5, 0.25, 1.0), -Vec3::Z);
        let (t, c) = g.intersect_prim(0, &ray).unwrap();
        let h = g.surface_interaction(0, &ray, t, c);
        assert!((h.uv - Vec2::new(1.0, 1.0)).length() < 1e-5, "{:?}", h.uv);
        let want = (n[0] * 0.25 + n[1] * 0.5 + n[2] * 0.25).normalize();
        assert!((h.n - want).length() < 1e-5);
        assert!((h.ng - Vec3::Z).length() < 1e-6);
        // u grows along x at rate 2 → dp/du = (0.5, 0, 0)
        assert!(
            (h.dpdu - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-5,
            "{:?}",
            h.dpdu
        );
    }

    #[test]
    fn degenerate_triangles_get_no_prim_and_validation_errors_name_the_file() {
        let m = TriMesh {
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::X * 2.0, Vec3::Y],
            normals: None,
            uvs: None,
            tris: vec![[0, 1, 2], [0, 1, 3]],
            attributes: Vec::new(),
        };
        let mut g = Geometry::default();
        m.add_to(&mut g, false, 0);
        assert_eq!(g.prims.len(), 1);
        assert!((g.surface_area(0) - 0.5).abs() < 1e-6);
        for _ in 0..10 {
            let s = g.sample_position(0, Vec2::new(0.3, 0.999));
            assert!(s.p.is_finite() && s.p.z == 0.0 && s.p.y >= 0.0);
        }
        let path = Path::new("dir/m.obj");
        let bad = TriMesh {
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::new(f32::NAN, 0.0, 0.0)],
            tris: vec![[0, 1, 2]],
            ..Default::default()
        };
        let e = bad.validate(path).unwrap_err().to_string();
        assert!(e.contains("dir/m.obj") && e.contains("non-finite"), "{e}");
        let bad = TriMesh {
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            tris: vec![[0, 1, 3]],
            ..Default::default()
        };
        let e = bad.validate(path).unwrap_err().to_string();
        assert!(e.contains("vertex 3") && e.contains("only 3"), "{e}");
        let e = TriMesh::default().validate(path).unwrap_err().to_string();
        assert!(e.contains("no faces"), "{e}");
    }

    #[test]
    fn mixed_meshes_keep_attribute_arrays_parallel() {
        let mut g = Geometry::default();
        let plain = TriMesh {
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            tris: vec![[0, 1, 2]],
            ..Default::default()
        };
        plain.clone().add_to(&mut g, false, 0);
        let mut with_uv = plain.clone();
        with_uv.uvs = Some(vec![Vec2::ONE; 3]);
        with_uv.add_to(&mut g, false, 0);
        plain.add_to(&mut g, false, 0);
        assert_eq!(g.mesh.uvs.len(), g.mesh.positions.len());
        assert!(g.mesh.normals.is_empty());
        let ray = Ray::new(Vec3::new(0.2, 0.2, 1.0), -Vec3::Z);
        let h = g.surface_interaction(1, &ray, 1.0, Vec2::new(0.2, 0.2));
        assert_eq!(h.uv, Vec2::ONE);
        assert_eq!(h.shape, 1);
    }

    #[test]
    fn smooth_normals_of_a_tent_average_the_faces() {
        // two faces meeting at the ridge x = 0 with slopes ±45°
        let mut m = TriMesh {
            positions: vec![
                Vec3::new(0.0, 0.0, 1.0),
                Vec3::new(0.0, 1.0, 1.0),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(-1.0, 0.0, 0.0),
            ],
            tris: vec![[0, 2, 1], [0, 1, 3]],
            ..Default::default()
        };
        m.compute_vertex_normals().unwrap();
        let n = m.normals.unwrap();
        assert!((n[0] - Vec3::Z).length() < 1e-5, "{:?}", n[0]);
        assert!((n[2] - Vec3::new(1.0, 0.0, 1.0).normalize()).length() < 1e-5);
    }
}
