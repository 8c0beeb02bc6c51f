//! The loader-independent triangle mesh: validation, `to_world`, vertex normals, its
//! attributes, and how it joins the scene's geometry.

use std::path::Path;

use rayon::prelude::*;

use super::{tri_area, Mesh, StoredAttribute};
use crate::error::{Error, Result};
use crate::math::{Distribution1D, Transform, Vec2, Vec3};
use crate::parallel::on_process_pool;
use crate::shapes::{normalize_or, AnyShape, Geometry, Prim, Shape, NO_EMITTER};

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
