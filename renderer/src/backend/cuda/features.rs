//! The plugin set a `direct`/`path`/`ptracer` render module is compiled for
//! (`renderer/kernels/features.cuh`).
//!
//! A megakernel compiled for every plugin pays for all of them on every sample: the
//! dispatch over every BSDF, texture, emitter and shape kind is too large to inline, so
//! the sample path runs through out-of-line calls whose arguments (the scene, the hit,
//! the samples) live on the stack, and the register allocation covers the largest
//! plugin. A scene uses a few plugins, so the backend compiles the render module per
//! [`Features`] of the scene: the host prepends `#define`s ([`Features::prelude`]) that
//! name the kinds present, the integrator, the film's sample placement, the sampler
//! and the BVH depth; every dispatch then compiles only the cases that can occur, and a small set is
//! inlined whole. The module name and the CUBIN cache key include the prelude, so each
//! set is compiled once per machine (the disk cache) and loaded once per process.
//!
//! A texture or parameter update keeps the set; only adding a kind of plugin, changing
//! the integrator, filter kind or sampler, or a BVH growing past a stack size compiles another
//! module.

use std::sync::OnceLock;

use crate::bsdfs::registry;
use crate::films::record::{FlatFilm, FILTER_BOX, FILTER_GAUSSIAN, FILTER_TENT};
use crate::flat::unit_prims::UNIT_RECORDS_MAX;
use crate::flat::FlatScene;
use crate::integrators::record::FlatIntegrator;
use crate::integrators::tag::{
    DEPTH as INTEGRATOR_DEPTH, DIRECT as INTEGRATOR_DIRECT, PATH as INTEGRATOR_PATH,
    PTRACER as INTEGRATOR_PTRACER,
};
use crate::plugin::registry::{cuda_tags, SetDefault};
use crate::shapes::tag::INSTANCE as SHAPE_INSTANCE;

/// The `#define` that compiles the fixed `depth` module for scenes without instances:
/// every shape kind of the registry but [`SHAPE_INSTANCE`], so that no two-level
/// traversal is compiled (kernels/geometry.cuh `HG_INSTANCES`); empty for scenes with
/// instances (the default set of kernels/features.cuh: every kind).
pub fn depth_prelude(instances: bool) -> &'static str {
    static WITHOUT_INSTANCES: OnceLock<String> = OnceLock::new();
    if instances {
        return "";
    }
    WITHOUT_INSTANCES.get_or_init(|| {
        let every = (1u32 << crate::shapes::tag::COUNT) - 1;
        format!(
            "#define HG_SHAPE_SET 0x{:x}u\n",
            every & !(1 << SHAPE_INSTANCE)
        )
    })
}

/// `HG_FILM_SET` bit of a film that jitters within the pixel (box of radius <= 0.5).
pub const FILM_JITTER: u32 = 0;
/// `HG_FILM_SET` bit of a wider box: uniform over the sample's window.
pub const FILM_BOX: u32 = filter_placement(FILTER_BOX);
/// `HG_FILM_SET` bit of a tent: its CDF inverted over the window.
pub const FILM_TENT: u32 = filter_placement(FILTER_TENT);
/// `HG_FILM_SET` bit of a gaussian: Box-Muller with rejection outside the window.
pub const FILM_GAUSSIAN: u32 = filter_placement(FILTER_GAUSSIAN);

/// The placement of a film whose filter is `filter` (its tag: its position in the
/// rfilter registry), a narrow box aside: one placement per filter, after
/// [`FILM_JITTER`].
const fn filter_placement(filter: u32) -> u32 {
    1 + filter
}

/// The integrators a module whose prelude names none compiles (the generic build):
/// `direct` and `path`. `ptracer`'s light tracing kernels are compiled only when a
/// module names it, and `depth` has its own module.
pub const GENERIC_INTEGRATORS: u32 = (1 << INTEGRATOR_DIRECT) | (1 << INTEGRATOR_PATH);

/// The generated kernel file of the integrator tags.
pub const INTEGRATOR_REGISTRY_FILE: &str = "integrators/registry.cuh";
/// The generated kernel file of the film placements.
pub const FILM_REGISTRY_FILE: &str = "films/registry.cuh";
/// The generated kernel file of the sampler tags.
pub const SAMPLER_REGISTRY_FILE: &str = "samplers/registry.cuh";

