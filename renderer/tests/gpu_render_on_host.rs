//! The `direct`/`path` megakernel and the film kernels (`renderer/kernels/render.cu`)
//! compiled as C++ and run on the CPU through `tests/gpu/host_render.cpp`, driven wave
//! by wave as `backend/cuda/device.rs` launches them. No GPU needed.
//!
//! Checks: (a) whole-image agreement with the CPU backend on the seed scene (`direct`,
//! every reconstruction filter), the Cornell box and the showcase (`path`) at 64×64: per
//! 16×16 block and channel, Welch's t-test between the block means of K independent
//! seeds on each side, with a Bonferroni correction; the same test must reject an image
//! scaled by 1.05 (so it can fail); integrator variants too (direct with several
//! samples per strategy, hidden emitters, early Russian roulette, point and directional
//! lights); with a one-pixel box filter and the same seed on both sides every value must
//! agree to 1e-4 (the kernels repeat the CPU's arithmetic and random numbers; wider filters
//! place samples by filter importance sampling on the GPU and by splatting on the CPU, so
//! they agree statistically only); (b) determinism: the same scene, spp, seed and wave
//! split give the same bits (a different split changes the summation order), and the
//! in-warp reduction (emulated by the host shim) does not depend on the wave split beyond
//! rounding; (c) the film's filter importance sampling (`film_sample`, driven by
//! `tests/gpu/host_film.cpp`) against quadrature of the CPU's filter table truncated to the
//! crop window, per pixel, for every filter (and the untruncated integral must be rejected
//! at the edges, so the check can fail), and its O(1) inverse-CDF search (guide table +
//! binary search over the bins it leaves) against a full binary search, bit for bit, on full and truncated windows.
//!
//! Skips with a message when no C++ compiler (`$CXX`, else `c++`) is available.

