//! `mesh_attribute`: a value stored on the mesh that was hit, per vertex (interpolated
//! across the triangle) or per face: vertex colours, painted weights, simulation data.
//! The attributes come from a PLY file's extra properties (see the `ply` shape).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `name` | string | — | required; the attribute, `vertex_<prefix>` or `face_<prefix>` (e.g. `vertex_color`) |
//! | `scale` | float | 1 | multiplies the value |
//!
//! As in Mitsuba 3: a colour lookup of a one-value attribute gives that value in every
//! channel and of a three-value attribute the three values; a float lookup (roughness,
//! a blend weight) reads one-value attributes only. The value is zero on a shape that
//! lacks the attribute, for a float lookup of a three-value attribute, and where the
//! texture is not read on a surface (emitters; Mitsuba's vectorised variants give zero
//! in all these cases too). A name that no shape of the scene has is an error.
//!
//! ```xml
//! <texture type="mesh_attribute" name="reflectance">
//!     <string name="name" value="vertex_color"/>
//! </texture>
//! ```

use super::{RecordCtx, SurfacePoint, TexturePlugin, TextureStore};
use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::props::Props;
use crate::error::{Error, Loc, Result};
use crate::math::{Color, Vec3};
use crate::plugin::BuildContext;
use crate::shapes::Geometry;

/// The texture: which attribute (a slot of [`AttributeTable::names`]) and the scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshAttribute {
    /// The attribute's slot.
    pub slot: u32,
    /// `scale`.
    pub scale: f32,
}

/// The record the kernels read: the texture with the attribute table's row length.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct MeshAttributeRecord {
    /// The attribute's slot (a row of the table).
    pub slot: u32,
    /// The shapes per row of the table ([`AttributeTable::shapes`]).
    pub shapes: u32,
    /// `scale`.
    pub scale: f32,
}
crate::device_record!(MeshAttributeRecord {
    slot,
    shapes,
    scale
});

impl TexturePlugin for MeshAttribute {
    type Record = MeshAttributeRecord;
    /// It interpolates vertex values with the hit's barycentrics.
    const READS_UV: bool = false;

    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        if !p.has("name") {
            return Err(Error::param(
                &p.loc,
                "name",
                "is required (\"vertex_<name>\" or \"face_<name>\")",
            ));
        }
        let name = p.string("name", "")?;
        if !(name.starts_with("vertex_") || name.starts_with("face_")) || name.len() <= 5 {
            return Err(Error::param(
                &p.entry_loc("name"),
                "name",
                format!("must start with \"vertex_\" or \"face_\", got \"{name}\""),
            ));
        }
        let scale = p.float("scale", 1.0)?;
        if !scale.is_finite() {
            return Err(Error::param(
                &p.entry_loc("scale"),
                "scale",
                format!("must be finite, got {scale}"),
            ));
        }
        ctx.declare(
            "scale",
            ParamValue::Float(scale as f64),
            Target::prop("scale"),
            Range::Any,
        );
        let slot = ctx.attribute_slot(&name, &p.loc);
        Ok(MeshAttribute { slot, scale })
    }

    fn record(&self, at: &RecordCtx) -> MeshAttributeRecord {
        MeshAttributeRecord {
            slot: self.slot,
            shapes: at.attr_shapes,
            scale: self.scale,
        }
    }

    #[inline]
    fn eval(&self, st: &TextureStore, at: &SurfacePoint) -> Color {
        st.attributes.eval(self, at)
    }

    #[inline]
    fn eval_1(&self, st: &TextureStore, at: &SurfacePoint) -> f32 {
        st.attributes.eval_1(self, at)
    }

    fn mean(&self, st: &TextureStore) -> Color {
        st.attributes.mean(self)
    }
}

/// Words per entry of the lookup table: the attribute's first value in
/// [`AttributeTable::words`] less the mesh's first triangle times the values per
/// triangle (wrapping; u32::MAX for a shape without the attribute), and its values per
/// vertex or face plus [`PER_CORNER`].
pub const ENTRY_WORDS: usize = 2;
/// Entry flag: the values are per triangle corner (a vertex attribute).
pub const PER_CORNER: u32 = 1 << 8;

/// Every mesh attribute that a `mesh_attribute` texture reads, laid out for lookups by
/// (texture slot, shape, triangle): the kernels read the same words.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AttributeTable {
    /// The attribute names the textures read, by slot, with where each was asked for.
    pub names: Vec<(String, Loc)>,
    /// The shapes per table row (the scene's shape records, group shapes included).
    pub shapes: u32,
    /// The table (`ENTRY_WORDS` per slot and shape, slot-major) as bit patterns, then
    /// the values.
    pub words: Vec<f32>,
    /// Each slot's mean value over its values (for sampling weights), and its values
    /// per vertex or face (of the first shape that has it).
    pub means: Vec<(Vec3, u32)>,
}

