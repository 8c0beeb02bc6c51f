use super::*;
use crate::backend::cpu;
use crate::desc::props::Value;
use crate::desc::xml::load_string;
use crate::emitters::test_util::{build_one, ectx};
use crate::math::warp::{square_to_uniform_sphere, UNIFORM_SPHERE_PDF};
use crate::math::{Pcg32, Transform, PI};
use crate::scene::{build_scene, RenderSetup};
use crate::sensors::camera::Camera;

/// A sphere on a floor under a rectangular area light, a point light and a spot light,
/// all diffuse, seen by a pinhole camera through a one-pixel box filter.
fn scene_xml(integrator: &str, max_depth: i32) -> String {
    scene_with(integrator, max_depth, POINT_LIGHTS)
}

/// The point and spot lights of [`scene_xml`].
const POINT_LIGHTS: &str = r#"<emitter type="point"><point name="position" x="1.5" y="1.5" z="1.5"/>
    <rgb name="intensity" value="2"/></emitter>
  <emitter type="spot"><rgb name="intensity" value="8"/><float name="cutoff_angle" value="25"/>
    <transform name="to_world"><lookat origin="1, 3, -1" target="0.6, 0, 0.5" up="0, 0, 1"/></transform></emitter>"#;

/// Infinitely distant emitters: a sky seen in the background and a sun.
const DISTANT_LIGHTS: &str = r#"<emitter type="constant"><rgb name="radiance" value="0.3, 0.4, 0.5"/></emitter>
  <emitter type="directional"><vector name="direction" x="0.4" y="-1" z="-0.3"/>
    <rgb name="irradiance" value="2"/></emitter>"#;

fn scene_with(integrator: &str, max_depth: i32, lights: &str) -> String {
    format!(
        r#"<scene version="3.0.0">
  <integrator type="{integrator}"><integer name="max_depth" value="{max_depth}"/></integrator>
  <sensor type="perspective"><float name="fov" value="45"/>
    <transform name="to_world"><lookat origin="0, 2, 6" target="0, 0.6, 0" up="0, 1, 0"/></transform>
    <film type="hdrfilm"><integer name="width" value="32"/><integer name="height" value="24"/>
      <string name="pixel_format" value="rgb"/><rfilter type="box"/></film></sensor>
  <bsdf type="diffuse" id="grey"><rgb name="reflectance" value="0.7, 0.6, 0.5"/></bsdf>
  <shape type="rectangle"><ref id="grey"/>
    <transform name="to_world"><scale value="3"/><rotate x="1" angle="-90"/></transform></shape>
  <shape type="sphere"><point name="center" x="0" y="0.6" z="0"/><float name="radius" value="0.6"/>
    <bsdf type="diffuse"><rgb name="reflectance" value="0.3, 0.5, 0.8"/></bsdf></shape>
  <shape type="rectangle"><bsdf type="diffuse"/>
    <transform name="to_world"><scale value="0.6"/><rotate x="1" angle="90"/>
      <translate x="-0.8" y="2.5" z="0.5"/></transform>
    <emitter type="area"><rgb name="radiance" value="6, 5, 4"/></emitter></shape>
  {lights}
</scene>"#
    )
}

fn build(xml: &str) -> Result<RenderSetup> {
    build_scene(&load_string(xml, &[])?)
}

fn render(scene: &RenderSetup, spp: u32, seed: u64) -> Vec<f32> {
    let opts = RenderOptions {
        spp: Some(spp),
        seed,
    };
    cpu::render(scene, &opts).unwrap().data
}

/// Per 8×8 block and channel of a 32×24 rgb image: the mean over `renders` renders of
/// the block mean, and the variance of that mean (from the spread between renders).
fn block_stats(scene: &RenderSetup, spp: u32, renders: u64) -> Vec<(f64, f64)> {
    let images: Vec<Vec<f32>> = (0..renders).map(|s| render(scene, spp, 100 + s)).collect();
    let mut out = vec![];
    for by in 0..3 {
        for bx in 0..4 {
            for c in 0..3 {
                let means: Vec<f64> = images
                    .iter()
                    .map(|img| {
                        let mut sum = 0.0f64;
                        for y in by * 8..by * 8 + 8 {
                            for x in bx * 8..bx * 8 + 8 {
                                sum += img[(y * 32 + x) * 3 + c] as f64;
                            }
                        }
                        sum / 64.0
                    })
                    .collect();
                let k = means.len() as f64;
                let m = means.iter().sum::<f64>() / k;
                let var = means.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (k - 1.0);
                out.push((m, var / k));
            }
        }
    }
    out
}

/// The largest z-score between two sets of block statistics.
fn max_z(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    a.iter()
        .zip(b)
        .map(|((ma, va), (mb, vb))| (ma - mb).abs() / (va + vb).max(1e-12).sqrt())
        .fold(0.0, f64::max)
}

