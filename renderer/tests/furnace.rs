//! Whole-pipeline analytic checks: scenes whose exact image is known.
//!
//! A convex object inside a uniform environment of radiance 1 ("white
//! furnace"): with a diffuse albedo `a`, every pixel converges to `a` under the
//! `direct` integrator (one bounce sees the environment) and to `1` under `path`
//! when `a = 1` (no energy is lost or created on any bounce).

use heliograph::backend::cpu;
use heliograph::desc::xml;
use heliograph::io::Image;
use heliograph::render::RenderOptions;
use heliograph::scene::{build_scene, RenderSetup};

fn scene(integrator: &str, albedo: f32, extra_shape: &str) -> RenderSetup {
    let xml = format!(
        r#"<scene version="3.0.0">
            <integrator type="{integrator}"/>
            <emitter type="constant"><rgb name="radiance" value="1"/></emitter>
            <shape type="sphere"><bsdf type="diffuse"><rgb name="reflectance" value="{albedo}"/></bsdf></shape>
            {extra_shape}
            <sensor type="perspective">
                <float name="fov" value="10"/>
                <transform name="to_world"><lookat origin="0,0,5" target="0,0,0" up="0,1,0"/></transform>
                <film type="hdrfilm"><integer name="width" value="24"/><integer name="height" value="24"/>
                    <string name="pixel_format" value="rgb"/><rfilter type="box"/></film>
            </sensor>
        </scene>"#
    );
    build_scene(&xml::load_string(&xml, &[]).expect("parse")).expect("build")
}

/// Mean and standard error of the per-pixel values of channel 0.
fn stats(img: &Image) -> (f64, f64) {
    let v: Vec<f64> = img
        .data
        .chunks_exact(img.channels)
        .map(|p| p[0] as f64)
        .collect();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

#[test]
fn direct_furnace_gives_the_albedo() {
    for albedo in [0.3f32, 1.0] {
        let img = cpu::render(
            &scene("direct", albedo, ""),
            &RenderOptions {
                spp: Some(64),
                seed: 1,
            },
        )
        .unwrap();
        let (mean, se) = stats(&img);
        assert!(
            (mean - albedo as f64).abs() < 4.0 * se + 1e-4,
            "albedo {albedo}: mean {mean} ± {se}"
        );
    }
}

#[test]
fn path_furnace_conserves_energy() {
    // two spheres: light bounces between them too; albedo 1 must still give exactly 1
    let second = r#"<shape type="sphere"><point name="center" x="1.6" y="0" z="0"/><float name="radius" value="0.5"/>
        <bsdf type="diffuse"><rgb name="reflectance" value="1"/></bsdf></shape>"#;
    let img = cpu::render(
        &scene("path", 1.0, second),
        &RenderOptions {
            spp: Some(32),
            seed: 2,
        },
    )
    .unwrap();
    let (mean, se) = stats(&img);
    assert!((mean - 1.0).abs() < 4.0 * se + 1e-4, "mean {mean} ± {se}");
    for p in img.data.chunks_exact(3) {
        assert!(p[0] > 0.5 && p[0] < 2.0, "pixel {p:?} far from 1");
    }
}

#[test]
fn renders_are_bitwise_reproducible_across_thread_counts() {
    let s = scene("path", 0.7, "");
    let opts = RenderOptions {
        spp: Some(8),
        seed: 5,
    };
    let a = cpu::render(&s, &opts).unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let b = one.install(|| cpu::render(&s, &opts).unwrap());
    assert!(a
        .data
        .iter()
        .zip(&b.data)
        .all(|(x, y)| x.to_bits() == y.to_bits()));
    let c = cpu::render(
        &s,
        &RenderOptions {
            spp: Some(8),
            seed: 6,
        },
    )
    .unwrap();
    assert_ne!(a.data, c.data, "a different seed gives a different image");
}

#[test]
fn zero_spp_is_rejected_before_rendering() {
    let s = scene("direct", 0.5, "");
    let err = cpu::render(
        &s,
        &RenderOptions {
            spp: Some(0),
            seed: 0,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("spp"), "{err}");
}

#[test]
fn cancelled_render_stops_with_an_error() {
    let s = std::sync::Arc::new(scene("path", 0.5, ""));
    let job = cpu::render_async(
        s,
        RenderOptions {
            spp: Some(100_000),
            seed: 0,
        },
    )
    .unwrap();
    job.progress().cancel();
    let err = job.wait().unwrap_err();
    assert!(matches!(err, heliograph::Error::Cancelled), "{err}");
}