/// The generated kernel files of the integrator, film-placement and sampler tags (the
/// path under `kernels/`, the text), each with its set's default for a module whose
/// prelude names none; features.cuh includes them.
pub fn cuda_sources() -> &'static [(&'static str, String); 3] {
    static SOURCES: OnceLock<[(&str, String); 3]> = OnceLock::new();
    SOURCES.get_or_init(|| {
        let placements: Vec<String> = std::iter::once("JITTER".to_string())
            .chain(crate::rfilters::KNOWN.iter().map(|f| f.to_uppercase()))
            .collect();
        let placements: Vec<&str> = placements.iter().map(String::as_str).collect();
        let samplers = crate::samplers::tag::NAMES;
        [
            (
                INTEGRATOR_REGISTRY_FILE,
                generated(
                    "the integrator records list (renderer/src/integrators/mod.rs)",
                    "the tags of the integrator kinds (FlatIntegrator::kind) and the default\n\
                     // set (bit HG_INTEGRATOR_*): direct and path; ptracer only when a module names\n\
                     // it, depth has a module of its own",
                    cuda_tags("INTEGRATOR", crate::integrators::tag::NAMES, SetDefault::Kinds(GENERIC_INTEGRATORS)),
                ),
            ),
            (
                FILM_REGISTRY_FILE,
                generated(
                    "the rfilter registry (renderer/src/rfilters/mod.rs)",
                    "how the film places a sample (film.cuh film_sample; features.rs\n\
                     // film_placement): HG_FILM_JITTER, a box of radius <= 0.5, jitters uniformly in\n\
                     // the pixel (weight 1); then one placement per filter: a wider box uniformly over\n\
                     // the window (weight 1), a tent by its CDF inverted over the window (weight 1),\n\
                     // a gaussian by Box-Muller with rejection outside the window (weight f / pdf).\n\
                     // The default set (bit HG_FILM_*) has every placement",
                    cuda_tags("FILM", &placements, SetDefault::Kinds((1 << placements.len()) - 1)),
                ),
            ),
            (
                SAMPLER_REGISTRY_FILE,
                generated(
                    "the sampler registry (renderer/src/samplers/mod.rs)",
                    "the tags of the samplers (FlatSampler::kind) and the default set (bit\n\
                     // HG_SAMPLER_*: every sampler)",
                    cuda_tags("SAMPLER", samplers, SetDefault::Kinds((1 << samplers.len()) - 1)),
                ),
            ),
        ]
    })
}

/// A generated kernel file: a header naming its `source` and saying `what` it holds,
/// then `defines`.
fn generated(source: &str, what: &str, defines: String) -> String {
    format!(
        "// Generated from {source} by\n// backend/cuda/features.rs: {what}.\n#pragma once\n\n{defines}"
    )
}

/// How kernels/film.cuh places `film`'s samples (`FILM_*`; `film_placement` there).
pub fn film_placement(film: &FlatFilm) -> u32 {
    match film.filter {
        FILTER_BOX if film.filter_radius <= 0.5 => FILM_JITTER,
        FILTER_BOX => FILM_BOX,
        FILTER_TENT => FILM_TENT,
        _ => FILM_GAUSSIAN,
    }
}

/// Inline the sample path when the BSDF dispatch has at most this many cases (a
/// `twosided` wrapper doubles its base kinds): NVRTC's time grows fast with the inlined
/// BSDF code (on the 2-core build machine: 5 kinds 3 s, 7 kinds 18 s, every plugin with
/// `twosided` 2 min); larger sets are specialised but keep the plugin calls out of line.
pub const INLINE_MAX_BSDF_CASES: u32 = 5;

