//! NVRTC compiles every kernel module the renderer can ask for, for `sm_90` and for the
//! oldest supported architecture, on a machine without a GPU (NVRTC needs none): a CUDA
//! C error anywhere, or a ptxas failure (registers, stack) on some variant, fails CI.
//!
//! Modules: `depth.cu` (the `depth` integrator), `parity.cu` (the plugin parity kernel)
//! and the `render.cu` module of a plugin set ([`Features`], backend/cuda/features.rs).
//! There are millions of plugin sets (every registered BSDF, 4 texture, 7 emitter and 6 shape
//! kinds (instances of shapegroups among them: the two-level walk), 3 integrators, 4 film
//! placements, 4 samplers, 5 stack sizes or 12 brute-force capacities, the
//! wavefront and ray-counting variants), so this compiles a covering set instead. What a
//! set changes in the compiled code:
//!
//! - four `#if` switches (features.cuh, render.cu, scene.cuh, geometry.cuh,
//!   wavefront.cuh, integrators/ptracer.cuh): the integrator (`direct`, `path` as a
//!   megakernel, `path` as wavefront kernels, `ptracer`), `HG_INLINE_ALL` (inlined or out-of-line plugin calls),
//!   `HG_BRUTE_FORCE` (every unit record or the BVH) and `HG_COUNT_RAYS`. Every value of
//!   each is compiled together with every value of each other one (a pairwise covering
//!   array: 10 modules instead of all 32 combinations). The switches select separate
//!   pieces of code (the wavefront kernels, the intersection loop, a counter in the two
//!   trace calls, the plugins' inline attribute), so what breaks only in company breaks
//!   with one other switch: inlining, which puts all the code in one function, or the
//!   integrator, which is the code the others are called from.
//! - the kind sets: every `HG_CASE` body is parsed in every module, but only the kinds
//!   present reach code generation, where inlined or not they meet ptxas in different
//!   company. So every kind of every category, and every film placement, is present in
//!   at least one inlined and one out-of-line module (each sampler too; asserted below against the
//!   generic sets: a new BSDF joins an inlined module by itself, other new plugin kinds
//!   must join a module here); stacks
//!   of 8 to 128 entries and brute-force capacities of 4 to 48 records occur too.
//!
//! The render modules are assembled as the backend assembles them (device/module.rs
//! `render_kernels`: the prelude, `HG_COUNT_RAYS`, then render.cu) with its default
//! register cap. NVRTC is found as the backend finds it (`HELIOGRAPH_NVRTC`, which
//! tests/run_all.sh points at the `nvidia-cuda-nvrtc` wheel it installs under target/);
//! without one the test prints SKIP and passes, unless `HELIOGRAPH_REQUIRE_NVRTC=1`.
#![cfg(feature = "cuda")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use heliograph::backend::cuda::features::{
    depth_prelude, Features, FILM_BOX, FILM_GAUSSIAN, FILM_JITTER, FILM_TENT, MIN_STACK,
    UNIT_CAP_STEP,
};
use heliograph::backend::cuda::{
    arch_for, kernels, nvrtc_compile_offline, nvrtc_lib, RenderTuning, MIN_COMPUTE_CAPABILITY,
};
use heliograph::emitters::tag as e;
use heliograph::flat::materials::bsdf_kind as b;
use heliograph::flat::unit_prims::UNIT_RECORDS_MAX;
use heliograph::integrators::tag::{
    DIRECT as INTEGRATOR_DIRECT, PATH as INTEGRATOR_PATH, PTRACER as INTEGRATOR_PTRACER,
};
use heliograph::shapes::tag::{
    CYLINDER as SHAPE_CYLINDER, DISK as SHAPE_DISK, INSTANCE as SHAPE_INSTANCE, MESH as SHAPE_MESH,
    RECTANGLE as SHAPE_RECTANGLE, SPHERE as SHAPE_SPHERE,
};
use heliograph::textures::tag::{
    BITMAP as TEX_BITMAP, CHECKERBOARD as TEX_CHECKERBOARD, CONSTANT as TEX_CONSTANT,
    MESH_ATTRIBUTE as TEX_MESH_ATTRIBUTE,
};

