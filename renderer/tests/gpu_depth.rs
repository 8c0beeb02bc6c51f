//! GPU checks of the CUDA backend foundation: record layout parity (Rust vs
//! what NVRTC compiled), the `depth` integrator against the CPU backend on every scene
//! in `scenes/`, clear errors for unsupported requests, and the NVRTC/cache timings.
//!
//! Policy: with no driver or no device the tests print `SKIP: ...` and pass; with a
//! device present, any backend failure FAILS. `HELIOGRAPH_REQUIRE_GPU=1` (set by
//! `tests/gpu/run_gpu_checks.sh`) turns a missing GPU into a failure too.
//! Lines starting with `HG_GPU_STAT` are collected by that script for its summary.
//!
//! Build: `cargo test --release --features cuda --test gpu_depth`. Scenes are read from
//! `$HELIOGRAPH_ROOT/scenes` (default: the repository this was built in).
#![cfg(feature = "cuda")]

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use common::harness::{backend_or_skip, repo_root};
use heliograph::backend::cpu;
use heliograph::backend::cuda::CudaBackend;
use heliograph::desc::xml;
use heliograph::flat::LAYOUT;
use heliograph::integrators::{AnyIntegrator, Depth};
use heliograph::io::Image;
use heliograph::render::RenderOptions;
use heliograph::rfilters::AnyFilter;
use heliograph::scene::{build_scene, RenderSetup};
use heliograph::Error;

/// Every scene file of `scenes/`, sorted, then the regression scenes of the thin-lens
/// and orthographic cameras (whose rays the depth kernel makes too).
fn scene_files() -> Vec<PathBuf> {
    let dir = repo_root().join("scenes");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no scenes in {}", dir.display());
    let refs = repo_root().join("tests/references/scenes");
    v.extend(["sensor_thinlens.xml", "sensor_orthographic.xml"].map(|f| refs.join(f)));
    v
}

/// `path` at `res`×`res`, switched to the depth integrator and a one-pixel box filter.
fn depth_scene(path: &Path, res: u32) -> RenderSetup {
    let defines = [("res".to_string(), res.to_string())];
    let desc = xml::load_file(path, &defines).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut scene = build_scene(&desc).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    scene.integrator = AnyIntegrator::Depth(Depth);
    scene.sensor.film.rfilter = AnyFilter::Box { radius: 0.5 };
    scene
}

/// Per-pixel comparison: (pixels differing beyond `rel` relative tolerance, bit-identical
/// pixels, worst (pixel, cpu, gpu)).
fn compare(cpu: &Image, gpu: &Image, rel: f32) -> (usize, usize, Option<(usize, f32, f32)>) {
    let ch = cpu.channels;
    let (mut bad, mut exact, mut worst, mut worst_err) = (0, 0, None, 0.0f32);
    for (i, (a, b)) in cpu.data.chunks(ch).zip(gpu.data.chunks(ch)).enumerate() {
        exact += usize::from(a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()));
        let err = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs() / x.abs().max(1.0))
            .fold(
                0.0f32,
                |m, e| if e.is_nan() { f32::INFINITY } else { m.max(e) },
            );
        if err > rel {
            bad += 1;
        }
        if err > worst_err {
            worst_err = err;
            worst = Some((i, a[0], b[0]));
        }
    }
    (bad, exact, worst)
}

#[test]
fn layout_parity_between_rust_and_nvrtc() {
    let Some(be) = backend_or_skip("layout_parity") else {
        return;
    };
    let table = be
        .layout_table()
        .unwrap_or_else(|e| panic!("layout table: {e}"));
    assert_eq!(table.len(), LAYOUT.len());
    let wrong: Vec<String> = LAYOUT
        .iter()
        .zip(&table)
        .filter(|(e, &g)| e.offset != g as usize)
        .map(|(e, g)| format!("{}.{}: Rust {} vs CUDA {g}", e.record, e.field, e.offset))
        .collect();
    assert!(wrong.is_empty(), "layout differs: {wrong:?}");
    println!("HG_GPU_STAT layout_entries={} all_equal=1", LAYOUT.len());
}

