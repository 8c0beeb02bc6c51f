//! Gradients against central finite differences with common random numbers.
//!
//! With the backward pass traced with the image's own seed, the gradient is the exact
//! derivative of that image, and the image is a polynomial of degree at most 2 in a
//! reflectance or radiance when paths have at most two bounces (`max_depth` 3, below
//! Russian roulette's depth): a central difference of two renders is then exact up to
//! rounding, so the criterion is tight (1e-3 relative), and a gradient off by 10% or of
//! the wrong sign fails it (checked for every case). Roughness is not polynomial: its
//! difference step is small and its tolerance 1e-2.

use std::sync::Arc;

use super::*;
use crate::backend::cpu;
use crate::backend::cpu::backward::backward;
use crate::desc::params::TensorValue;
use crate::desc::xml;
use crate::math::{Color, Vec3};
use crate::render::{Progress, RenderOptions};
use crate::scene::LoadedScene;

const SPP: u32 = 4;
const SEED: u64 = 11;

fn load(integrator: &str) -> LoadedScene {
    let xml = format!(
        r#"<scene version="3.0.0">
        {integrator}
        <sensor type="perspective"><float name="fov" value="50"/>
            <transform name="to_world"><lookat origin="0, 1, 4" target="0, 0.3, 0" up="0, 1, 0"/></transform>
            <film type="hdrfilm"><integer name="width" value="14"/><integer name="height" value="11"/></film>
        </sensor>
        <emitter type="constant" id="sky"><rgb name="radiance" value="0.3, 0.4, 0.5"/></emitter>
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

fn opts() -> RenderOptions {
    RenderOptions {
        spp: Some(SPP),
        seed: SEED,
    }
}

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

/// `Σ adjoint · image` for the scene as it is.
fn loss(s: &LoadedScene, adj: &[f32]) -> f64 {
    let img = cpu::render(s.setup(), &opts()).unwrap();
    img.data
        .iter()
        .zip(adj)
        .map(|(a, b)| *a as f64 * *b as f64)
        .sum()
}

fn gradients(s: &LoadedScene, keys: &[&str], adj: &[f32]) -> Vec<Vec<f32>> {
    let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let params = resolve(s, &keys).unwrap();
    backward(s.setup(), &params, adj, &opts(), &Progress::default()).unwrap()
}

/// Sets `key` to `value` through the parameter update path.
fn set(s: &mut LoadedScene, key: &str, value: ParamValue) {
    let mut p = s.traverse();
    p.set(key, value).unwrap();
    s.update(&p.staged()).unwrap();
}

/// The central difference of the loss along component `i` of `key`'s value, step `h`.
fn central(s: &mut LoadedScene, key: &str, i: usize, h: f32, adj: &[f32]) -> f64 {
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
    let up = loss(s, adj);
    set(s, key, nudged(-h));
    let down = loss(s, adj);
    set(s, key, original);
    (up - down) / (2.0 * h as f64)
}

/// Whether `g` matches `fd` within `rel` (of the larger magnitude, floored at `floor`).
fn agrees(g: f64, fd: f64, rel: f64, floor: f64) -> bool {
    (g - fd).abs() <= rel * g.abs().max(fd.abs()).max(floor)
}

fn check(s: &mut LoadedScene, key: &str, components: &[usize], h: f32, rel: f64) {
    let adj = adjoint(s);
    let g = gradients(s, &[key], &adj).remove(0);
    for &i in components {
        let fd = central(s, key, i, h, &adj);
        let gi = g[i] as f64;
        assert!(
            fd.abs() > 1e-3,
            "{key}[{i}]: the test needs a visible effect, fd {fd}"
        );
        assert!(
            agrees(gi, fd, rel, 1e-3),
            "{key}[{i}]: gradient {gi} vs central difference {fd}"
        );
        // the criterion's power: a 10% error or a flipped sign fails it
        assert!(!agrees(1.1 * gi, fd, rel, 1e-3) && !agrees(-gi, fd, rel, 1e-3));
    }
}

#[test]
fn direct_reflectance_and_radiance_gradients_are_exact_derivatives() {
    let mut s = load(r#"<integrator type="direct"/>"#);
    check(
        &mut s,
        "wall.bsdf.reflectance.value",
        &[0, 1, 2],
        0.05,
        1e-3,
    );
    check(&mut s, "lamp.emitter.radiance.value", &[0, 2], 0.2, 1e-3);
    check(&mut s, "sky.radiance.value", &[1], 0.05, 1e-3);
}

#[test]
fn path_gradients_are_exact_derivatives_texels_included() {
    let integrator =
        r#"<integrator type="path"><integer name="max_depth" value="3"/></integrator>"#;
    let mut s = load(integrator);
    check(&mut s, "wall.bsdf.reflectance.value", &[0, 1], 0.05, 1e-3);
    check(&mut s, "lamp.emitter.radiance.value", &[1], 0.2, 1e-3);
    check_largest(&mut s, "floor.bsdf.reflectance.data");
}

/// [`check`] on the three components of `key` (texels) with the largest gradients:
/// those a texel parameter's many bilinear lookups make visible.
fn check_largest(s: &mut LoadedScene, key: &str) {
    let g = gradients(s, &[key], &adjoint(s)).remove(0);
    let mut order: Vec<usize> = (0..g.len()).collect();
    order.sort_by(|&a, &b| g[b].abs().total_cmp(&g[a].abs()));
    check(s, key, &order[..3], 0.05, 1e-3);
}

/// Mean and standard error of `x`.
fn mean_err(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

#[test]
fn roughness_gradients_agree_with_finite_differences_in_expectation() {
    // a roughness given as a texture (roughconductor's alpha) and as a plain float,
    // differentiated through rebuilt records (roughplastic's alpha)
    expectation_check(
        r#"<bsdf type="roughconductor"><float name="alpha" value="0.3"/></bsdf>"#,
        "plate.bsdf.alpha.value",
        0.3,
    );
    expectation_check(
        r#"<bsdf type="roughplastic"><float name="alpha" value="0.3"/>
           <rgb name="diffuse_reflectance" value="0.1, 0.1, 0.1"/></bsdf>"#,
        "plate.bsdf.alpha",
        0.3,
    );
}

/// The gradient of `key` (value `value`) of the plate's `bsdf` against central
/// differences, both averaged over seeds and compared by their standard errors:
/// roughness moves the sampled directions and the MIS weights, which the backward pass
/// holds fixed, so its gradient is the derivative in expectation, not that of one
/// seed's image. The loss rewards a sharp highlight: +1 on pixels brighter than the
/// mean, -1 elsewhere.
fn expectation_check(bsdf: &str, key: &str, value: f64) {
    let xml = format!(
        r#"<scene version="3.0.0">
        <integrator type="path"><integer name="max_depth" value="3"/></integrator>
        <sensor type="perspective"><float name="fov" value="40"/>
            <transform name="to_world"><lookat origin="0, 2, 3" target="0, 0, 0" up="0, 1, 0"/></transform>
            <film type="hdrfilm"><integer name="width" value="16"/><integer name="height" value="12"/>
            <string name="pixel_format" value="rgb"/></film>
        </sensor>
        <shape type="rectangle" id="plate">
            <transform name="to_world"><rotate x="1" angle="-90"/><scale value="3"/></transform>
            {bsdf}
        </shape>
        <shape type="rectangle" id="lamp">
            <transform name="to_world"><rotate x="1" angle="90"/><scale value="0.4"/><translate y="2" z="-3"/></transform>
            <emitter type="area"><rgb name="radiance" value="10, 10, 10"/></emitter>
        </shape>
        </scene>"#
    );
    let mut s = LoadedScene::new(xml::load_string(&xml, &[]).unwrap()).unwrap();
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
    let keys = vec![key.to_string()];
    let params = resolve(&s, &keys).unwrap();
    let (mut g, mut fd) = (Vec::new(), Vec::new());
    for seed in 0..24u64 {
        let o = RenderOptions {
            spp: Some(16),
            seed: 1000 + seed,
        };
        let b = backward(s.setup(), &params, &adj, &o, &Progress::default()).unwrap();
        g.push(b[0][0] as f64);
        let l = |s: &LoadedScene| {
            let img = cpu::render(s.setup(), &o).unwrap();
            img.data
                .iter()
                .zip(&adj)
                .map(|(a, b)| *a as f64 * *b as f64)
                .sum::<f64>()
        };
        let h = 0.02;
        set(&mut s, key, ParamValue::Float(value + h));
        let up = l(&s);
        set(&mut s, key, ParamValue::Float(value - h));
        let down = l(&s);
        set(&mut s, key, ParamValue::Float(value));
        fd.push((up - down) / (2.0 * h));
    }
    let ((mg, eg), (mf, ef)) = (mean_err(&g), mean_err(&fd));
    let z = |k: f64| (k * mg - mf) / (k * k * eg * eg + ef * ef).sqrt();
    let msg = format!("{key}: gradient {mg} ± {eg}, finite differences {mf} ± {ef}");
    eprintln!("{msg}; z {}", z(1.0));
    assert!(z(1.0).abs() < 4.0, "{msg}");
    // power: 10% off or a flipped sign is rejected
    assert!(
        z(1.1).abs() >= 4.0 && z(-1.0).abs() >= 4.0,
        "no power: {msg}, z(1.1) {}",
        z(1.1)
    );
}

#[test]
fn environment_map_texels_and_scale_gradients_are_exact_derivatives() {
    // the envmap lights the scene through both strategies: rays that escape, and
    // next-event estimation, which samples it by its importance
    let path = std::path::Path::new("../tests/scenes/diff_envmap.xml");
    let mut s = LoadedScene::new(xml::load_file(path, &[]).unwrap()).unwrap();
    check(&mut s, "sky.scale", &[0], 0.05, 1e-3);
    check_largest(&mut s, "sky.data");
}

#[test]
fn textured_area_light_gradients_are_exact_derivatives() {
    // a bitmap radiance seen by the camera (its texels at the hit), and one out of view
    // that the floor sees through next-event estimation (at the sampled point)
    let seen = r#"<translate y="1" z="-1"/><scale value="0.8"/>"#;
    let hidden = r#"<rotate x="1" angle="90"/><translate y="3"/>"#;
    for placement in [seen, hidden] {
        let xml = format!(
            r#"<scene version="3.0.0">
            <integrator type="direct"/>
            <sensor type="perspective"><float name="fov" value="60"/>
                <transform name="to_world"><lookat origin="0, 1.5, 3.5" target="0, 0.5, 0" up="0, 1, 0"/></transform>
                <film type="hdrfilm"><integer name="width" value="14"/><integer name="height" value="11"/></film>
            </sensor>
            <shape type="rectangle" id="floor">
                <transform name="to_world"><rotate x="1" angle="-90"/><scale value="2"/></transform>
                <bsdf type="diffuse"><rgb name="reflectance" value="0.6, 0.5, 0.3"/></bsdf>
            </shape>
            <shape type="rectangle" id="lamp">
                <transform name="to_world">{placement}</transform>
                <emitter type="area"><texture type="bitmap" name="radiance">
                    <string name="filename" value="../assets/textures/seed_texture.png"/>
                </texture></emitter>
            </shape>
            </scene>"#
        );
        let mut s = LoadedScene::new(xml::load_string(&xml, &[]).unwrap()).unwrap();
        check_largest(&mut s, "lamp.emitter.radiance.data");
    }
}

#[test]
fn gradients_are_bitwise_the_same_on_any_number_of_threads() {
    let s = load(r#"<integrator type="prb"><integer name="max_depth" value="3"/></integrator>"#);
    let adj = adjoint(&s);
    let keys = ["floor.bsdf.reflectance.data", "wall.bsdf.reflectance.value"];
    let all = gradients(&s, &keys, &adj);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    assert_eq!(all, one.install(|| gradients(&s, &keys, &adj)));
}

#[test]
fn parameters_that_cannot_be_differentiated_are_named_with_the_reason() {
    let s = load(r#"<integrator type="direct"/>"#);
    let err = |keys: &[&str]| {
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        resolve(&s, &keys).unwrap_err().to_string()
    };
    let e = err(&["sensor.x_fov"]);
    assert!(
        e.contains("\"sensor.x_fov\"") && e.contains("sensor parameters"),
        "{e}"
    );
    let e = err(&["wall.to_world"]);
    assert!(
        e.contains("\"wall.to_world\"") && e.contains("projective"),
        "{e}"
    );
    let e = err(&["wall.bsdf.reflectance.value", "wall.bsdf.reflectance.value"]);
    assert!(e.contains("named twice"), "{e}");
    let e = err(&["wall.bsdf.reflectanse.value"]);
    assert!(
        e.contains("not a parameter") && e.contains("wall.bsdf.reflectance.value"),
        "{e}"
    );
}

#[test]
fn the_backward_pass_refuses_other_integrators_and_wrong_adjoints() {
    let s = load(r#"<integrator type="depth"/>"#);
    let params = resolve(&s, &["wall.bsdf.reflectance.value".into()]).unwrap();
    let adj = adjoint(&s);
    let e = backward(s.setup(), &params, &adj, &opts(), &Progress::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("`depth`") && e.contains("`path`"), "{e}");
    let s = load(r#"<integrator type="direct"/>"#);
    let e = backward(s.setup(), &params, &adj[1..], &opts(), &Progress::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("11 x 14 x 4"), "{e}");
    let mut bad = adj.clone();
    bad[4 * 14 + 1] = f32::NAN;
    let e = backward(s.setup(), &params, &bad, &opts(), &Progress::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("row 1, column 0, channel 1"), "{e}");
}

#[test]
fn constant_colours_keep_their_grey_or_colour_shape() {
    let s = load(r#"<integrator type="direct"/>"#);
    let keys: Vec<String> = [
        "ball.bsdf.alpha.value",
        "wall.bsdf.reflectance.value",
        "floor.bsdf.reflectance.data",
    ]
    .iter()
    .map(|k| k.to_string())
    .collect();
    let p = resolve(&s, &keys).unwrap();
    assert_eq!(p[0].shape(), Vec::<usize>::new());
    assert_eq!(p[1].shape(), vec![3]);
    assert_eq!(p[2].shape(), vec![256, 256, 3]);
    let _ = Color::ZERO;
}

fn scene_of(shapes: &str) -> LoadedScene {
    let xml = format!(
        r#"<scene version="3.0.0">
        <integrator type="path"><integer name="max_depth" value="3"/></integrator>
        <sensor type="perspective"><film type="hdrfilm"><integer name="width" value="4"/>
            <integer name="height" value="4"/></film></sensor>
        {shapes}
        </scene>"#
    );
    LoadedScene::new(xml::load_string(&xml, &[]).unwrap()).unwrap()
}

#[test]
fn linear_readers_are_the_bsdfs_whose_eval_is_affine_in_the_texture() {
    let s = load(r#"<integrator type="path"><integer name="max_depth" value="3"/></integrator>"#);
    let keys = [
        "floor.bsdf.reflectance.data",
        "wall.bsdf.reflectance.value",
        "ball.bsdf.alpha.value",
    ];
    let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let p = resolve(&s, &keys).unwrap();
    // diffuse albedo: affine, so the linear derivative is what the exact-derivative
    // tests above check; roughness: not
    assert!(!p[0].bsdfs.is_empty() && p[0].linear_bsdfs == p[0].bsdfs);
    assert!(!p[1].bsdfs.is_empty() && p[1].linear_bsdfs == p[1].bsdfs);
    assert!(!p[2].bsdfs.is_empty() && p[2].linear_bsdfs.is_empty());

    // one texture in two slots (diffuse and specular of a plastic): not affine
    let twice = scene_of(
        r#"<texture type="bitmap" id="t"><string name="filename" value="../assets/textures/seed_texture.png"/></texture>
        <shape type="sphere" id="a"><bsdf type="roughplastic"><ref name="diffuse_reflectance" id="t"/>
            <ref name="specular_reflectance" id="t"/></bsdf></shape>
        <shape type="sphere" id="b"><point name="center" x="3" y="0" z="0"/>
            <bsdf type="roughplastic"><ref name="diffuse_reflectance" id="t"/></bsdf></shape>
        <shape type="sphere" id="c"><point name="center" x="6" y="0" z="0"/>
            <bsdf type="roughplastic"><boolean name="nonlinear" value="true"/><ref name="diffuse_reflectance" id="t"/></bsdf></shape>
        <shape type="sphere" id="d"><point name="center" x="9" y="0" z="0"/>
            <bsdf type="twosided"><bsdf type="diffuse"><ref name="reflectance" id="t"/></bsdf></bsdf></shape>"#,
    );
    let key = twice
        .params()
        .decls()
        .iter()
        .map(|d| d.key.clone())
        .find(|k| k.ends_with(".data"))
        .unwrap();
    let p = resolve(&twice, &[key]).unwrap();
    // read by five BSDFs (the twosided one and the diffuse it wraps); affine for the
    // second plastic and the wrapped diffuse only: twice in the first plastic, nonlinear
    // in the third, and the twosided vertex's BSDF declares nothing (central differences)
    let name = |b: u32| twice.setup().scene.bsdfs[b as usize].entry().tag_name;
    let all: Vec<&str> = p[0].bsdfs.iter().map(|&b| name(b)).collect();
    let linear: Vec<&str> = p[0].linear_bsdfs.iter().map(|&b| name(b)).collect();
    assert_eq!(all.len(), 5, "{all:?}");
    assert!(all.contains(&"TWO_SIDED"), "{all:?}");
    assert_eq!(linear, ["ROUGH_PLASTIC", "DIFFUSE"], "{all:?}");
}

#[test]
fn every_declared_linear_slot_is_affine_channel_by_channel() {
    // the plugins' linear_in claims, checked on eval: at random values v and
    // directions, moving channel c of the value by d moves channel c of eval by
    // d · (eval(1) - eval(0))[c] and no other channel
    let s = scene_of(
        r#"<shape type="sphere"><bsdf type="diffuse"><rgb name="reflectance" value="0.3, 0.5, 0.7"/></bsdf></shape>
        <shape type="sphere"><bsdf type="plastic"><rgb name="diffuse_reflectance" value="0.3, 0.5, 0.7"/>
            <rgb name="specular_reflectance" value="0.9, 0.8, 0.7"/></bsdf></shape>
        <shape type="sphere"><bsdf type="roughplastic"><rgb name="diffuse_reflectance" value="0.3, 0.5, 0.7"/>
            <rgb name="specular_reflectance" value="0.9, 0.8, 0.7"/><float name="alpha" value="0.3"/></bsdf></shape>
        <shape type="sphere"><bsdf type="roughconductor"><rgb name="specular_reflectance" value="0.9, 0.8, 0.7"/>
            <float name="alpha" value="0.2"/></bsdf></shape>"#,
    );
    let setup = s.setup();
    let mut rng = 0x9e3779b9u32;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        (rng >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut checked = 0;
    for (b, bsdf) in setup.scene.bsdfs.iter().enumerate() {
        for t in bsdf.linear_in() {
            for _ in 0..64 {
                let dir = |u: f32, v: f32| {
                    let (z, phi) = (0.05 + 0.95 * u, 2.0 * crate::math::PI * v);
                    let r = (1.0 - z * z).sqrt();
                    Vec3::new(r * phi.cos(), r * phi.sin(), z)
                };
                let (wi, wo) = (dir(next(), next()), dir(next(), next()));
                let v = Color::new(next(), next(), next());
                let mut store = (*setup.scene.textures).clone();
                let mut eval = |value: Color| {
                    store.records[t as usize] = crate::textures::AnyTexture::Constant(
                        crate::textures::Constant::new(value),
                    );
                    let ctx = crate::bsdfs::BsdfCtx {
                        bsdfs: &setup.scene.bsdfs,
                        tex: &store,
                        at: crate::textures::SurfacePoint::at_uv(crate::math::Vec2::new(0.3, 0.6)),
                    };
                    setup.scene.bsdfs[b].eval(&ctx, wi, wo)
                };
                let slope = eval(Color::ONE) - eval(Color::ZERO);
                let base = eval(v);
                let scale = base
                    .abs()
                    .max_element()
                    .max(slope.abs().max_element())
                    .max(1e-6);
                for c in 0..3 {
                    let d = 0.25;
                    let moved = eval(v + Vec3::AXES[c] * d) - base;
                    for q in 0..3 {
                        let want = if q == c { d * slope[c] } else { 0.0 };
                        assert!(
                            (moved[q] - want).abs() <= 1e-4 * scale,
                            "{} (BSDF {b}) is not affine in texture {t}: channel {c} moved channel {q} by {} (want {want})",
                            bsdf.entry().tag_name, moved[q]
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    // diffuse 1, plastic 2, roughplastic 2, roughconductor 1 slot, 64 draws each
    assert_eq!(checked, 6 * 64);
}

#[test]
fn a_path_traced_once_gives_the_gradients_of_two_traces() {
    // max_depth 3 and these keys: each path is traced once, its scatter terms completed
    // at its end (checked against central differences above); the replay of two traces
    // is the same number up to the order of float sums
    let s = load(r#"<integrator type="path"><integer name="max_depth" value="3"/></integrator>"#);
    let adj = adjoint(&s);
    let keys: Vec<String> = [
        "floor.bsdf.reflectance.data",
        "wall.bsdf.reflectance.value",
        "ball.bsdf.alpha.value",
        "lamp.emitter.radiance.value",
    ]
    .iter()
    .map(|k| k.to_string())
    .collect();
    let params = resolve(&s, &keys).unwrap();
    let run = |once| {
        crate::backend::cpu::backward::backward_traced(
            s.setup(),
            &params,
            &adj,
            &opts(),
            &Progress::default(),
            once,
        )
        .unwrap()
    };
    let (once, twice) = (run(true), run(false));
    for ((a, b), key) in once.iter().zip(&twice).zip(&keys) {
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
