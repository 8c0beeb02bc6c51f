//! What each shape record kind implements for the dispatch of
//! [`AnyShape`](super::AnyShape): [`ShapeRecord`]; and the kernels' tags of the record
//! kinds ([`cuda_source`]).

use std::fmt::Write as _;
use std::sync::OnceLock;

use super::record::FlatShape;
use super::{Geometry, Hit, PositionSample, Prim};
use crate::math::{Aabb, Ray, Vec2};
use crate::plugin::registry::{cuda_tags, SetDefault};

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

    /// Writes the record's own fields of the kernels' record `f` (the caller sets
    /// `kind`, `bsdf` and `emitter`).
    fn flatten(&self, f: &mut FlatShape);

    /// Whether a scene holding this record walks its BVH on the GPU even when it has few
    /// primitives: the record is no affine image of a unit planar shape or sphere
    /// ([`crate::flat::unit_prims`]).
    fn walks_bvh(&self) -> bool {
        false
    }
}

/// The CUDA source of the record kinds (`shapes/registry.cuh`), generated once: the
/// `HG_SHAPE_*` tags, the default `HG_SHAPE_SET` (every kind), the includes of the twins
/// of the kinds listed `(cuda)` and the dispatch arms over them.
pub fn cuda_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| generate_cuda(super::tag::NAMES, super::CUDA_KINDS))
}

/// The dispatch over the twins, one macro per operation each twin defines
/// (`<twin>_intersect`, `<twin>_hit`, `<twin>_sample_position`): its name, its
/// parameters (the caller's variables) and one kind's arm, `<TAG>` its tag name and
/// `<twin>` its twin's file stem. An arm's condition is the kind's bit of the module's
/// shape set, then the kind itself, so a module compiles only the arms of its kinds.
const ARMS: [(&str, &str, &str); 3] = [
    // geometry.cuh intersect_slot: t of the analytic kind, or HG_INF
    (
        "HG_SHAPE_INTERSECT_ARMS",
        "s, r, tmax",
        "    if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_<TAG>) && s.kind == HG_SHAPE_<TAG>) return <twin>_intersect(s, r, tmax); \\\n",
    ),
    // scene.cuh make_hit: the twin fills the hit; an analytic kind's geometric normal is
    // its shading normal
    (
        "HG_SHAPE_HIT_ARMS",
        "sh, kind, ray, t, h",
        "    if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_<TAG>) && kind == HG_SHAPE_<TAG>) { \\\n\
         \x20       <twin>_hit(sh, ray, t, &h.p, &h.n, &h.uv, &h.dpdu, &h.dpdv); \\\n\
         \x20       h.ng = h.n; \\\n\
         \x20       return h; \\\n\
         \x20   } \\\n",
    ),
    // shapes/sample.cuh sample_position (`else if` arms of its chain): uniform by area
    (
        "HG_SHAPE_SAMPLE_POSITION_ARMS",
        "sh, kind, u, ps",
        "    else if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_<TAG>) && kind == HG_SHAPE_<TAG>) { \\\n\
         \x20       <twin>_sample_position(sh, u, &ps.p, &ps.n, &ps.uv); \\\n\
         \x20       ps.pdf = 1.0f / sh.area; \\\n\
         \x20   } \\\n",
    ),
];

