//! `ply`: a Stanford PLY triangle mesh (ASCII, binary little- or big-endian).
//!
//! | parameter             | type      | default  | meaning                                                    |
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
//! Other scalar properties become attributes that the `mesh_attribute` texture reads,
//! grouped as Mitsuba 3 groups them: consecutive properties `<prefix>_x/y/z/w`,
//! `<prefix>_r/g/b/a`, `<prefix>_0/1/2/3` or `<prefix>_1/2/3/4` (one or three of them)
//! form the attribute `vertex_<prefix>` or `face_<prefix>` (`..._<prefix>_color` for the
//! `r/g/b` scheme), and `r g b [a]` or `red green blue [alpha]` form `vertex_color` /
//! `face_color`. A face attribute applies to every triangle of its polygon. Properties
//! that fit no scheme are ignored, with a warning on stderr.
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
use ply_rs_bw::ply::{
    ElementDef, Property, PropertyAccess, PropertyAccessResult, PropertyDef, PropertyType,
};

use super::mesh::MeshAttribute;
use super::{Built, TriMesh};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::{Transform, Vec2, Vec3};
use crate::plugin::BuildContext;

/// Reads a `ply` shape's parameters and loads its file.
pub fn build(
    p: &Props,
    ctx: &dyn BuildContext,
    to_world: &Transform,
    _flip: bool,
) -> Result<Built> {
    let path = ctx.resolve_path(p, "filename")?;
    let face_normals = p.bool("face_normals", false)?;
    let flip_tc = p.bool("flip_tex_coords", false)?;
    let local = ctx
        .cache()
        .mesh(&path, format!("ply flip_tc={flip_tc}"), || {
            load(&path, flip_tc)
        })?;
    let mesh = TriMesh::clone(&local)
        .with_written_positions(p, &path)?
        .finish(&path, to_world, face_normals)?;
    Ok(Built::Mesh(mesh))
}

/// Loads a PLY file into an object-space mesh.
pub fn load(path: &Path, flip_tex_coords: bool) -> Result<TriMesh> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let ply = Parser::<Record>::new()
        .read_ply(&mut BufReader::new(file))
        .map_err(|e| Error::io(path, format!("invalid PLY file: {e}")))?;
    let vdef = ply
        .header
        .elements
        .get("vertex")
        .ok_or_else(|| Error::io(path, "no \"vertex\" element"))?;
    if let Some(k) = ["x", "y", "z"]
        .iter()
        .find(|k| !vdef.properties.contains_key(**k))
    {
        return Err(Error::io(
            path,
            format!("vertices have no \"{k}\" property"),
        ));
    }
    let empty = Vec::new();
    let verts = ply.payload.get("vertex").unwrap_or(&empty);
    let faces = ply.payload.get("face").unwrap_or(&empty);
    let mut mesh = read_vertices(vdef, verts, flip_tex_coords);
    let (tris, polygon) = read_faces(path, faces)?;
    mesh.tris = tris;
    mesh.attributes = attributes(path, "vertex_", vdef, verts, None);
    if let Some(fdef) = ply.header.elements.get("face") {
        mesh.attributes
            .extend(attributes(path, "face_", fdef, faces, Some(&polygon)));
    }
    Ok(mesh)
}

/// The names of an element's scalar properties outside [`SLOTS`] (the order of
/// [`Record::extra`]).
fn extra_names(def: &ElementDef) -> Vec<&str> {
    let scalar = |p: &PropertyDef| matches!(p.data_type, PropertyType::Scalar(_));
    def.properties
        .values()
        .filter(|p| scalar(p) && !SLOTS.contains(&p.name.as_str()))
        .map(|p| p.name.as_str())
        .collect()
}

/// The attributes of one element (`kind` is `vertex_` or `face_`); `polygon[k]` is the
/// face of triangle `k` (faces only).
fn attributes(
    path: &Path,
    kind: &str,
    def: &ElementDef,
    recs: &[Record],
    polygon: Option<&[u32]>,
) -> Vec<MeshAttribute> {
    let names = extra_names(def);
    let (groups, ignored) = group_properties(&names);
    for name in ignored {
        eprintln!(
            "warning: {}: {kind}property \"{name}\" fits no attribute naming scheme \
             (<prefix>_x/y/z, <prefix>_r/g/b, <prefix>_0/1/2, <prefix>_1/2/3 or r/g/b); ignored",
            path.display()
        );
    }
    groups
        .into_iter()
        .map(|(suffix, fields)| {
            let value = |r: &Record, f: usize| r.extra.get(f).copied().unwrap_or(0.0);
            let data = match polygon {
                None => recs
                    .iter()
                    .flat_map(|r| fields.iter().map(move |&f| value(r, f)))
                    .collect(),
                Some(faces) => faces
                    .iter()
                    .flat_map(|&i| fields.iter().map(move |&f| value(&recs[i as usize], f)))
                    .collect(),
            };
            MeshAttribute {
                name: format!("{kind}{suffix}"),
                dim: fields.len() as u32,
                data,
            }
        })
        .collect()
}

