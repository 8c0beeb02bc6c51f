//! The `direct`/`path` megakernel and the film kernels (`renderer/kernels/render.cu`)
//! compiled as C++ and run on the CPU through `tests/gpu/host_render.cpp`, driven wave
//! by wave as `backend/cuda/device.rs` launches them. No GPU needed.
//!
//! Checks: (a) whole-image agreement with the CPU backend on the seed scene (`direct`,
//! every reconstruction filter), the Cornell box, the showcase and the rough-glass
//! regression scene (`path`) at 64×64: per 16×16 block and channel, Welch's t-test
//! between the block means of K independent seeds on each side, with a Bonferroni
//! correction; the same test must reject an image scaled by 1.05 (so it can fail);
//! the same for the instanced scene (shapegroup/instance: the two-level traversal);
//! integrator variants too (direct with several samples per strategy, hidden emitters,
//! early Russian roulette, point, directional, spot and projector lights); with a
//! one-pixel box filter and the same seed on both sides every value must agree to 1e-4
//! (the kernels repeat the CPU's arithmetic and random numbers; wider filters place
//! samples by filter importance sampling on the GPU and by splatting on the CPU, so
//! they agree statistically only); (b) determinism: the same scene, spp, seed and wave
//! split give the same bits (a different split changes the summation order), and the
//! in-warp reduction (emulated by the host shim) does not depend on the wave split
//! beyond rounding; each module specialised to a scene's plugins and filter kind
//! computes the generic module's bits; (c) the film's closed-form filter importance
//! sampling (`film_sample`, driven by `tests/gpu/host_film.cpp`) against quadrature of
//! the analytic filter truncated to the crop window, per pixel, for every filter kind
//! (and the untruncated integral must be rejected at the edges, so the check can fail):
//! every sample inside its window, and the gaussian's redraws as frequent as its
//! window's normal mass says, down to a 1×1 crop. (d) every sampler (`independent`, `stratified`,
//! `multijitter`, `ldsampler`): the same numbers as the CPU (same seed, one-pixel box:
//! values agree to rounding, megakernel and wavefront) and statistical agreement with
//! independent seeds.
//!
//! (d) the `ptracer` kernel (`kernels/integrators/ptracer.cuh`) against the CPU's light
//! tracer, statistically and with the same seed (see its test).
//!
//! Skips with a message when no C++ compiler (`$CXX`, else `c++`) is available.

mod common;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use heliograph::backend::cpu;
use heliograph::backend::cuda::features::{Features, BRUTE_FORCE_MAX_RECORDS};
use heliograph::backend::cuda::{check_supported, kernels, wavefront_bounce_launches};
use heliograph::desc::xml;
use heliograph::flat::FlatScene;
use heliograph::integrators::{self, AnyIntegrator, Direct};
use heliograph::render::RenderOptions;
use heliograph::rfilters::AnyFilter;
use heliograph::scene::{build_scene, RenderSetup};
use heliograph::shapes::tag::INSTANCE as SHAPE_INSTANCE;

use common::harness::{build_host, build_host_with, read_f32s, repo_root};
use common::{block_means, worst_p};

/// The host-compiled render kernels: for each scene the module specialised to its plugin
/// set (what the CUDA backend compiles for it), built on first use; with `generic`, the
/// module for every plugin with the plugin calls out of line.
struct Host {
    exes: RefCell<HashMap<String, PathBuf>>,
    dir: PathBuf,
    generic: bool,
    /// Scenes of at most this many primitives get brute-force modules (the backend's
    /// `RenderTuning::brute_force_max_records`).
    brute_max: usize,
}

impl Host {
    /// The driver built for `flat`'s plugin set (or the generic one: every plugin, calls
    /// out of line, with the scene's intersection mode, BVH or brute force), with the
    /// wavefront `path` kernels when `wavefront`.
    fn exe(&self, flat: &FlatScene, wavefront: bool) -> PathBuf {
        let f = Features::with_brute_force_max(flat, self.brute_max);
        let (tag, prelude) = if self.generic && f.brute_force {
            (
                format!("generic.bf{}", f.unit_cap),
                format!(
                    "#define HG_BRUTE_FORCE 1\n#define HG_UNIT_CAP {}\n",
                    f.unit_cap
                ),
            )
        } else if self.generic {
            ("generic".to_string(), String::new())
        } else {
            let mode = if wavefront && f.has_path() {
                "-wavefront"
            } else {
                ""
            };
            (format!("{}{mode}", f.tag()), f.prelude(wavefront))
        };
        if let Some(e) = self.exes.borrow().get(&tag) {
            return e.clone();
        }
        let exe = build_host_with(
            &self.dir,
            &prelude,
            kernels::RENDER_MODULE,
            "host_render.cpp",
            &format!("hg_render_host-{tag}"),
        )
        .expect("a C++ compiler (checked by host_or_skip)");
        self.exes.borrow_mut().insert(tag, exe.clone());
        exe
    }

    /// Renders `scene` with the host-compiled kernels, `per_wave` samples per pixel per
    /// wave, `per_lane` samples per megakernel thread.
    fn render(
        &self,
        scene: &RenderSetup,
        seed: u64,
        spp: u32,
        per_wave: u32,
        per_lane: u32,
    ) -> Vec<f32> {
        self.render_mode(scene, seed, spp, per_wave, per_lane, None)
    }