/// How a render module runs its integrator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Direct,
    PathMegakernel,
    PathWavefront,
    /// `ptracer` (kernels/integrators/ptracer.cuh), its own module kind.
    Ptracer,
}

/// One render module of the covering set.
#[derive(Clone, Debug)]
struct RenderModule {
    features: Features,
    mode: Mode,
    count_rays: bool,
}

impl RenderModule {
    /// The source prefix the backend puts before render.cu for this module.
    fn prelude(&self) -> String {
        let mut s = self.features.prelude(self.mode == Mode::PathWavefront);
        if self.count_rays {
            s.push_str("#define HG_COUNT_RAYS 1\n");
        }
        s
    }

    fn label(&self) -> String {
        format!(
            "render.cu[{}]{}{}",
            self.features.tag(),
            if self.mode == Mode::PathWavefront {
                "+wavefront"
            } else {
                ""
            },
            if self.count_rays {
                "+HG_COUNT_RAYS"
            } else {
                ""
            }
        )
    }
}

fn set(kinds: &[u32]) -> u32 {
    kinds.iter().fold(0, |s, k| s | 1 << k)
}

/// The generic build's set `name` (every kind of the category): the BSDF, texture,
/// emitter and shape registries' kinds, the other categories' from the files that
/// features.rs generates.
fn all_kinds(name: &str) -> u32 {
    if name == "HG_BSDF_SET" {
        return (1u32 << heliograph::bsdfs::KNOWN.len()) - 1;
    }
    if name == "HG_TEX_SET" {
        return (1u32 << heliograph::textures::KNOWN.len()) - 1;
    }
    if name == "HG_EMITTER_SET" {
        return (1u32 << heliograph::emitters::KNOWN.len()) - 1;
    }
    if name == "HG_SHAPE_SET" {
        return (1u32 << heliograph::shapes::tag::COUNT) - 1;
    }
    let def = format!("#define {name} 0x");
    let line = (heliograph::backend::cuda::features::cuda_sources().iter())
        .flat_map(|(_, src)| src.lines())
        .find_map(|l| l.trim().strip_prefix(def.as_str()))
        .unwrap_or_else(|| panic!("no generated registry file has {def}"));
    let hex: String = line.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    u32::from_str_radix(&hex, 16).unwrap()
}

/// A module of the covering set: switches, then the kinds of each category.
fn module(
    (mode, brute_force, count_rays): (Mode, bool, bool),
    [bsdfs, textures, emitters, shapes]: [&[u32]; 4],
    film: u32,
    stack_or_cap: u32,
) -> RenderModule {
    let adapters = heliograph::bsdfs::registry::mask(|e| e.adapter);
    RenderModule {
        features: Features {
            bsdfs: set(bsdfs),
            // one adapter level; the set of every kind reaches through as many as a
            // scene may stack
            adapter_depth: if bsdfs.len() == heliograph::bsdfs::KNOWN.len() {
                heliograph::bsdfs::registry::MAX_ADAPTER_DEPTH
            } else {
                (set(bsdfs) & adapters != 0) as u32
            },
            textures: set(textures),
            emitters: set(emitters),
            shapes: set(shapes),
            integrators: 1
                << match mode {
                    Mode::Direct => INTEGRATOR_DIRECT,
                    Mode::Ptracer => INTEGRATOR_PTRACER,
                    _ => INTEGRATOR_PATH,
                },
            film: 1 << film,
            // a scene has one sampler: covering_set gives each module its own
            samplers: 1,
            stack: if brute_force { MIN_STACK } else { stack_or_cap },
            brute_force,
            unit_cap: if brute_force { stack_or_cap } else { 0 },
        },
        mode,
        count_rays,
    }
}

/// The covering set (module docs): the first four modules inline the sample path (at
/// most five BSDF dispatch cases), the next four keep the plugin calls out of line; the
/// last two are the `ptracer` modules ([`ptracer_modules`]).
fn covering_set() -> Vec<RenderModule> {
    let mut m = render_covering_set();
    m.extend(ptracer_modules());
    m
}