mod common;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use heliograph::backend::cuda::features::{Features, BRUTE_FORCE_MAX_PRIMS};
use heliograph::backend::cuda::{check_supported, kernels, wavefront_bounce_launches};
use heliograph::backend::{cpu, RenderOptions};
use heliograph::films::block::FilterTable;
use heliograph::flat::unit_prims::UNIT_PRIMS_MAX;
use heliograph::flat::FlatScene;
use heliograph::integrators::{self, AnyIntegrator, Direct};
use heliograph::rfilters::AnyFilter;
use heliograph::scene::{build_scene, xml, Scene};

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
    /// `RenderTuning::brute_force_max_prims`).
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
    fn render(&self, scene: &Scene, seed: u64, spp: u32, per_wave: u32, per_lane: u32) -> Vec<f32> {
        self.render_mode(scene, seed, spp, per_wave, per_lane, None)
    }

    /// [`Self::render`]; with `bounces`, `path` runs as the wavefront kernels with that many
    /// bounce launches.
    fn render_mode(
        &self,
        scene: &Scene,
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

fn load(name: &str, res: u32) -> Scene {
    let path = repo_root().join("scenes").join(name);
    let desc = xml::load_file(&path, &[("res".into(), res.to_string())]).unwrap();
    build_scene(&desc).unwrap()
}

/// CPU vs host-kernel renders with K independent seeds each; returns the worst corrected p
/// for the kernel images and for the kernel images scaled by 1.05.
fn compare(host: &Host, scene: &Scene, spp: u32, label: &str) -> (f64, f64) {
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
        brute_max: BRUTE_FORCE_MAX_PRIMS,
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
    let cbox = load("cbox.xml", 64);
    let (p, pb) = compare(&host, &cbox, 16, "cbox (path)");
    assert!(p > alpha, "Cornell box: the kernels differ from the CPU");
    assert!(pb < alpha, "the test cannot see a 5% bias (cbox)");
    let showcase = load("showcase.xml", 64);
    let (p, pb) = compare(&host, &showcase, 16, "showcase (path)");
    assert!(p > alpha, "showcase: the kernels differ from the CPU");
    assert!(pb < alpha, "the test cannot see a 5% bias (showcase)");
    // brute force with the unit-shape test (flat/unit_prims.rs) on every kind of
    // primitive: the Cornell box (triangles, rectangles) plus a sphere and a disk
    let brute = Host {
        brute_max: UNIT_PRIMS_MAX,
        ..host_or_skip(false).unwrap()
    };
    let text = std::fs::read_to_string(repo_root().join("scenes/cbox.xml")).unwrap();
    let extra = r#"<shape type="sphere"><point name="center" x="-0.45" y="0.35" z="0.35"/>
        <float name="radius" value="0.22"/><ref id="white"/></shape>
        <shape type="disk"><transform name="to_world"><scale value="0.25"/>
        <rotate x="1" angle="-60"/><translate value="0.4, 0.25, 0.1"/></transform>
        <ref id="red"/></shape></scene>"#;
    let file = brute.dir.join("cbox_shapes.xml");
    std::fs::write(&file, text.replace("</scene>", extra)).unwrap();
    let desc = xml::load_file(&file, &[("res".into(), "64".into())]).unwrap();
    let shapes = build_scene(&desc).unwrap();
    for (label, scene) in [
        ("cbox (path, brute force)", &cbox),
        ("cbox + sphere + disk (path, brute force)", &shapes),
    ] {
        let f =
            Features::with_brute_force_max(&FlatScene::from_scene(scene).unwrap(), brute.brute_max);
        assert!(f.brute_force, "{label}: {}", f.tag());
        let (p, pb) = compare(&brute, scene, 32, label);
        assert!(p > alpha, "{label}: the kernels differ from the CPU");
        assert!(pb < alpha, "the test cannot see a 5% bias ({label})");
    }
    let _ = std::fs::remove_dir_all(&brute.dir);

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
    let text = std::fs::read_to_string(repo_root().join("scenes/cbox.xml")).unwrap();
    let lights = r#"<emitter type="point"><point name="position" x="0.3" y="0.6" z="0.2"/>
        <rgb name="intensity" value="0.5, 0.4, 0.3"/></emitter>
        <emitter type="directional"><vector name="direction" x="0.2" y="-0.3" z="-1"/>
        <rgb name="irradiance" value="0.3"/></emitter></scene>"#;
    let file = host.dir.join("cbox_lights.xml");
    std::fs::write(&file, text.replace("</scene>", lights)).unwrap();
    let desc = xml::load_file(&file, &[("res".into(), "64".into())]).unwrap();
    let lit = build_scene(&desc).unwrap();
    let mut c = lit.clone();
    c.integrator = AnyIntegrator::Direct(Direct {
        emitter_samples: 1,
        bsdf_samples: 1,
        hide_emitters: false,
    });
    variants.push(("cbox + point + directional, direct", c));
    variants.push(("cbox + point + directional, path", lit));
    for (label, scene) in &variants {
        let (p, pb) = compare(&host, scene, 48, label);
        assert!(p > alpha, "{label}: the kernels differ from the CPU");
        assert!(pb < alpha, "the test cannot see a 5% bias ({label})");
    }

    // same seed on both sides with a one-pixel box filter: the kernels repeat the CPU's
    // arithmetic and random numbers, so nearly every pixel agrees to float rounding (libm's
    // sin/cos may differ by an ulp; the in-warp sum adds in a tree, the CPU in a row)
    let mut same: Vec<(&str, Scene)> = vec![
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
    // the Cornell box once more with brute force (its 30 primitives, unit-shape tests)
    let (special_bf, generic_bf) = (
        Host {
            brute_max: UNIT_PRIMS_MAX,
            ..host_or_skip(false).unwrap()
        },
        Host {
            brute_max: UNIT_PRIMS_MAX,
            ..host_or_skip(true).unwrap()
        },
    );
    let mut scenes = vec![
        ("seed", load("seed.xml", 24)),
        ("cbox", load("cbox.xml", 24)),
        ("showcase", load("showcase.xml", 24)),
    ];
    let mut c = scenes[0].1.clone();
    c.sensor.film.rfilter = AnyFilter::Box { radius: 0.5 };
    scenes.push(("seed, one-pixel box", c));
    let mut c = scenes[2].1.clone();
    c.integrator = AnyIntegrator::Direct(Direct {
        emitter_samples: 2,
        bsdf_samples: 1,
        hide_emitters: false,
    });
    scenes.push(("showcase, direct", c));
    scenes.push(("cbox, brute force", scenes[1].1.clone()));
    let mut tags = Vec::new();
    for (label, scene) in &scenes {
        let (special, generic) = if label.ends_with("brute force") {
            (&special_bf, &generic_bf)
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
    for h in [&special, &generic, &special_bf, &generic_bf] {
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

/// The filter-weighted mean of `g` around `c` over `[c - r, c + r]`, clipped to `[0, size]`
/// when `clip` (midpoint rule with the CPU's filter table as the weight).
fn filtered_mean(
    t: &FilterTable,
    r: f64,
    c: f64,
    size: f64,
    clip: bool,
    g: impl Fn(f64) -> f64,
) -> f64 {
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
        let w = t.eval((u - c) as f32) as f64;
        sw += w;
        swg += w * g(u);
    }
    swg / sw
}

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
    scene.sensor.film.crop_offset = [0, 1];
    scene.sensor.film.crop_size = [8, 6];
    let (cw, ch) = (8usize, 6usize);
    // the driver's signal, split into its x and y parts (the filter is separable)
    let gx = |u: f64| 0.01 * u * u + 0.2 * (1.3 * u).sin();
    let gy = |v: f64| 0.3 * v;
    let n = 40_000;
    for f in [
        AnyFilter::default(),
        AnyFilter::Tent { radius: 1.5 },
        AnyFilter::Box { radius: 1.0 },
        AnyFilter::Box { radius: 0.5 },
    ] {
        scene.sensor.film.rfilter = f;
        let flat = FlatScene::from_scene(&scene).unwrap();
        for (name, bytes) in flat.render_arrays() {
            if name == "film" || name == "filter_table" {
                std::fs::write(dir.join(format!("{name}.bin")), bytes).unwrap();
            }
        }
        let st = Command::new(&exe)
            .arg(&dir)
            .arg(n.to_string())
            .status()
            .unwrap();
        assert!(
            st.success(),
            "{f:?}: the film sampling driver failed ({st})"
        );
        // the guide-table search finds the binary search's bin: same offset and pdf bits
        let out = Command::new(&exe)
            .arg(&dir)
            .args(["200000", "search"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{f:?}: the guide-table search differs from the binary search: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        print!("{f:?}: {}", String::from_utf8_lossy(&out.stdout));
        let est: Vec<f64> = std::fs::read(dir.join("est.bin"))
            .unwrap()
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(est.len(), cw * ch * 2);
        let table = FilterTable::new(&f);
        let r = f.radius() as f64;
        let (mut worst, mut untruncated_z) = (0.0f64, 0.0f64);
        for y in 0..ch {
            for x in 0..cw {
                let (cx, cy) = (x as f64 + 0.5, y as f64 + 0.5);
                let mean = |clip| {
                    filtered_mean(&table, r, cx, cw as f64, clip, gx)
                        + filtered_mean(&table, r, cy, ch as f64, clip, gy)
                };
                let (e, se) = (est[2 * (y * cw + x)], est[2 * (y * cw + x) + 1]);
                let z = (e - mean(true)) / se;
                assert!(
                    z.abs() < 5.0,
                    "{f:?} pixel ({x}, {y}): estimate {e:.6} vs filtered {:.6} (z = {z:.2})",
                    mean(true)
                );
                worst = worst.max(z.abs());
                untruncated_z = untruncated_z.max(((e - mean(false)) / se).abs());
            }
        }
        println!(
            "{f:?}: worst |z| vs the film-truncated filter = {worst:.2}; \
             vs the untruncated filter = {untruncated_z:.1}"
        );
        if r > 0.5 {
            assert!(
                untruncated_z > 20.0,
                "{f:?}: the check cannot tell a filter truncated at the film edge from one that is not"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