    /// [`Self::render`]; with `bounces`, `path` runs as the wavefront kernels with that many
    /// bounce launches.
    fn render_mode(
        &self,
        scene: &RenderSetup,
        seed: u64,
        spp: u32,
        per_wave: u32,
        per_lane: u32,
        bounces: Option<u32>,
    ) -> Vec<f32> {
        let flat = FlatScene::from_scene(scene).unwrap();
        for (name, bytes) in flat.render_arrays() {
            std::fs::write(self.dir.join(format!("{name}.bin")), bytes).unwrap();
        }
        let st = Command::new(self.exe(&flat, bounces.is_some()))
            .arg(&self.dir)
            .args([seed, spp as u64, per_wave as u64, per_lane as u64].map(|v| v.to_string()))
            .args(bounces.map(|b| b.to_string()))
            .status()
            .unwrap();
        assert!(st.success(), "host render failed");
        read_f32s(&self.dir.join("out.bin"))
    }
}

fn load(name: &str, res: u32) -> RenderSetup {
    let path = repo_root().join("scenes").join(name);
    let desc = xml::load_file(&path, &[("res".into(), res.to_string())]).unwrap();
    build_scene(&desc).unwrap()
}

/// CPU vs host-kernel renders with K independent seeds each; returns the worst corrected p
/// for the kernel images and for the kernel images scaled by 1.05.
fn compare(host: &Host, scene: &RenderSetup, spp: u32, label: &str) -> (f64, f64) {
    check_supported(scene).unwrap_or_else(|e| panic!("{label}: {e}"));
    let [w, h] = scene.sensor.film.crop_size;
    let (w, h) = (w as usize, h as usize);
    let ch = if scene.sensor.film.alpha { 4 } else { 3 };
    const K: u64 = 5;
    let (mut cpu_b, mut gpu_b, mut biased) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..K {
        let opts = RenderOptions {
            spp: Some(spp),
            seed: 1 + k,
        };
        let c = cpu::render(scene, &opts).unwrap();
        cpu_b.push(block_means(&c.data, w, h, ch));
        let g = host.render(scene, 1000 + k, spp, spp.div_ceil(2), 2);
        assert_eq!(g.len(), c.data.len());
        assert!(
            g.iter().all(|v| v.is_finite()),
            "{label}: non-finite pixels"
        );
        gpu_b.push(block_means(&g, w, h, ch));
        let g2: Vec<f32> = g.iter().map(|v| v * 1.05).collect();
        biased.push(block_means(&g2, w, h, ch));
    }
    let (p, blk, c) = worst_p(&cpu_b, &gpu_b);
    let (pb, _, _) = worst_p(&cpu_b, &biased);
    let mean = |v: &[Vec<Vec<f64>>]| v.iter().map(|s| s[blk][c]).sum::<f64>() / v.len() as f64;
    println!(
        "{label}: worst corrected p = {p:.3e} (block {blk} channel {c}: CPU {:.5} vs kernels {:.5}); \
         1.05x image: p = {pb:.3e}",
        mean(&cpu_b),
        mean(&gpu_b)
    );
    (p, pb)
}

fn host_or_skip(generic: bool) -> Option<Host> {
    // tests run in parallel threads of one process: a folder per Host for its scene files
    static HOSTS: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "hg-host-render-{}-{}",
        std::process::id(),
        HOSTS.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    // one build up front: it skips the test when there is no C++ compiler
    let exe = build_host(
        &dir,
        kernels::RENDER_MODULE,
        "host_render.cpp",
        "hg_render_host-generic",
    )?;
    let exes = RefCell::new(HashMap::from([("generic".to_string(), exe)]));
    Some(Host {
        exes,
        dir,
        generic,
        brute_max: BRUTE_FORCE_MAX_RECORDS,
    })
}