/// The `ptracer` modules: one inlined (brute force, ray counter) and one out of line
/// (BVH), each with every emitter kind (light paths start on every kind, and the emitter
/// dispatch of sample_ray is ptracer's own), every shape kind and `roughdielectric`
/// (whose importance scaling is ptracer's own); the out-of-line one under both adapters
/// (12 dispatch cases). Not every BSDF: the plugins' code is the `direct`/`path`
/// modules' (covered above), and NVRTC takes minutes on a module of every BSDF.
fn ptracer_modules() -> Vec<RenderModule> {
    let all_emitters = [
        e::AREA,
        e::POINT,
        e::DIRECTIONAL,
        e::CONSTANT,
        e::ENVMAP,
        e::SPOT,
        e::PROJECTOR,
    ];
    let all_shapes = [
        SHAPE_MESH,
        SHAPE_SPHERE,
        SHAPE_RECTANGLE,
        SHAPE_DISK,
        SHAPE_CYLINDER,
    ];
    vec![
        module(
            (Mode::Ptracer, true, true),
            [
                &[b::DIFFUSE, b::ROUGH_DIELECTRIC, b::CONDUCTOR, b::PLASTIC],
                &[TEX_CONSTANT, TEX_BITMAP],
                &all_emitters,
                &all_shapes,
            ],
            FILM_GAUSSIAN,
            UNIT_CAP_STEP,
        ),
        module(
            (Mode::Ptracer, false, false),
            [
                &[
                    b::DIFFUSE,
                    b::CONDUCTOR,
                    b::ROUGH_PLASTIC,
                    b::ROUGH_DIELECTRIC,
                    b::TWO_SIDED,
                    b::MASK,
                ],
                &[TEX_CONSTANT, TEX_BITMAP, TEX_CHECKERBOARD],
                &all_emitters,
                &all_shapes,
            ],
            FILM_TENT,
            64,
        ),
    ]
}