/// Groups property names into attributes by Mitsuba 3's rules: returns each attribute's
/// name without its `vertex_`/`face_` kind and the indices of its fields, and the names
/// of the properties left out.
fn group_properties<'a>(names: &[&'a str]) -> (Vec<(String, Vec<usize>)>, Vec<&'a str>) {
    let find = |n: &str| names.iter().position(|x| *x == n);
    let mut groups = Vec::new();
    let mut used = vec![false; names.len()];
    for scheme in [["r", "g", "b", "a"], ["red", "green", "blue", "alpha"]] {
        let rgb: Option<Vec<usize>> = scheme[..3].iter().map(|n| find(n)).collect();
        if let Some(mut fields) = rgb {
            fields.extend(find(scheme[3]));
            for &f in &fields {
                used[f] = true;
            }
            groups.push(("color".to_string(), fields));
            break;
        }
    }
    // columns: the first field's postfix picks one; each next field must take the next row
    const POSTFIX: [&str; 4] = ["xr01", "yg12", "zb23", "wa34"];
    let mut ignored = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut cur: Option<(&str, usize, Vec<usize>)> = None;
    let flush = |cur: &mut Option<(&'a str, usize, Vec<usize>)>,
                 groups: &mut Vec<(String, Vec<usize>)>,
                 seen: &mut Vec<&'a str>,
                 ignored: &mut Vec<&'a str>| {
        if let Some((prefix, col, fields)) = cur.take() {
            seen.push(prefix);
            if fields.len() == 1 || fields.len() == 3 {
                let color = if col == 1 { "_color" } else { "" };
                groups.push((format!("{prefix}{color}"), fields));
            } else {
                ignored.extend(fields.iter().map(|&f| names[f]));
            }
        }
    };
    for (i, &name) in names.iter().enumerate() {
        if used[i] || ["r", "g", "b", "a"].contains(&name) {
            continue;
        }
        let split = name
            .rsplit_once('_')
            .filter(|(_, post)| post.chars().count() == 1);
        let Some((prefix, post)) = split else {
            flush(&mut cur, &mut groups, &mut seen, &mut ignored);
            ignored.push(name);
            continue;
        };
        let ch = post.chars().next().unwrap_or(' ');
        if cur.as_ref().is_some_and(|(p, _, _)| *p != prefix) {
            flush(&mut cur, &mut groups, &mut seen, &mut ignored);
        }
        match &mut cur {
            Some((_, col, fields)) => {
                let row = fields.len();
                if row < 4 && POSTFIX[row].chars().nth(*col) == Some(ch) {
                    fields.push(i);
                } else {
                    // a broken sequence drops the whole attribute
                    let (prefix, _, fields) = cur.take().unwrap_or_default();
                    seen.push(prefix);
                    ignored.extend(fields.iter().map(|&f| names[f]));
                    ignored.push(name);
                }
            }
            None => match POSTFIX[0].find(ch) {
                Some(col) if !seen.contains(&prefix) => cur = Some((prefix, col, vec![i])),
                _ => ignored.push(name),
            },
        }
    }
    flush(&mut cur, &mut groups, &mut seen, &mut ignored);
    (groups, ignored)
}

/// Vertex properties we read, by slot in [`Record::vals`].
const SLOTS: [&str; 12] = [
    "x",
    "y",
    "z",
    "nx",
    "ny",
    "nz",
    "u",
    "v",
    "s",
    "t",
    "texture_u",
    "texture_v",
];

/// One PLY element (vertex or face) holding only what meshes need, so large
/// files load without a map per element.
#[derive(Clone, Debug, Default)]
struct Record {
    /// Scalar properties by [`SLOTS`] index.
    vals: [f32; 12],
    /// A face's vertex indices.
    indices: Vec<u32>,
    /// The other scalar properties, in the header's order.
    extra: Vec<f32>,
    /// Whether an index list held negative or non-integer values.
    bad_indices: bool,
}

impl PropertyAccess for Record {
    fn new() -> Self {
        Record::default()
    }

    fn set_property(&mut self, name: &str, p: Property) -> PropertyAccessResult {
        if name == "vertex_indices" || name == "vertex_index" {
            match p.to_u32_list() {
                Some(v) => self.indices = v,
                None => self.bad_indices = true,
            }
        } else if let Some(v) = p.to_f32_lossy() {
            match SLOTS.iter().position(|s| *s == name) {
                Some(slot) => self.vals[slot] = v,
                None => self.extra.push(v),
            }
        }
        PropertyAccessResult::Set
    }
}

