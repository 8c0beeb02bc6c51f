//! The CUDA backward pass (`renderer/kernels/backward.cuh`) compiled as C++ and run on
//! the CPU (`tests/gpu/host_backward.cpp`), against central finite differences of the
//! same kernels' images (`tests/gpu/host_render.cpp`) with common random numbers.
//!
//! With the backward pass traced with the image's own seed, its gradient is the exact
//! derivative of that image; with `max_depth` 3 the image is a polynomial of degree at
//! most 2 in a reflectance or a radiance (and linear in an environment map's texels and
//! scale), so a central difference is exact up to rounding and the criterion is tight
//! (1e-3 relative); a gradient off by 10% or of the wrong sign fails it (checked for
//! every component). The film is the kernels' own (filter importance sampling), so this
//! also checks that each sample's adjoint is the pixel's times its weight over the
//! pixel's weight sum.
//!
//! Skips with a message when no C++ compiler (`$CXX`, else `c++`) is available.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use heliograph::backend::cpu;
use heliograph::backend::cpu::backward::backward;
use heliograph::backend::cuda::features::Features;
use heliograph::backend::cuda::kernels;
use heliograph::desc::params::{ParamValue, TensorValue};
use heliograph::desc::xml;
use heliograph::diff::{flat, resolve};
use heliograph::flat::FlatScene;
use heliograph::render::{Progress, RenderOptions};
use heliograph::scene::LoadedScene;

use common::harness::{build_host_with, read_f32s};

const SPP: u32 = 4;
const SEED: u64 = 11;

/// A folder for one test's files and its host-compiled drivers.
struct Host {
    dir: PathBuf,
}

impl Host {
    fn new(name: &str) -> Host {
        let dir =
            std::env::temp_dir().join(format!("hg-host-backward-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Host { dir }
    }

    /// The driver `driver` built for `flat`'s plugin set (BVH traversal), with the
    /// backward pass's probe when `backward`; None without a C++ compiler.
    fn exe(&self, flat: &FlatScene, driver: &str, backward: bool) -> Option<PathBuf> {
        let f = Features::with_brute_force_max(flat, 0);
        let mut prelude = f.prelude(false);
        if backward {
            prelude.push_str("#define HG_BACKWARD 1\n");
        }
        let name = format!("{}-{}", driver.trim_end_matches(".cpp"), f.tag());
        let exe = self.dir.join(format!("{name}.d")).join(&name);
        if exe.exists() {
            return Some(exe);
        }
        build_host_with(&self.dir, &prelude, kernels::RENDER_MODULE, driver, &name)
    }

    fn write_scene(&self, s: &LoadedScene) -> FlatScene {
        let flat = FlatScene::from_scene(s.setup()).unwrap();
        for (name, bytes) in flat.render_arrays() {
            std::fs::write(self.dir.join(format!("{name}.bin")), bytes).unwrap();
        }
        flat
    }

    /// Σ adjoint · image of the host kernels' render.
    fn loss(&self, s: &LoadedScene, adj: &[f32]) -> Option<f64> {
        let flat = self.write_scene(s);
        let exe = self.exe(&flat, "host_render.cpp", false)?;
        run(&exe, &self.dir, &[SEED, SPP as u64, 32, 2]);
        let img = read_f32s(&self.dir.join("out.bin"));
        assert_eq!(img.len(), adj.len());
        Some(
            img.iter()
                .zip(adj)
                .map(|(a, b)| *a as f64 * *b as f64)
                .sum(),
        )
    }

    /// The host kernels' gradients of Σ adjoint · image for `keys`.
    fn gradients(&self, s: &LoadedScene, keys: &[&str], adj: &[f32]) -> Option<Vec<Vec<f32>>> {
        self.gradients_with(s, keys, adj, SEED, SPP)
    }

    /// [`Self::gradients`] with the backward pass's own seed and sample count.
    fn gradients_with(
        &self,
        s: &LoadedScene,
        keys: &[&str],
        adj: &[f32],
        seed: u64,
        spp: u32,
    ) -> Option<Vec<Vec<f32>>> {
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        let params = resolve(s, &keys).unwrap();
        let fp = flat::flatten(&params).unwrap();
        let flat_scene = self.write_scene(s);
        let exe = self.exe(&flat_scene, "host_backward.cpp", true)?;
        std::fs::write(self.dir.join("params.bin"), flat::bytes(&fp.params)).unwrap();
        let words = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|m| m.to_le_bytes()).collect() };
        let masks = [&fp.bsdf_masks[..], &fp.bsdf_linear[..]].concat();
        std::fs::write(self.dir.join("masks.bin"), words(&masks)).unwrap();
        std::fs::write(self.dir.join("records.bin"), words(&fp.records)).unwrap();
        let adj_bytes: Vec<u8> = adj.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(self.dir.join("adjoint.bin"), adj_bytes).unwrap();
        let total: usize = params.iter().map(|p| p.len()).sum();
        run(
            &exe,
            &self.dir,
            &[seed, spp as u64, 32, 2, total as u64, fp.envmap as u64],
        );
        let all = read_f32s(&self.dir.join("grads.bin"));
        Some(
            params
                .iter()
                .zip(&fp.params)
                .map(|(p, f)| all[f.grad as usize..f.grad as usize + p.len()].to_vec())
                .collect(),
        )
    }
}

