//! `serialized`: a triangle mesh in Mitsuba's compressed `.serialized` format.
//!
//! | parameter          | type      | default  | meaning                                                    |
//! |----------------|-----------|----------|------------------------------------------------------------|
//! | `filename`     | string    | required | the `.serialized` file, relative to the scene file         |
//! | `shape_index`  | integer   | 0        | which mesh of the file to load (files may hold several)    |
//! | `face_normals` | boolean   | false    | ignore vertex normals and shade with the flat face normals |
//! | `to_world`     | transform | identity | object-to-world transform                                  |
//! | `flip_normals` | boolean   | false    | flip the normals                                           |
//!
//! Versions 3 and 4 of the format are read (what Mitsuba 0.5/0.6 and Mitsuba 3's
//! converters write): after a 4-byte header (`u16` magic `0x041C`, `u16` version)
//! comes a zlib stream holding a flag word (`0x1` normals, `0x2` texture coordinates,
//! `0x8` vertex colours, `0x2000` double precision), the shape's name (version 4,
//! NUL-terminated), `u64` vertex and face counts, then the positions, normals,
//! texture coordinates and colours as tight arrays and `3 F` `u32` vertex indices.
//! Several meshes are concatenated, each with its own header; a table of their
//! file offsets ends the file (`u32` entries in version 3, `u64` in version 4,
//! then the `u32` mesh count). Vertex colours are read and ignored, as Mitsuba 3
//! does; without normals in the file (and `face_normals` false) smooth normals are
//! computed. Everything is little-endian.
//!
//! ```xml
//! <shape type="serialized">
//!     <string name="filename" value="meshes/matpreview.serialized"/>
//!     <integer name="shape_index" value="2"/>
//! </shape>
//! ```

use std::io::Read;
use std::path::Path;

use flate2::read::ZlibDecoder;

use super::{Built, TriMesh};
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::{Transform, Vec2, Vec3};
use crate::plugin::BuildContext;

/// The file format identifier of every mesh header.
const MAGIC: u16 = 0x041C;
const HAS_NORMALS: u32 = 0x0001;
const HAS_TEXCOORDS: u32 = 0x0002;
const HAS_COLORS: u32 = 0x0008;
const DOUBLE_PRECISION: u32 = 0x2000;

/// Reads a `serialized` shape's parameters and loads its mesh.
pub fn build(
    p: &Props,
    ctx: &dyn BuildContext,
    to_world: &Transform,
    _flip: bool,
) -> Result<Built> {
    let path = ctx.resolve_path(p, "filename")?;
    let index = p.int_in("shape_index", 0, 0, i64::from(u32::MAX))? as u32;
    let face_normals = p.bool("face_normals", false)?;
    let local = ctx
        .cache()
        .mesh(&path, format!("serialized shape_index={index}"), || {
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            parse(&path, &bytes, index)
        })?;
    let mesh = TriMesh::clone(&local)
        .with_written_positions(p, &path)?
        .finish(&path, to_world, face_normals)?;
    Ok(Built::Mesh(mesh))
}

/// Decodes mesh `index` of the `.serialized` file `bytes` (read from `path`, which
/// error messages name).
pub fn parse(path: &Path, bytes: &[u8], index: u32) -> Result<TriMesh> {
    let err = |msg: String| Error::io(path, msg);
    let (magic, version) =
        header(bytes, 0).ok_or_else(|| err("the file is shorter than its 4-byte header".into()))?;
    if magic != MAGIC {
        return Err(err(format!(
            "not a Mitsuba .serialized file (format identifier 0x{magic:04x}, expected 0x{MAGIC:04x})"
        )));
    }
    if version != 3 && version != 4 {
        return Err(err(format!(
            "format version {version} is not supported (versions 3 and 4 are)"
        )));
    }
    let start = if index == 0 {
        0
    } else {
        mesh_offset(bytes, version, index).map_err(err)?
    };
    let mut r = Reader {
        z: ZlibDecoder::new(&bytes[start + 4..]),
        mesh: index,
    };
    r.mesh(version).map_err(err)
}

/// The magic and version of the header at `at`.
fn header(bytes: &[u8], at: usize) -> Option<(u16, u16)> {
    let h = bytes.get(at..at.checked_add(4)?)?;
    Some((
        u16::from_le_bytes([h[0], h[1]]),
        u16::from_le_bytes([h[2], h[3]]),
    ))
}

