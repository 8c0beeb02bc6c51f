//! `obj`: a Wavefront OBJ triangle mesh (polygons are triangulated as fans;
//! all objects and groups of the file become one shape).
//!
//! | parameter             | type      | default  | meaning                                                    |
//! |-------------------|-----------|----------|------------------------------------------------------------|
//! | `filename`        | string    | required | the OBJ file, relative to the scene file                   |
//! | `face_normals`    | boolean   | false    | ignore vertex normals and shade with the flat face normals |
//! | `flip_tex_coords` | boolean   | true     | use `1 - v` (OBJ's v axis points up, as in Mitsuba 3)      |
//! | `to_world`        | transform | identity | object-to-world transform                                  |
//! | `flip_normals`    | boolean   | false    | flip the normals                                           |
//!
//! Without vertex normals in the file (and `face_normals` false), smooth
//! normals are computed from the faces, as Mitsuba 3 does. Materials (`.mtl`)
//! are ignored: give the shape a nested or referenced `<bsdf>`.
//!
//! ```xml
//! <shape type="obj">
//!     <string name="filename" value="meshes/bunny.obj"/>
//!     <ref id="white"/>
//! </shape>
//! ```

use std::path::Path;

use super::{Built, TriMesh};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::{Transform, Vec2, Vec3};
use crate::plugin::BuildContext;

/// Reads an `obj` shape's parameters and loads its file.
pub fn build(
    p: &Props,
    ctx: &dyn BuildContext,
    to_world: &Transform,
    _flip: bool,
) -> Result<Built> {
    let path = ctx.resolve_path(p, "filename")?;
    let face_normals = p.bool("face_normals", false)?;
    let flip_tc = p.bool("flip_tex_coords", true)?;
    let local = ctx
        .cache()
        .mesh(&path, format!("obj flip_tc={flip_tc}"), || {
            load(&path, flip_tc)
        })?;
    let mesh = TriMesh::clone(&local)
        .with_written_positions(p, &path)?
        .finish(&path, to_world, face_normals)?;
    Ok(Built::Mesh(mesh))
}