fn run(exe: &Path, dir: &Path, args: &[u64]) {
    let st = Command::new(exe)
        .arg(dir)
        .args(args.iter().map(|v| v.to_string()))
        .status()
        .unwrap();
    assert!(st.success(), "{} failed", exe.display());
}

fn load(integrator: &str, sky: &str) -> LoadedScene {
    let xml = format!(
        r#"<scene version="3.0.0">
        {integrator}
        <sensor type="perspective"><float name="fov" value="50"/>
            <transform name="to_world"><lookat origin="0, 1, 4" target="0, 0.3, 0" up="0, 1, 0"/></transform>
            <film type="hdrfilm"><integer name="width" value="14"/><integer name="height" value="11"/></film>
        </sensor>
        {sky}
        <shape type="rectangle" id="floor">
            <transform name="to_world"><rotate x="1" angle="-90"/><scale value="3"/></transform>
            <bsdf type="diffuse"><texture type="bitmap" name="reflectance">
                <string name="filename" value="../assets/textures/seed_texture.png"/>
            </texture></bsdf>
        </shape>
        <shape type="rectangle" id="wall">
            <transform name="to_world"><translate z="-1.5"/><scale value="3"/></transform>
            <bsdf type="diffuse"><rgb name="reflectance" value="0.6, 0.5, 0.3"/></bsdf>
        </shape>
        <shape type="sphere" id="ball">
            <point name="center" x="0.4" y="0.6" z="0"/><float name="radius" value="0.5"/>
            <bsdf type="roughconductor" id="metal"><float name="alpha" value="0.3"/></bsdf>
        </shape>
        <shape type="rectangle" id="lamp">
            <transform name="to_world"><rotate x="1" angle="90"/><translate y="2.5"/></transform>
            <emitter type="area" id="light"><rgb name="radiance" value="4, 3.5, 3"/></emitter>
        </shape>
        </scene>"#
    );
    LoadedScene::new(xml::load_string(&xml, &[]).unwrap()).unwrap()
}

const CONSTANT_SKY: &str =
    r#"<emitter type="constant" id="sky"><rgb name="radiance" value="0.3, 0.4, 0.5"/></emitter>"#;