#[test]
fn ptracer_matches_path_per_block_and_tells_depths_apart() {
    // 8 independent renders each: the block means' spread gives their standard errors;
    // with 36 block-channel pairs and ~14 degrees of freedom, z < 5 everywhere holds with
    // probability > 99.5% when the two agree in expectation
    let path = block_stats(&build(&scene_xml("path", 3)).unwrap(), 32, 8);
    let pt = block_stats(&build(&scene_xml("ptracer", 3)).unwrap(), 32, 8);
    let z = max_z(&pt, &path);
    assert!(z < 5.0, "ptracer vs path: max z = {z:.2}");
    let (sum_pt, sum_path): (f64, f64) = pt
        .iter()
        .zip(&path)
        .fold((0.0, 0.0), |(a, b), (p, q)| (a + p.0, b + q.0));
    assert!(
        (sum_pt / sum_path - 1.0).abs() < 0.02,
        "{sum_pt} vs {sum_path}"
    );
    // the comparison has the power to see one bounce less (z > 6 by chance: p < 1e-5)
    let pt2 = block_stats(&build(&scene_xml("ptracer", 2)).unwrap(), 32, 8);
    let z2 = max_z(&pt2, &path);
    eprintln!("ptracer vs path: max z = {z:.2}; max_depth 2 vs path 3: max z = {z2:.2}");
    assert!(z2 > 6.0, "max_depth 2 vs 3 not told apart: z = {z2:.2}");
}

#[test]
fn ptracer_matches_path_under_distant_emitters() {
    // the sky is seen directly (top blocks) and lights the scene with the sun
    let xml = |i: &str| scene_with(i, 3, DISTANT_LIGHTS);
    let path = block_stats(&build(&xml("path")).unwrap(), 32, 8);
    let pt = block_stats(&build(&xml("ptracer")).unwrap(), 32, 8);
    let z = max_z(&pt, &path);
    eprintln!("distant emitters, ptracer vs path: max z = {z:.2}");
    assert!(z < 5.0, "ptracer vs path: max z = {z:.2}");
    assert!(path[..12].iter().all(|b| b.0 > 0.1), "the sky is in view");
}

#[test]
fn ptracer_matches_path_under_an_importance_sampled_envmap() {
    // a dim sky with a bright patch: light paths start where the map is bright
    let dir = crate::textures::image_file::tests::scratch("ptracer_envmap");
    let path = dir.join("sky.exr");
    let data: Vec<f32> = (0..16 * 8)
        .flat_map(|i| {
            let (x, y) = (i % 16, i / 16);
            let v = if (5..8).contains(&x) && (1..3).contains(&y) {
                20.0
            } else {
                0.2
            };
            [v, 0.8 * v, 0.6 * v]
        })
        .collect();
    let img = image::Rgb32FImage::from_raw(16, 8, data).unwrap();
    image::DynamicImage::ImageRgb32F(img).save(&path).unwrap();
    let sky = format!(
        r#"<emitter type="envmap"><string name="filename" value="{}"/></emitter>"#,
        path.display()
    );
    let xml = |i: &str| scene_with(i, 3, &sky);
    let path = block_stats(&build(&xml("path")).unwrap(), 32, 8);
    let pt = block_stats(&build(&xml("ptracer")).unwrap(), 32, 8);
    let z = max_z(&pt, &path);
    eprintln!("envmap, ptracer vs path: max z = {z:.2}");
    assert!(z < 5.0, "ptracer vs path: max z = {z:.2}");
    assert!(
        path.iter().all(|b| b.0 > 0.0),
        "the sky is in view and lights the scene"
    );
}

#[test]
fn ptracer_matches_path_through_rough_glass() {
    // refraction carries importance without radiance's 1/η²: without that, the scene
    // seen through the pane is 2.25 times too bright (max z ≈ 11 at these sample counts;
    // rough glass seen directly is noisy for light tracing, hence its 512 spp)
    // a rough glass sphere (light crosses it twice: the scalings cancel) and a single
    // rough glass pane between the camera and the left of the scene (they do not)
    let pane = r#"<shape type="rectangle"><bsdf type="roughdielectric"><float name="alpha" value="0.3"/></bsdf>
        <transform name="to_world"><scale value="0.7"/><translate x="-0.9" y="1.0" z="3"/></transform></shape>"#;
    let xml = |i: &str| {
        scene_xml(i, 6)
            .replace(
                r#"<bsdf type="diffuse"><rgb name="reflectance" value="0.3, 0.5, 0.8"/></bsdf>"#,
                r#"<bsdf type="roughdielectric"><float name="alpha" value="0.4"/></bsdf>"#,
            )
            .replace("</scene>", &format!("{pane}</scene>"))
    };
    assert!(xml("path").contains("roughdielectric"));
    let path = block_stats(&build(&xml("path")).unwrap(), 64, 8);
    let pt = block_stats(&build(&xml("ptracer")).unwrap(), 512, 8);
    let z = max_z(&pt, &path);
    eprintln!("rough glass, ptracer vs path: max z = {z:.2}");
    assert!(z < 5.0, "ptracer vs path: max z = {z:.2}");
}