/// Scenes of at most this many unit records (flat/unit_prims.rs: a primitive each, two
/// triangles forming a parallelogram one) skip the BVH: every ray tests every record in
/// order with the unit-shape test, so all lanes of a warp test the same record together.
/// Measured on the H200 (2026-12-03, before triangles were paired): the Cornell box (30
/// records) 9.2 ms through the BVH, 8.3 ms brute force (7.2 ms with 8 samples per lane);
/// with two more boxes (54 records) 13.6 vs 13.0 ms. A test costs ~50 instructions, so
/// the cost grows linearly with the records, the BVH's with their logarithm; 48 is also
/// the most the kernel parameter holds ([`UNIT_RECORDS_MAX`]).
pub const BRUTE_FORCE_MAX_RECORDS: usize = UNIT_RECORDS_MAX;

/// The smallest traversal stack a specialised module gets; stacks are powers of two
/// from here to `accel::STACK_SIZE`, so a BVH that is rebuilt a little deeper or
/// shallower (an optimisation loop moving vertices) seldom needs a new module.
pub const MIN_STACK: u32 = 8;

/// Which plugins a render needs: bit `k` of a set is kind `k` of that category (the
/// `kind` tags of the flat records).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Features {
    /// BSDF kinds ([`crate::bsdfs::tag`]), adapters and the kinds they wrap included.
    pub bsdfs: u32,
    /// The deepest stack of adapter BSDFs (`HG_ADAPTER_DEPTH`: the levels of the
    /// dispatch through adapters).
    pub adapter_depth: u32,
    /// Texture kinds ([`crate::textures::tag`]).
    pub textures: u32,
    /// Emitter kinds ([`crate::emitters::tag`]).
    pub emitters: u32,
    /// Shape kinds (`SHAPE_*`).
    pub shapes: u32,
    /// Integrator kinds (`INTEGRATOR_DIRECT`, `INTEGRATOR_PATH` or `INTEGRATOR_PTRACER`).
    pub integrators: u32,
    /// Film sample placement ([`FILM_JITTER`], [`FILM_BOX`], [`FILM_TENT`] or
    /// [`FILM_GAUSSIAN`]).
    pub film: u32,
    /// Sampler kinds ([`crate::samplers::tag`]; one: the sensor's).
    pub samplers: u32,
    /// Traversal stack entries: at least the BVH depth.
    pub stack: u32,
    /// Rays test every unit record instead of walking the BVH ([`BRUTE_FORCE_MAX_RECORDS`]).
    pub brute_force: bool,
    /// Brute force: the unit records the kernels' by-value parameter holds (the scene's
    /// record count rounded up to a multiple of [`UNIT_CAP_STEP`]); 0 otherwise.
    pub unit_cap: u32,
}

/// Brute-force modules hold their unit records in multiples of this many (the kernels
/// loop over the scene's own count; the padding records are never tested), so a scene
/// that gains or loses a primitive seldom needs a new module while the parameter stays
/// close to the records' size.
pub const UNIT_CAP_STEP: u32 = 4;

/// What a scene's [`Features`] depend on, kept by the device scene so that a render
/// under another tuning (brute-force limit) needs no flat scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureBasis {
    /// The plugin, integrator and film sets (accel fields unset).
    pub kinds: Features,
    /// Unit records of the brute-force test.
    pub unit_records: usize,
    /// Whether the BVH has leaves (an empty scene has none).
    pub has_leaves: bool,
    /// Depth of the BVH's deepest leaf.
    pub bvh_depth: u32,
}

impl FeatureBasis {
    /// The basis of `flat`.
    pub fn of(flat: &FlatScene) -> FeatureBasis {
        FeatureBasis {
            kinds: Features {
                bsdfs: set_of(flat.bsdfs.iter().map(|b| b.kind)),
                adapter_depth: flat.bsdf_depth,
                textures: set_of(flat.textures.iter().map(|t| t.kind)),
                emitters: set_of(flat.emitters.iter().map(|e| e.kind)),
                shapes: set_of(flat.shapes.iter().map(|s| s.kind)),
                integrators: 0,
                film: 0,
                samplers: 0,
                stack: 0,
                brute_force: false,
                unit_cap: 0,
            },
            unit_records: flat.unit_prims.len(),
            has_leaves: !flat.leaf_prims.is_empty(),
            bvh_depth: flat.bvh_depth,
        }
        .with_frame(&flat.integrator, &flat.film)
    }