/// Slots of the first texture-coordinate pair the vertex element declares.
fn uv_slots(def: &ElementDef) -> Option<(usize, usize)> {
    [(6, 7), (10, 11), (8, 9)].into_iter().find(|(a, b)| {
        def.properties.contains_key(SLOTS[*a]) && def.properties.contains_key(SLOTS[*b])
    })
}

fn read_vertices(def: &ElementDef, verts: &[Record], flip_tex_coords: bool) -> TriMesh {
    let has_n = ["nx", "ny", "nz"]
        .iter()
        .all(|k| def.properties.contains_key(*k));
    let uv = uv_slots(def);
    let v3 = |r: &Record, i: usize| Vec3::new(r.vals[i], r.vals[i + 1], r.vals[i + 2]);
    TriMesh {
        positions: verts.iter().map(|r| v3(r, 0)).collect(),
        normals: has_n.then(|| verts.iter().map(|r| v3(r, 3)).collect()),
        uvs: uv.map(|(a, b)| {
            let flip = |t: f32| if flip_tex_coords { 1.0 - t } else { t };
            verts
                .iter()
                .map(|r| Vec2::new(r.vals[a], flip(r.vals[b])))
                .collect()
        }),
        tris: Vec::new(),
        attributes: Vec::new(),
    }
}

/// The triangles of the faces, and the face of each triangle.
fn read_faces(path: &Path, faces: &[Record]) -> Result<(Vec<[u32; 3]>, Vec<u32>)> {
    let mut tris = Vec::with_capacity(faces.len());
    let mut polygon = Vec::with_capacity(faces.len());
    for (i, f) in faces.iter().enumerate() {
        if f.bad_indices {
            let msg = format!("face {i}: vertex indices must be non-negative integers");
            return Err(Error::io(path, msg));
        }
        // a fan around the first vertex; faces with fewer than 3 vertices add nothing
        let idx = &f.indices;
        for k in 1..idx.len().saturating_sub(1) {
            tris.push([idx[0], idx[k], idx[k + 1]]);
            polygon.push(i as u32);
        }
    }
    Ok((tris, polygon))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{closest, shape_desc, try_build};
    use super::*;
    use crate::desc::props::Value;
    use crate::math::Ray;

    fn ply(props: Vec<(&str, Value)>) -> Result<crate::shapes::Geometry> {
        try_build(&[shape_desc("ply", props)])
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
        let cases: [(&str, &[u8]); 6] = [
            (
                "noz.ply",
                b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n\
                  element face 1\nproperty list uchar int vertex_indices\n\
                  end_header\n0 0\n1 0\n0 1\n3 0 1 2\n",
            ),
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

    #[test]
    fn extra_properties_group_into_attributes_as_mitsuba_does() {
        let names = [
            "color_0", "color_1", "color_2", "weight_0", "n_x", "n_y", "n_z", "tint_r", "tint_g",
            "tint_b", "two_1", "two_2", "bad_y", "plain", "long_xx",
        ];
        let (groups, ignored) = group_properties(&names);
        let want = [
            ("color", vec![0, 1, 2]),
            ("weight", vec![3]),
            ("n", vec![4, 5, 6]),
            ("tint_color", vec![7, 8, 9]),
        ];
        let got: Vec<(&str, Vec<usize>)> = groups
            .iter()
            .map(|(n, f)| (n.as_str(), f.clone()))
            .collect();
        assert_eq!(got, want.map(|(n, f)| (n, f)).to_vec());
        // two fields, a sequence starting at y, no postfix, a long postfix
        assert_eq!(ignored, ["two_1", "two_2", "bad_y", "plain", "long_xx"]);
        let (groups, _) = group_properties(&["red", "green", "blue", "alpha", "s_0"]);
        assert_eq!(groups[0], ("color".to_string(), vec![0, 1, 2, 3]));
        assert_eq!(groups[1], ("s".to_string(), vec![4]));
    }

    #[test]
    fn vertex_and_face_attributes_are_read_and_polygons_share_theirs() {
        let path = tmp(
            "attrs.ply",
            b"ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\n\
              property float z\nproperty float r\nproperty float g\nproperty float b\n\
              element face 2\nproperty list uchar int vertex_indices\nproperty float weight_0\n\
              end_header\n0 0 0 1 0 0\n1 0 0 0 1 0\n1 1 0 0 0 1\n0 1 0 1 1 1\n\
              4 0 1 2 3 0.25\n3 0 2 3 0.75\n",
        );
        let m = load(Path::new(&path), false).unwrap();
        assert_eq!(m.tris.len(), 3);
        let names: Vec<&str> = m.attributes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["vertex_color", "face_weight"]);
        assert_eq!(m.attributes[0].dim, 3);
        assert_eq!(m.attributes[0].data[3..6], [0.0, 1.0, 0.0]);
        // the quad's two triangles share its weight
        assert_eq!(m.attributes[1].data, [0.25, 0.25, 0.75]);
    }
}