#[test]
fn image_is_the_same_whatever_the_thread_count() {
    let scene = build(&scene_xml("ptracer", -1)).unwrap();
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| render(&scene, 3, 7))
    };
    let one = on(1);
    assert!(one.iter().any(|&v| v > 0.0));
    for threads in [2, 3] {
        assert!(one == on(threads), "{threads} threads differ from 1");
    }
    assert!(one != render(&scene, 3, 8), "the seed changes the image");
}

#[test]
fn camera_importance_inverts_sample_ray_and_integrates_to_one() {
    let film = crate::films::Film {
        width: 40,
        height: 30,
        crop_offset: [6, 4],
        crop_size: [20, 15],
        ..Default::default()
    };
    let to_world =
        Transform::look_at(Vec3::new(1.0, 2.0, 3.0), Vec3::new(0.0, 0.5, 0.0), Vec3::Y).unwrap();
    let cam = Camera::perspective(to_world, 60.0, &film, 0.01, 100.0);
    let mut rng = Pcg32::new(4, 9);
    // sample_direction(point on a camera ray) lands where the ray was shot from
    for _ in 0..200 {
        let crop = Vec2::new(rng.next_f32() * 20.0, rng.next_f32() * 15.0);
        let full = crop + Vec2::new(6.0, 4.0);
        let ray = cam.sample_ray(full, Vec2::ZERO, &film);
        let p = ray.o + ray.d * (1.0 + 5.0 * rng.next_f32());
        let c = cam
            .sample_direction(p, &film)
            .expect("inside the crop window");
        assert!((c.pos - crop).length() < 2e-3, "{} vs {crop}", c.pos);
        assert!((c.p - to_world.point(Vec3::ZERO)).length() < 1e-5);
    }
    // ∫ W dω over the sphere of directions = 1 (the importance of the crop window)
    let (n, mut sum) = (400_000, 0.0f64);
    let o = to_world.point(Vec3::ZERO);
    for _ in 0..n {
        let d = square_to_uniform_sphere(Vec2::new(rng.next_f32(), rng.next_f32()));
        if let Some(c) = cam.sample_direction(o + d * 2.0, &film) {
            sum += (c.weight * 4.0 / UNIFORM_SPHERE_PDF) as f64;
        }
    }
    let integral = sum / n as f64;
    assert!((integral - 1.0).abs() < 0.03, "{integral}");
    // other cameras do not connect
    let ortho = Camera {
        kind: crate::sensors::camera::CAMERA_ORTHOGRAPHIC,
        ..cam
    };
    assert!(!ortho.can_connect() && ortho.sample_direction(o + Vec3::Z, &film).is_none());
}

/// The mean weight of `sample_ray` (the emitted power) against `∫ I dω` estimated by
/// uniform directions through `sample_direction`, for a point-like emitter at `pos`.
fn power_two_ways(e: &AnyEmitter, ctx: &crate::emitters::EmitterCtx, pos: Vec3) -> (Color, Color) {
    let mut rng = Pcg32::new(11, 3);
    let n = 400_000;
    let (mut a, mut b) = (Color::ZERO, Color::ZERO);
    for _ in 0..n {
        let u = Vec2::new(rng.next_f32(), rng.next_f32());
        if let Some(r) = e.sample_ray(ctx, Vec2::ZERO, u) {
            assert!((r.p - pos).length() < 1e-5 && (r.d.length() - 1.0).abs() < 1e-4);
            a += r.weight;
        }
        let d = square_to_uniform_sphere(Vec2::new(rng.next_f32(), rng.next_f32()));
        if let Some(s) = e.sample_direction(ctx, pos - d * 2.0, Vec2::ZERO) {
            b += s.radiance * (4.0 / UNIFORM_SPHERE_PDF);
        }
    }
    (a / n as f32, b / n as f32)
}

use crate::emitters::AnyEmitter;