/// Loads every object of an OBJ file into one object-space mesh. Normals and
/// texture coordinates are kept only when every object has them.
pub fn load(path: &Path, flip_tex_coords: bool) -> Result<TriMesh> {
    let opts = tobj::LoadOptions {
        single_index: true,
        triangulate: true,
        ignore_points: true,
        ignore_lines: true,
    };
    let (models, _materials) = tobj::load_obj(path, &opts)
        .map_err(|e| Error::io(path, format!("invalid OBJ file: {e}")))?;
    let meshes: Vec<&tobj::Mesh> = models.iter().map(|m| &m.mesh).collect();
    let nverts = |m: &tobj::Mesh| m.positions.len() / 3;
    let has_n = meshes.iter().all(|m| m.normals.len() == 3 * nverts(m));
    let has_uv = meshes.iter().all(|m| m.texcoords.len() == 2 * nverts(m));
    let mut out = TriMesh {
        normals: has_n.then(Vec::new),
        uvs: has_uv.then(Vec::new),
        ..Default::default()
    };
    for m in meshes {
        let base = out.positions.len() as u32;
        out.positions
            .extend(m.positions.chunks_exact(3).map(Vec3::from_slice));
        if let Some(n) = &mut out.normals {
            n.extend(m.normals.chunks_exact(3).map(Vec3::from_slice));
        }
        if let Some(uv) = &mut out.uvs {
            uv.extend(
                m.texcoords
                    .chunks_exact(2)
                    .map(|t| Vec2::new(t[0], if flip_tex_coords { 1.0 - t[1] } else { t[1] })),
            );
        }
        let tris = m.indices.chunks_exact(3);
        out.tris
            .extend(tris.map(|t| [t[0] + base, t[1] + base, t[2] + base]));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{closest, shape_desc, try_build};
    use super::*;
    use crate::desc::props::Value;
    use crate::math::Ray;

    fn fixture(name: &str) -> String {
        format!(
            "{}/tests/fixtures/meshes/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    fn obj(props: Vec<(&str, Value)>) -> Result<crate::shapes::Geometry> {
        try_build(&[shape_desc("obj", props)])
    }

    fn down(g: &crate::shapes::Geometry, x: f32, y: f32) -> crate::shapes::Hit {
        closest(g, &Ray::new(Vec3::new(x, y, 1.0), -Vec3::Z)).expect("hit")
    }

    #[test]
    fn quad_with_normals_and_uvs() {
        let g = obj(vec![("filename", Value::String(fixture("quad.obj")))]).unwrap();
        assert_eq!(g.prims.len(), 2, "the quad is split into two triangles");
        let h = down(&g, 0.5, -0.5);
        assert!((h.t - 1.0).abs() < 1e-6 && (h.ng - Vec3::Z).length() < 1e-6);
        // file normals are tilted (0, 0.6, 0.8); uv v is flipped by default
        assert!(
            (h.n - Vec3::new(0.0, 0.6, 0.8)).length() < 1e-5,
            "{:?}",
            h.n
        );
        assert!((h.uv - Vec2::new(0.75, 0.75)).length() < 1e-5, "{:?}", h.uv);
        let g = obj(vec![
            ("filename", Value::String(fixture("quad.obj"))),
            ("face_normals", Value::Bool(true)),
            ("flip_tex_coords", Value::Bool(false)),
        ])
        .unwrap();
        let h = down(&g, 0.5, -0.5);
        assert!((h.n - Vec3::Z).length() < 1e-6);
        assert!((h.uv - Vec2::new(0.75, 0.25)).length() < 1e-5, "{:?}", h.uv);
    }

    #[test]
    fn mirroring_to_world_flips_winding_like_mitsuba() {
        // x → -x reverses the winding: the face normal (cross product of the
        // world edges) flips; the file normal, transformed by the inverse
        // transpose, does not.
        let tw = Transform::scale(Vec3::new(-1.0, 1.0, 1.0)).unwrap();
        let g = obj(vec![
            ("filename", Value::String(fixture("quad.obj"))),
            ("to_world", Value::Transform(tw)),
        ])
        .unwrap();
        let h = down(&g, 0.5, -0.5);
        assert!((h.ng + Vec3::Z).length() < 1e-6, "{:?}", h.ng);
        assert!(
            (h.n - Vec3::new(0.0, 0.6, 0.8)).length() < 1e-5,
            "{:?}",
            h.n
        );
        // the mirrored point x = 0.5 came from x = -0.5: u = 0.25
        assert!((h.uv - Vec2::new(0.25, 0.75)).length() < 1e-5, "{:?}", h.uv);
    }

    #[test]
    fn plain_triangle_gets_computed_normals_and_barycentric_uvs() {
        let tw = Transform::translate(Vec3::new(0.0, 0.0, -1.0));
        let g = obj(vec![
            ("filename", Value::String(fixture("tri_plain.obj"))),
            ("to_world", Value::Transform(tw)),
        ])
        .unwrap();
        let h = down(&g, 0.2, 0.3);
        assert!((h.t - 2.0).abs() < 1e-6);
        assert!((h.n - Vec3::Z).length() < 1e-6 && (h.ng - Vec3::Z).length() < 1e-6);
        assert!((h.uv - Vec2::new(0.2, 0.3)).length() < 1e-6);
    }

    #[test]
    fn missing_and_corrupt_files_name_the_path() {
        let e = obj(vec![("filename", Value::String("no/such/file.obj".into()))])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no/such/file.obj") && e.contains("test.xml:10"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("hg_obj_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n"),
            ("text.obj", "v 0 zero 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"),
            ("nan.obj", "v 0 0 nan\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"),
            ("empty.obj", "v 0 0 0\n"),
        ];
        for (name, text) in cases {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            let e = obj(vec![(
                "filename",
                Value::String(path.display().to_string()),
            )]);
            let e = e.unwrap_err().to_string();
            assert!(e.contains(name), "{name}: {e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