#[test]
fn seed_and_cbox_agree_with_the_cpu_backend_for_every_filter_and_are_deterministic() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let alpha = 1e-3;
    let mut seed = load("seed.xml", 64);
    for f in [
        AnyFilter::default(),
        AnyFilter::Box { radius: 0.5 },
        AnyFilter::Box { radius: 1.0 },
        AnyFilter::Tent { radius: 1.5 },
    ] {
        seed.sensor.film.rfilter = f;
        let (p, pb) = compare(&host, &seed, 8, &format!("seed (direct) {f:?}"));
        assert!(
            p > alpha,
            "seed scene with {f:?}: the kernels differ from the CPU"
        );
        assert!(pb < alpha, "the test cannot see a 5% bias ({f:?})");
    }
    // the variants below (and the same-seed check) start from the scene's own filter
    seed.sensor.film.rfilter = AnyFilter::default();
    let cbox = load("cbox.xml", 64);
    assert!(
        Features::with_brute_force_max(&FlatScene::from_scene(&cbox).unwrap(), host.brute_max)
            .brute_force,
        "the Cornell box renders by brute force"
    );
    let (p, pb) = compare(&host, &cbox, 16, "cbox (path, brute force)");
    assert!(p > alpha, "Cornell box: the kernels differ from the CPU");
    assert!(pb < alpha, "the test cannot see a 5% bias (cbox)");
    let showcase = load("showcase.xml", 64);
    let (p, pb) = compare(&host, &showcase, 16, "showcase (path)");
    assert!(p > alpha, "showcase: the kernels differ from the CPU");
    assert!(pb < alpha, "the test cannot see a 5% bias (showcase)");
    // brute force (the default up to BRUTE_FORCE_MAX_RECORDS primitives: the Cornell box)
    // with the unit-shape test (flat/unit_prims.rs) on every kind of primitive: the
    // Cornell box plus a sphere and a disk; and the Cornell box through the BVH
    let text = std::fs::read_to_string(repo_root().join("scenes/cbox.xml")).unwrap();
    let extra = r#"<shape type="sphere"><point name="center" x="-0.45" y="0.35" z="0.35"/>
        <float name="radius" value="0.22"/><ref id="white"/></shape>
        <shape type="disk"><transform name="to_world"><scale value="0.25"/>
        <rotate x="1" angle="-60"/><translate value="0.4, 0.25, 0.1"/></transform>
        <ref id="red"/></shape></scene>"#;
    let file = host.dir.join("cbox_shapes.xml");
    std::fs::write(&file, text.replace("</scene>", extra)).unwrap();
    let desc = xml::load_file(&file, &[("res".into(), "64".into())]).unwrap();
    let shapes = build_scene(&desc).unwrap();
    let bvh = Host {
        brute_max: 0,
        ..host_or_skip(false).unwrap()
    };
    for (label, scene, h, brute) in [
        (
            "cbox + sphere + disk (path, brute force)",
            &shapes,
            &host,
            true,
        ),
        ("cbox (path, BVH)", &cbox, &bvh, false),
    ] {
        let f = Features::with_brute_force_max(&FlatScene::from_scene(scene).unwrap(), h.brute_max);
        assert_eq!(f.brute_force, brute, "{label}: {}", f.tag());
        let (p, pb) = compare(h, scene, 64, label);
        assert!(p > alpha, "{label}: the kernels differ from the CPU");
        assert!(pb < alpha, "the test cannot see a 5% bias ({label})");
    }
    let _ = std::fs::remove_dir_all(&bvh.dir);

    // integrator variants: direct with several samples per strategy and hidden emitters,
    // path with early Russian roulette and hidden emitters, and delta lights
    let mut variants = Vec::new();
    let mut c = seed.clone();
    c.sensor.film.crop_offset = [8, 4];
    c.sensor.film.crop_size = [48, 40];
    c.sensor.film.alpha = !c.sensor.film.alpha;
    variants.push(("seed cropped, alpha toggled", c));
    let mut c = cbox.clone();
    c.integrator = AnyIntegrator::Direct(Direct {
        emitter_samples: 2,
        bsdf_samples: 3,
        hide_emitters: true,
    });
    variants.push(("cbox direct 2+3 hidden", c));
    let mut c = showcase.clone();
    c.integrator = AnyIntegrator::Direct(Direct {
        emitter_samples: 1,
        bsdf_samples: 0,
        hide_emitters: false,
    });
    variants.push(("showcase direct 1+0", c));
    let mut c = showcase.clone();
    c.integrator = AnyIntegrator::Path(integrators::Path {
        max_depth: 6,
        rr_depth: 1,
        hide_emitters: true,
    });
    variants.push(("showcase path rr 1 hidden", c));
    let lit = common::parity::cbox_with_delta_lights(&host.dir, 64);
    let mut c = lit.clone();
    c.integrator = AnyIntegrator::Direct(Direct {
        emitter_samples: 1,
        bsdf_samples: 1,
        hide_emitters: false,
    });
    variants.push(("cbox + point, directional, spot, projector: direct", c));
    variants.push(("cbox + point, directional, spot, projector: path", lit));
    for (label, scene) in &variants {
        let (p, pb) = compare(&host, scene, 48, label);
        assert!(p > alpha, "{label}: the kernels differ from the CPU");
        assert!(pb < alpha, "the test cannot see a 5% bias ({label})");
    }

    // same seed on both sides with a one-pixel box filter: the kernels repeat the CPU's
    // arithmetic and random numbers, so nearly every pixel agrees to float rounding (libm's
    // sin/cos may differ by an ulp; the in-warp sum adds in a tree, the CPU in a row)
    let mut same: Vec<(&str, RenderSetup)> = vec![
        ("seed", seed.clone()),
        ("cbox", cbox.clone()),
        ("showcase", showcase.clone()),
    ];
    same.extend(variants.iter().map(|(l, s)| (*l, s.clone())));
    for (name, mut scene) in same {
        scene.sensor.film.rfilter = AnyFilter::Box { radius: 0.5 };
        let scene = &scene;
        let spp = 4;
        let opts = RenderOptions {
            spp: Some(spp),
            seed: 9,
        };
        let c = cpu::render(scene, &opts).unwrap();
        let g = host.render(scene, 9, spp, 2, 2);
        let close = c
            .data
            .iter()
            .zip(&g)
            .filter(|(a, b)| (*a - *b).abs() <= 1e-4 * a.abs().max(1e-3))
            .count();
        let exact = c
            .data
            .iter()
            .zip(&g)
            .filter(|(a, b)| a.to_bits() == b.to_bits())
            .count();
        println!(
            "{name}, same seed: {close} of {} values within 1e-4, {exact} bit-identical",
            g.len()
        );
        assert!(
            close * 100 >= g.len() * 95,
            "{name}: same-seed renders diverge"
        );
    }

    // determinism: same scene, spp, seed, wave split and samples per lane -> the same bits
    for scene in [&seed, &cbox] {
        let a = host.render(scene, 42, 6, 4, 2);
        let b = host.render(scene, 42, 6, 4, 2);
        assert!(
            a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "two renders with the same seed differ"
        );
        // a different split (waves of 2, 2, 2 instead of 4, 2) or another number of
        // samples per lane only reorders the sums
        for (per_wave, per_lane) in [(2, 2), (4, 1), (4, 4)] {
            let c = host.render(scene, 42, 6, per_wave, per_lane);
            let close = a
                .iter()
                .zip(&c)
                .all(|(x, y)| (x - y).abs() <= 1e-4 * x.abs().max(1e-2));
            assert!(
                close,
                "waves of {per_wave}, {per_lane} per lane: the sums changed more than their rounding"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&host.dir);
}

/// `ptracer` (kernels/integrators/ptracer.cuh) against the CPU's light tracer on the CPU
/// tests' scenes (area, point and spot lights; a sky and a sun; an importance-sampled
/// envmap; rough glass) and the Cornell box under point, directional, spot and projector
/// lights, with box, gaussian and tent filters, hidden emitters with early Russian
/// roulette, and a crop with alpha: per block and channel, Welch's test over 5 seeds (and
/// it must reject the image scaled by 1.05). With the same seed, light path k draws the
/// CPU's stream k and repeats its arithmetic: nearly every value agrees to 1e-4 (the
/// splats add in another order; libm's sin/cos may differ by an ulp). Splitting the
/// paths into other launches gives the same bits on the host (one thread after another).
#[test]
fn ptracer_agrees_with_the_cpu_backend() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let alpha = 1e-3;
    let scenes = common::ptracer::cases(&host.dir);
    for (label, scene, spp) in &scenes {
        let f =
            Features::with_brute_force_max(&FlatScene::from_scene(scene).unwrap(), host.brute_max);
        assert!(f.has_ptracer() && !f.has_path(), "{label}: {}", f.tag());
        let (p, pb) = compare(&host, scene, *spp, &format!("ptracer: {label}"));
        assert!(
            p > alpha,
            "{label}: the ptracer kernel differs from the CPU"
        );
        assert!(pb < alpha, "the test cannot see a 5% bias ({label})");
    }

    for (label, scene, _) in &scenes {
        let mut scene = scene.clone();
        scene.sensor.film.rfilter = AnyFilter::Box { radius: 0.5 };
        let spp = 4;
        let opts = RenderOptions {
            spp: Some(spp),
            seed: 9,
        };
        let c = cpu::render(&scene, &opts).unwrap();
        let g = host.render(&scene, 9, spp, 1, 1);
        assert_eq!(g.len(), c.data.len());
        let close = c
            .data
            .iter()
            .zip(&g)
            .filter(|(a, b)| (*a - *b).abs() <= 1e-4 * a.abs().max(1e-3))
            .count();
        println!(
            "ptracer: {label}, same seed: {close} of {} values within 1e-4",
            g.len()
        );
        assert!(
            close * 100 >= g.len() * 95,
            "{label}: same-seed renders diverge"
        );
        // launches of 1, 3 and all 4 samples' worth of paths: the same paths in the same
        // order (light path k is k whatever the launch it falls in)
        for per in [3, 4] {
            let o = host.render(&scene, 9, spp, per, 1);
            assert!(
                g.iter().zip(&o).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{label}: launches of {per} x pixels paths change the image"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&host.dir);
}

/// The Disney BSDFs' regression scene (`tests/references/scenes/principled.xml`):
/// `principled` reflection, refraction, clearcoat, sheen and textured weights, and a
/// `principledthin` sheet, 12 bounces.
#[test]
fn principled_scene_agrees_with_the_cpu_backend() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let path = repo_root().join("tests/references/scenes/principled.xml");
    let scene = build_scene(&xml::load_file(&path, &[]).unwrap()).unwrap();
    let (p, pb) = compare(&host, &scene, 64, "principled (path)");
    assert!(p > 1e-3, "principled: the kernels differ from the CPU");
    assert!(pb < 1e-3, "the test cannot see a 5% bias (principled)");
}

/// Surface data in texture and BSDF lookups (`tests/references/scenes/surface_data.xml`):
/// `mesh_attribute` vertex colours and face weights, `bumpmap` on a mesh and on a
/// rectangle with a `to_uv` map.
#[test]
fn surface_data_scene_agrees_with_the_cpu_backend() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let path = repo_root().join("tests/references/scenes/surface_data.xml");
    let scene = build_scene(&xml::load_file(&path, &[]).unwrap()).unwrap();
    let (p, pb) = compare(&host, &scene, 16, "surface_data (path)");
    assert!(p > 1e-3, "surface_data: the kernels differ from the CPU");
    assert!(pb < 1e-3, "the test cannot see a 5% bias (surface_data)");
}

/// An area light whose radiance is a mesh attribute (the attribute torus glowing with its
/// vertex colours, a second one with its face weights, over a floor): the kernels read it
/// at the triangle a ray hits and at the one a sample lands on, as the CPU does.
#[test]
fn mesh_attribute_area_lights_agree_with_the_cpu_backend() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let torus = repo_root().join("assets/meshes/torus_attributes.ply");
    let src = format!(
        r#"<scene version="3.0.0"><integrator type="path"><integer name="max_depth" value="3"/></integrator>
        <sensor type="perspective"><float name="fov" value="45"/>
            <transform name="to_world"><lookat origin="0, 3, 4" target="0, 0, 0" up="0, 1, 0"/></transform>
            <film type="hdrfilm"><integer name="width" value="32"/><integer name="height" value="24"/>
            <string name="pixel_format" value="rgb"/></film></sensor>
        <shape type="ply"><string name="filename" value="{t}"/>
            <transform name="to_world"><rotate x="1" angle="20"/><translate x="-0.8"/></transform>
            <emitter type="area"><texture type="mesh_attribute" name="radiance">
                <string name="name" value="vertex_color"/><float name="scale" value="2"/></texture></emitter></shape>
        <shape type="ply"><string name="filename" value="{t}"/>
            <transform name="to_world"><rotate x="1" angle="20"/><translate x="0.8"/></transform>
            <emitter type="area"><texture type="mesh_attribute" name="radiance">
                <string name="name" value="face_weight"/></texture></emitter></shape>
        <shape type="rectangle"><transform name="to_world"><scale value="4"/><rotate x="1" angle="-90"/>
            <translate y="-1"/></transform></shape></scene>"#,
        t = torus.display()
    );
    let scene = build_scene(&xml::load_string(&src, &[]).unwrap()).unwrap();
    // the lights glow (a lookup off the triangle would read 0)
    let opts = RenderOptions {
        spp: Some(4),
        seed: 1,
    };
    let img = cpu::render(&scene, &opts).unwrap();
    let mean = img.data.iter().map(|&v| v as f64).sum::<f64>() / img.data.len() as f64;
    assert!(mean > 0.02, "the attribute lights are dark: mean {mean}");
    let (p, pb) = compare(&host, &scene, 16, "mesh attribute area lights (path)");
    assert!(
        p > 1e-3,
        "mesh attribute lights: the kernels differ from the CPU"
    );
    assert!(
        pb < 1e-3,
        "the test cannot see a 5% bias (mesh attribute lights)"
    );
}

