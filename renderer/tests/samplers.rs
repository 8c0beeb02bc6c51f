//! Renders with every sampler agree with `independent` renders (CPU backend), and a
//! render's sample count is the sampler's effective one.
//!
//! Criterion: the Cornell box (`path`) and the seed scene (`direct`) at 64×64, 16 spp,
//! rendered with 8 independent seeds per sampler; per 16×16 block and channel, Welch's
//! t-test between the block means of the sampler's seeds and the independent sampler's,
//! Bonferroni-corrected over blocks and channels, must not reject at 1e-3; the same test
//! must reject the independent images scaled by 1.05 (so the test can fail).

mod common;

use heliograph::backend::cpu;
use heliograph::desc::xml;
use heliograph::render::RenderOptions;
use heliograph::samplers::{Sampler, KNOWN};
use heliograph::scene::{build_scene, RenderSetup};

use common::harness::repo_root;
use common::{block_means, worst_p};

fn load(name: &str, res: u32) -> RenderSetup {
    let path = repo_root().join("scenes").join(name);
    let desc = xml::load_file(&path, &[("res".into(), res.to_string())]).unwrap();
    build_scene(&desc).unwrap()
}

/// Block means of 8 renders of `scene` under `name` (seeds 1..=8).
fn blocks(scene: &RenderSetup, name: &str, scale: f32) -> Vec<Vec<Vec<f64>>> {
    let mut scene = scene.clone();
    scene.sensor.sampler = Sampler {
        sample_count: 16,
        ..Sampler::by_name(name).unwrap()
    };
    let [w, h] = scene.sensor.film.crop_size;
    let ch = if scene.sensor.film.alpha { 4 } else { 3 };
    (1..=8u64)
        .map(|seed| {
            let img = cpu::render(&scene, &RenderOptions { spp: None, seed }).unwrap();
            let data: Vec<f32> = img.data.iter().map(|v| v * scale).collect();
            block_means(&data, w as usize, h as usize, ch)
        })
        .collect()
}

#[test]
fn every_sampler_renders_what_independent_renders() {
    let alpha = 1e-3;
    for file in ["cbox.xml", "seed.xml"] {
        let scene = load(file, 64);
        let reference = blocks(&scene, "independent", 1.0);
        let biased = blocks(&scene, "independent", 1.05);
        for name in KNOWN.iter().filter(|n| **n != "independent") {
            let b = blocks(&scene, name, 1.0);
            let (p, blk, c) = worst_p(&reference, &b);
            let (pb, _, _) = worst_p(&b, &biased);
            println!("{file} {name}: worst corrected p = {p:.3e} (block {blk} channel {c}); 1.05x: {pb:.3e}");
            assert!(p > alpha, "{file}: {name} differs from independent");
            assert!(pb < alpha, "{file}: the test cannot see a 5% bias ({name})");
        }
    }
}

#[test]
fn the_render_uses_the_effective_sample_count() {
    // 10 samples with stratified are 16: an spp override rounds the same way, and the
    // image is the one rendered with 16
    let mut scene = load("seed.xml", 16);
    scene.sensor.sampler = Sampler {
        sample_count: 16,
        ..Sampler::by_name("stratified").unwrap()
    };
    let opts = |spp| RenderOptions { spp, seed: 3 };
    assert_eq!(
        opts(Some(10)).resolve_spp(&scene.sensor.sampler).unwrap(),
        16
    );
    let a = cpu::render(&scene, &opts(Some(10))).unwrap();
    let b = cpu::render(&scene, &opts(None)).unwrap();
    assert_eq!(a.data, b.data);
    scene.sensor.sampler = Sampler::by_name("ldsampler").unwrap();
    assert_eq!(opts(Some(1)).resolve_spp(&scene.sensor.sampler).unwrap(), 4);
    let e = opts(Some(0))
        .resolve_spp(&scene.sensor.sampler)
        .unwrap_err()
        .to_string();
    assert!(e.contains("spp") && e.contains("at least 1"), "{e}");
}

#[test]
fn images_do_not_depend_on_the_thread_count() {
    let mut scene = load("cbox.xml", 32);
    for name in KNOWN {
        scene.sensor.sampler = Sampler {
            sample_count: 16,
            ..Sampler::by_name(name).unwrap()
        };
        let opts = RenderOptions { spp: None, seed: 5 };
        let render = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| cpu::render(&scene, &opts).unwrap())
        };
        let (a, b) = (render(1), render(3));
        assert!(
            a.data
                .iter()
                .zip(&b.data)
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "{name}: 1 and 3 threads give different images"
        );
    }
}