#[test]
fn emitted_rays_carry_the_emitters_power() {
    let look = |o: [f32; 3], t: [f32; 3]| {
        let v = |a: [f32; 3]| Vec3::from_array(a);
        Value::Transform(Transform::look_at(v(o), v(t), Vec3::Z).unwrap())
    };
    // point: 4π I exactly
    let (p, ctx) = build_one("point", &[("intensity", Value::Float(3.0))]).unwrap();
    let r = p
        .sample_ray(&ectx(&ctx), Vec2::ZERO, Vec2::new(0.3, 0.8))
        .unwrap();
    assert!((r.weight.x - 12.0 * PI).abs() < 1e-3 && r.n == Vec3::ZERO);
    // spot: analytic power of the profile, and the two estimates agree
    let (s, ctx) = build_one(
        "spot",
        &[
            ("intensity", Value::Float(2.0)),
            ("cutoff_angle", Value::Float(30.0)),
            ("beam_width", Value::Float(10.0)),
            ("to_world", look([1.0, 2.0, 3.0], [0.0, 1.0, 3.5])),
        ],
    )
    .unwrap();
    let (a, b) = power_two_ways(&s, &ectx(&ctx), Vec3::new(1.0, 2.0, 3.0));
    // 2π ∫ profile(θ) sin θ dθ: 1 up to 10°, linear to 0 at 30°
    let (beam, cut) = (10f64.to_radians(), 30f64.to_radians());
    let steps = 100_000;
    let mut want = 2.0 * std::f64::consts::PI * (1.0 - beam.cos());
    for i in 0..steps {
        let t = beam + (cut - beam) * (i as f64 + 0.5) / steps as f64;
        want += 2.0 * std::f64::consts::PI * (cut - t) / (cut - beam) * t.sin() * (cut - beam)
            / steps as f64;
    }
    let want = (2.0 * want) as f32;
    assert!((a.x - want).abs() < 2e-3 * want, "{} vs {want}", a.x);
    assert!((b.x - want).abs() < 3e-2 * want, "{} vs {want}", b.x);
    // a projector (sheared frame included) sends out what it would deliver
    let sheared = Transform::from_matrix(crate::math::Mat4::from_cols_array(&[
        1.0, 0.0, 0.0, 0.0, 0.3, 1.2, 0.0, 0.0, 0.0, 0.2, 0.9, 0.0, 0.5, -1.0, 2.0, 1.0,
    ]))
    .unwrap();
    let (pr, ctx) = build_one(
        "projector",
        &[
            ("fov", Value::Float(50.0)),
            ("scale", Value::Float(2.0)),
            ("to_world", Value::Transform(sheared)),
        ],
    )
    .unwrap();
    let (a, b) = power_two_ways(&pr, &ectx(&ctx), Vec3::new(0.5, -1.0, 2.0));
    assert!(a.x > 0.0 && (a.x - b.x).abs() < 3e-2 * a.x, "{a} vs {b}");
}

#[test]
fn bad_parameters_and_unsupported_scenes_name_the_line() {
    let with = |params: &str| {
        format!(
            "<scene version=\"3.0.0\">\n<integrator type=\"ptracer\">\n{params}\n</integrator>\n</scene>"
        )
    };
    for (params, want) in [
        (r#"<integer name="max_depth" value="0"/>"#, "max_depth"),
        (r#"<integer name="max_depth" value="-2"/>"#, "max_depth"),
        (r#"<integer name="rr_depth" value="0"/>"#, "rr_depth"),
        (
            r#"<integer name="samples_per_pass" value="0"/>"#,
            "samples_per_pass",
        ),
        (
            r#"<boolean name="hide_emitters" value="maybe"/>"#,
            "hide_emitters",
        ),
        (r#"<float name="max_dpeth" value="3"/>"#, "max_dpeth"),
    ] {
        let e = build(&with(params)).unwrap_err().to_string();
        assert!(e.contains(":3:") && e.contains(want), "{params}: {e}");
    }
    let scene = |extra: &str| {
        format!(
            "<scene version=\"3.0.0\">\n<integrator type=\"ptracer\"/>\n{extra}\n\
             <shape type=\"sphere\"/>\n</scene>"
        )
    };
    for extra in [
        r#"<sensor type="orthographic"/><emitter type="point"/>"#,
        r#"<sensor type="thinlens"><float name="aperture_radius" value="0.1"/></sensor>"#,
    ] {
        let want = "\"perspective\" sensor";
        let e = build(&scene(extra)).unwrap_err().to_string();
        assert!(e.contains(":2:") && e.contains(want), "{extra}: {e}");
    }
    // the renderer checks too (an integrator swapped in after loading)
    let thinlens =
        r#"<sensor type="thinlens"><float name="aperture_radius" value="0.1"/></sensor>"#;
    let mut s = build(&scene(thinlens).replace("ptracer", "path")).unwrap();
    s.integrator = AnyIntegrator::Ptracer(Ptracer::default());
    let e = cpu::render(&s, &RenderOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"perspective\" sensor"), "{e}");
}

use crate::integrators::AnyIntegrator;