/// Cylinders (`kernels/shapes/cylinder.cuh`): the Cornell box with a tilted tube and a
/// glowing tube under a mirroring `to_world` as a second area light (the kernels sample
/// its surface), through the BVH (cylinder scenes get no brute-force records);
/// statistically with independent seeds, and value by value with the same seed.
#[test]
fn cylinders_agree_with_the_cpu_backend() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let text = std::fs::read_to_string(repo_root().join("scenes/cbox.xml")).unwrap();
    let extra = r#"<shape type="cylinder"><point name="p0" x="-0.5" y="-0.2" z="-0.4"/>
        <point name="p1" x="0.1" y="0.5" z="0.2"/><float name="radius" value="0.15"/>
        <ref id="red"/></shape>
        <shape type="cylinder"><float name="radius" value="0.08"/>
        <transform name="to_world"><scale x="-1" y="1" z="0.6"/>
        <rotate y="1" angle="80"/><translate value="0.1, 0.6, -0.2"/></transform>
        <ref id="white"/><emitter type="area"><rgb name="radiance" value="4, 3, 2"/></emitter>
        </shape></scene>"#;
    let file = host.dir.join("cbox_cylinders.xml");
    std::fs::write(&file, text.replace("</scene>", extra)).unwrap();
    let desc = xml::load_file(&file, &[("res".into(), "64".into())]).unwrap();
    let mut scene = build_scene(&desc).unwrap();
    let flat = FlatScene::from_scene(&scene).unwrap();
    assert!(!Features::with_brute_force_max(&flat, host.brute_max).brute_force);
    assert_eq!(flat.emitters.len(), 2);
    let (p, pb) = compare(&host, &scene, 64, "cbox + cylinders (path)");
    assert!(p > 1e-3, "cylinders: the kernels differ from the CPU");
    assert!(pb < 1e-3, "the test cannot see a 5% bias (cylinders)");
    scene.sensor.film.rfilter = AnyFilter::Box { radius: 0.5 };
    let opts = RenderOptions {
        spp: Some(4),
        seed: 9,
    };
    let c = cpu::render(&scene, &opts).unwrap();
    let g = host.render(&scene, 9, 4, 2, 2);
    let close = c
        .data
        .iter()
        .zip(&g)
        .filter(|(a, b)| (*a - *b).abs() <= 1e-4 * a.abs().max(1e-3))
        .count();
    println!(
        "cylinders, same seed: {close} of {} values within 1e-4",
        g.len()
    );
    assert!(
        close * 100 >= g.len() * 95,
        "cylinders: same-seed renders diverge"
    );
    let _ = std::fs::remove_dir_all(&host.dir);
}