/// A fixed adjoint image with values in [-1, 1).
fn adjoint(s: &LoadedScene) -> Vec<f32> {
    let [w, h] = s.setup().sensor.film.crop_size;
    let n = (w * h) as usize * s.setup().sensor.film.channels();
    let mut x = 0x2545f491u32;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

fn set(s: &mut LoadedScene, key: &str, value: ParamValue) {
    let mut p = s.traverse();
    p.set(key, value).unwrap();
    s.update(&p.staged()).unwrap();
}

/// The central difference of the host kernels' loss along component `i` of `key`.
fn central(host: &Host, s: &mut LoadedScene, key: &str, i: usize, h: f32, adj: &[f32]) -> f64 {
    let original = s.traverse().get(key).unwrap().clone();
    let nudged = |d: f32| match &original {
        ParamValue::Float(x) => ParamValue::Float(x + d as f64),
        ParamValue::Color(c) => {
            let mut c = *c;
            c[i] += d;
            ParamValue::Color(c)
        }
        ParamValue::Tensor(t) => {
            let mut px = (**t.host_data().unwrap()).clone();
            px.data[i] += d;
            ParamValue::Tensor(TensorValue::host(Arc::new(px)))
        }
        other => panic!("{key}: {other:?}"),
    };
    set(s, key, nudged(h));
    let up = host.loss(s, adj).unwrap();
    set(s, key, nudged(-h));
    let down = host.loss(s, adj).unwrap();
    set(s, key, original);
    (up - down) / (2.0 * h as f64)
}

fn agrees(g: f64, fd: f64, rel: f64) -> bool {
    (g - fd).abs() <= rel * g.abs().max(fd.abs()).max(1e-3)
}

/// Checks `key`'s gradient against central differences on `components` (None: the
/// three with the largest gradients, for texels). False when there is no C++ compiler.
fn check(
    host: &Host,
    s: &mut LoadedScene,
    key: &str,
    components: Option<&[usize]>,
    h: f32,
) -> bool {
    check_within(host, s, key, components, h, 1e-3)
}

/// [`check`] with relative tolerance `rel`.
fn check_within(
    host: &Host,
    s: &mut LoadedScene,
    key: &str,
    components: Option<&[usize]>,
    h: f32,
    rel: f64,
) -> bool {
    let adj = adjoint(s);
    let Some(mut g) = host.gradients(s, &[key], &adj) else {
        return false;
    };
    let g = g.remove(0);
    assert!(
        g.iter().all(|v| v.is_finite()),
        "{key}: non-finite gradient"
    );
    let largest: Vec<usize> = {
        let mut order: Vec<usize> = (0..g.len()).collect();
        order.sort_by(|&a, &b| g[b].abs().total_cmp(&g[a].abs()));
        order.truncate(3);
        order
    };
    for &i in components.unwrap_or(&largest) {
        let fd = central(host, s, key, i, h, &adj);
        let gi = g[i] as f64;
        println!("{key}[{i}]: gradient {gi:.6} vs central difference {fd:.6}");
        assert!(
            fd.abs() > 1e-3,
            "{key}[{i}]: the test needs a visible effect, fd {fd}"
        );
        assert!(
            agrees(gi, fd, rel),
            "{key}[{i}]: gradient {gi} vs central difference {fd}"
        );
        assert!(!agrees(1.1 * gi, fd, rel) && !agrees(-gi, fd, rel));
    }
    true
}

#[test]
fn direct_gradients_of_the_kernels_are_exact_derivatives_of_their_image() {
    let host = Host::new("direct");
    let mut s = load(r#"<integrator type="direct"/>"#, CONSTANT_SKY);
    if !check(
        &host,
        &mut s,
        "wall.bsdf.reflectance.value",
        Some(&[0, 1, 2]),
        0.05,
    ) {
        return;
    }
    check(
        &host,
        &mut s,
        "lamp.emitter.radiance.value",
        Some(&[0, 2]),
        0.2,
    );
    check(&host, &mut s, "sky.radiance.value", Some(&[1]), 0.05);
    check(&host, &mut s, "floor.bsdf.reflectance.data", None, 0.05);
}

#[test]
fn path_gradients_of_the_kernels_are_exact_derivatives_of_their_image() {
    let host = Host::new("path");
    let integrator =
        r#"<integrator type="path"><integer name="max_depth" value="3"/></integrator>"#;
    let mut s = load(integrator, CONSTANT_SKY);
    if !check(
        &host,
        &mut s,
        "wall.bsdf.reflectance.value",
        Some(&[0, 1]),
        0.05,
    ) {
        return;
    }
    check(
        &host,
        &mut s,
        "lamp.emitter.radiance.value",
        Some(&[1]),
        0.2,
    );
    check(&host, &mut s, "floor.bsdf.reflectance.data", None, 0.05);
}

#[test]
fn path_traced_once_or_twice_gives_the_same_gradients() {
    // one key: the kernel traces each path once and completes its scatter terms at the
    // end (checked against central differences above); three keys at max_depth 3 are
    // more terms than a thread defers, so it traces twice (the replay). Both are the
    // exact derivative of one image: equal up to the order of float sums.
    let host = Host::new("path-passes");
    let integrator =
        r#"<integrator type="path"><integer name="max_depth" value="3"/></integrator>"#;
    let s = load(integrator, CONSTANT_SKY);
    let keys = [
        "wall.bsdf.reflectance.value",
        "lamp.emitter.radiance.value",
        "floor.bsdf.reflectance.data",
    ];
    let adj = adjoint(&s);
    let Some(twice) = host.gradients(&s, &keys, &adj) else {
        return;
    };
    for (k, key) in keys.iter().enumerate() {
        let once = host.gradients(&s, &[key], &adj).expect("compiled above");
        let (a, b) = (&once[0], &twice[k]);
        let scale = b.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(scale > 0.0, "{key}: no gradient");
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-4 * scale,
                "{key}[{i}]: traced once {x}, twice {y}"
            );
        }
    }
}