/// Where mesh `index` starts, from the offset table at the end of the file.
fn mesh_offset(bytes: &[u8], version: u16, index: u32) -> std::result::Result<usize, String> {
    let n = bytes.len();
    let count_at = n.checked_sub(4).ok_or("the file has no mesh table")?;
    let count = u32::from_le_bytes(bytes[count_at..].try_into().map_err(|_| "no mesh table")?);
    if index >= count {
        return Err(format!(
            "shape_index {index} is out of range: the file holds {count} mesh(es)"
        ));
    }
    let entry = if version == 4 { 8 } else { 4 };
    let at = (count - index) as usize * entry;
    let pos = count_at.checked_sub(at).ok_or_else(|| {
        format!("the mesh table for {count} meshes does not fit in the file ({n} bytes)")
    })?;
    let offset = if version == 4 {
        u64::from_le_bytes(bytes[pos..pos + 8].try_into().map_err(|_| "bad table")?)
    } else {
        u64::from(u32::from_le_bytes(
            bytes[pos..pos + 4].try_into().map_err(|_| "bad table")?,
        ))
    };
    let offset = usize::try_from(offset).unwrap_or(usize::MAX);
    match header(bytes, offset) {
        Some((MAGIC, v)) if v == version => Ok(offset),
        _ => Err(format!(
            "the mesh table points mesh {index} at byte {offset}, where there is no mesh header"
        )),
    }
}

/// The decompressed stream of one mesh.
struct Reader<'a> {
    z: ZlibDecoder<&'a [u8]>,
    mesh: u32,
}

type R<T> = std::result::Result<T, String>;