/// Instances (`scenes/instances.xml`: four instances of a group of a textured torus mesh
/// and a plastic sphere, rotated, scaled, squashed and mirrored, on a floor that is no
/// instance): the two-level traversal, hits carried back to world space, the group
/// members' own materials and uv; statistically with independent seeds, and value by
/// value with the same seed.
#[test]
fn instances_agree_with_the_cpu_backend() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let mut scene = load("instances.xml", 64);
    let flat = FlatScene::from_scene(&scene).unwrap();
    let f = Features::with_brute_force_max(&flat, host.brute_max);
    assert!(
        !f.brute_force && f.shapes & (1 << SHAPE_INSTANCE) != 0,
        "{f:?}"
    );
    let (p, pb) = compare(&host, &scene, 64, "instances (path)");
    assert!(p > 1e-3, "instances: the kernels differ from the CPU");
    assert!(pb < 1e-3, "the test cannot see a 5% bias (instances)");
    scene.sensor.film.rfilter = AnyFilter::Box { radius: 0.5 };
    let opts = RenderOptions {
        spp: Some(4),
        seed: 9,
    };
    let c = cpu::render(&scene, &opts).unwrap();
    let g = host.render(&scene, 9, 4, 2, 2);
    let close = c
        .data
        .iter()
        .zip(&g)
        .filter(|(a, b)| (*a - *b).abs() <= 1e-4 * a.abs().max(1e-3))
        .count();
    println!(
        "instances, same seed: {close} of {} values within 1e-4",
        g.len()
    );
    assert!(
        close * 100 >= g.len() * 95,
        "instances: same-seed renders diverge"
    );
    let _ = std::fs::remove_dir_all(&host.dir);
}