/// The `direct`/`path` modules of the covering set.
fn render_covering_set() -> Vec<RenderModule> {
    use Mode::{Direct, PathMegakernel as Mega, PathWavefront as Wave};
    let all_tex = [
        TEX_CONSTANT,
        TEX_BITMAP,
        TEX_CHECKERBOARD,
        TEX_MESH_ATTRIBUTE,
    ];
    let all_emitters = [
        e::AREA,
        e::POINT,
        e::DIRECTIONAL,
        e::CONSTANT,
        e::ENVMAP,
        e::SPOT,
        e::PROJECTOR,
    ];
    let all_shapes = [
        SHAPE_MESH,
        SHAPE_SPHERE,
        SHAPE_RECTANGLE,
        SHAPE_DISK,
        SHAPE_CYLINDER,
        SHAPE_INSTANCE,
    ];
    // every registered BSDF, in tag order. Inlined: the first five; plastic with every
    // adapter (one base kind under each adapter: 1 + adapters cases); rough plastic
    // with the newest base kinds (from roughdielectric on, up to the inlining limit)
    let all_bsdfs: Vec<u32> = (0..heliograph::bsdfs::KNOWN.len() as u32).collect();
    let adapters = heliograph::bsdfs::registry::mask(|e| e.adapter);
    let is_adapter = |k: &u32| adapters & (1 << k) != 0;
    // inlined, every adapter over one base kind: plastic under the first four (five
    // dispatch cases), diffuse and conductor under the others (two cases per adapter)
    let all_adapters: Vec<u32> = all_bsdfs.iter().copied().filter(is_adapter).collect();
    let (first_adapters, more_adapters) = all_adapters.split_at(all_adapters.len().min(4));
    let plastic_adapters: Vec<u32> = [b::PLASTIC]
        .into_iter()
        .chain(first_adapters.iter().copied())
        .collect();
    let two_more: Vec<u32> = [b::DIFFUSE, b::CONDUCTOR]
        .into_iter()
        .chain(more_adapters.iter().copied())
        .collect();
    let newest: Vec<u32> = [b::ROUGH_PLASTIC]
        .into_iter()
        .chain((b::ROUGH_DIELECTRIC..all_bsdfs.len() as u32).filter(|k| !is_adapter(k)))
        .collect();
    let (bf, bvh) = (true, false);
    let five = &all_bsdfs[..5];
    let modules = vec![
        module(
            (Direct, bf, true),
            [
                five,
                &[TEX_CONSTANT, TEX_BITMAP],
                &[e::CONSTANT],
                &[SHAPE_RECTANGLE],
            ],
            FILM_GAUSSIAN,
            UNIT_CAP_STEP,
        ),
        module(
            (Mega, bvh, false),
            [
                &plastic_adapters,
                &all_tex,
                &[e::AREA, e::ENVMAP],
                &[SHAPE_MESH, SHAPE_RECTANGLE],
            ],
            FILM_TENT,
            16,
        ),
        module(
            (Wave, bf, false),
            [
                &newest,
                &[TEX_CONSTANT],
                &[e::POINT, e::DIRECTIONAL, e::SPOT, e::PROJECTOR],
                &[SHAPE_SPHERE, SHAPE_DISK],
            ],
            FILM_BOX,
            20,
        ),
        module(
            (Wave, bvh, true),
            [
                &two_more,
                &[TEX_CONSTANT, TEX_CHECKERBOARD],
                &all_emitters,
                &all_shapes,
            ],
            FILM_JITTER,
            heliograph::accel::STACK_SIZE as u32,
        ),
        module(
            (Direct, bvh, false),
            [&all_bsdfs, &all_tex, &all_emitters, &all_shapes],
            FILM_JITTER,
            64,
        ),
        module(
            (Mega, bf, true),
            [
                &all_bsdfs[..6],
                &[TEX_CONSTANT, TEX_BITMAP],
                &[e::AREA],
                &[SHAPE_MESH, SHAPE_RECTANGLE],
            ],
            FILM_GAUSSIAN,
            UNIT_RECORDS_MAX as u32,
        ),
        module(
            (Wave, bvh, true),
            [
                &[b::DIFFUSE, b::CONDUCTOR, b::ROUGH_PLASTIC, b::TWO_SIDED],
                &[TEX_CONSTANT, TEX_CHECKERBOARD],
                &[e::CONSTANT, e::ENVMAP],
                // instances of a group of spheres: the two-level walk, analytic only
                &[SHAPE_SPHERE, SHAPE_INSTANCE],
            ],
            FILM_BOX,
            MIN_STACK,
        ),
        module(
            (Direct, bf, false),
            [
                &all_bsdfs[2..],
                &[TEX_CONSTANT],
                &[e::POINT, e::DIRECTIONAL],
                &[SHAPE_DISK, SHAPE_RECTANGLE],
            ],
            FILM_TENT,
            UNIT_CAP_STEP,
        ),
    ];
    // every sampler among the four inlined modules and among the four others
    let samplers = heliograph::samplers::KNOWN.len();
    modules
        .into_iter()
        .enumerate()
        .map(|(i, mut m)| {
            m.features.samplers = 1 << (i % samplers);
            m
        })
        .collect()
}

#[test]
fn the_covering_set_covers_every_pair_of_switches_and_every_kind_both_ways() {
    let modules = covering_set();
    let inline: Vec<bool> = modules.iter().map(|m| m.features.inline_all()).collect();
    assert_eq!(
        inline,
        [true, true, true, true, false, false, false, false, true, false]
    );
    // every pair of values of two different switches occurs in some module
    let switches = |m: &RenderModule| {
        [
            m.mode as u8,
            m.features.inline_all() as u8,
            m.features.brute_force as u8,
            m.count_rays as u8,
        ]
    };
    let values = [4u8, 2, 2, 2];
    for a in 0..4 {
        for b in a + 1..4 {
            for va in 0..values[a] {
                for vb in 0..values[b] {
                    assert!(
                        modules
                            .iter()
                            .map(switches)
                            .any(|s| s[a] == va && s[b] == vb),
                        "switches {a}={va} and {b}={vb} never compiled together"
                    );
                }
            }
        }
    }
    let union = |inline: bool, f: fn(&Features) -> u32| {
        modules
            .iter()
            .filter(|m| m.features.inline_all() == inline)
            .fold(0, |s, m| s | f(&m.features))
    };
    for inline in [true, false] {
        for (name, f) in [
            (
                "HG_BSDF_SET",
                (|f: &Features| f.bsdfs) as fn(&Features) -> u32,
            ),
            ("HG_TEX_SET", |f| f.textures),
            ("HG_EMITTER_SET", |f| f.emitters),
            ("HG_SHAPE_SET", |f| f.shapes),
            ("HG_FILM_SET", |f| f.film),
            ("HG_SAMPLER_SET", |f| f.samplers),
        ] {
            assert_eq!(
                union(inline, f),
                all_kinds(name),
                "{name}: some kind is never compiled {}",
                if inline { "inlined" } else { "out of line" }
            );
        }
    }
    let preludes: Vec<String> = modules.iter().map(RenderModule::prelude).collect();
    for d in [
        "HG_INLINE_ALL",
        "HG_BRUTE_FORCE",
        "HG_PATH_WAVEFRONT",
        "HG_COUNT_RAYS",
    ] {
        let n = preludes.iter().filter(|p| p.contains(d)).count();
        assert!(n > 0 && n < preludes.len(), "{d} in {n} of the modules");
    }
}