impl Reader<'_> {
    /// Reads exactly `n` bytes (without trusting `n` for the allocation: the buffer
    /// grows only as data actually arrives), naming `what` when the stream ends early.
    fn bytes(&mut self, n: u64, what: &str) -> R<Vec<u8>> {
        let mut out = Vec::new();
        let got = (&mut self.z).take(n).read_to_end(&mut out).map_err(|e| {
            format!(
                "mesh {}: corrupt compressed data while reading {what}: {e}",
                self.mesh
            )
        })?;
        if (got as u64) < n {
            return Err(format!(
                "mesh {}: the data ends early while reading {what} ({got} of {n} bytes)",
                self.mesh
            ));
        }
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> R<u32> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> R<u64> {
        let b = self.bytes(8, what)?;
        Ok(u64::from_le_bytes(
            b[..8].try_into().map_err(|_| what.to_string())?,
        ))
    }

    /// `count` floats of single or double precision, as `f32`.
    fn floats(&mut self, count: u64, double: bool, what: &str) -> R<Vec<f32>> {
        let size = if double { 8 } else { 4 };
        let n = count
            .checked_mul(size)
            .ok_or_else(|| format!("mesh {}: {what}: the count {count} is too large", self.mesh))?;
        let b = self.bytes(n, what)?;
        Ok(if double {
            b.chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()) as f32)
                .collect()
        } else {
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect()
        })
    }

    /// The version 4 shape name (NUL-terminated; its content is not needed).
    fn skip_name(&mut self) -> R<()> {
        for _ in 0..(1 << 20) {
            if self.bytes(1, "the shape name")?[0] == 0 {
                return Ok(());
            }
        }
        Err(format!(
            "mesh {}: the shape name has no terminating NUL",
            self.mesh
        ))
    }

    fn mesh(&mut self, version: u16) -> R<TriMesh> {
        let flags = self.u32("the flag word")?;
        if version == 4 {
            self.skip_name()?;
        }
        let v = self.u64("the vertex count")?;
        let f = self.u64("the face count")?;
        if v > u64::from(u32::MAX) {
            return Err(format!(
                "mesh {}: {v} vertices are more than 32-bit indices address",
                self.mesh
            ));
        }
        let double = flags & DOUBLE_PRECISION != 0;
        let vec3s = |x: Vec<f32>| {
            x.chunks_exact(3)
                .map(|c| Vec3::new(c[0], c[1], c[2]))
                .collect()
        };
        let positions = vec3s(self.floats(3 * v, double, "vertex positions")?);
        let normals = if flags & HAS_NORMALS != 0 {
            Some(vec3s(self.floats(3 * v, double, "vertex normals")?))
        } else {
            None
        };
        let uvs = if flags & HAS_TEXCOORDS != 0 {
            let t = self.floats(2 * v, double, "texture coordinates")?;
            Some(t.chunks_exact(2).map(|c| Vec2::new(c[0], c[1])).collect())
        } else {
            None
        };
        if flags & HAS_COLORS != 0 {
            self.floats(3 * v, double, "vertex colours")?;
        }
        let n = f
            .checked_mul(12)
            .ok_or_else(|| format!("mesh {}: face count {f} is too large", self.mesh))?;
        let idx = self.bytes(n, "face indices")?;
        let tris = idx
            .chunks_exact(12)
            .map(|c| {
                let u = |k: usize| u32::from_le_bytes([c[k], c[k + 1], c[k + 2], c[k + 3]]);
                [u(0), u(4), u(8)]
            })
            .collect();
        Ok(TriMesh {
            positions,
            normals,
            uvs,
            tris,
            attributes: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::ZlibEncoder;
    use flate2::Compression;

    use super::super::test_util::{closest, shape_desc, try_build};
    use super::*;
    use crate::desc::props::Value;
    use crate::math::Ray;

    /// The zlib body of one version 3/4 mesh: the unit square [0,1]² at z = 0 as two
    /// triangles, with normals (0,0,1) and uv = xy when asked, in f32 or f64.
    fn body(version: u16, flags: u32, z: f64) -> Vec<u8> {
        let double = flags & DOUBLE_PRECISION != 0;
        let mut raw = flags.to_le_bytes().to_vec();
        if version == 4 {
            raw.extend(b"square\0");
        }
        raw.extend(4u64.to_le_bytes());
        raw.extend(2u64.to_le_bytes());
        let corners = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
        let put = |raw: &mut Vec<u8>, x: f64| {
            if double {
                raw.extend(x.to_le_bytes())
            } else {
                raw.extend((x as f32).to_le_bytes())
            }
        };
        for (x, y) in corners {
            for c in [x, y, z] {
                put(&mut raw, c);
            }
        }
        if flags & HAS_NORMALS != 0 {
            for _ in corners {
                for c in [0.0, 0.0, 1.0] {
                    put(&mut raw, c);
                }
            }
        }
        if flags & HAS_TEXCOORDS != 0 {
            for (x, y) in corners {
                put(&mut raw, x);
                put(&mut raw, y);
            }
        }
        if flags & HAS_COLORS != 0 {
            for _ in 0..12 {
                put(&mut raw, 0.5);
            }
        }
        for i in [0u32, 1, 2, 0, 2, 3] {
            raw.extend(i.to_le_bytes());
        }
        let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
        e.write_all(&raw).unwrap();
        e.finish().unwrap()
    }

    /// A file of several meshes (the k-th at height z = k) with its offset table.
    fn file(version: u16, flags: u32, meshes: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut offsets = Vec::new();
        for k in 0..meshes {
            offsets.push(out.len() as u64);
            out.extend(MAGIC.to_le_bytes());
            out.extend(version.to_le_bytes());
            out.extend(body(version, flags, k as f64));
        }
        for o in offsets {
            if version == 4 {
                out.extend(o.to_le_bytes());
            } else {
                out.extend((o as u32).to_le_bytes());
            }
        }
        out.extend((meshes as u32).to_le_bytes());
        out
    }

    fn tmp(name: &str, bytes: &[u8]) -> String {
        let dir = std::env::temp_dir().join(format!("hg_serialized_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    }

    #[test]
    fn versions_precisions_and_attribute_flags_decode_to_the_written_square() {
        let p = Path::new("x.serialized");
        for version in [3u16, 4] {
            for flags in [
                0,
                HAS_NORMALS,
                HAS_TEXCOORDS | HAS_COLORS,
                0x1000 | HAS_NORMALS | HAS_TEXCOORDS,
                DOUBLE_PRECISION | HAS_NORMALS | HAS_TEXCOORDS | HAS_COLORS,
            ] {
                let m = parse(p, &file(version, flags, 3), 2).unwrap();
                assert_eq!(m.positions.len(), 4);
                assert_eq!(m.tris, vec![[0, 1, 2], [0, 2, 3]]);
                assert_eq!(
                    m.positions[2],
                    Vec3::new(1.0, 1.0, 2.0),
                    "v{version} {flags:x}"
                );
                assert_eq!(m.normals.is_some(), flags & HAS_NORMALS != 0);
                assert_eq!(
                    m.uvs.as_ref().map(|u| u[1]),
                    (flags & HAS_TEXCOORDS != 0).then_some(Vec2::X)
                );
                let first = parse(p, &file(version, flags, 3), 0).unwrap();
                assert_eq!(first.positions[2].z, 0.0);
            }
        }
    }

    #[test]
    fn shapes_hit_the_mesh_with_its_uvs_and_index_out_of_range_is_an_error() {
        let path = tmp("three.serialized", &file(4, HAS_NORMALS | HAS_TEXCOORDS, 3));
        let g = try_build(&[shape_desc(
            "serialized",
            vec![
                ("filename", Value::String(path.clone())),
                ("shape_index", Value::Int(1)),
            ],
        )])
        .unwrap();
        let h = closest(&g, &Ray::new(Vec3::new(0.75, 0.25, 3.0), -Vec3::Z)).unwrap();
        assert!((h.t - 2.0).abs() < 1e-6 && (h.n - Vec3::Z).length() < 1e-6);
        assert!((h.uv - Vec2::new(0.75, 0.25)).length() < 1e-6, "{:?}", h.uv);
        let e = try_build(&[shape_desc(
            "serialized",
            vec![
                ("filename", Value::String(path)),
                ("shape_index", Value::Int(3)),
            ],
        )])
        .err()
        .unwrap()
        .to_string();
        assert!(
            e.contains("three.serialized") && e.contains("shape_index 3") && e.contains("3 mesh"),
            "{e}"
        );
    }

    #[test]
    fn mitsuba_data_rectangle_matches_what_mitsuba_reports() {
        // tests/serialized/rectangle_normals_uv.serialized of mitsuba-data (version 4);
        // the values are Mitsuba 3.9.1's traverse() of the loaded shape
        let path = format!(
            "{}/tests/fixtures/meshes/rectangle_normals_uv.serialized",
            env!("CARGO_MANIFEST_DIR")
        );
        let m = parse(Path::new(&path), &std::fs::read(&path).unwrap(), 0).unwrap();
        let want_p = [
            [-2.85, 0.0, -7.6],
            [-2.85, 0.0, 0.599999],
            [2.85, 0.0, 0.599999],
            [2.85, 0.0, -7.6],
        ];
        let want_uv = [
            [0.950589, 0.01158398],
            [0.025105, 0.01158398],
            [0.025105, 0.31087297],
            [0.950589, 0.31087297],
        ];
        assert_eq!(m.tris, vec![[0, 1, 2], [0, 2, 3]]);
        for i in 0..4 {
            assert!((m.positions[i] - Vec3::from(want_p[i])).length() < 1e-5);
            assert!((m.uvs.as_ref().unwrap()[i] - Vec2::from(want_uv[i])).length() < 1e-6);
            assert_eq!(m.normals.as_ref().unwrap()[i], Vec3::Y);
        }
    }

    #[test]
    fn truncated_and_garbled_files_are_errors_naming_the_file_never_panics() {
        let good = file(4, HAS_NORMALS | HAS_TEXCOORDS | DOUBLE_PRECISION, 2);
        let p = Path::new("fuzz.serialized");
        for cut in 0..good.len() {
            for index in [0, 1] {
                if let Err(e) = parse(p, &good[..cut], index) {
                    assert!(e.to_string().contains("fuzz.serialized"), "{e}");
                }
            }
        }
        // flip every byte in turn, and scribble runs over the data
        let mut rng = crate::math::Pcg32::new(3, 9);
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x5a;
            let _ = parse(p, &bad, 1);
            let mut bad = good.clone();
            for b in bad.iter_mut().skip(i).take(8) {
                *b = (rng.next_f32() * 256.0) as u8;
            }
            let _ = parse(p, &bad, (i % 2) as u32);
        }
        let e = parse(p, &good[..40], 0).unwrap_err().to_string();
        assert!(e.contains("ends early") || e.contains("corrupt"), "{e}");
        let e = parse(p, b"PK\x03\x04", 0).unwrap_err().to_string();
        assert!(e.contains("not a Mitsuba"), "{e}");
        let e = parse(p, &[0x1c, 0x04, 5, 0], 0).unwrap_err().to_string();
        assert!(e.contains("version 5"), "{e}");
        // a huge vertex count in a tiny file fails without allocating it
        let mut raw = 0u32.to_le_bytes().to_vec();
        raw.extend((1u64 << 31).to_le_bytes());
        raw.extend(1u64.to_le_bytes());
        let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
        e.write_all(&raw).unwrap();
        let mut bytes = vec![0x1c, 0x04, 3, 0];
        bytes.extend(e.finish().unwrap());
        let e = parse(p, &bytes, 0).unwrap_err().to_string();
        assert!(
            e.contains("vertex positions") && e.contains("ends early"),
            "{e}"
        );
    }
}