impl AttributeTable {
    /// The slot of attribute `name` (a new one the first time).
    pub fn slot(&mut self, name: &str, loc: &Loc) -> u32 {
        match self.names.iter().position(|(n, _)| n == name) {
            Some(i) => i as u32,
            None => {
                self.names.push((name.to_string(), loc.clone()));
                (self.names.len() - 1) as u32
            }
        }
    }

    /// Builds the table from the attributes of `geom`'s meshes (the scene's own and
    /// its shape groups'); an error when no shape has an attribute a texture reads.
    pub fn resolve(&mut self, geom: &Geometry) -> Result<()> {
        self.words.clear();
        self.means.clear();
        self.shapes = geom.shapes.len() as u32;
        if self.names.is_empty() {
            return Ok(());
        }
        let entries = self.names.len() * geom.shapes.len();
        let mut table = vec![[u32::MAX, 0]; entries];
        let mut values = Vec::new();
        let head = (entries * ENTRY_WORDS) as u64;
        let stores = std::iter::once((&geom.mesh, 0)).chain(
            (geom.groups.iter().zip(&geom.group_base)).map(|(g, &base)| (&g.geom.mesh, base)),
        );
        let mut found = vec![false; self.names.len()];
        let mut sums = vec![(Vec3::ZERO, 0u64, 0u32); self.names.len()];
        for (store, base) in stores {
            for a in &store.attributes {
                let Some(slot) = self.names.iter().position(|(n, _)| *n == a.name) else {
                    continue;
                };
                found[slot] = true;
                let at = head + values.len() as u64;
                if at + a.data.len() as u64 > u32::MAX as u64 {
                    return Err(Error::Render(format!(
                        "the mesh attributes hold more than the 2^32 - 1 values the kernels \
                         index (attribute \"{}\")",
                        a.name
                    )));
                }
                let per_tri = a.dim * if a.per_corner { 3 } else { 1 };
                let first = (at as u32).wrapping_sub(a.first_tri.wrapping_mul(per_tri));
                let flags = a.dim | if a.per_corner { PER_CORNER } else { 0 };
                table[slot * geom.shapes.len() + (base + a.shape) as usize] = [first, flags];
                values.extend_from_slice(&a.data);
                let s = &mut sums[slot];
                s.2 = if s.2 == 0 { a.dim } else { s.2 };
                for v in a.data.chunks_exact(a.dim as usize) {
                    let c = |k: usize| v[k.min(v.len() - 1)];
                    s.0 += Vec3::new(c(0), c(1), c(2));
                    s.1 += 1;
                }
            }
        }
        if let Some(i) = found.iter().position(|f| !f) {
            let (name, loc) = &self.names[i];
            let mut have: Vec<&str> = (geom.mesh.attributes.iter())
                .chain(geom.groups.iter().flat_map(|g| &g.geom.mesh.attributes))
                .map(|a| a.name.as_str())
                .collect();
            have.sort_unstable();
            have.dedup();
            let have = if have.is_empty() {
                "none has attributes".to_string()
            } else {
                format!("they have: {}", have.join(", "))
            };
            return Err(Error::param(
                loc,
                "name",
                format!("no shape of the scene has the attribute \"{name}\" ({have})"),
            ));
        }
        self.means = (sums.iter())
            .map(|&(sum, n, dim)| (sum / n.max(1) as f32, dim))
            .collect();
        self.words = (table.iter().flatten())
            .map(|&w| f32::from_bits(w))
            .chain(values)
            .collect();
        Ok(())
    }