#[test]
fn plugin_record_layout_parity_between_rust_and_nvrtc() {
    let Some(be) = backend_or_skip("plugin_layout_parity") else {
        return;
    };
    let table = be
        .plugin_layout_table()
        .unwrap_or_else(|e| panic!("plugin layout table: {e}"));
    let layout = heliograph::flat::plugin_layout();
    assert_eq!(table.len(), layout.len());
    let wrong: Vec<String> = layout
        .iter()
        .zip(&table)
        .filter(|(e, &g)| e.offset != g as usize)
        .map(|(e, g)| format!("{}.{}: Rust {} vs CUDA {g}", e.record, e.field, e.offset))
        .collect();
    assert!(wrong.is_empty(), "plugin record layout differs: {wrong:?}");
    println!(
        "HG_GPU_STAT plugin_layout_entries={} all_equal=1",
        layout.len()
    );
}

#[test]
fn depth_matches_the_cpu_on_every_scene() {
    let Some(be) = backend_or_skip("depth_vs_cpu") else {
        return;
    };
    let opts = RenderOptions {
        spp: Some(4),
        seed: 7,
    };
    let mut failures = Vec::new();
    for path in scene_files() {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let scene = depth_scene(&path, 64);
        let cpu_img = cpu::render(&scene, &opts).unwrap_or_else(|e| panic!("{name}: CPU: {e}"));
        let gpu_img = be
            .render(&scene, &opts)
            .unwrap_or_else(|e| panic!("{name}: CUDA: {e}"));
        assert_eq!(
            (gpu_img.width, gpu_img.height, gpu_img.channels),
            (cpu_img.width, cpu_img.height, cpu_img.channels),
            "{name}: image shape"
        );
        let hits = cpu_img
            .data
            .chunks(cpu_img.channels)
            .filter(|p| p[0] > 0.0)
            .count();
        let pixels = cpu_img.width * cpu_img.height;
        let (bad, exact, worst) = compare(&cpu_img, &gpu_img, 1e-4);
        println!(
            "HG_GPU_STAT depth scene={name} pixels={pixels} hit_pixels={hits} \
             bit_identical={exact} beyond_tol={bad} worst={worst:?}"
        );
        // silhouette pixels may flip between hit and miss on a last-bit difference
        if bad * 500 > pixels {
            failures.push(format!(
                "{name}: {bad} of {pixels} pixels differ (worst {worst:?})"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn first_render_and_module_cache_times() {
    let t0 = Instant::now();
    let Some(be) = backend_or_skip("first_render") else {
        return;
    };
    let t_open = t0.elapsed().as_secs_f64();
    println!("HG_GPU_STAT device {}", be.info());
    let scene = depth_scene(&scene_files()[0], 64);
    let opts = RenderOptions {
        spp: Some(1),
        seed: 1,
    };
    be.render(&scene, &opts)
        .unwrap_or_else(|e| panic!("first render: {e}"));
    let t_first = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    be.render(&scene, &opts)
        .unwrap_or_else(|e| panic!("second render: {e}"));
    let t_second = t1.elapsed().as_secs_f64();
    for s in be.module_stats() {
        println!(
            "HG_GPU_STAT module={} source={:?} seconds={:.4} file={:?}",
            s.module, s.source, s.seconds, s.file
        );
    }
    println!(
        "HG_GPU_STAT open_seconds={t_open:.4} first_render_seconds={t_first:.4} \
         second_render_seconds={t_second:.4}"
    );
    assert!(!be.module_stats().is_empty(), "the depth module was loaded");
}

#[test]
fn unsupported_requests_are_clear_errors_not_crashes() {
    let Some(be) = backend_or_skip("errors") else {
        return;
    };
    let path = scene_files()[0].clone();
    // the depth kernel splats into one pixel: a wider filter is refused with a message
    let mut wide = depth_scene(&path, 16);
    wide.sensor.film.rfilter = AnyFilter::Tent { radius: 1.0 };
    let e = be.render(&wide, &RenderOptions::default()).unwrap_err();
    assert!(
        matches!(e, Error::Render(_)) && e.to_string().contains("does not support"),
        "{e}"
    );
    let e = CudaBackend::new(4096).unwrap_err();
    assert!(e.to_string().contains("4096"), "{e}");
    let zero = RenderOptions {
        spp: Some(0),
        seed: 0,
    };
    assert!(be.render(&depth_scene(&path, 16), &zero).is_err());
    // a film with more pixels than the kernels index: refused before any allocation
    let mut huge = depth_scene(&path, 16);
    huge.sensor.film.width = 400_000;
    huge.sensor.film.height = 400_000;
    huge.sensor.film.crop_size = [400_000, 400_000];
    let e = be.render(&huge, &ok_opts()).unwrap_err().to_string();
    assert!(e.contains("400000x400000") && e.contains("crop"), "{e}");
    // more memory than the device has: a clear out-of-memory error with the sizes
    let too_big = (be.info().total_mem / 4) * 2;
    let e = be.zeros(too_big).unwrap_err().to_string();
    assert!(e.contains("out of GPU memory") && e.contains("GiB"), "{e}");
    println!("HG_GPU_STAT oom_error {e}");
    assert!(
        be.zeros(usize::MAX / 2).is_err(),
        "a byte count that overflows"
    );
    // the pool gave back what it kept and the next allocation is served
    let z = be.zeros(1 << 20).unwrap();
    assert!(z.to_host().unwrap().iter().all(|v| *v == 0.0));
    // the backend is still usable afterwards, and the asynchronous path fences its film
    let ok = ok_opts();
    let film = be.render_async(&depth_scene(&path, 16), &ok).unwrap();
    assert_ne!(film.ready_event_handle(), 0);
    let img = film.to_image().unwrap();
    assert!(film.is_ready(), "to_image waited for the render");
    assert_eq!(film.shape(), (img.width, img.height, img.channels));
    assert_eq!((img.width, img.height), (16, 16));
}

fn ok_opts() -> RenderOptions {
    RenderOptions {
        spp: Some(1),
        seed: 0,
    }
}

#[test]
fn compile_errors_carry_the_nvrtc_log_and_file_name() {
    let Some(be) = backend_or_skip("compile_errors") else {
        return;
    };
    let bad = "#line 1 \"broken_on_purpose.cu\"\nextern \"C\" __global__ void k(float* o) {\n  o[0] = not_declared;\n}\n";
    let e = be
        .compile_module("broken_on_purpose.cu", bad)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("broken_on_purpose.cu") && e.contains("not_declared"),
        "the error must name the file and quote NVRTC: {e}"
    );
    let ok = "extern \"C\" __global__ void k(float* o) { o[0] = 1.0f; }\n";
    be.compile_module("fine.cu", ok)
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn depth_throughput_first_data_point() {
    let Some(be) = backend_or_skip("depth_throughput") else {
        return;
    };
    // primary rays through the BVH: cbox-like scene at 512x512, 32 spp
    let path = scene_files()
        .into_iter()
        .find(|p| p.ends_with("cbox.xml"))
        .unwrap_or_else(|| scene_files()[0].clone());
    let scene = depth_scene(&path, 512);
    let opts = RenderOptions {
        spp: Some(32),
        seed: 3,
    };
    let mut best = f32::INFINITY;
    let mut best_wall = f64::INFINITY;
    be.set_timing(true);
    let s = be.upload_scene(&scene, 0).unwrap_or_else(|e| panic!("{e}"));
    let spp = scene.sensor.sampler.sample_count;
    for _ in 0..4 {
        let t = Instant::now();
        let film = be
            .render_scene(&s, &opts, spp)
            .unwrap_or_else(|e| panic!("{e}"));
        film.to_image().unwrap_or_else(|e| panic!("{e}"));
        best_wall = best_wall.min(t.elapsed().as_secs_f64());
        best = best.min(film.kernel_ms().unwrap_or_else(|e| panic!("{e}")));
    }
    let rays = 512.0 * 512.0 * 32.0;
    println!(
        "HG_GPU_STAT throughput scene={} res=512 spp=32 kernel_ms={best:.3} \
         grays_per_s={:.3} wall_ms={:.3}",
        path.file_stem()
            .map(|s| s.to_string_lossy())
            .unwrap_or_default(),
        rays / (best as f64 * 1e-3) / 1e9,
        best_wall * 1e3
    );
    assert!(best > 0.0 && best.is_finite());
}
