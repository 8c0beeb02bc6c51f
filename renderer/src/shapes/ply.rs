//! `ply`: a Stanford PLY triangle mesh (ASCII, binary little- or big-endian).
//!
//! | name              | type      | default  | meaning                                                    |
//! |-------------------|-----------|----------|------------------------------------------------------------|
//! | `filename`        | string    | required | the PLY file, relative to the scene file                   |
//! | `face_normals`    | boolean   | false    | ignore vertex normals and shade with the flat face normals |
//! | `flip_tex_coords` | boolean   | false    | use `1 - v` (Mitsuba 3's PLY default is no flip)           |
//! | `to_world`        | transform | identity | object-to-world transform                                  |
//! | `flip_normals`    | boolean   | false    | flip the normals                                           |
//!
//! Vertices need `x y z`; optional `nx ny nz` and texture coordinates named
//! `u v`, `s t` or `texture_u texture_v`. Faces are `vertex_indices` (or
//! `vertex_index`) lists; polygons are split into triangle fans. Without vertex
//! normals (and `face_normals` false) smooth normals are computed, as in Mitsuba 3.
//!
//! ```xml
//! <shape type="ply">
//!     <string name="filename" value="meshes/dragon.ply"/>
//!     <boolean name="face_normals" value="true"/>
//! </shape>
//! ```

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use ply_rs_bw::parser::Parser;
use ply_rs_bw::ply::{DefaultElement, ElementDef, Property};

use super::{Built, TriMesh};
use crate::error::{Error, Result};
use crate::math::{Transform, Vec2, Vec3};
use crate::scene::builder::BuildCtx;
use crate::scene::props::Props;

/// Reads a `ply` shape's parameters and loads its file.
pub fn build(p: &Props, ctx: &BuildCtx, to_world: &Transform) -> Result<Built> {
    let path = ctx.resolve_path(p, "filename")?;
    let face_normals = p.bool("face_normals", false)?;
    let flip_tc = p.bool("flip_tex_coords", false)?;
    let mesh = load(&path, flip_tc)?.finish(&path, to_world, face_normals)?;
    Ok(Built::Mesh(mesh))
}

/// Loads a PLY file into an object-space mesh.
pub fn load(path: &Path, flip_tex_coords: bool) -> Result<TriMesh> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let ply = Parser::<DefaultElement>::new()
        .read_ply(&mut BufReader::new(file))
        .map_err(|e| Error::io(path, format!("invalid PLY file: {e}")))?;
    let vdef = ply
        .header
        .elements
        .get("vertex")
        .ok_or_else(|| Error::io(path, "no \"vertex\" element"))?;
    let empty = Vec::new();
    let verts = ply.payload.get("vertex").unwrap_or(&empty);
    let faces = ply.payload.get("face").unwrap_or(&empty);
    let mut mesh = read_vertices(path, vdef, verts, flip_tex_coords)?;
    mesh.tris = read_faces(path, faces)?;
    Ok(mesh)
}

/// The first pair of property names that `def` has both of.
fn pick<'a>(def: &ElementDef, pairs: &[(&'a str, &'a str)]) -> Option<(&'a str, &'a str)> {
    pairs
        .iter()
        .copied()
        .find(|(a, b)| def.properties.contains_key(*a) && def.properties.contains_key(*b))
}

fn scalar(path: &Path, v: &DefaultElement, i: usize, key: &str) -> Result<f32> {
    v.get(key).and_then(Property::to_f32_lossy).ok_or_else(|| {
        Error::io(
            path,
            format!("vertex {i}: property \"{key}\" missing or not a number"),
        )
    })
}

fn read_vertices(
    path: &Path,
    def: &ElementDef,
    verts: &[DefaultElement],
    flip_tex_coords: bool,
) -> Result<TriMesh> {
    let has_n = ["nx", "ny", "nz"]
        .iter()
        .all(|k| def.properties.contains_key(*k));
    let uv_keys = pick(def, &[("u", "v"), ("s", "t"), ("texture_u", "texture_v")]);
    let mut m = TriMesh {
        normals: has_n.then(Vec::new),
        uvs: uv_keys.map(|_| Vec::new()),
        ..Default::default()
    };
    for (i, v) in verts.iter().enumerate() {
        let f = |k: &str| scalar(path, v, i, k);
        m.positions.push(Vec3::new(f("x")?, f("y")?, f("z")?));
        if let Some(n) = &mut m.normals {
            n.push(Vec3::new(f("nx")?, f("ny")?, f("nz")?));
        }
        if let (Some(uv), Some((ku, kv))) = (&mut m.uvs, uv_keys) {
            let (u, t) = (f(ku)?, f(kv)?);
            uv.push(Vec2::new(u, if flip_tex_coords { 1.0 - t } else { t }));
        }
    }
    Ok(m)
}