    /// This basis rendered by `integrator` into `film` (a render with another sensor or
    /// integrator than the scene's).
    pub fn with_frame(mut self, integrator: &FlatIntegrator, film: &FlatFilm) -> FeatureBasis {
        self.kinds.integrators = set_of([integrator.kind]) & !(1 << INTEGRATOR_DEPTH);
        self.kinds.film = 1 << film_placement(film);
        self.kinds.samplers = set_of([film.sampler.kind]);
        self
    }
}

/// The set of `kinds`.
fn set_of(kinds: impl IntoIterator<Item = u32>) -> u32 {
    kinds.into_iter().fold(0, |s, k| s | (1u32 << k.min(31)))
}

impl Features {
    /// The plugins, integrator, film placement and stack `flat` needs, with brute force
    /// up to [`BRUTE_FORCE_MAX_RECORDS`] unit records.
    pub fn of(flat: &FlatScene) -> Features {
        Self::with_brute_force_max(flat, BRUTE_FORCE_MAX_RECORDS)
    }

    /// [`Self::of`] with brute force for scenes of at most `brute_max` unit records
    /// (flat/unit_prims.rs: a primitive each, a parallelogram of two triangles one; at most
    /// [`UNIT_RECORDS_MAX`]; a scene of many primitives has none).
    pub fn with_brute_force_max(flat: &FlatScene, brute_max: usize) -> Features {
        Self::from_basis(&FeatureBasis::of(flat), brute_max)
    }

    /// The features of a scene summarised by `b`, with brute force for scenes of at
    /// most `brute_max` unit records.
    pub fn from_basis(b: &FeatureBasis, brute_max: usize) -> Features {
        let records = b.unit_records;
        let brute_force = b.has_leaves && records > 0 && records <= brute_max.min(UNIT_RECORDS_MAX);
        let stack = b
            .bvh_depth
            .max(1)
            .next_power_of_two()
            .clamp(MIN_STACK, crate::accel::STACK_SIZE as u32);
        Features {
            brute_force,
            unit_cap: if brute_force {
                (records as u32).max(1).next_multiple_of(UNIT_CAP_STEP)
            } else {
                0
            },
            stack,
            ..b.kinds
        }
    }

    /// The cases of the BSDF dispatch when inlined whole: the base kinds, once more for
    /// each path through the adapters above them (`a` adapters, `d` levels: `1 + a +
    /// a² + ... + a^d` times).
    pub fn bsdf_cases(&self) -> u32 {
        let adapters = registry::mask(|e| e.adapter);
        let base = (self.bsdfs & !adapters).count_ones();
        let a = (self.bsdfs & adapters).count_ones();
        let paths: u32 = (0..=self.adapter_depth).map(|k| a.saturating_pow(k)).sum();
        base.saturating_mul(paths)
    }

    /// Whether the module inlines the whole sample path ([`INLINE_MAX_BSDF_CASES`]).
    pub fn inline_all(&self) -> bool {
        self.bsdf_cases() <= INLINE_MAX_BSDF_CASES
    }

    /// Whether the set has the `path` integrator.
    pub fn has_path(&self) -> bool {
        self.integrators & (1 << INTEGRATOR_PATH) != 0
    }

    /// Whether the set has the `ptracer` integrator: its module holds the light tracing
    /// kernels (kernels/integrators/ptracer.cuh), which no other module compiles.
    pub fn has_ptracer(&self) -> bool {
        self.integrators & (1 << INTEGRATOR_PTRACER) != 0
    }

    /// The `#define`s that select this set in kernels/features.cuh; with
    /// `path_wavefront`, a `path` module holds the wavefront kernels (kernels/wavefront.cuh)
    /// instead of the megakernel's path loop.
    pub fn prelude(&self, path_wavefront: bool) -> String {
        let mut s = format!(
            "// heliograph render module for one plugin set (backend/cuda/features.rs)\n\
             #define HG_BSDF_SET 0x{:x}u\n#define HG_TEX_SET 0x{:x}u\n\
             #define HG_EMITTER_SET 0x{:x}u\n#define HG_SHAPE_SET 0x{:x}u\n\
             #define HG_INTEGRATOR_SET 0x{:x}u\n#define HG_FILM_SET 0x{:x}u\n\
             #define HG_SAMPLER_SET 0x{:x}u\n\
             #define HG_STACK {}\n#define HG_ADAPTER_DEPTH {}\n",
            self.bsdfs,
            self.textures,
            self.emitters,
            self.shapes,
            self.integrators,
            self.film,
            self.samplers,
            self.stack,
            self.adapter_depth
        );
        if self.inline_all() {
            s.push_str("#define HG_INLINE_ALL 1\n");
        }
        if self.brute_force {
            s.push_str(&format!(
                "#define HG_BRUTE_FORCE 1\n#define HG_UNIT_CAP {}\n",
                self.unit_cap
            ));
        }
        if path_wavefront && self.has_path() {
            s.push_str("#define HG_PATH_WAVEFRONT 1\n");
        }
        s
    }