    /// The attribute of texture slot `slot` at `at`: its first three values
    /// (interpolated for a vertex attribute) and how many it has (0 when the shape
    /// lacks it).
    #[inline]
    pub fn lookup(&self, slot: u32, at: &SurfacePoint) -> (Vec3, u32) {
        if at.shape >= self.shapes {
            return (Vec3::ZERO, 0);
        }
        let e = (slot as usize * self.shapes as usize + at.shape as usize) * ENTRY_WORDS;
        let (Some(first), Some(flags)) = (self.words.get(e), self.words.get(e + 1)) else {
            return (Vec3::ZERO, 0);
        };
        let (first, flags) = (first.to_bits(), flags.to_bits());
        let dim = flags & 0xff;
        if first == u32::MAX || dim == 0 {
            return (Vec3::ZERO, 0);
        }
        let per_tri = dim * if flags & PER_CORNER != 0 { 3 } else { 1 };
        let at_tri = first.wrapping_add(at.prim.wrapping_mul(per_tri)) as usize;
        let read = |i: usize| {
            let v = |k: u32| {
                let w = i + k.min(dim - 1) as usize;
                self.words.get(w).copied().unwrap_or(0.0)
            };
            Vec3::new(v(0), v(1), v(2))
        };
        let v = if flags & PER_CORNER != 0 {
            let (b1, b2) = (at.bary.x, at.bary.y);
            let d = dim as usize;
            read(at_tri) * (1.0 - b1 - b2) + read(at_tri + d) * b1 + read(at_tri + 2 * d) * b2
        } else {
            read(at_tri)
        };
        (v, dim)
    }

    /// The table of `words` (as [`Self::words`]) for triangles renumbered by `by`:
    /// shapes `shapes` (of rows of `row` shapes, `slots` rows) had their triangles moved
    /// by the flattening of shape groups.
    pub fn shift_triangles(
        words: &mut [f32],
        slots: usize,
        row: usize,
        shapes: std::ops::Range<usize>,
        by: u32,
    ) {
        for slot in 0..slots {
            for shape in shapes.clone() {
                let e = (slot * row + shape) * ENTRY_WORDS;
                let (first, flags) = (words[e].to_bits(), words[e + 1].to_bits());
                if first == u32::MAX {
                    continue;
                }
                let per_tri = (flags & 0xff) * if flags & PER_CORNER != 0 { 3 } else { 1 };
                words[e] = f32::from_bits(first.wrapping_sub(by.wrapping_mul(per_tri)));
            }
        }
    }

    /// A colour lookup (Mitsuba's `eval`): one value in every channel, or three.
    #[inline]
    pub fn eval(&self, t: &MeshAttribute, at: &SurfacePoint) -> Color {
        match self.lookup(t.slot, at) {
            (v, 1) => Color::splat(v.x * t.scale),
            (v, 3) => v * t.scale,
            _ => Color::ZERO,
        }
    }

    /// The mean colour (Mitsuba has none; used only for sampling weights).
    pub fn mean(&self, t: &MeshAttribute) -> Color {
        match self.means.get(t.slot as usize) {
            Some(&(v, 1)) => Color::splat(v.x * t.scale),
            Some(&(v, 3)) => v * t.scale,
            _ => Color::ZERO,
        }
    }