fn read_faces(path: &Path, faces: &[DefaultElement]) -> Result<Vec<[u32; 3]>> {
    let mut tris = Vec::with_capacity(faces.len());
    for (i, f) in faces.iter().enumerate() {
        let list = f
            .get("vertex_indices")
            .or_else(|| f.get("vertex_index"))
            .ok_or_else(|| Error::io(path, format!("face {i}: no vertex_indices list")))?;
        let idx = list.to_u32_list().ok_or_else(|| {
            Error::io(
                path,
                format!("face {i}: vertex indices must be non-negative integers"),
            )
        })?;
        // a fan around the first vertex; faces with fewer than 3 vertices add nothing
        for k in 1..idx.len().saturating_sub(1) {
            tris.push([idx[0], idx[k], idx[k + 1]]);
        }
    }
    Ok(tris)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{closest, shape_desc, try_build};
    use super::*;
    use crate::math::Ray;
    use crate::scene::props::Value;

    fn ply(props: Vec<(&str, Value)>) -> Result<crate::shapes::Geometry> {
        try_build(&[shape_desc("ply", props)]).map(|c| c.geom)
    }

    fn tmp(name: &str, bytes: &[u8]) -> String {
        let dir = std::env::temp_dir().join(format!("hg_ply_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    }

    /// A binary PLY of the square [-1,1]² (z = 0) as one quad, with normals (0,0,1)
    /// and `s t` texture coordinates (x+1)/2, (y+1)/2; `int` indices.
    fn binary_quad(big_endian: bool) -> Vec<u8> {
        let fmt = if big_endian {
            "binary_big_endian"
        } else {
            "binary_little_endian"
        };
        let header = format!(
            "ply\nformat {fmt} 1.0\ncomment test quad\nelement vertex 4\n\
             property float x\nproperty float y\nproperty float z\n\
             property float nx\nproperty float ny\nproperty float nz\n\
             property float s\nproperty float t\n\
             element face 1\nproperty list uchar int vertex_indices\nend_header\n"
        );
        let mut out = header.into_bytes();
        let f = |out: &mut Vec<u8>, v: f32| {
            out.extend(if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        for (x, y) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            for v in [x, y, 0.0, 0.0, 0.0, 1.0, (x + 1.0) / 2.0, (y + 1.0) / 2.0] {
                f(&mut out, v);
            }
        }
        out.push(4);
        for i in [0i32, 1, 2, 3] {
            out.extend(if big_endian {
                i.to_be_bytes()
            } else {
                i.to_le_bytes()
            });
        }
        out
    }

    fn check_quad(g: &crate::shapes::Geometry) {
        assert_eq!(g.prims.len(), 2);
        let h = closest(g, &Ray::new(Vec3::new(0.5, -0.5, 1.0), -Vec3::Z)).unwrap();
        assert!((h.t - 1.0).abs() < 1e-6 && (h.n - Vec3::Z).length() < 1e-6);
        assert!((h.uv - Vec2::new(0.75, 0.25)).length() < 1e-5, "{:?}", h.uv);
    }

    #[test]
    fn binary_little_and_big_endian_quads() {
        for be in [false, true] {
            let path = tmp(&format!("quad_{be}.ply"), &binary_quad(be));
            check_quad(&ply(vec![("filename", Value::String(path))]).unwrap());
        }
    }

    #[test]
    fn ascii_fixture_with_uv_and_flip() {
        let path = format!(
            "{}/tests/fixtures/meshes/quad_ascii.ply",
            env!("CARGO_MANIFEST_DIR")
        );
        check_quad(&ply(vec![("filename", Value::String(path.clone()))]).unwrap());
        let g = ply(vec![
            ("filename", Value::String(path)),
            ("flip_tex_coords", Value::Bool(true)),
        ])
        .unwrap();
        let h = closest(&g, &Ray::new(Vec3::new(0.5, -0.5, 1.0), -Vec3::Z)).unwrap();
        assert!((h.uv - Vec2::new(0.75, 0.75)).length() < 1e-5, "{:?}", h.uv);
    }

    #[test]
    fn bad_files_are_errors_naming_the_path() {
        let mut truncated = binary_quad(false);
        truncated.truncate(truncated.len() - 6);
        let cases: [(&str, &[u8]); 5] = [
            ("garbage.ply", b"this is not a ply file\n"),
            ("truncated.ply", &truncated),
            (
                "range.ply",
                b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n\
                  property float z\nelement face 1\nproperty list uchar int vertex_indices\n\
                  end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n",
            ),
            (
                "noface.ply",
                b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n\
                  property float z\nend_header\n0 0 0\n1 0 0\n0 1 0\n",
            ),
            (
                "negative.ply",
                b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n\
                  property float z\nelement face 1\nproperty list uchar int vertex_indices\n\
                  end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 -2\n",
            ),
        ];
        for (name, bytes) in cases {
            let path = tmp(name, bytes);
            let e = ply(vec![("filename", Value::String(path))])
                .unwrap_err()
                .to_string();
            assert!(e.contains(name), "{name}: {e}");
        }
    }
}