    /// A short name for messages and cache file names, e.g. `b1.t3.e8.s4.i1.f8.m1.k8`
    /// (`.bfN`, N unit records, instead of the stack size `.kN` when brute force).
    pub fn tag(&self) -> String {
        let mut accel = if self.brute_force {
            format!("bf{}", self.unit_cap)
        } else {
            format!("k{}", self.stack)
        };
        if self.adapter_depth > 0 {
            accel += &format!(".a{}", self.adapter_depth);
        }
        format!(
            "b{:x}.t{:x}.e{:x}.s{:x}.i{:x}.f{:x}.m{:x}.{accel}",
            self.bsdfs,
            self.textures,
            self.emitters,
            self.shapes,
            self.integrators,
            self.film,
            self.samplers
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bsdfs::tag as bsdf_kind;
    use crate::desc::xml;
    use crate::emitters::tag as emitter_tag;
    use crate::scene::build_scene;
    use crate::shapes::tag::{MESH as SHAPE_MESH, RECTANGLE as SHAPE_RECTANGLE};
    use crate::textures::tag as tex_kind;

    fn flat(name: &str) -> FlatScene {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
        let desc = xml::load_file(&root.join(name), &[("res".into(), "16".into())]).unwrap();
        FlatScene::from_scene(&build_scene(&desc).unwrap()).unwrap()
    }

    #[test]
    fn the_seed_scene_needs_diffuse_bitmap_constant_and_one_rectangle() {
        let f = Features::of(&flat("seed.xml"));
        assert_eq!(f.bsdfs, 1 << bsdf_kind::DIFFUSE);
        assert_eq!(
            f.textures,
            (1 << tex_kind::CONSTANT) | (1 << tex_kind::BITMAP)
        );
        assert_eq!(f.emitters, 1 << emitter_tag::CONSTANT);
        assert_eq!(f.shapes, 1 << SHAPE_RECTANGLE);
        assert_eq!(f.integrators, 1 << INTEGRATOR_DIRECT);
        assert_eq!(f.film, 1 << FILM_GAUSSIAN, "the default gaussian filter");
        assert_eq!(f.stack, MIN_STACK);
        assert!(f.inline_all() && f.brute_force, "one rectangle");
        assert_eq!(f.samplers, 1, "the default independent sampler");
        assert_eq!(f.tag(), "b1.t3.e8.s4.i1.f8.m1.bf4");
        assert!(f.prelude(false).contains("HG_UNIT_CAP 4"));
    }

    #[test]
    fn the_cornell_box_needs_meshes_rectangles_and_an_area_light() {
        let fl = flat("cbox.xml");
        let f = Features::of(&fl);
        assert_eq!(f.shapes, (1 << SHAPE_MESH) | (1 << SHAPE_RECTANGLE));
        assert_eq!(f.emitters, 1 << emitter_tag::AREA);
        assert_eq!(f.integrators, 1 << INTEGRATOR_PATH);
        assert!(f.stack >= fl.bvh_depth && f.stack.is_power_of_two());
        // 30 primitives: 6 rectangles and 2 cubes of 6 parallelogram faces, so 18 unit
        // records: brute force by default and from a threshold of 18 on
        assert_eq!((fl.leaf_prims.len(), fl.unit_prims.len()), (30, 18));
        assert!(f.brute_force && f.prelude(false).contains("HG_BRUTE_FORCE 1"));
        assert_eq!(f.unit_cap, 20, "18 records, padded to a multiple of 4");
        assert!(f.tag().ends_with(".bf20") && f.prelude(false).contains("HG_UNIT_CAP 20"));
        assert_eq!(Features::with_brute_force_max(&fl, 18), f);
        let b = Features::with_brute_force_max(&fl, 17);
        assert!(!b.brute_force && !b.prelude(false).contains("HG_BRUTE_FORCE"));
        assert!(b.tag().ends_with(&format!(".k{}", b.stack)) && b.unit_cap == 0);
        // no unit records (a scene past unit_prims::UNIT_PRIMS_MAX): never brute force
        let mut big = fl.clone();
        big.unit_prims.clear();
        assert!(!Features::with_brute_force_max(&big, UNIT_RECORDS_MAX).brute_force);
    }

    #[test]
    fn the_prelude_names_every_set_and_inlines_only_small_ones() {
        let mut f = Features::of(&flat("seed.xml"));
        let p = f.prelude(true);
        for d in [
            "HG_BSDF_SET 0x1u",
            "HG_TEX_SET 0x3u",
            "HG_EMITTER_SET 0x8u",
            "HG_SHAPE_SET 0x4u",
            "HG_INTEGRATOR_SET 0x1u",
            "HG_FILM_SET 0x8u",
            "HG_SAMPLER_SET 0x1u",
            "HG_STACK 8",
            "HG_INLINE_ALL",
            "HG_BRUTE_FORCE 1",
        ] {
            assert!(p.contains(d), "{d} missing from\n{p}");
        }
        // the same sets from the registries' tags
        for d in [
            format!("HG_INTEGRATOR_SET 0x{:x}u", 1 << INTEGRATOR_DIRECT),
            format!("HG_FILM_SET 0x{:x}u", 1 << FILM_GAUSSIAN),
            format!(
                "HG_SAMPLER_SET 0x{:x}u",
                1 << crate::samplers::tag::INDEPENDENT
            ),
        ] {
            assert!(p.contains(&d), "{d} missing from\n{p}");
        }
        // the seed scene renders with `direct`: no wavefront kernels
        assert!(!p.contains("HG_PATH_WAVEFRONT"));
        let c = Features::of(&flat("cbox.xml"));
        assert!(c.prelude(true).contains("HG_PATH_WAVEFRONT 1"));
        assert!(!c.prelude(false).contains("HG_PATH_WAVEFRONT"));
        // five base kinds under twosided are ten dispatch cases: not inlined
        f.bsdfs = 0b1001_1111;
        f.adapter_depth = 1;
        assert_eq!(f.bsdf_cases(), 10);
        assert!(f.prelude(false).contains("HG_ADAPTER_DEPTH 1") && f.tag().ends_with(".a1"));
        assert!(!f.inline_all() && !f.prelude(false).contains("HG_INLINE_ALL"));
        // a mask around a twosided diffuse: diffuse reached through no adapter, either
        // one, or both in two levels (1 + 2 + 4 paths)
        f.bsdfs = (1 << bsdf_kind::MASK) | (1 << bsdf_kind::TWO_SIDED) | 1;
        f.adapter_depth = 2;
        assert_eq!(f.bsdf_cases(), 7);
        f.bsdfs = 0b0001_1111;
        f.adapter_depth = 0;
        assert!(f.inline_all());
    }

    #[test]
    fn instanced_scenes_add_the_instance_kind_and_walk_the_bvh() {
        use crate::shapes::tag::{INSTANCE as SHAPE_INSTANCE, SPHERE as SHAPE_SPHERE};
        let fl = flat("instances.xml");
        let f = Features::of(&fl);
        let members = (1 << SHAPE_MESH) | (1 << SHAPE_SPHERE);
        assert_eq!(
            f.shapes,
            members | (1 << SHAPE_RECTANGLE) | (1 << SHAPE_INSTANCE)
        );
        assert!(
            f.prelude(false).contains("HG_SHAPE_SET 0x27u"),
            "{}",
            f.prelude(false)
        );
        assert!(!f.brute_force && f.stack >= fl.bvh_depth);
        // scenes without instances compile none of the two-level walk, the depth module
        // included: every shape kind but the instance
        assert_eq!(
            Features::of(&flat("cbox.xml")).shapes & (1 << SHAPE_INSTANCE),
            0
        );
        let every_but_instances = (1u32 << (SHAPE_INSTANCE + 1)) - 1 - (1 << SHAPE_INSTANCE);
        let want = format!("#define HG_SHAPE_SET 0x{every_but_instances:x}u\n");
        assert_eq!(depth_prelude(false), want);
        // the kinds of the registry as the kernels know them (shapes/registry.cuh HG_SHAPE_*)
        assert_eq!(depth_prelude(false), "#define HG_SHAPE_SET 0x1fu\n");
        assert_eq!(depth_prelude(true), "");
    }

    #[test]
    fn the_integrator_film_and_sampler_tags_are_the_registries() {
        let [(_, integrators), (_, films), (_, samplers)] = cuda_sources();
        let has = |src: &str, prefix: &str, names: &[&str], set: u32| {
            for (tag, name) in names.iter().enumerate() {
                let line = format!("#define HG_{prefix}_{name} {tag}u\n");
                assert!(src.contains(&line), "{line} missing from\n{src}");
            }
            let line = format!("#define HG_{prefix}_SET 0x{set:x}u\n");
            assert!(src.contains(&line), "{line} missing from\n{src}");
        };
        // the values the kernels are written against
        let integrator_names = ["DIRECT", "PATH", "DEPTH", "PTRACER"];
        has(integrators, "INTEGRATOR", &integrator_names, 0x3);
        has(films, "FILM", &["JITTER", "BOX", "TENT", "GAUSSIAN"], 0xf);
        let sampler_names = ["INDEPENDENT", "STRATIFIED", "MULTIJITTER", "LDSAMPLER"];
        has(samplers, "SAMPLER", &sampler_names, 0xf);
        // ... are the registries'
        assert_eq!(crate::integrators::tag::NAMES, integrator_names);
        assert_eq!(crate::samplers::tag::NAMES, sampler_names);
        assert_eq!(GENERIC_INTEGRATORS, 0x3);
        for (filter, name, placement) in [
            (FILTER_BOX, "box", FILM_BOX),
            (FILTER_TENT, "tent", FILM_TENT),
            (FILTER_GAUSSIAN, "gaussian", FILM_GAUSSIAN),
        ] {
            assert_eq!(crate::rfilters::KNOWN[filter as usize], name);
            assert_eq!(placement, filter + 1, "{name}");
        }
        assert_eq!(crate::rfilters::KNOWN.len(), 3, "one placement per filter");
        // features.cuh includes them, and every file is served to the kernels
        let features = super::super::kernels::file("features.cuh").unwrap();
        for (name, src) in cuda_sources() {
            assert!(features.contains(&format!("#include \"{name}\"")), "{name}");
            assert_eq!(super::super::kernels::file(name).unwrap(), src);
        }
    }

    #[test]
    fn stacks_are_powers_of_two_covering_the_depth() {
        let mut fl = flat("seed.xml");
        for (depth, stack) in [(0, 8), (1, 8), (8, 8), (9, 16), (33, 64), (128, 128)] {
            fl.bvh_depth = depth;
            assert_eq!(Features::of(&fl).stack, stack, "depth {depth}");
        }
    }

    #[test]
    fn each_filter_kind_has_its_own_placement() {
        let mut fl = flat("seed.xml");
        for (filter, radius, placement) in [
            (FILTER_BOX, 0.5, FILM_JITTER),
            (FILTER_BOX, 0.3, FILM_JITTER),
            (FILTER_BOX, 0.6, FILM_BOX),
            (FILTER_TENT, 0.5, FILM_TENT),
            (FILTER_TENT, 1.5, FILM_TENT),
            (FILTER_GAUSSIAN, 2.0, FILM_GAUSSIAN),
        ] {
            fl.film.filter = filter;
            fl.film.filter_radius = radius;
            let f = Features::of(&fl);
            assert_eq!(f.film, 1 << placement, "filter {filter} radius {radius}");
            assert!(f
                .prelude(false)
                .contains(&format!("HG_FILM_SET 0x{:x}u", 1 << placement)));
            assert!(f.tag().contains(&format!(".f{:x}.", 1 << placement)));
        }
    }
}