/// The rough-glass regression scene (`tests/references/scenes/roughdielectric.xml`):
/// refraction both ways, total internal reflection, textured roughness, 12 bounces.
#[test]
fn roughdielectric_scene_agrees_with_the_cpu_backend() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let path = repo_root().join("tests/references/scenes/roughdielectric.xml");
    let scene = build_scene(&xml::load_file(&path, &[]).unwrap()).unwrap();
    let (p, pb) = compare(&host, &scene, 64, "roughdielectric (path)");
    assert!(p > 1e-3, "rough glass: the kernels differ from the CPU");
    assert!(pb < 1e-3, "the test cannot see a 5% bias (rough glass)");
}

/// A specialised module (backend/cuda/features.rs) may only drop code that the scene
/// cannot reach: on the host, where nothing contracts multiply-adds, the module compiled
/// for each scene's plugin set and the generic module (every plugin, calls out of line;
/// brute force where the scene's module is) must give the same bits, whatever the
/// plugins, integrator and filter.
#[test]
fn specialised_modules_compute_what_the_generic_module_does() {
    let (Some(special), Some(generic)) = (host_or_skip(false), host_or_skip(true)) else {
        return;
    };
    // the Cornell box once more through the BVH (by default its 30 primitives are brute
    // forced with unit-shape tests)
    let (special_bvh, generic_bvh) = (
        Host {
            brute_max: 0,
            ..host_or_skip(false).unwrap()
        },
        Host {
            brute_max: 0,
            ..host_or_skip(true).unwrap()
        },
    );
    let mut scenes = vec![
        ("seed", load("seed.xml", 24)),
        ("cbox", load("cbox.xml", 24)),
        ("showcase", load("showcase.xml", 24)),
        ("instances", load("instances.xml", 24)),
    ];
    for (label, f) in [
        ("seed, one-pixel box", AnyFilter::Box { radius: 0.5 }),
        ("seed, box 1", AnyFilter::Box { radius: 1.0 }),
        ("seed, tent 1.5", AnyFilter::Tent { radius: 1.5 }),
    ] {
        let mut c = scenes[0].1.clone();
        c.sensor.film.rfilter = f;
        scenes.push((label, c));
    }
    let mut c = scenes[2].1.clone();
    c.integrator = AnyIntegrator::Direct(Direct {
        emitter_samples: 2,
        bsdf_samples: 1,
        hide_emitters: false,
    });
    scenes.push(("showcase, direct", c));
    scenes.push(("cbox, BVH", scenes[1].1.clone()));
    let mut tags = Vec::new();
    for (label, scene) in &scenes {
        let (special, generic) = if label.ends_with("BVH") {
            (&special_bvh, &generic_bvh)
        } else {
            (&special, &generic)
        };
        let flat = FlatScene::from_scene(scene).unwrap();
        let f = Features::with_brute_force_max(&flat, special.brute_max);
        let a = special.render(scene, 5, 6, 4, 2);
        let b = generic.render(scene, 5, 6, 4, 2);
        let same = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x.to_bits() == y.to_bits())
            .count();
        println!(
            "{label} ({}): {same} of {} values bit-identical",
            f.tag(),
            a.len()
        );
        assert_eq!(same, a.len(), "{label}: the specialised module differs");
        tags.push(f.tag());
    }
    tags.sort();
    tags.dedup();
    assert_eq!(
        tags.len(),
        scenes.len(),
        "each scene is a different plugin set"
    );
    for h in [&special, &generic, &special_bvh, &generic_bvh] {
        let _ = std::fs::remove_dir_all(&h.dir);
    }
}

