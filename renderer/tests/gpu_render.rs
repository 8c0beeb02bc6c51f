//! GPU checks of the `direct` and `path` megakernels and the `ptracer` kernel: per-plugin parity of
//! eval/pdf/sample with the Rust plugins on fixed inputs, whole-image agreement
//! with the CPU backend on every scene of `scenes/` (seed with every reconstruction
//! filter, Cornell box, showcase, instances) and with every sampler, the instanced
//! scene's rays (10^5 random rays through the two-level traversal against the CPU's), on
//! the Cornell box lit by every delta light (point, directional, spot, projector) and on
//! the rough-glass regression scene, `ptracer` against the CPU's light tracer
//! (`ptracer_matches_the_cpu_backend`), determinism (two renders, same seed: identical bits), and the benchmark lines
//! (seed scene `direct` and Cornell box `path` max_depth 8, 512×512, 32 spp; kernel time
//! by CUDA events and the wall time of render + wait, in Gsamples/s), and the 1M-triangle
//! ray throughput benchmark (`benchmark_mesh1m_primary_and_diffuse_rays`, Grays/s).
//!
//! Policy as `gpu_depth.rs`: no GPU → `SKIP: ...` and pass; a GPU present and the
//! backend broken → FAIL; `HELIOGRAPH_REQUIRE_GPU=1` makes a missing GPU a failure.
//! Lines starting with `HG_GPU_STAT` are collected by `tests/gpu/run_gpu_checks.sh`.
#![cfg(feature = "cuda")]

mod common;

use std::path::Path;
use std::time::Instant;

use heliograph::backend::cpu;
use heliograph::backend::cuda::features::Features;
use heliograph::backend::cuda::{kernels, nvrtc_compile_offline, CudaBackend, RenderTuning};
use heliograph::desc::xml;
use heliograph::flat::FlatScene;
use heliograph::integrators::{self, AnyIntegrator, Depth};
use heliograph::render::RenderOptions;
use heliograph::rfilters::AnyFilter;
use heliograph::scene::{build_scene, RenderSetup};

use common::harness::{backend_or_skip, repo_root};
use common::{block_means, worst_p};