/// One compile job.
struct Job {
    label: String,
    module: &'static str,
    prelude: String,
    extra: Vec<String>,
    arch: String,
}

#[test]
fn nvrtc_compiles_every_module_for_sm_90_and_the_oldest_architecture() {
    let require = std::env::var("HELIOGRAPH_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    match nvrtc_lib::load() {
        Ok(n) => println!(
            "NVRTC {}.{} from {}",
            n.version.0,
            n.version.1,
            n.path.display()
        ),
        Err(why) => {
            assert!(!require, "HELIOGRAPH_REQUIRE_NVRTC=1 but {why}");
            println!("SKIP: nvrtc_compiles_every_module: {why}");
            return;
        }
    }
    let cap = match RenderTuning::default().max_registers {
        0 => Vec::new(),
        n => vec![format!("--maxrregcount={n}")],
    };
    let oldest = arch_for(MIN_COMPUTE_CAPABILITY).unwrap();
    let mut jobs = Vec::new();
    for arch in ["sm_90".to_string(), oldest] {
        for m in covering_set() {
            jobs.push(Job {
                label: m.label(),
                module: kernels::RENDER_MODULE,
                prelude: m.prelude(),
                extra: cap.clone(),
                arch: arch.clone(),
            });
        }
        for module in [
            kernels::DEPTH_MODULE,
            kernels::PARITY_MODULE,
            kernels::CONVERT_MODULE,
            kernels::ELEMENTWISE_MODULE,
        ] {
            jobs.push(Job {
                label: module.into(),
                module,
                prelude: String::new(),
                extra: Vec::new(),
                arch: arch.clone(),
            });
        }
        // the depth module as scenes without instances get it (no two-level walk)
        jobs.push(Job {
            label: format!("{} without instances", kernels::DEPTH_MODULE),
            module: kernels::DEPTH_MODULE,
            prelude: depth_prelude(false).into(),
            extra: Vec::new(),
            arch: arch.clone(),
        });
    }
    // The slow modules (out of line: many kinds) first, so the threads finish together.
    jobs.sort_by_key(|j| !j.prelude.is_empty() && j.prelude.contains("HG_INLINE_ALL"));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let r = nvrtc_compile_offline(j.module, &j.prelude, &j.arch, &j.extra);
                results.lock().unwrap().push((i, r));
            });
        }
    });
    let wall = t.elapsed().as_secs_f64();
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    let (mut failures, mut cpu) = (Vec::new(), 0.0);
    for (i, r) in &results {
        let j = &jobs[*i];
        match r {
            Ok((bytes, secs)) => {
                cpu += secs;
                println!("{:6} {:7.2} s {:9} B  {}", j.arch, secs, bytes, j.label);
                assert!(*bytes > 0, "{}: empty CUBIN", j.label);
            }
            Err(e) => failures.push(format!("{} for {}: {e}", j.label, j.arch)),
        }
    }
    println!(
        "{} modules in {wall:.1} s on {threads} threads ({cpu:.1} s of compiling)",
        jobs.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} modules failed:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n\n")
    );
}