/// The wavefront `path` kernels (kernels/wavefront.cuh) compute what the megakernel does:
/// each path is the same steps with the same random numbers, only scheduled over launches
/// and queues, and the reduction adds in the same order. On the host (no FMA contraction)
/// the images must be bit-identical, with the backend's number of bounce launches and with
/// a single one (its `finish` launch then runs almost every path to its end).
#[test]
fn the_wavefront_path_kernels_give_the_megakernel_bits() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let cbox = load("cbox.xml", 24);
    let showcase = load("showcase.xml", 24);
    let mut rr = showcase.clone();
    rr.integrator = AnyIntegrator::Path(integrators::Path {
        max_depth: u32::MAX,
        rr_depth: 1,
        hide_emitters: true,
    });
    let mut short = cbox.clone();
    short.integrator = AnyIntegrator::Path(integrators::Path {
        max_depth: 2,
        rr_depth: 5,
        hide_emitters: false,
    });
    for (label, scene) in [
        ("cbox", &cbox),
        ("showcase", &showcase),
        ("showcase, unbounded, rr from 1, hidden emitters", &rr),
        ("cbox, max_depth 2", &short),
    ] {
        let AnyIntegrator::Path(p) = &scene.integrator else {
            unreachable!()
        };
        let mega = host.render(scene, 11, 6, 4, 2);
        for bounces in [wavefront_bounce_launches(p.max_depth), 1] {
            let wave = host.render_mode(scene, 11, 6, 4, 2, Some(bounces));
            let same = mega
                .iter()
                .zip(&wave)
                .filter(|(a, b)| a.to_bits() == b.to_bits())
                .count();
            println!(
                "{label}, {bounces} bounce launches: {same} of {} values bit-identical",
                mega.len()
            );
            assert_eq!(
                same,
                mega.len(),
                "{label}: the wavefront differs ({bounces} launches)"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&host.dir);
}

/// Every sampler (`renderer/kernels/samplers.cuh`): the kernels draw the CPU's numbers
/// (same seed, one-pixel box filter: the values agree to rounding, megakernel and
/// wavefront alike), and independent seeds agree statistically with the CPU backend, on
/// the seed scene (`direct`) and the Cornell box (`path`), at a sample count each sampler
/// keeps (16: a square power of two).
#[test]
fn every_sampler_draws_the_cpu_numbers() {
    let Some(host) = host_or_skip(false) else {
        return;
    };
    let alpha = 1e-3;
    for name in heliograph::samplers::KNOWN {
        let sampler = heliograph::samplers::Sampler {
            sample_count: 16,
            ..heliograph::samplers::Sampler::by_name(name).unwrap()
        };
        for file in ["seed.xml", "cbox.xml"] {
            let mut scene = load(file, 64);
            scene.sensor.sampler = sampler;
            let label = format!("{file} with {name}");
            let (p, pb) = compare(&host, &scene, 16, &label);
            assert!(p > alpha, "{label}: the kernels differ from the CPU");
            assert!(pb < alpha, "the test cannot see a 5% bias ({label})");
            scene.sensor.film.rfilter = AnyFilter::Box { radius: 0.5 };
            let opts = RenderOptions {
                spp: Some(16),
                seed: 9,
            };
            let c = cpu::render(&scene, &opts).unwrap();
            let mut runs = vec![("megakernel", host.render(&scene, 9, 16, 8, 2))];
            if let AnyIntegrator::Path(p) = &scene.integrator {
                let bounces = wavefront_bounce_launches(p.max_depth);
                runs.push((
                    "wavefront",
                    host.render_mode(&scene, 9, 16, 8, 2, Some(bounces)),
                ));
            }
            for (mode, g) in runs {
                let close = c
                    .data
                    .iter()
                    .zip(&g)
                    .filter(|(a, b)| (*a - *b).abs() <= 1e-4 * a.abs().max(1e-3))
                    .count();
                println!(
                    "{label} ({mode}), same seed: {close} of {} values within 1e-4",
                    g.len()
                );
                assert!(
                    close * 100 >= g.len() * 95,
                    "{label} ({mode}): same-seed renders diverge"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&host.dir);
}

/// The filter-weighted mean of `g` around `c` over `[c - r, c + r]`, clipped to `[0, size]`
/// when `clip` (midpoint rule with the analytic filter as the weight).
fn filtered_mean(f: &AnyFilter, c: f64, size: f64, clip: bool, g: impl Fn(f64) -> f64) -> f64 {
    let r = f.radius() as f64;
    let (lo, hi) = if clip {
        ((c - r).max(0.0), (c + r).min(size))
    } else {
        (c - r, c + r)
    };
    let m = 20_000;
    let h = (hi - lo) / m as f64;
    let (mut sw, mut swg) = (0.0, 0.0);
    for k in 0..m {
        let u = lo + (k as f64 + 0.5) * h;
        let w = f.eval((u - c) as f32) as f64;
        sw += w;
        swg += w * g(u);
    }
    swg / sw
}

/// The probability that a normal offset of standard deviation `s` from the centre `c`
/// lands in `[c - r, c + r]` clipped to `[0, size]` (midpoint rule): the chance that the
/// film's gaussian keeps a Box-Muller draw, per axis.
fn normal_mass(s: f64, r: f64, c: f64, size: f64) -> f64 {
    let (lo, hi) = ((-r).max(-c), r.min(size - c));
    let m = 20_000;
    let h = (hi - lo) / m as f64;
    let density =
        |x: f64| (-0.5 * (x / s).powi(2)).exp() / (s * (2.0 * std::f64::consts::PI).sqrt());
    (0..m).map(|k| density(lo + (k as f64 + 0.5) * h) * h).sum()
}

/// Runs `cmd` and returns its status, or panics when it runs past `secs` seconds.
fn status_within(cmd: &mut Command, secs: u64, what: &str) -> std::process::ExitStatus {
    let mut child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: still running after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The film's closed-form filter importance sampling (kernels/film.cuh `film_sample`,
/// driven by tests/gpu/host_film.cpp) per crop pixel against quadrature of the analytic
/// filter truncated to the crop window (z-test), on an 8×6 crop (offset 0, 1) and a 1×1
/// crop, whose one pixel is truncated on every side. Where the filter reaches past the
/// film the untruncated integral must be rejected, so the check can fail. The driver
/// checks that every sample lies in its window with a finite weight >= 0; here, each
/// pixel's first samples' weights against f / pdf from the analytic filter, and that every
/// placement but the gaussian's draws one pair of numbers, and the gaussian's redraws
/// per pixel follow its window's normal mass (a z-test on the mean count: the rejection
/// loop ends, and rejects only outside the window).
#[test]
fn filter_importance_sampling_matches_the_truncated_filter_integral() {
    let dir = std::env::temp_dir().join(format!("hg-host-film-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let Some(exe) = build_host(
        &dir,
        kernels::RENDER_MODULE,
        "host_film.cpp",
        "hg_film_host",
    ) else {
        return;
    };
    let mut scene = load("seed.xml", 8);
    // the driver's signal, split into its x and y parts (the filter is separable)
    let gx = |u: f64| 0.01 * u * u + 0.2 * (1.3 * u).sin();
    let gy = |v: f64| 0.3 * v;
    let n = 40_000;
    let gaussian = |stddev: f32| AnyFilter::Gaussian {
        stddev,
        radius: 4.0 * stddev,
    };
    for (crop_offset, crop_size) in [([0, 1], [8, 6]), ([3, 2], [1, 1])] {
        scene.sensor.film.crop_offset = crop_offset;
        scene.sensor.film.crop_size = crop_size;
        let (cw, ch) = (crop_size[0] as usize, crop_size[1] as usize);
        for f in [
            AnyFilter::default(),
            gaussian(0.8),
            gaussian(3.75),
            AnyFilter::Tent { radius: 1.5 },
            AnyFilter::Box { radius: 1.0 },
            AnyFilter::Box { radius: 0.5 },
        ] {
            let label = format!("{f:?} on the {cw}x{ch} crop");
            scene.sensor.film.rfilter = f;
            let flat = FlatScene::from_scene(&scene).unwrap();
            for (name, bytes) in flat.render_arrays() {
                if name == "film" {
                    std::fs::write(dir.join("film.bin"), bytes).unwrap();
                }
            }
            let st = status_within(Command::new(&exe).arg(&dir).arg(n.to_string()), 300, &label);
            assert!(
                st.success(),
                "{label}: the film sampling driver failed ({st})"
            );
            let est: Vec<f64> = std::fs::read(dir.join("est.bin"))
                .unwrap()
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            assert_eq!(est.len(), cw * ch * 4);
            let r = f.radius() as f64;
            let (mut worst, mut untruncated_z, mut worst_draws_z) = (0.0f64, 0.0f64, 0.0f64);
            let mut most_pairs = 0.0f64;
            for y in 0..ch {
                for x in 0..cw {
                    let (cx, cy) = (x as f64 + 0.5, y as f64 + 0.5);
                    let mean = |clip| {
                        filtered_mean(&f, cx, cw as f64, clip, gx)
                            + filtered_mean(&f, cy, ch as f64, clip, gy)
                    };
                    let e = &est[4 * (y * cw + x)..4 * (y * cw + x + 1)];
                    let z = (e[0] - mean(true)) / e[1];
                    assert!(
                        z.abs() < 5.0,
                        "{label} pixel ({x}, {y}): estimate {:.6} vs filtered {:.6} (z = {z:.2})",
                        e[0],
                        mean(true)
                    );
                    worst = worst.max(z.abs());
                    untruncated_z = untruncated_z.max(((e[0] - mean(false)) / e[1]).abs());
                    most_pairs = most_pairs.max(e[3]);
                    if let AnyFilter::Gaussian { stddev, .. } = f {
                        // pairs per sample: geometric, mean 1 / p and variance (1 - p) / p^2
                        let s = stddev as f64;
                        let p = normal_mass(s, r, cx, cw as f64) * normal_mass(s, r, cy, ch as f64);
                        let se = ((1.0 - p) / (p * p) / n as f64).sqrt();
                        let zd = (e[2] - 1.0 / p) / se;
                        assert!(
                            zd.abs() < 5.0,
                            "{label} pixel ({x}, {y}): {:.4} pairs per sample, expected {:.4} (z = {zd:.2})",
                            e[2],
                            1.0 / p
                        );
                        worst_draws_z = worst_draws_z.max(zd.abs());
                    } else {
                        assert_eq!((e[2], e[3]), (1.0, 1.0), "{label}: one pair per sample");
                    }
                }
            }
            // each weight is f(dx) f(dy) / (pdf(dx) pdf(dy)) up to the placement's constant
            let first = read_f32s(&dir.join("samples.bin"));
            assert_eq!(first.len(), cw * ch * 16 * 3);
            let mut worst_w = 0.0f64;
            for s in first.chunks_exact(3) {
                let (dx, dy, w) = (s[0], s[1], s[2] as f64);
                let want = match f {
                    AnyFilter::Gaussian { stddev, .. } => {
                        // the normal's density is exp(-x^2 / (2 s^2)) / (s sqrt(2 pi))
                        let ratio = |x: f32| {
                            f.eval(x) as f64 / (-0.5 * (x as f64 / stddev as f64).powi(2)).exp()
                        };
                        ratio(dx) * ratio(dy)
                    }
                    _ => 1.0, // box and tent: the density is f over its integral
                };
                worst_w = worst_w.max((w - want).abs());
            }
            assert!(worst_w < 2e-5, "{label}: weights off by {worst_w:.2e}");
            println!(
                "{label}: weights within {worst_w:.1e} of f / pdf; worst |z| vs the film-truncated filter = {worst:.2}; \
                 vs the untruncated filter = {untruncated_z:.1}; pairs drawn per sample: \
                 most {most_pairs}, worst |z| of the mean {worst_draws_z:.2}"
            );
            if r > 0.5 && cw > 1 {
                assert!(
                    untruncated_z > 20.0,
                    "{label}: the check cannot tell a filter truncated at the film edge from one that is not"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