/// The text of `shapes/registry.cuh` for the record kinds `names` (in tag order) and
/// the kinds with a twin, `twins` (tag name, twin file stem; in tag order).
fn generate_cuda(names: &[&str], twins: &[(&str, &str)]) -> String {
    let mut s = String::from(
        "// Generated from the shape records list (renderer/src/shapes/mod.rs) by\n\
         // shapes/registry.rs: the tags of the record kinds (FlatShape::kind) and the default\n\
         // shape set (bit HG_SHAPE_*: every kind). HG_SHAPE_INSTANCE is a shapegroup placed\n\
         // by an instance (geometry.cuh intersect_instance). Then the twins of the kinds\n\
         // listed (cuda) and the arms of the dispatch over them, each a macro expanded where\n\
         // geometry.cuh, scene.cuh and shapes/sample.cuh dispatch (mesh, rectangle, disk and\n\
         // instance keep their own arms there).\n\
         #pragma once\n\n",
    );
    let every = (1u64 << names.len()) - 1;
    s.push_str(&cuda_tags("SHAPE", names, SetDefault::Kinds(every as u32)));
    s.push('\n');
    for (_, twin) in twins {
        let _ = writeln!(s, "#include \"{twin}.cuh\"");
    }
    for (name, params, arm) in ARMS {
        let _ = write!(s, "\n#define {name}({params}) \\\n");
        for (tag, twin) in twins {
            s.push_str(&arm.replace("<TAG>", tag).replace("<twin>", twin));
        }
        s.push_str("    /* end of the arms */\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::{tag, CUDA_KINDS, CUDA_TWINS};
    use super::*;

    #[test]
    fn the_kernels_shape_tags_are_the_records_list() {
        let src = super::cuda_source();
        assert_eq!(tag::NAMES.len() as u32, tag::COUNT);
        for (t, name) in tag::NAMES.iter().enumerate() {
            let define = format!("#define HG_SHAPE_{name} {t}u\n");
            assert_eq!(src.matches(&define).count(), 1, "{src}");
        }
        assert_eq!(tag::NAMES[tag::CYLINDER as usize], "CYLINDER");
        // the default set has every kind
        let every = (1u32 << tag::COUNT) - 1;
        let set = format!("#define HG_SHAPE_SET 0x{every:x}u\n");
        assert!(src.contains(&set), "{src}");
    }

    /// The body of macro `name` in `src` (its continued lines).
    fn macro_body<'a>(src: &'a str, name: &str) -> Option<&'a str> {
        let start = src.find(&format!("#define {name}("))?;
        let rest = &src[start..];
        let mut end = 0;
        for line in rest.split_inclusive('\n') {
            end += line.len();
            if !line.trim_end().ends_with('\\') {
                break;
            }
        }
        Some(&rest[..end])
    }

    /// Whether `src` includes each twin of `kinds` once and has its arm, in the kinds'
    /// order, in each of the three dispatch macros.
    fn dispatches(src: &str, kinds: &[(&str, &str)]) -> Result<(), String> {
        let arms = |tag: &str, twin: &str| {
            [
                (
                    "HG_SHAPE_INTERSECT_ARMS",
                    format!("s.kind == HG_SHAPE_{tag}) return {twin}_intersect(s, r, tmax);"),
                ),
                (
                    "HG_SHAPE_HIT_ARMS",
                    format!("kind == HG_SHAPE_{tag}) {{ \\\n        {twin}_hit(sh, ray, t, &h.p,"),
                ),
                (
                    "HG_SHAPE_SAMPLE_POSITION_ARMS",
                    format!("else if (HG_HAS(HG_SHAPE_SET, HG_SHAPE_{tag}) && kind == HG_SHAPE_{tag}) {{ \\\n        {twin}_sample_position(sh, u, &ps.p,"),
                ),
            ]
        };
        let mut after = [0usize; 3];
        for (tag, twin) in kinds {
            let include = format!("#include \"{twin}.cuh\"\n");
            if src.matches(&include).count() != 1 {
                return Err(format!("{twin}.cuh is not included once"));
            }
            for (i, (name, arm)) in arms(tag, twin).iter().enumerate() {
                let body = macro_body(src, name).ok_or(format!("no {name}"))?;
                match body.find(arm.as_str()) {
                    Some(at) if at >= after[i] => after[i] = at,
                    Some(_) => return Err(format!("{name}: {tag} out of tag order")),
                    None => return Err(format!("{name}: no arm of {tag}")),
                }
            }
        }
        Ok(())
    }

    #[test]
    fn the_dispatch_has_each_twinned_kind_and_no_other() {
        // the records listed (cuda), in tag order
        let tags: Vec<usize> = CUDA_KINDS
            .iter()
            .map(|(t, _)| tag::NAMES.iter().position(|n| n == t).unwrap())
            .collect();
        assert!(
            tags.len() >= 2 && tags.windows(2).all(|w| w[0] < w[1]),
            "{tags:?}"
        );
        dispatches(cuda_source(), CUDA_KINDS).unwrap();
        // power check: a kind dropped from the list is missing from the text
        for drop in 0..CUDA_KINDS.len() {
            let mut kinds = CUDA_KINDS.to_vec();
            kinds.remove(drop);
            let src = generate_cuda(tag::NAMES, &kinds);
            assert!(dispatches(&src, &kinds).is_ok());
            assert!(dispatches(&src, CUDA_KINDS).is_err(), "{src}");
        }
        // and one out of order is found
        let swapped: Vec<_> = CUDA_KINDS.iter().rev().copied().collect();
        assert!(dispatches(&generate_cuda(tag::NAMES, &swapped), CUDA_KINDS).is_err());
        // the planar kinds, the mesh and instances keep their own arms
        let src = cuda_source();
        for other in ["MESH", "RECTANGLE", "DISK", "INSTANCE"] {
            assert!(!src.contains(&format!("== HG_SHAPE_{other})")), "{other}");
        }
    }

    #[test]
    fn every_twin_defines_what_the_dispatch_calls() {
        assert_eq!(CUDA_TWINS.len(), CUDA_KINDS.len());
        for ((path, text), (tag, twin)) in CUDA_TWINS.iter().zip(CUDA_KINDS) {
            assert_eq!(*path, format!("shapes/{twin}.cuh"));
            assert!(tag::NAMES.contains(tag), "{tag}");
            for f in [
                format!(" {twin}_intersect(const ShapeTest& s, const Ray& r, float tmax)"),
                format!(" {twin}_hit(const FlatShape& sh, const Ray& ray, float t, V3* p, V3* n, V2* uv,"),
                format!(" {twin}_sample_position(const FlatShape& sh, V2 u, V3* p, V3* n, V2* uv)"),
            ] {
                assert!(text.contains(&f), "{path}: no{f}");
            }
        }
    }
}