#[test]
fn envmap_gradients_of_the_kernels_are_exact_derivatives_of_their_image() {
    // the envmap lights the scene through both strategies: rays that escape, and
    // next-event estimation, which samples it by its importance. A texel also moves that
    // sampling density (and so the MIS weights), which the gradient holds fixed (as
    // Mitsuba's prb) and the finite difference does not: 5e-3 for texels (measured
    // 1.5e-3 at worst), still far inside the 10% that must fail.
    let host = Host::new("envmap");
    let path = std::path::Path::new("../tests/scenes/diff_envmap.xml");
    let mut s = LoadedScene::new(xml::load_file(path, &[]).unwrap()).unwrap();
    if !check(&host, &mut s, "sky.scale", Some(&[0]), 0.05) {
        return;
    }
    check_within(&host, &mut s, "sky.data", None, 0.05, 5e-3);
}

/// Mean and standard error of `x`.
fn mean_err(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

#[test]
fn a_bsdf_float_gradient_agrees_with_the_cpu_backward_pass_in_expectation() {
    // roughplastic's alpha, a plain float: differentiated through its records rebuilt at
    // alpha ± step, which the kernels' probe swaps in. It moves the sampled directions
    // and the MIS weights, which the backward pass holds fixed, so the kernels' gradient
    // is compared with the CPU's (itself checked against finite differences in
    // expectation by diff::tests) over independent seeds. The loss rewards a sharp
    // highlight: +1 on pixels brighter than the mean, -1 elsewhere.
    let xml = r#"<scene version="3.0.0">
        <integrator type="path"><integer name="max_depth" value="3"/></integrator>
        <sensor type="perspective"><float name="fov" value="40"/>
            <transform name="to_world"><lookat origin="0, 2, 3" target="0, 0, 0" up="0, 1, 0"/></transform>
            <film type="hdrfilm"><integer name="width" value="16"/><integer name="height" value="12"/>
            <string name="pixel_format" value="rgb"/></film>
        </sensor>
        <shape type="rectangle" id="plate">
            <transform name="to_world"><rotate x="1" angle="-90"/><scale value="3"/></transform>
            <bsdf type="roughplastic"><float name="alpha" value="0.3"/>
               <rgb name="diffuse_reflectance" value="0.1, 0.1, 0.1"/></bsdf>
        </shape>
        <shape type="rectangle" id="lamp">
            <transform name="to_world"><rotate x="1" angle="90"/><scale value="0.4"/><translate y="2" z="-3"/></transform>
            <emitter type="area"><rgb name="radiance" value="10, 10, 10"/></emitter>
        </shape>
        </scene>"#;
    let host = Host::new("float");
    let s = LoadedScene::new(xml::load_string(xml, &[]).unwrap()).unwrap();
    let key = "plate.bsdf.alpha";
    let reference = cpu::render(
        s.setup(),
        &RenderOptions {
            spp: Some(64),
            seed: 1,
        },
    )
    .unwrap();
    let mean = reference.data.iter().sum::<f32>() / reference.data.len() as f32;
    let adj: Vec<f32> = reference
        .data
        .iter()
        .map(|&v| if v > mean { 1.0 } else { -1.0 })
        .collect();
    let params = resolve(&s, &[key.to_string()]).unwrap();
    let (mut gpu, mut cpu_g) = (Vec::new(), Vec::new());
    for seed in 0..24u64 {
        let Some(g) = host.gradients_with(&s, &[key], &adj, 100 + seed, 16) else {
            return;
        };
        gpu.push(g[0][0] as f64);
        let opts = RenderOptions {
            spp: Some(16),
            seed: 200 + seed,
        };
        let c = backward(s.setup(), &params, &adj, &opts, &Progress::default()).unwrap();
        cpu_g.push(c[0][0] as f64);
    }
    let ((mg, eg), (mc, ec)) = (mean_err(&gpu), mean_err(&cpu_g));
    let z = |k: f64| (k * mg - mc) / ((k * eg).powi(2) + ec * ec).sqrt();
    println!(
        "{key}: kernels {mg:.4} ± {eg:.4}, CPU {mc:.4} ± {ec:.4}, z {:.2}",
        z(1.0)
    );
    assert!(
        mc.abs() > 10.0 * ec,
        "the test needs a visible gradient: {mc} ± {ec}"
    );
    assert!(z(1.0).abs() < 4.0, "z = {}", z(1.0));
    assert!(
        z(1.1).abs() > 4.0 && z(-1.0).abs() > 4.0,
        "no power: z(1.1) = {}",
        z(1.1)
    );
}