fn load(name: &str, res: u32) -> RenderSetup {
    let path = repo_root().join("scenes").join(name);
    let desc = xml::load_file(&path, &[("res".into(), res.to_string())])
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    build_scene(&desc).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Worst Bonferroni-corrected p of CPU vs CUDA (K independent seeds each), and of CPU
/// vs the CUDA images scaled by 1.05 (which must be rejected: the test can fail).
fn compare(be: &CudaBackend, scene: &RenderSetup, spp: u32, label: &str) -> (f64, f64) {
    let [w, h] = scene.sensor.film.crop_size;
    let (w, h) = (w as usize, h as usize);
    let ch = if scene.sensor.film.alpha { 4 } else { 3 };
    let (mut cpu_b, mut gpu_b, mut biased) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..8u64 {
        let c = cpu::render(
            scene,
            &RenderOptions {
                spp: Some(spp),
                seed: 1 + k,
            },
        )
        .unwrap();
        let opts = RenderOptions {
            spp: Some(spp),
            seed: 1000 + k,
        };
        let g = be
            .render(scene, &opts)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(g.data.len(), c.data.len());
        assert!(g.data.iter().all(|v| v.is_finite()), "{label}: non-finite");
        cpu_b.push(block_means(&c.data, w, h, ch));
        gpu_b.push(block_means(&g.data, w, h, ch));
        let g2: Vec<f32> = g.data.iter().map(|v| v * 1.05).collect();
        biased.push(block_means(&g2, w, h, ch));
    }
    let (p, blk, c) = worst_p(&cpu_b, &gpu_b);
    let (pb, _, _) = worst_p(&cpu_b, &biased);
    println!("HG_GPU_STAT image {label} worst_p={p:.3e} block={blk} channel={c} biased_p={pb:.3e}");
    (p, pb)
}

#[test]
fn every_scene_matches_the_cpu_backend() {
    let Some(be) = backend_or_skip("render_parity") else {
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
        let label = format!("seed-direct-{f:?}").replace(' ', "");
        let (p, pb) = compare(&be, &seed, 8, &label);
        assert!(
            p > alpha,
            "{label}: CUDA differs from the CPU (p = {p:.3e})"
        );
        assert!(pb < alpha, "{label}: the test cannot see a 5% bias");
    }
    // `path` every way: the megakernel (the default) and the wavefront kernels, and the
    // Cornell box's 30 primitives by brute force (the default) and through the BVH
    let default = be.render_tuning();
    for (wavefront, brute_force_max_records) in [
        (false, default.brute_force_max_records),
        (true, default.brute_force_max_records),
        (false, 0),
    ] {
        be.set_render_tuning(RenderTuning {
            wavefront,
            brute_force_max_records,
            ..default
        })
        .unwrap();
        let mode = match (wavefront, brute_force_max_records) {
            (true, _) => "wavefront",
            (false, 0) => "megakernel-bvh",
            _ => "megakernel",
        };
        for name in ["cbox", "showcase", "instances"] {
            let scene = load(&format!("{name}.xml"), 64);
            let label = format!("{name}-path-{mode}");
            let (p, pb) = compare(&be, &scene, 16, &label);
            assert!(
                p > alpha,
                "{label}: CUDA differs from the CPU (p = {p:.3e})"
            );
            assert!(pb < alpha, "{label}: the test cannot see a 5% bias");
        }
    }
    // the thin-lens and orthographic cameras and the surface data of mesh attributes and
    // bump maps (the regression scenes), through `direct` and through `path` on the
    // wavefront kernels (their own sample start)
    for name in ["sensor_thinlens", "sensor_orthographic", "surface_data"] {
        let path = repo_root().join(format!("tests/references/scenes/{name}.xml"));
        let desc = xml::load_file(&path, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut scene = build_scene(&desc).unwrap_or_else(|e| panic!("{name}: {e}"));
        for wavefront in [false, true] {
            be.set_render_tuning(RenderTuning {
                wavefront,
                ..default
            })
            .unwrap();
            if wavefront {
                scene.integrator = AnyIntegrator::Path(integrators::Path::default());
            }
            let label = format!(
                "{name}-{}",
                if wavefront {
                    "path-wavefront"
                } else {
                    "direct"
                }
            );
            let (p, pb) = compare(&be, &scene, 8, &label);
            assert!(
                p > alpha,
                "{label}: CUDA differs from the CPU (p = {p:.3e})"
            );
            assert!(pb < alpha, "{label}: the test cannot see a 5% bias");
        }
    }
    // every delta light (point, directional, spot, projector) in the Cornell box,
    // through `direct` and `path` (megakernel and wavefront)
    let dir = std::env::temp_dir().join(format!("hg-gpu-lights-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lit = common::parity::cbox_with_delta_lights(&dir, 64);
    let _ = std::fs::remove_dir_all(&dir);
    for (integrator, wavefront) in [("direct", false), ("path", false), ("path", true)] {
        be.set_render_tuning(RenderTuning {
            wavefront,
            ..default
        })
        .unwrap();
        let mut scene = lit.clone();
        if integrator == "direct" {
            scene.integrator = AnyIntegrator::Direct(integrators::Direct {
                emitter_samples: 1,
                bsdf_samples: 1,
                hide_emitters: false,
            });
        }
        let label = format!(
            "cbox-delta-lights-{integrator}{}",
            if wavefront { "-wavefront" } else { "" }
        );
        // the delta lights leave most of the box dim: 32 spp for the power to see 5%
        let (p, pb) = compare(&be, &scene, 32, &label);
        assert!(
            p > alpha,
            "{label}: CUDA differs from the CPU (p = {p:.3e})"
        );
        assert!(pb < alpha, "{label}: the test cannot see a 5% bias");
    }
    be.set_render_tuning(default).unwrap();
}

/// Every sampler (`stratified`, `multijitter`, `ldsampler`, `independent`) on CUDA against
/// the CPU with the same sampler: the seed scene (`direct`), the Cornell box (`path`,
/// megakernel and wavefront kernels) and the thin-lens regression scene (aperture
/// samples), 64×64, 16 spp; the same criterion as `every_scene_matches_the_cpu_backend`.
/// And the same seed with a one-pixel box filter: the kernels draw the CPU's numbers, so
/// nearly every value agrees to rounding.
#[test]
fn every_sampler_matches_the_cpu_backend() {
    let Some(be) = backend_or_skip("render_parity") else {
        return;
    };
    let alpha = 1e-3;
    let default = be.render_tuning();
    let thinlens = {
        let path = repo_root().join("tests/references/scenes/sensor_thinlens.xml");
        build_scene(&xml::load_file(&path, &[]).unwrap()).unwrap()
    };
    for name in heliograph::samplers::KNOWN {
        let sampler = heliograph::samplers::Sampler {
            sample_count: 16,
            ..heliograph::samplers::Sampler::by_name(name).unwrap()
        };
        for (label, mut scene, wavefront) in [
            ("seed-direct", load("seed.xml", 64), false),
            ("cbox-path", load("cbox.xml", 64), false),
            ("cbox-path-wavefront", load("cbox.xml", 64), true),
            ("thinlens-direct", thinlens.clone(), false),
        ] {
            be.set_render_tuning(RenderTuning {
                wavefront,
                ..default
            })
            .unwrap();
            scene.sensor.sampler = sampler;
            let label = format!("{label}-{name}");
            let (p, pb) = compare(&be, &scene, 16, &label);
            assert!(
                p > alpha,
                "{label}: CUDA differs from the CPU (p = {p:.3e})"
            );
            assert!(pb < alpha, "{label}: the test cannot see a 5% bias");
            scene.sensor.film.rfilter = AnyFilter::Box { radius: 0.5 };
            let opts = RenderOptions {
                spp: Some(16),
                seed: 9,
            };
            let c = cpu::render(&scene, &opts).unwrap();
            let g = be.render(&scene, &opts).unwrap();
            let close = c
                .data
                .iter()
                .zip(&g.data)
                .filter(|(a, b)| (*a - *b).abs() <= 1e-3 * a.abs().max(1e-2))
                .count();
            println!(
                "HG_GPU_STAT sampler {label} same_seed_close={close}/{}",
                g.data.len()
            );
            assert!(
                close * 100 >= g.data.len() * 90,
                "{label}: same-seed renders diverge ({close} of {} values close)",
                g.data.len()
            );
        }
    }
    be.set_render_tuning(default).unwrap();
}

/// The regression scene of rough glass (`tests/references/scenes/roughdielectric.xml`:
/// GGX, anisotropic Beckmann, η < 1 with coloured factors, textured roughness, up to 12
/// bounces) through the megakernel and the wavefront kernels.
#[test]
fn roughdielectric_scene_matches_the_cpu_backend() {
    let Some(be) = backend_or_skip("render_parity") else {
        return;
    };
    let path = repo_root().join("tests/references/scenes/roughdielectric.xml");
    let desc = xml::load_file(&path, &[]).unwrap();
    let scene = build_scene(&desc).unwrap();
    let default = be.render_tuning();
    for wavefront in [false, true] {
        be.set_render_tuning(RenderTuning {
            wavefront,
            ..default
        })
        .unwrap();
        let label = format!("roughdielectric-path-wavefront={wavefront}");
        let (p, pb) = compare(&be, &scene, 64, &label);
        assert!(p > 1e-3, "{label}: CUDA differs from the CPU (p = {p:.3e})");
        assert!(pb < 1e-3, "{label}: the test cannot see a 5% bias");
    }
    be.set_render_tuning(default).unwrap();
}

/// The regression scene of Mitsuba's Disney BSDFs (`tests/references/scenes/principled.xml`:
/// metal with clearcoat, rough glass with sheen, textured metallic / spec_trans, a
/// `principledthin` sheet with textured diffuse transmission) through the megakernel and
/// the wavefront kernels.
#[test]
fn principled_scene_matches_the_cpu_backend() {
    let Some(be) = backend_or_skip("render_parity") else {
        return;
    };
    let path = repo_root().join("tests/references/scenes/principled.xml");
    let desc = xml::load_file(&path, &[]).unwrap();
    let scene = build_scene(&desc).unwrap();
    let default = be.render_tuning();
    for wavefront in [false, true] {
        be.set_render_tuning(RenderTuning {
            wavefront,
            ..default
        })
        .unwrap();
        let label = format!("principled-path-wavefront={wavefront}");
        let (p, pb) = compare(&be, &scene, 64, &label);
        assert!(p > 1e-3, "{label}: CUDA differs from the CPU (p = {p:.3e})");
        assert!(pb < 1e-3, "{label}: the test cannot see a 5% bias");
    }
    be.set_render_tuning(default).unwrap();
}

/// `ptracer` on the GPU (kernels/integrators/ptracer.cuh) against the CPU's light tracer
/// on the cases of `common::ptracer` (the CPU ptracer tests' scenes, every filter kind,
/// hidden emitters, a crop with alpha, the Cornell box under every delta light): per
/// block and channel, Welch's test over 8 seeds, which must also reject the GPU image
/// scaled by 1.05. The splats are float atomics, so two renders with the same seed agree
/// to rounding only (checked to 1e-3 per value), and another seed gives another image;
/// a ptracer swapped onto an orthographic sensor is refused as on the CPU.
#[test]
fn ptracer_matches_the_cpu_backend() {
    let Some(be) = backend_or_skip("ptracer") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("hg-gpu-ptracer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = common::ptracer::cases(&dir);
    for (label, scene, spp) in &cases {
        let label = format!("ptracer {label}");
        let (p, pb) = compare(&be, scene, *spp, &label);
        assert!(p > 1e-3, "{label}: CUDA differs from the CPU (p = {p:.3e})");
        assert!(pb < 1e-3, "{label}: the test cannot see a 5% bias");
    }
    let (_, scene, _) = &cases[0];
    let opts = |seed| RenderOptions {
        spp: Some(16),
        seed,
    };
    let a = be.render(scene, &opts(42)).unwrap();
    let b = be.render(scene, &opts(42)).unwrap();
    let c = be.render(scene, &opts(43)).unwrap();
    let close = |x: &[f32], y: &[f32]| {
        x.iter()
            .zip(y)
            .all(|(u, v)| (u - v).abs() <= 1e-3 * u.abs().max(v.abs()).max(1e-3))
    };
    let exact = a
        .data
        .iter()
        .zip(&b.data)
        .filter(|(x, y)| x.to_bits() == y.to_bits())
        .count();
    println!(
        "HG_GPU_STAT ptracer_same_seed identical_values={exact}/{}",
        a.data.len()
    );
    assert!(
        close(&a.data, &b.data),
        "same seed: more than rounding apart"
    );
    assert!(
        !close(&a.data, &c.data),
        "another seed gives the same image"
    );
    // a ptracer render onto an orthographic sensor: refused, naming the sensor
    let mut ortho = load("cbox.xml", 16);
    ortho.sensor.camera.kind = heliograph::sensors::camera::CAMERA_ORTHOGRAPHIC;
    ortho.integrator = AnyIntegrator::Ptracer(integrators::Ptracer::default());
    let e = be.render(&ortho, &opts(1)).unwrap_err().to_string();
    assert!(e.contains("\"perspective\" sensor"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn same_seed_same_bits() {
    let Some(be) = backend_or_skip("determinism") else {
        return;
    };
    for name in ["seed.xml", "cbox.xml", "showcase.xml"] {
        let scene = load(name, 128);
        let opts = RenderOptions {
            spp: Some(8),
            seed: 42,
        };
        let a = be.render(&scene, &opts).unwrap_or_else(|e| panic!("{e}"));
        let b = be.render(&scene, &opts).unwrap_or_else(|e| panic!("{e}"));
        let same = a
            .data
            .iter()
            .zip(&b.data)
            .all(|(x, y)| x.to_bits() == y.to_bits());
        println!(
            "HG_GPU_STAT determinism scene={name} identical={}",
            u8::from(same)
        );
        assert!(same, "{name}: two CUDA renders with the same seed differ");
    }
}

/// The two-level traversal of instances on the GPU: 10^5 random rays against
/// `scenes/instances.xml` through the kernels' `scene_intersect` / `scene_occluded`
/// (parity.cu kind 4) against the CPU's Rust traversal. The GPU contracts multiply-adds
/// and divides approximately, so a ray that grazes an edge or a silhouette may tell
/// otherwise (at most 0.1 % of them), and values agree to 1e-4.
#[test]
fn instanced_rays_on_the_gpu_match_the_cpu_traversal() {
    let Some(be) = backend_or_skip("instanced_rays") else {
        return;
    };
    let scene = common::rays::instanced_scene();
    let q = common::rays::ray_queries(&scene, 100_000, 5);
    let got = be
        .plugin_parity(&scene, &q)
        .unwrap_or_else(|e| panic!("{e}"));
    let r = common::rays::check_rays(&scene, &q, &got, 1e-4);
    assert!(r.hits > r.rays / 4 && r.instance_hits > r.rays / 8, "{r:?}");
    assert!(
        r.differ.len() <= r.rays / 1000,
        "{} rays differ",
        r.differ.len()
    );
    assert!(
        r.inexact.len() <= r.rays / 1000,
        "{} hits inexact",
        r.inexact.len()
    );
    println!(
        "HG_GPU_STAT instanced_rays rays={} differ={} inexact={}",
        r.rays,
        r.differ.len(),
        r.inexact.len()
    );
}

#[test]
fn plugin_twins_match_the_rust_plugins_on_the_gpu() {
    let Some(be) = backend_or_skip("plugin_parity") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("hg-gpu-parity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("scene.xml"), common::parity::scene_xml()).unwrap();
    let scene = build_scene(&xml::load_file(&dir.join("scene.xml"), &[]).unwrap()).unwrap();
    let qs = common::parity::queries(&scene);
    let got = be
        .plugin_parity(&scene, &common::parity::query_floats(&qs))
        .unwrap_or_else(|e| panic!("{e}"));
    common::parity::check(&qs, &got);
    println!(
        "HG_GPU_STAT parity queries={} all_within_tolerance=1",
        qs.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn benchmark_seed_direct_and_cbox_path() {
    let Some(be) = backend_or_skip("benchmark") else {
        return;
    };
    be.set_timing(true);
    for name in ["seed.xml", "cbox.xml"] {
        let scene = load(name, 512);
        let opts = RenderOptions {
            spp: Some(32),
            seed: 3,
        };
        // the scene stays on the device: a render enqueues kernels only
        let s = be.upload_scene(&scene, 0).unwrap_or_else(|e| panic!("{e}"));
        let spp = scene.sensor.sampler.sample_count;
        let warm = be
            .render_scene(&s, &opts, spp)
            .unwrap_or_else(|e| panic!("{e}"));
        warm.to_image().unwrap_or_else(|e| panic!("{e}"));
        let (mut kernel, mut wall, mut film_ms) = (f32::INFINITY, f64::INFINITY, f32::INFINITY);
        for _ in 0..5 {
            let t = Instant::now();
            let film = be
                .render_scene(&s, &opts, spp)
                .unwrap_or_else(|e| panic!("{e}"));
            film.to_image().unwrap_or_else(|e| panic!("{e}"));
            wall = wall.min(t.elapsed().as_secs_f64());
            kernel = kernel.min(film.kernel_ms().unwrap_or_else(|e| panic!("{e}")));
            if let Some(f) = film.film_ms().unwrap_or_else(|e| panic!("{e}")) {
                film_ms = film_ms.min(f);
            }
        }
        let samples = 512.0 * 512.0 * 32.0;
        let info = be
            .render_kernel_info(&scene)
            .unwrap_or_else(|e| panic!("{e}"));
        // the kernel's own ray count (a counting variant of the module; same paths)
        let (rays, _) = be
            .count_rays(&scene, &opts)
            .unwrap_or_else(|e| panic!("{e}"));
        println!(
            "HG_GPU_STAT bench scene={name} res=512 spp=32 kernel_ms={kernel:.3} \
             kernel_gsamples_per_s={:.3} of_which_film_ms={film_ms:.3} wall_ms={:.3} \
             wall_gsamples_per_s={:.3} rays_per_sample={:.3} grays_per_s={:.3} module={} \
             inlined={} registers={} local_bytes={} block={} blocks_per_sm={} \
             samples_per_lane={} wavefront={}",
            samples / (kernel as f64 * 1e-3) / 1e9,
            wall * 1e3,
            samples / wall / 1e9,
            rays as f64 / samples,
            rays as f64 / (kernel as f64 * 1e-3) / 1e9,
            info.module,
            info.inlined,
            info.registers,
            info.local_bytes,
            info.block,
            info.blocks_per_sm,
            be.render_tuning().samples_per_lane,
            be.render_tuning().wavefront
        );
        assert!(kernel > 0.0 && kernel.is_finite());
    }
}

/// The megakernel's launch and compile settings, swept on the benchmark scenes (512×512,
/// 32 spp): block size × register cap × samples per lane × brute force (the Cornell box's
/// 30 primitives, BVH or unit-shape brute force), plus the wavefront `path` once: which
/// settings the default should be. Within one intersection mode every configuration must
/// render the image of that mode's default configuration (same seed: the settings change
/// the register allocation and the summation order, so the images agree to rounding).
#[test]
fn benchmark_tuning_sweep() {
    let Some(be) = backend_or_skip("tuning sweep") else {
        return;
    };
    let default = be.render_tuning();
    let opts = RenderOptions {
        spp: Some(32),
        seed: 3,
    };
    // the Cornell box with two more boxes (54 primitives, 30 unit records): brute force
    // past the Cornell box's 18 records
    let text = std::fs::read_to_string(repo_root().join("scenes/cbox.xml")).unwrap();
    let boxes = r#"<shape type="cube"><transform name="to_world"><scale value="0.15"/>
        <translate value="-0.5, -0.85, 0.5"/></transform><ref id="white"/></shape>
        <shape type="cube"><transform name="to_world"><scale value="0.12"/>
        <rotate y="1" angle="30"/><translate value="0.55, 0.6, -0.6"/></transform>
        <ref id="white"/></shape></scene>"#;
    let dir = std::env::temp_dir().join(format!("hg-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cbox54.xml");
    std::fs::write(&file, text.replace("</scene>", boxes)).unwrap();
    for name in ["seed.xml", "cbox.xml", "cbox54.xml", "showcase.xml"] {
        let scene = if name == "cbox54.xml" {
            let desc = xml::load_file(&file, &[("res".into(), "512".into())]).unwrap();
            build_scene(&desc).unwrap()
        } else {
            load(name, 512)
        };
        // the Cornell boxes both ways: through the BVH (0) and brute forced (the default)
        let brute: &[u32] = if name.starts_with("cbox") {
            &[0, default.brute_force_max_records]
        } else {
            &[default.brute_force_max_records]
        };
        for &brute_force_max_records in brute {
            let mode = RenderTuning {
                brute_force_max_records,
                ..default
            };
            be.set_render_tuning(mode).unwrap();
            let reference = be.render(&scene, &opts).unwrap_or_else(|e| panic!("{e}"));
            let mut configs = Vec::new();
            for max_registers in [0, 64] {
                for block in [256, 512] {
                    for samples_per_lane in [1, 2, 4, 8] {
                        configs.push(RenderTuning {
                            block,
                            max_registers,
                            samples_per_lane,
                            ..mode
                        });
                    }
                }
            }
            if name == "cbox.xml" || name == "showcase.xml" {
                configs.push(RenderTuning {
                    wavefront: true,
                    ..mode
                });
            }
            for t in configs {
                be.set_render_tuning(t).unwrap();
                let kernel = best_kernel_ms(&be, &scene, &opts);
                let info = be
                    .render_kernel_info(&scene)
                    .unwrap_or_else(|e| panic!("{e}"));
                let img = be.render(&scene, &opts).unwrap_or_else(|e| panic!("{e}"));
                let worst = img
                    .data
                    .iter()
                    .zip(&reference.data)
                    .map(|(a, b)| (a - b).abs() / b.abs().max(1e-2))
                    .fold(0.0f32, f32::max);
                println!(
                    "HG_GPU_STAT tune scene={name} module={} wavefront={} block={} \
                     max_registers={} samples_per_lane={} registers={} local_bytes={} \
                     blocks_per_sm={} kernel_ms={kernel:.3} gsamples_per_s={:.3} \
                     worst_rel_diff={worst:.1e}",
                    info.module,
                    t.wavefront,
                    t.block,
                    t.max_registers,
                    t.samples_per_lane,
                    info.registers,
                    info.local_bytes,
                    info.blocks_per_sm,
                    512.0 * 512.0 * 32.0 / (kernel as f64 * 1e-3) / 1e9
                );
                // the wavefront contracts other multiply-adds: an ulp can send a sample
                // down another path
                assert!(t.wavefront || worst < 1e-3, "{name} {t:?}: image changed");
            }
        }
    }
    be.set_render_tuning(default).unwrap();
}

/// NVRTC alone (no GPU needed): the generic modules, and the render module specialised
/// to each shipped scene's plugin set (what the backend compiles for it), compile for
/// sm_90 with the backend's options. Runs wherever libnvrtc.so.13 loads (e.g.
/// `LD_LIBRARY_PATH` pointing at the `nvidia-cuda-nvrtc` wheel's lib/ on the build
/// machine), else skips.
#[test]
fn nvrtc_compiles_the_kernels_for_sm_90() {
    let mut jobs: Vec<(String, &str, String)> = [
        kernels::RENDER_MODULE,
        kernels::DEPTH_MODULE,
        kernels::PARITY_MODULE,
    ]
    .iter()
    .map(|m| (m.to_string(), *m, String::new()))
    .collect();
    for name in ["seed.xml", "cbox.xml", "showcase.xml"] {
        let f = Features::of(&FlatScene::from_scene(&load(name, 16)).unwrap());
        jobs.push((
            format!("{}[{}] ({name})", kernels::RENDER_MODULE, f.tag()),
            kernels::RENDER_MODULE,
            f.prelude(true),
        ));
    }
    for (label, module, prelude) in jobs {
        match nvrtc_compile_offline(module, &prelude, "sm_90", &[]) {
            Ok((bytes, secs)) => {
                println!("HG_GPU_STAT nvrtc module={label} cubin_bytes={bytes} seconds={secs:.2}");
                assert!(bytes > 0);
            }
            Err(heliograph::Error::CudaUnavailable(why)) => {
                let require = std::env::var("HELIOGRAPH_REQUIRE_GPU").is_ok_and(|v| v == "1");
                assert!(!require, "NVRTC required but unavailable: {why}");
                println!("SKIP: nvrtc_compiles_the_kernels_for_sm_90: {why}");
                return;
            }
            Err(e) => panic!("{label}: {e}"),
        }
    }
}

/// Writes a displaced UV sphere of `2 * rings * segments` triangles (radius 1, bumps of
/// +-4%: concave dents, so diffuse paths bounce more than once) as a binary PLY.
fn write_bumpy_sphere(path: &Path, rings: u32, segments: u32) -> usize {
    let mut verts: Vec<[f32; 3]> = Vec::new();
    // rings + 1 latitude rows strictly inside (0, pi): no degenerate pole triangles
    for j in 0..=rings {
        let theta = std::f32::consts::PI * (j as f32 + 0.5) / (rings as f32 + 1.0);
        for i in 0..segments {
            let phi = 2.0 * std::f32::consts::PI * i as f32 / segments as f32;
            let r = 1.0 + 0.04 * (23.0 * theta).sin() * (31.0 * phi).cos();
            verts.push([
                r * theta.sin() * phi.cos(),
                r * theta.cos(),
                r * theta.sin() * phi.sin(),
            ]);
        }
    }
    let mut faces: Vec<[u32; 3]> = Vec::new();
    for j in 0..rings {
        for i in 0..segments {
            let (a, b) = (j * segments + i, j * segments + (i + 1) % segments);
            let (c, d) = (a + segments, b + segments);
            // counter-clockwise seen from outside (y is the polar axis here, so
            // (theta, phi) is a left-handed frame): outward geometric normals, which a
            // one-sided diffuse BSDF needs to reflect
            faces.push([a, b, c]);
            faces.push([b, d, c]);
        }
    }
    let mut out = format!(
        "ply\nformat binary_little_endian 1.0\nelement vertex {}\nproperty float x\n\
         property float y\nproperty float z\nelement face {}\n\
         property list uchar int vertex_indices\nend_header\n",
        verts.len(),
        faces.len()
    )
    .into_bytes();
    for v in &verts {
        v.iter().for_each(|c| out.extend(c.to_le_bytes()));
    }
    for f in &faces {
        out.push(3);
        f.iter().for_each(|i| out.extend(i.to_le_bytes()));
    }
    std::fs::write(path, out).unwrap();
    faces.len()
}

/// The bumpy sphere (diffuse, albedo 0.8) under a constant white environment, seen from
/// outside at 1024×1024 with a one-pixel box filter.
fn mesh1m_scene(dir: &Path) -> (RenderSetup, usize, f64) {
    let tris = write_bumpy_sphere(&dir.join("mesh1m.ply"), 500, 1000);
    let xml = r#"<scene version="3.0.0">
        <integrator type="path"><integer name="max_depth" value="4"/></integrator>
        <sensor type="perspective">
            <float name="fov" value="45"/>
            <transform name="to_world"><lookat origin="0, 0.8, 3" target="0, 0, 0" up="0, 1, 0"/></transform>
            <film type="hdrfilm">
                <integer name="width" value="1024"/><integer name="height" value="1024"/>
                <rfilter type="box"/>
            </film>
        </sensor>
        <shape type="ply">
            <string name="filename" value="mesh1m.ply"/>
            <bsdf type="diffuse"><rgb name="reflectance" value="0.8"/></bsdf>
        </shape>
        <emitter type="constant"><rgb name="radiance" value="1"/></emitter>
    </scene>"#;
    std::fs::write(dir.join("mesh1m.xml"), xml).unwrap();
    let t = Instant::now();
    let desc = xml::load_file(&dir.join("mesh1m.xml"), &[]).unwrap();
    let scene = build_scene(&desc).unwrap_or_else(|e| panic!("mesh1m: {e}"));
    (scene, tris, t.elapsed().as_secs_f64())
}

/// Best-of-5 CUDA-event kernel time (ms) of rendering `scene` (after a warm-up render).
fn best_kernel_ms(be: &CudaBackend, scene: &RenderSetup, opts: &RenderOptions) -> f32 {
    be.set_timing(true);
    let s = be.upload_scene(scene, 0).unwrap_or_else(|e| panic!("{e}"));
    let spp = scene.sensor.sampler.sample_count;
    let render = || {
        be.render_scene(&s, opts, spp)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    render().to_image().unwrap_or_else(|e| panic!("{e}"));
    (0..5)
        .map(|_| render().kernel_ms().unwrap_or_else(|e| panic!("{e}")))
        .fold(f32::INFINITY, f32::min)
}

/// Ray throughput on a ~1M-triangle mesh: (a) primary rays, `depth` integrator,
/// 1024×1024, 4 spp: exactly one ray per sample; (b) diffuse bounces, `path` max_depth 4
/// under a constant environment (every bounce traces a shadow ray towards the sampled
/// environment direction and a BSDF ray), 1024×1024, 4 spp. The rays of (b) are counted
/// by the kernel itself: `CudaBackend::count_rays` renders once with a variant of the
/// render module that adds every traced ray (closest-hit and shadow) to a device counter;
/// the timed renders use the ordinary module, and the count applies to them because the
/// renders are deterministic (same seed, same paths). Grays/s = rays / kernel time (CUDA
/// events). The CPU-side scene load (PLY parse, normals, BVH build) is timed too.
#[test]
fn benchmark_mesh1m_primary_and_diffuse_rays() {
    let Some(be) = backend_or_skip("benchmark_mesh1m") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("hg-mesh1m-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (scene, tris, load_s) = mesh1m_scene(&dir);
    println!("HG_GPU_STAT bench scene=mesh1m triangles={tris} scene_load_and_bvh_s={load_s:.2}");
    let opts = RenderOptions {
        spp: Some(4),
        seed: 5,
    };
    let pixels = 1024u64 * 1024;

    let mut primary = scene.clone();
    primary.integrator = AnyIntegrator::Depth(Depth);
    let ms = best_kernel_ms(&be, &primary, &opts);
    let rays = pixels * 4;
    let img = be.render(&primary, &opts).unwrap_or_else(|e| panic!("{e}"));
    let hit = img.data.chunks(img.channels).filter(|p| p[0] > 0.0).count();
    println!(
        "HG_GPU_STAT bench scene=mesh1m pass=primary integrator=depth res=1024 spp=4 \
         triangles={tris} rays={rays} kernel_ms={ms:.3} grays_per_s={:.3} hit_fraction={:.3}",
        rays as f64 / (ms as f64 * 1e-3) / 1e9,
        hit as f64 / pixels as f64
    );
    assert!(ms > 0.0 && ms.is_finite());
    assert!(hit as u64 * 10 > pixels, "the mesh should cover the view");

    let mut diffuse = scene;
    diffuse.integrator = AnyIntegrator::Path(integrators::Path {
        max_depth: 4,
        rr_depth: 5,
        hide_emitters: false,
    });
    let (rays, counted) = be
        .count_rays(&diffuse, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    let timed = be.render(&diffuse, &opts).unwrap_or_else(|e| panic!("{e}"));
    // same paths: the variant only adds counters (expected bit-identical; allow rounding)
    let close = counted
        .data
        .iter()
        .zip(&timed.data)
        .filter(|(a, b)| (*a - *b).abs() <= 1e-4 * a.abs().max(1e-3))
        .count();
    assert!(
        close * 1000 >= timed.data.len() * 999,
        "the counting variant renders a different image ({close} of {} values agree)",
        timed.data.len()
    );
    let ms = best_kernel_ms(&be, &diffuse, &opts);
    println!(
        "HG_GPU_STAT bench scene=mesh1m pass=diffuse integrator=path max_depth=4 res=1024 \
         spp=4 triangles={tris} rays={rays} rays_per_sample={:.3} kernel_ms={ms:.3} \
         grays_per_s={:.3}",
        rays as f64 / (pixels * 4) as f64,
        rays as f64 / (ms as f64 * 1e-3) / 1e9
    );
    // more than the camera rays (the mesh covers over half the view and reflects: each
    // hit traces a shadow and a BSDF ray), at most camera + 3 bounces x (shadow + BSDF ray)
    assert!(
        rays >= pixels * 4 * 3 / 2 && rays <= pixels * 4 * 7,
        "rays = {rays}: too few means the paths do not bounce (back-facing triangles?)"
    );
    // the BVH path with several samples per megakernel lane
    let default = be.render_tuning();
    for samples_per_lane in [1, 2, 4] {
        be.set_render_tuning(RenderTuning {
            samples_per_lane,
            ..default
        })
        .unwrap();
        let ms = best_kernel_ms(&be, &diffuse, &opts);
        println!(
            "HG_GPU_STAT tune scene=mesh1m pass=diffuse samples_per_lane={samples_per_lane} \
             kernel_ms={ms:.3} grays_per_s={:.3}",
            rays as f64 / (ms as f64 * 1e-3) / 1e9
        );
    }
    be.set_render_tuning(default).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