    /// A float lookup (Mitsuba's `eval_1`): one-value attributes only.
    #[inline]
    pub fn eval_1(&self, t: &MeshAttribute, at: &SurfacePoint) -> f32 {
        match self.lookup(t.slot, at) {
            (v, 1) => v.x * t.scale,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desc::xml;
    use crate::integrators::shading_frame;
    use crate::math::{Ray, Vec2};
    use crate::scene::{build_scene, RenderSetup};

    /// A PLY of the unit quad (two triangles) with a vertex colour and weight and a face
    /// weight, in a file of its own (the tests run in parallel).
    fn quad_file() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("hg_mesh_attr_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ply = dir.join(format!("quad{n}.ply"));
        std::fs::write(
            &ply,
            "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\n\
             property float z\nproperty float color_0\nproperty float color_1\n\
             property float color_2\nproperty float weight_0\nelement face 2\n\
             property list uchar int vertex_indices\nproperty float weight_0\nend_header\n\
             0 0 0 1 0 0 0\n1 0 0 0 1 0 1\n1 1 0 0 0 1 2\n0 1 0 1 1 1 3\n\
             3 0 1 2 0.25\n3 0 2 3 0.75\n",
        )
        .unwrap();
        ply
    }

    /// The quad twice: once as the PLY with the attributes, once as a `rectangle`
    /// without them.
    fn scene(textures: &str) -> crate::error::Result<RenderSetup> {
        let src = format!(
            r#"<scene version="3.0.0">{textures}
            <shape type="rectangle"><transform name="to_world"><translate value="5, 0, 0"/></transform>
                <bsdf type="diffuse"><ref name="reflectance" id="t"/></bsdf></shape>
            <shape type="ply"><string name="filename" value="{}"/>
                <bsdf type="diffuse"><ref name="reflectance" id="t"/></bsdf></shape></scene>"#,
            quad_file().display()
        );
        build_scene(&xml::load_string(&src, &[])?)
    }

    /// The texture's colour and float values where a ray down the z axis hits (x, y).
    fn at(s: &RenderSetup, x: f32, y: f32) -> (Color, f32) {
        let hit = s
            .scene
            .intersect(&Ray::new(Vec3::new(x, y, 1.0), -Vec3::Z))
            .expect("hit");
        let sp = SurfacePoint::at_hit(&hit, &shading_frame(&hit));
        let records = &s.scene.textures.records;
        let t = (records
            .iter()
            .position(|r| matches!(r, super::super::AnyTexture::MeshAttribute(_))))
        .expect("a mesh_attribute texture") as u32;
        (
            s.scene.textures.eval(t, &sp),
            s.scene.textures.eval_1(t, &sp),
        )
    }

    fn texture(name: &str, scale: f32) -> String {
        format!(
            r#"<texture type="mesh_attribute" id="t"><string name="name" value="{name}"/>
               <float name="scale" value="{scale}"/></texture>"#
        )
    }

    #[test]
    fn vertex_attributes_interpolate_and_face_attributes_are_per_triangle() {
        let s = scene(&texture("vertex_color", 2.0)).unwrap();
        // (0.6, 0.2) in triangle 0 (vertices 0, 1, 2): barycentrics 0.4, 0.4, 0.2
        let (c, f) = at(&s, 0.6, 0.2);
        assert!(
            (c - 2.0 * Color::new(0.4, 0.4, 0.2)).abs().max_element() < 1e-5,
            "{c}"
        );
        assert_eq!(
            f, 0.0,
            "a float lookup of three values is zero, as in Mitsuba"
        );
        let s = scene(&texture("vertex_weight", 1.0)).unwrap();
        // (0.2, 0.6) in triangle 1 (vertices 0, 2, 3): weights 0.4, 0.2, 0.4 of 0, 2, 3
        let (c, f) = at(&s, 0.2, 0.6);
        assert!((f - 1.6).abs() < 1e-5 && c == Color::splat(f), "{c} {f}");
        let s = scene(&texture("face_weight", 1.0)).unwrap();
        assert_eq!(at(&s, 0.6, 0.2).1, 0.25);
        assert_eq!(at(&s, 0.2, 0.6).1, 0.75);
        // the rectangle has no attributes: zero
        assert_eq!(at(&s, 5.0, 0.0), (Color::ZERO, 0.0));
    }

    #[test]
    fn an_instanced_mesh_reads_its_attributes_as_the_mesh_itself() {
        // the quad inside a shape group, placed 3 units up by an instance: the same
        // values at the same points of the quad
        let direct = scene(&texture("vertex_color", 1.0)).unwrap();
        let group = r#"<texture type="mesh_attribute" id="t"><string name="name" value="vertex_color"/></texture>
            <shape type="shapegroup" id="g"><shape type="ply"><string name="filename" value="FILE"/>
                <bsdf type="diffuse"><ref name="reflectance" id="t"/></bsdf></shape></shape>
            <shape type="instance"><ref id="g"/>
                <transform name="to_world"><translate value="0, 3, 0"/></transform></shape>"#;
        let file = quad_file();
        let src = format!(
            r#"<scene version="3.0.0">{}</scene>"#,
            group.replace("FILE", &file.display().to_string())
        );
        let inst = build_scene(&xml::load_string(&src, &[]).unwrap()).unwrap();
        for (x, y) in [(0.6, 0.2), (0.2, 0.6), (0.9, 0.5)] {
            let (want, _) = at(&direct, x, y);
            let (got, _) = at(&inst, x, y + 3.0);
            assert!(
                (got - want).abs().max_element() < 1e-5,
                "({x}, {y}): {got} vs {want}"
            );
        }
    }

    #[test]
    fn bad_names_are_errors_that_list_what_exists() {
        let e = scene(&texture("vertex_colour", 1.0))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("vertex_colour") && e.contains("face_weight, vertex_color, vertex_weight"),
            "{e}"
        );
        let e = scene(&texture("colour", 1.0)).unwrap_err().to_string();
        assert!(e.contains("\"vertex_\" or \"face_\""), "{e}");
        let e = scene(r#"<texture type="mesh_attribute" id="t"/>"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"name\"") && e.contains("required"), "{e}");
        let e = scene(&texture("face_weight", f32::INFINITY))
            .unwrap_err()
            .to_string();
        assert!(e.contains("scale") && e.contains("finite"), "{e}");
    }

    #[test]
    fn lookups_off_a_surface_are_zero() {
        let s = scene(&texture("face_weight", 1.0)).unwrap();
        let t = 0;
        let sp = SurfacePoint::at_uv(Vec2::new(0.5, 0.5));
        assert_eq!(s.scene.textures.eval(t, &sp), Color::ZERO);
    }
}