/// The `ptracer` modules alone, for sm_90: quick to run while working on them.
#[test]
fn nvrtc_compiles_the_ptracer_modules() {
    let require = std::env::var("HELIOGRAPH_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    if let Err(why) = nvrtc_lib::load() {
        assert!(!require, "HELIOGRAPH_REQUIRE_NVRTC=1 but {why}");
        println!("SKIP: nvrtc_compiles_the_ptracer_modules: {why}");
        return;
    }
    let cap = match RenderTuning::default().max_registers {
        0 => Vec::new(),
        n => vec![format!("--maxrregcount={n}")],
    };
    for m in ptracer_modules() {
        assert!(m.features.has_ptracer() && !m.features.has_path());
        let r = nvrtc_compile_offline(kernels::RENDER_MODULE, &m.prelude(), "sm_90", &cap);
        let (bytes, secs) = r.unwrap_or_else(|e| panic!("{}: {e}", m.label()));
        println!("sm_90 {secs:7.2} s {bytes:9} B  {}", m.label());
        assert!(bytes > 0, "{}: empty CUBIN", m.label());
    }
}

/// The small array modules (imports, TensorXf arithmetic) alone: quick to run while
/// working on them.
#[test]
fn nvrtc_compiles_the_array_modules() {
    let require = std::env::var("HELIOGRAPH_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    if let Err(why) = nvrtc_lib::load() {
        assert!(!require, "HELIOGRAPH_REQUIRE_NVRTC=1 but {why}");
        println!("SKIP: nvrtc_compiles_the_array_modules: {why}");
        return;
    }
    let oldest = arch_for(MIN_COMPUTE_CAPABILITY).unwrap();
    for arch in ["sm_90".to_string(), oldest] {
        for module in [kernels::CONVERT_MODULE, kernels::ELEMENTWISE_MODULE] {
            let r = nvrtc_compile_offline(module, "", &arch, &[]);
            let (bytes, _) = r.unwrap_or_else(|e| panic!("{module} for {arch}: {e}"));
            assert!(bytes > 0, "{module}: empty CUBIN");
        }
    }
}

/// The backward modules (`HG_BACKWARD`: kernels/backward.cuh and the texture probe),
/// compiled as the backend's `backward_kernels` compiles them, for sm_90: the covering
/// set's first megakernel `path` module (every texture kind: the probe in each) and its
/// `direct` module of fewest BSDF kinds (the observed `direct` sample; NVRTC takes
/// minutes on one of every BSDF, whose code the render modules above compile already).
#[test]
fn nvrtc_compiles_the_backward_modules() {
    let require = std::env::var("HELIOGRAPH_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    if let Err(why) = nvrtc_lib::load() {
        assert!(!require, "HELIOGRAPH_REQUIRE_NVRTC=1 but {why}");
        println!("SKIP: nvrtc_compiles_the_backward_modules: {why}");
        return;
    }
    let cap = vec![format!(
        "--maxrregcount={}",
        heliograph::backend::cuda::BACKWARD_MAX_REGISTERS
    )];
    let set = render_covering_set();
    let path = set
        .iter()
        .find(|m| m.mode == Mode::PathMegakernel && !m.count_rays)
        .expect("a megakernel path module");
    let direct = set
        .iter()
        .filter(|m| m.mode == Mode::Direct && !m.count_rays)
        .min_by_key(|m| m.features.bsdfs.count_ones())
        .expect("a direct module");
    assert_eq!(path.features.textures, all_kinds("HG_TEX_SET"));
    for m in [path, direct] {
        let prelude = format!("{}#define HG_BACKWARD 1\n", m.prelude());
        let r = nvrtc_compile_offline(kernels::RENDER_MODULE, &prelude, "sm_90", &cap);
        let (bytes, secs) = r.unwrap_or_else(|e| panic!("{}+HG_BACKWARD: {e}", m.label()));
        println!("sm_90 {secs:7.2} s {bytes:9} B  {}+HG_BACKWARD", m.label());
        assert!(bytes > 0, "{}: empty CUBIN", m.label());
    }
}
