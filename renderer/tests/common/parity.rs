//! The per-plugin parity queries shared by the host run (`gpu_plugins_on_host.rs`) and
//! the GPU run (`gpu_render.rs`): a scene with every plugin, pseudo-random fixed inputs,
//! the Rust plugins' answers, and the comparison (layout of a query and an answer:
//! `renderer/kernels/parity.cu`).
#![allow(dead_code)]

use heliograph::desc::xml;
use heliograph::math::{Pcg32, Vec2, Vec3};
use heliograph::scene::{build_scene, RenderSetup};
use heliograph::textures::SurfacePoint;

use super::harness::repo_root;

/// The test scene: every supported plugin, several parameter variants, and every
/// registered BSDF with its defaults.
pub fn scene_xml() -> String {
    let tex = repo_root().join("assets/textures/seed_texture.png");
    let tex = tex.display();
    let sky = repo_root().join("assets/envmaps/sky.exr");
    let sky = sky.display();
    // mesh attributes as an area light's radiance: read at the sampled triangle
    let torus = repo_root().join("assets/meshes/torus_attributes.ply");
    let torus = torus.display();
    let bitmap = |filter: &str, wrap: &str| {
        format!(
            r#"<texture type="bitmap" name="reflectance"><string name="filename" value="{tex}"/>
               <string name="filter_type" value="{filter}"/><string name="wrap_mode" value="{wrap}"/>
               <transform name="to_uv"><scale x="2" y="3"/><translate x="0.1" y="-0.3"/></transform>
               </texture>"#
        )
    };
    let mut shapes = String::new();
    let mut i = 0;
    for filter in ["nearest", "bilinear"] {
        for wrap in ["repeat", "mirror", "clamp"] {
            shapes += &format!(
                r#"<shape type="rectangle"><transform name="to_world"><translate x="{i}"/></transform>
                   <bsdf type="diffuse">{}</bsdf></shape>"#,
                bitmap(filter, wrap)
            );
            i += 3;
        }
    }
    // a bump map's height: the seed texture's luminance, tiled
    let height = format!(
        r#"<texture type="bitmap" name="height"><string name="filename" value="{tex}"/>
           <transform name="to_uv"><scale x="3" y="2"/></transform></texture>"#
    );
    let mut bsdfs = String::new();
    for (k, b) in [
        r#"<bsdf type="conductor"><string name="material" value="Au"/></bsdf>"#,
        r#"<bsdf type="roughconductor"><string name="distribution" value="ggx"/><float name="alpha" value="0.3"/></bsdf>"#,
        r#"<bsdf type="roughconductor"><string name="distribution" value="beckmann"/><float name="alpha_u" value="0.1"/><float name="alpha_v" value="0.4"/></bsdf>"#,
        r#"<bsdf type="roughconductor"><string name="distribution" value="ggx"/><boolean name="sample_visible" value="false"/><float name="alpha" value="0.2"/></bsdf>"#,
        r#"<bsdf type="roughconductor"><string name="distribution" value="beckmann"/><boolean name="sample_visible" value="false"/><float name="alpha" value="0.5"/></bsdf>"#,
        r#"<bsdf type="dielectric"><float name="int_ior" value="1.5"/></bsdf>"#,
        r#"<bsdf type="thindielectric"/>"#,
        r#"<bsdf type="plastic"><rgb name="diffuse_reflectance" value="0.2, 0.5, 0.1"/></bsdf>"#,
        r#"<bsdf type="plastic"><boolean name="nonlinear" value="true"/></bsdf>"#,
        r#"<bsdf type="roughplastic"><string name="distribution" value="ggx"/><float name="alpha" value="0.2"/></bsdf>"#,
        r#"<bsdf type="roughplastic"><string name="distribution" value="beckmann"/><float name="alpha" value="0.3"/><boolean name="nonlinear" value="true"/></bsdf>"#,
        r#"<bsdf type="twosided"><bsdf type="diffuse"><rgb name="reflectance" value="0.8, 0.1, 0.1"/></bsdf><bsdf type="roughconductor"/></bsdf>"#,
        r#"<bsdf type="twosided"><bsdf type="conductor"/></bsdf>"#,
        r#"<bsdf type="roughdielectric"><string name="distribution" value="ggx"/><float name="alpha" value="0.3"/></bsdf>"#,
        r#"<bsdf type="roughdielectric"><float name="alpha_u" value="0.1"/><float name="alpha_v" value="0.4"/><float name="int_ior" value="1.0"/><float name="ext_ior" value="1.33"/><rgb name="specular_transmittance" value="0.2, 0.5, 0.9"/></bsdf>"#,
        r#"<bsdf type="roughdielectric"><string name="distribution" value="ggx"/><boolean name="sample_visible" value="false"/><float name="alpha_u" value="0.2"/><float name="alpha_v" value="0.5"/><string name="int_ior" value="water"/></bsdf>"#,
        r#"<bsdf type="roughdielectric"><boolean name="sample_visible" value="false"/><texture type="checkerboard" name="alpha"><float name="color0" value="0.1"/><float name="color1" value="0.5"/></texture><rgb name="specular_reflectance" value="0.7, 0.6, 0.5"/></bsdf>"#,
        // two adapter levels (mask, twosided), a textured opacity, a delta nested BSDF
        r#"<bsdf type="mask"><float name="opacity" value="0.3"/><bsdf type="twosided"><bsdf type="diffuse"><rgb name="reflectance" value="0.2, 0.7, 0.3"/></bsdf></bsdf></bsdf>"#,
        r#"<bsdf type="mask"><texture type="checkerboard" name="opacity"><float name="color0" value="0.9"/><float name="color1" value="0.15"/></texture><bsdf type="roughconductor"/></bsdf>"#,
        r#"<bsdf type="mask"><float name="opacity" value="0.6"/><bsdf type="dielectric"/></bsdf>"#,
        r#"<bsdf type="blendbsdf"><texture type="checkerboard" name="weight"><float name="color0" value="0.2"/><float name="color1" value="0.7"/></texture><bsdf type="dielectric"/><bsdf type="roughplastic"/></bsdf>"#,
        r#"<bsdf type="blendbsdf"><float name="weight" value="0.4"/><bsdf type="mask"><bsdf type="diffuse"/></bsdf><bsdf type="null"/></bsdf>"#,
        r#"<bsdf type="normalmap"><texture type="rawconstant" name="normalmap"><vector name="value" value="0.7, 0.4, 0.8"/></texture><bsdf type="roughconductor"><float name="alpha_u" value="0.25"/><float name="alpha_v" value="0.05"/></bsdf></bsdf>"#,
        r#"<bsdf type="mask"><float name="opacity" value="0.8"/><bsdf type="normalmap"><boolean name="use_shadowing_function" value="false"/><texture type="checkerboard" name="normalmap"><rgb name="color0" value="0.3, 0.5, 0.9"/><rgb name="color1" value="0.5, 0.7, 0.8"/></texture><bsdf type="twosided"><bsdf type="plastic"/></bsdf></bsdf></bsdf>"#,
        r#"<bsdf type="principled"><rgb name="base_color" value="0.8, 0.5, 0.2"/><float name="metallic" value="0.6"/><float name="roughness" value="0.3"/><float name="anisotropic" value="0.5"/><float name="spec_tint" value="0.7"/><float name="specular" value="0.7"/><float name="sheen" value="0.5"/><float name="sheen_tint" value="0.4"/></bsdf>"#,
        r#"<bsdf type="principled"><rgb name="base_color" value="0.9, 0.8, 0.7"/><float name="spec_trans" value="0.8"/><float name="roughness" value="0.25"/><float name="eta" value="1.45"/><float name="clearcoat" value="0.7"/><float name="clearcoat_gloss" value="0.6"/><float name="flatness" value="0.4"/></bsdf>"#,
        r#"<bsdf type="principled"><texture type="checkerboard" name="spec_trans"><float name="color0" value="0.7"/><float name="color1" value="0.1"/></texture><texture type="checkerboard" name="metallic"><float name="color0" value="0.1"/><float name="color1" value="0.5"/></texture><texture type="checkerboard" name="clearcoat"><float name="color0" value="0.9"/><float name="color1" value="0.2"/></texture><float name="eta" value="0.8"/><float name="main_specular_sampling_rate" value="2"/><float name="clearcoat_sampling_rate" value="3"/></bsdf>"#,
        r#"<bsdf type="principledthin"><rgb name="base_color" value="0.7, 0.1, 0.1"/><float name="spec_trans" value="0.6"/><float name="eta" value="1.33"/><float name="roughness" value="0.3"/><float name="anisotropic" value="0.4"/><float name="spec_tint" value="0.5"/><float name="diff_trans" value="0.8"/></bsdf>"#,
        r#"<bsdf type="principledthin"><texture type="checkerboard" name="eta"><float name="color0" value="1.2"/><float name="color1" value="1.6"/></texture><texture type="checkerboard" name="diff_trans"><float name="color0" value="0.4"/><float name="color1" value="1.4"/></texture><float name="spec_trans" value="0.3"/><float name="sheen" value="0.6"/><float name="sheen_tint" value="0.3"/><float name="flatness" value="0.5"/><float name="diffuse_transmittance_sampling_rate" value="1.5"/></bsdf>"#,
    ]
    .iter()
    .map(|b| b.to_string())
    .chain([format!(
        r#"<bsdf type="bumpmap">{height}<float name="scale" value="0.02"/><boolean name="flip_invalid_normals" value="false"/><bsdf type="roughconductor"><float name="alpha" value="0.2"/></bsdf></bsdf>"#
    )])
    // and every registered BSDF with its defaults (an adapter wrapping a diffuse), so
    // that a new plugin is compared without being listed here
    .chain(heliograph::bsdfs::REGISTRY.iter().map(|e| {
        let nested = if e.adapter { r#"<bsdf type="diffuse"/>"# } else { "" };
        // the one required parameter among the plugins
        let required = match e.info.name {
            "normalmap" => r#"<texture type="rawconstant" name="normalmap"><vector name="value" value="0.6, 0.45, 0.9"/></texture>"#,
            "blendbsdf" => r#"<float name="weight" value="0.35"/><bsdf type="conductor"/>"#,
            "bumpmap" => &height,
            _ => "",
        };
        format!(r#"<bsdf type="{}">{required}{nested}</bsdf>"#, e.info.name)
    }))
    .enumerate()
    {
        bsdfs += &format!(
            r#"<shape type="rectangle"><transform name="to_world"><translate z="{}"/></transform>{b}</shape>"#,
            10 + 3 * k
        );
    }
    format!(
        r#"<scene version="3.0.0">
        <integrator type="path"/>
        <sensor type="perspective"><film type="hdrfilm"><integer name="width" value="8"/>
            <integer name="height" value="8"/></film></sensor>
        <emitter type="constant"><rgb name="radiance" value="0.5, 0.7, 0.9"/></emitter>
        {shapes}
        <shape type="rectangle">
            <transform name="to_world"><scale x="2" y="0.5"/><rotate x="1" angle="-70"/><translate y="4"/></transform>
            <bsdf type="diffuse"><texture type="checkerboard" name="reflectance">
                <rgb name="color0" value="0.9, 0.1, 0.2"/><rgb name="color1" value="0.3"/></texture></bsdf>
            <emitter type="area"><rgb name="radiance" value="3, 2, 1"/></emitter>
        </shape>
        <shape type="disk">
            <transform name="to_world"><scale value="0.7"/><rotate y="1" angle="40"/><translate x="-3" y="1"/></transform>
            <bsdf type="diffuse"><rgb name="reflectance" value="0.2, 0.4, 0.6"/></bsdf>
            <emitter type="area"><rgb name="radiance" value="1, 5, 2"/></emitter>
        </shape>
        {bsdfs}
        <shape type="sphere">
            <point name="center" x="1" y="2" z="-3"/><float name="radius" value="0.8"/>
            <bsdf type="diffuse"><texture type="bitmap" name="reflectance"><string name="filename" value="{tex}"/></texture></bsdf>
            <emitter type="area"><rgb name="radiance" value="4, 1, 3"/></emitter>
        </shape>
        <shape type="sphere">
            <transform name="to_world"><scale value="0.5"/><rotate x="1" angle="30"/><translate z="6"/></transform>
            <boolean name="flip_normals" value="true"/>
            <emitter type="area"><rgb name="radiance" value="1"/></emitter>
        </shape>
        <shape type="ply"><string name="filename" value="{torus}"/>
            <transform name="to_world"><scale value="0.6"/><rotate x="1" angle="50"/><translate x="-2" y="-3" z="2"/></transform>
            <emitter type="area"><texture type="mesh_attribute" name="radiance">
                <string name="name" value="vertex_color"/><float name="scale" value="3"/></texture></emitter>
        </shape>
        <shape type="ply"><string name="filename" value="{torus}"/>
            <transform name="to_world"><scale value="0.5"/><translate x="2.5" y="-2" z="-1"/></transform>
            <emitter type="area"><texture type="mesh_attribute" name="radiance">
                <string name="name" value="face_weight"/></texture></emitter>
        </shape>
        <emitter type="point"><point name="position" x="0.5" y="6" z="1"/><rgb name="intensity" value="10, 20, 30"/></emitter>
        <emitter type="directional"><vector name="direction" x="1" y="-2" z="0.5"/><rgb name="irradiance" value="2"/></emitter>
        <emitter type="spot"><rgb name="intensity" value="30, 20, 10"/><float name="cutoff_angle" value="70"/>
            <float name="beam_width" value="25"/><texture type="bitmap" name="texture"><string name="filename" value="{tex}"/></texture>
            <transform name="to_world"><lookat origin="0.5, 5.5, 0.5" target="0, 0, 0" up="0, 0, 1"/></transform></emitter>
        <emitter type="spot"><float name="cutoff_angle" value="120"/><point name="position" x="-1" y="-5.5" z="0"/>
            <point name="target" x="0" y="0" z="0.5"/></emitter>
        <emitter type="projector"><float name="fov" value="110"/><float name="scale" value="4"/>
            <texture type="bitmap" name="irradiance"><string name="filename" value="{tex}"/></texture>
            <transform name="to_world"><lookat origin="5.5, 0.5, 0" target="0, 0, 0.5" up="0, 1, 0"/></transform></emitter>
        <emitter type="projector"><float name="fov" value="150"/><rgb name="irradiance" value="0.5, 1, 2"/>
            <transform name="to_world"><lookat origin="0, 0, -5.5" target="0, 0, 0" up="0, 1, 0"/></transform></emitter>
        <emitter type="envmap"><string name="filename" value="{sky}"/><float name="scale" value="1.5"/>
            <transform name="to_world"><rotate y="1" angle="70"/></transform></emitter>
        <shape type="cube">
            <transform name="to_world"><scale x="0.5" y="1" z="0.3"/><rotate z="1" angle="25"/><translate x="2" y="-3"/></transform>
            <bsdf type="diffuse"/>
            <emitter type="area"><rgb name="radiance" value="2"/></emitter>
        </shape>
        </scene>"#
    )
}

/// The Cornell box (`scenes/cbox.xml`, `res`²) lit by every delta light besides its
/// area light: point, directional, a textured spot and a textured projector (written to
/// `dir` as `cbox_lights.xml`), for whole-image comparisons of the backends.
pub fn cbox_with_delta_lights(dir: &std::path::Path, res: u32) -> RenderSetup {
    let text = std::fs::read_to_string(repo_root().join("scenes/cbox.xml")).unwrap();
    let tex = repo_root().join("assets/textures/seed_texture.png");
    let lights = format!(
        r#"<emitter type="point"><point name="position" x="0.3" y="0.6" z="0.2"/>
        <rgb name="intensity" value="0.5, 0.4, 0.3"/></emitter>
        <emitter type="directional"><vector name="direction" x="0.2" y="-0.3" z="-1"/>
        <rgb name="irradiance" value="0.3"/></emitter>
        <emitter type="spot"><rgb name="intensity" value="2"/><float name="cutoff_angle" value="40"/>
        <texture type="bitmap" name="texture"><string name="filename" value="{tex}"/></texture>
        <transform name="to_world"><lookat origin="-0.5, 0.9, 0" target="-0.3, -1, 0" up="0, 0, 1"/></transform></emitter>
        <emitter type="projector"><float name="fov" value="60"/><float name="scale" value="0.2"/>
        <texture type="bitmap" name="irradiance"><string name="filename" value="{tex}"/></texture>
        <transform name="to_world"><lookat origin="0.5, 0.5, 0.9" target="0.4, -1, -0.5" up="0, 1, 0"/></transform></emitter>
        </scene>"#,
        tex = tex.display()
    );
    let file = dir.join("cbox_lights.xml");
    std::fs::write(&file, text.replace("</scene>", &lights)).unwrap();
    let desc = xml::load_file(&file, &[("res".into(), res.to_string())]).unwrap();
    build_scene(&desc).unwrap()
}

/// `a` and `b` agree to rounding.
fn close(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a - b).abs() <= 2e-4 * a.abs().max(b.abs()).max(1e-2)
}

pub struct Query {
    pub q: [f32; 16],
    pub want: Vec<f32>,
    pub what: String,
}

fn rand3(rng: &mut Pcg32, lo: f32, hi: f32) -> Vec3 {
    Vec3::new(
        lo + (hi - lo) * rng.next_f32(),
        lo + (hi - lo) * rng.next_f32(),
        lo + (hi - lo) * rng.next_f32(),
    )
}

pub fn queries(scene: &RenderSetup) -> Vec<Query> {
    let mut rng = Pcg32::new(7, 11);
    let mut out = Vec::new();
    for b in 0..scene.scene.bsdfs.len() {
        for _ in 0..400 {
            let uv = Vec2::new(rng.next_f32() * 2.0 - 0.5, rng.next_f32() * 2.0 - 0.5);
            let wi = rand3(&mut rng, -1.0, 1.0).normalize();
            let wo = rand3(&mut rng, -1.0, 1.0).normalize();
            let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
            let bsdf = &scene.scene.bsdfs[b];
            let ctx = heliograph::bsdfs::BsdfCtx {
                bsdfs: &scene.scene.bsdfs,
                tex: &scene.scene.textures,
                at: SurfacePoint::at_uv(uv),
            };
            let f = bsdf.eval(&ctx, wi, wo);
            let mut want = vec![f.x, f.y, f.z, bsdf.pdf(&ctx, wi, wo), 0.0];
            want.extend([0.0; 9]);
            if let Some(s) = bsdf.sample(&ctx, wi, u1, u2) {
                want[4] = 1.0;
                want[5..14].copy_from_slice(&[
                    s.wo.x,
                    s.wo.y,
                    s.wo.z,
                    s.pdf,
                    s.weight.x,
                    s.weight.y,
                    s.weight.z,
                    s.eta,
                    f32::from(u8::from(s.delta)),
                ]);
            }
            want.push(f32::from(u8::from(bsdf.is_delta(&ctx))));
            let mut q = [0.0f32; 16];
            q[..13].copy_from_slice(&[
                0.0, b as f32, uv.x, uv.y, wi.x, wi.y, wi.z, wo.x, wo.y, wo.z, u1, u2.x, u2.y,
            ]);
            out.push(Query {
                q,
                want,
                what: format!("BSDF {b} uv {uv} wi {wi} wo {wo} u {u1} {u2}"),
            });
        }
    }
    for t in 0..scene.scene.textures.records.len() {
        for _ in 0..400 {
            let uv = Vec2::new(rng.next_f32() * 5.0 - 2.0, rng.next_f32() * 5.0 - 2.0);
            let at = SurfacePoint::at_uv(uv);
            let c = scene.scene.textures.eval(t as u32, &at);
            let mut q = [0.0f32; 16];
            q[..4].copy_from_slice(&[1.0, t as f32, uv.x, uv.y]);
            out.push(Query {
                q,
                want: vec![c.x, c.y, c.z, scene.scene.textures.eval_1(t as u32, &at)],
                what: format!("texture {t} uv {uv}"),
            });
        }
    }
    let ctx = scene.scene.emitter_ctx();
    for e in 0..scene.scene.emitters.len() {
        for _ in 0..400 {
            let p = rand3(&mut rng, -5.0, 5.0);
            let u = Vec2::new(rng.next_f32(), rng.next_f32());
            let mut want = vec![0.0; 10];
            if let Some(s) = scene.scene.emitters[e].sample_direction(&ctx, p, u) {
                want = vec![
                    1.0,
                    s.d.x,
                    s.d.y,
                    s.d.z,
                    s.dist,
                    s.pdf,
                    s.radiance.x,
                    s.radiance.y,
                    s.radiance.z,
                    f32::from(u8::from(s.delta)),
                ];
            }
            let mut q = [0.0f32; 16];
            q[..13].copy_from_slice(&[
                2.0, e as f32, 0.0, 0.0, p.x, p.y, p.z, 0.0, 0.0, 0.0, u.x, u.y, 0.0,
            ]);
            out.push(Query {
                q,
                want,
                what: format!("emitter {e} p {p} u {u}"),
            });
        }
    }
    for _ in 0..200 {
        let d = rand3(&mut rng, -1.0, 1.0).normalize();
        let (l, pdf) = heliograph::integrators::environment_emission(&scene.scene, d);
        let mut q = [0.0f32; 16];
        q[..7].copy_from_slice(&[3.0, 0.0, 0.0, 0.0, d.x, d.y, d.z]);
        assert!(l != heliograph::math::Color::ZERO);
        out.push(Query {
            q,
            want: vec![l.x, l.y, l.z, pdf],
            what: format!("environment d {d}"),
        });
    }
    out
}

/// The queries as the kernel reads them (16 floats each).
pub fn query_floats(qs: &[Query]) -> Vec<f32> {
    qs.iter().flat_map(|q| q.q).collect()
}

/// Compares the kernel's answers (16 floats per query) with the Rust plugins' and
/// panics when more than 0.2 % differ or the inputs exercise too little.
pub fn check(qs: &[Query], got: &[f32]) {
    assert_eq!(got.len(), qs.len() * 16);
    let mut bad = Vec::new();
    let mut per_kind = [(0usize, 0usize); 4];
    for (i, q) in qs.iter().enumerate() {
        let g = &got[i * 16..i * 16 + q.want.len()];
        let k = q.q[0] as usize;
        per_kind[k].0 += 1;
        if !q.want.iter().zip(g).all(|(a, b)| close(*a, *b)) {
            per_kind[k].1 += 1;
            bad.push(format!("{}: Rust {:?} vs CUDA {:?}", q.what, q.want, g));
        }
    }
    for (k, name) in ["BSDF", "texture", "emitter sample", "environment"]
        .iter()
        .enumerate()
    {
        println!(
            "{name}: {} queries, {} differ",
            per_kind[k].0, per_kind[k].1
        );
    }
    // the inputs exercise the functions: many samples succeed on both sides
    let sampled = |k: f32, slot: usize| {
        qs.iter()
            .filter(|q| q.q[0] == k && q.want[slot] == 1.0)
            .count()
    };
    let (bs, es) = (sampled(0.0, 4), sampled(2.0, 0));
    println!("successful samples: BSDF {bs}, emitter {es}");
    assert!(bs * 4 >= per_kind[0].0 && es * 4 >= per_kind[2].0);
    // and every emitter (the delta lights with a cone or a frustum too) on some queries
    let emitters = qs.iter().filter(|q| q.q[0] == 2.0).map(|q| q.q[1] as usize);
    for e in 0..emitters.max().map_or(0, |m| m + 1) {
        let ok = qs
            .iter()
            .filter(|q| q.q[0] == 2.0 && q.q[1] as usize == e && q.want[0] == 1.0)
            .count();
        println!("emitter {e}: {ok} successful samples");
        assert!(ok >= 20, "emitter {e}: only {ok} successful samples");
    }
    for b in bad.iter().take(8) {
        println!("  {b}");
    }
    assert!(
        bad.len() * 1000 <= qs.len() * 2,
        "{} of {} queries differ, e.g. {:?}",
        bad.len(),
        qs.len(),
        &bad[..bad.len().min(3)]
    );
}
