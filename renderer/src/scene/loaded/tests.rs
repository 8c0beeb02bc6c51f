//! Tests of [`super::LoadedScene::update`]: for every kind of parameter, updating a
//! loaded scene gives bit for bit the scene (and image) that loading the edited file
//! gives; refused updates change nothing; geometry updates read no file again; device
//! values stay on the device unless a reader needs them on the host.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::*;
use crate::backend::cpu;
use crate::desc::params::DeviceValues;
use crate::desc::xml::load_string;
use crate::flat::FlatScene;
use crate::math::Vec3;
use crate::render::RenderOptions;
use crate::textures::image_file::tests::scratch;

/// Every kind of parameter: sensor, envmap, point and directional lights, an area
/// light, bitmap data read by a plastic (whose sampling weight depends on it), a
/// checkerboard constant read by a rough plastic, IORs, roughness (a rough metal and
/// a rough glass), a diffuse colour behind a twosided, shape transforms (analytic and
/// mesh).
const TEMPLATE: &str = r#"<scene version="3.0.0">
  <integrator type="path"><integer name="max_depth" value="3"/></integrator>
  <sensor type="perspective" id="cam">
    <float name="fov" value="{fov}"/>
    <float name="near_clip" value="{near}"/>
    <float name="far_clip" value="{far}"/>
    <transform name="to_world"><lookat origin="{origin}" target="0, 0, 0" up="0, 1, 0"/></transform>
    <film type="hdrfilm"><integer name="width" value="24"/><integer name="height" value="16"/></film>
  </sensor>
  <emitter type="envmap" id="sky"><string name="filename" value="{sky}"/><float name="scale" value="{scale}"/>
    <transform name="to_world"><rotate y="1" angle="{sky_angle}"/></transform></emitter>
  <emitter type="point" id="bulb"><point name="position" value="{bulb}"/><rgb name="intensity" value="{intensity}"/></emitter>
  <emitter type="directional" id="sun"><vector name="direction" value="{sun}"/><rgb name="irradiance" value="{irradiance}"/></emitter>
  <texture type="bitmap" id="tex"><string name="filename" value="{tex}"/></texture>
  <texture type="checkerboard" id="checks"><rgb name="color0" value="{c0}"/><float name="color1" value="0.2"/></texture>
  <bsdf type="plastic" id="shiny"><ref name="diffuse_reflectance" id="tex"/><float name="int_ior" value="{plastic_ior}"/></bsdf>
  <bsdf type="roughplastic" id="rough"><float name="alpha" value="{alpha}"/><ref name="diffuse_reflectance" id="checks"/></bsdf>
  <bsdf type="dielectric" id="glass"><float name="int_ior" value="{glass_ior}"/></bsdf>
  <bsdf type="roughconductor" id="metal"><float name="alpha" value="{metal_alpha}"/></bsdf>
  <bsdf type="roughdielectric" id="frost"><float name="alpha" value="{frost_alpha}"/><float name="int_ior" value="{frost_ior}"/>
    <rgb name="specular_transmittance" value="{frost_t}"/></bsdf>
  <bsdf type="diffuse" id="matte"><rgb name="reflectance" value="{matte}"/></bsdf>
  <shape type="rectangle" id="floor"><transform name="to_world"><scale value="4"/><rotate x="1" angle="-90"/><translate y="-1"/></transform><ref id="rough"/></shape>
  <shape type="sphere" id="ball"><transform name="to_world"><translate value="{ball}"/></transform><ref id="shiny"/></shape>
  <shape type="sphere"><point name="center" value="1, 0, 0"/><float name="radius" value="0.4"/><ref id="glass"/></shape>
  <shape type="sphere"><point name="center" value="0, -0.5, 1"/><float name="radius" value="0.3"/><ref id="frost"/></shape>
  <shape type="obj" id="torus"><string name="filename" value="{torus}"/>
    <transform name="to_world"><scale value="0.3"/><translate value="{torus_pos}"/></transform><ref id="metal"/></shape>
  <shape type="disk" id="lamp"><transform name="to_world"><rotate x="1" angle="90"/><translate y="2"/></transform>
    <emitter type="area"><rgb name="radiance" value="{radiance}"/></emitter><bsdf type="twosided"><ref id="matte"/></bsdf></shape>
</scene>"#;

/// The template's values, and for each key a new value (as the file would say it).
pub(super) fn defaults(files: &Files) -> Vec<(&'static str, String)> {
    vec![
        ("fov", "45".into()),
        ("near", "0.01".into()),
        ("far", "100".into()),
        ("origin", "0, 1, 5".into()),
        ("sky", files.sky[0].clone()),
        ("scale", "1".into()),
        ("sky_angle", "0".into()),
        ("bulb", "0, 2, 1".into()),
        ("intensity", "3, 2, 1".into()),
        ("sun", "0, -1, -1".into()),
        ("irradiance", "0.5".into()),
        ("tex", files.tex[0].clone()),
        ("c0", "0.8, 0.1, 0.1".into()),
        ("plastic_ior", "1.5".into()),
        ("alpha", "0.2".into()),
        ("glass_ior", "1.5".into()),
        ("metal_alpha", "0.1".into()),
        ("frost_alpha", "0.2".into()),
        ("frost_ior", "1.5".into()),
        ("frost_t", "0.9, 0.8, 0.7".into()),
        ("matte", "0.3, 0.5, 0.7".into()),
        ("ball", "-1, 0, 0".into()),
        ("torus", files.torus.clone()),
        ("torus_pos", "0, 0.5, 0".into()),
        ("radiance", "4".into()),
    ]
}

/// (key, template variable, its new value).
fn edits(files: &Files) -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("cam.x_fov", "fov", "30".into()),
        ("cam.near_clip", "near", "0.5".into()),
        ("cam.far_clip", "far", "6".into()),
        ("cam.to_world", "origin", "1, 2, 4".into()),
        ("sky.data", "sky", files.sky[1].clone()),
        ("sky.scale", "scale", "2.5".into()),
        ("sky.to_world", "sky_angle", "40".into()),
        ("bulb.position", "bulb", "-1, 1, 2".into()),
        ("bulb.intensity.value", "intensity", "1, 5, 2".into()),
        ("sun.direction", "sun", "1, -1, 0".into()),
        ("sun.irradiance.value", "irradiance", "2".into()),
        ("tex.data", "tex", files.tex[1].clone()),
        ("checks.color0.value", "c0", "0.1, 0.9, 0.2".into()),
        ("shiny.eta", "plastic_ior", "1.8".into()),
        ("rough.alpha", "alpha", "0.5".into()),
        ("glass.eta", "glass_ior", "1.33".into()),
        ("metal.alpha.value", "metal_alpha", "0.4".into()),
        ("frost.alpha.value", "frost_alpha", "0.45".into()),
        ("frost.eta", "frost_ior", "1.33".into()),
        (
            "frost.specular_transmittance.value",
            "frost_t",
            "0.5, 0.9, 0.6".into(),
        ),
        ("matte.reflectance.value", "matte", "0.9, 0.1, 0.4".into()),
        ("ball.to_world", "ball", "-1, 0.5, 0.5".into()),
        ("torus.to_world", "torus_pos", "0.2, 0.8, -0.3".into()),
        ("lamp.emitter.radiance.value", "radiance", "7".into()),
    ]
}

#[derive(Clone)]
pub(super) struct Files {
    sky: [String; 2],
    pub(super) tex: [String; 2],
    torus: String,
}

/// The scratch files, written once per process (the tests run in parallel threads and
/// read them: writing them again could show another test a half-written file).
pub(super) fn files() -> Files {
    static FILES: std::sync::OnceLock<Files> = std::sync::OnceLock::new();
    FILES.get_or_init(write_files).clone()
}

fn write_files() -> Files {
    let dir = scratch("loaded_every_param");
    let write = |name: &str, w: u32, h: u32, seed: u32| -> String {
        let path = dir.join(name);
        let data: Vec<f32> = (0..w * h * 3)
            .map(|i| ((i * 7919 + seed * 104_729) % 1000) as f32 / 500.0)
            .collect();
        let buf = image::Rgb32FImage::from_raw(w, h, data).expect("size");
        image::DynamicImage::ImageRgb32F(buf)
            .save(&path)
            .expect("scratch file");
        path.to_string_lossy().into_owned()
    };
    let torus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/meshes/torus.obj");
    Files {
        sky: [write("sky0.exr", 16, 8, 1), write("sky1.exr", 16, 8, 2)],
        tex: [write("tex0.exr", 6, 4, 3), write("tex1.exr", 6, 4, 4)],
        torus: torus.to_string_lossy().into_owned(),
    }
}

fn xml(vars: &[(&str, String)]) -> String {
    let mut s = TEMPLATE.to_string();
    for (k, v) in vars {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    assert!(!s.contains('{'), "unfilled template: {s}");
    s
}

pub(super) fn load(vars: &[(&str, String)]) -> LoadedScene {
    LoadedScene::new(load_string(&xml(vars), &[]).unwrap()).unwrap()
}

pub(super) fn render(s: &LoadedScene) -> Vec<f32> {
    let opts = RenderOptions {
        spp: Some(4),
        seed: 3,
    };
    cpu::render(s.setup(), &opts).unwrap().data
}

/// Sets `key` to `value` in a view of `s` and updates `s`.
pub(super) fn set(s: &mut LoadedScene, key: &str, value: ParamValue) -> Result<Changes> {
    let mut p = s.traverse();
    p.set(key, value)?;
    s.update(&p.staged())
}

pub(super) fn value(s: &LoadedScene, key: &str) -> ParamValue {
    s.traverse().get(key).unwrap().clone()
}

/// Compares two values by their debug text, printing only where they first differ.
pub(super) fn assert_same_debug(a: &impl std::fmt::Debug, b: &impl std::fmt::Debug, what: &str) {
    let (a, b) = (format!("{a:?}"), format!("{b:?}"));
    if let Some(i) = a.bytes().zip(b.bytes()).position(|(x, y)| x != y) {
        let lo = i.saturating_sub(200);
        panic!(
            "{what}: differ at byte {i}:\n  {}\n  {}",
            &a[lo..(i + 80).min(a.len())],
            &b[lo..(i + 80).min(b.len())]
        );
    }
    assert_eq!(a.len(), b.len(), "{what}: one is a prefix of the other");
}

pub(super) fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn every_kind_of_parameter_updates_to_the_scene_a_fresh_load_gives() {
    let files = files();
    let base = defaults(&files);
    let original = load(&base);
    let original_image = render(&original);
    let keys: Vec<String> = original.traverse().keys().map(str::to_string).collect();
    for (key, _, _) in edits(&files) {
        assert!(keys.iter().any(|k| k == key), "{key} missing from {keys:?}");
    }
    for (key, var, new) in edits(&files) {
        let mut vars = base.clone();
        vars.iter_mut().find(|(k, _)| *k == var).unwrap().1 = new.clone();
        let fresh = load(&vars);
        let v = value(&fresh, key);
        assert_ne!(
            v,
            value(&original, key),
            "{key}: the edit changes the value"
        );
        let mut updated = original.clone();
        let changes = set(&mut updated, key, v.clone()).unwrap();
        assert!(!changes.is_empty(), "{key}");
        assert_eq!(
            value(&updated, key),
            v,
            "{key}: traverse reads the new value"
        );
        // the same records, arrays and image as a fresh load
        let (a, b) = (
            FlatScene::from_scene(updated.setup()).unwrap(),
            FlatScene::from_scene(fresh.setup()).unwrap(),
        );
        assert_same_debug(&a, &b, key);
        assert!(
            same_bits(&render(&updated), &render(&fresh)),
            "{key}: images differ"
        );
        for k in &keys {
            assert_eq!(
                value(&updated, k),
                value(&fresh, k),
                "{key}: then {k} differs"
            );
        }
        // and back: the original scene again
        set(&mut updated, key, value(&original, key)).unwrap();
        assert!(same_bits(&render(&updated), &original_image), "{key}: undo");
        assert_eq!(original.version(), 0);
        assert_eq!(updated.version(), 2);
    }
}

#[test]
fn updates_report_exactly_what_changed_and_read_no_file_again() {
    let files = files();
    let base = defaults(&files);
    let mut s = load(&base);
    let loads = s.cache.loads();
    assert_eq!(loads, 3, "torus, sky and texture read once");
    let tex = |var: &str, new: &str| {
        let mut vars = base.clone();
        vars.iter_mut().find(|(k, _)| *k == var).unwrap().1 = new.to_string();
        value(&load(&vars), tex_key(var))
    };
    fn tex_key(var: &str) -> &'static str {
        match var {
            "tex" => "tex.data",
            "c0" => "checks.color0.value",
            _ => "torus.to_world",
        }
    }
    // bitmap data: its image and the plastic that reads its mean; nothing else
    let v = tex("tex", &files.tex[1]);
    let c = set(&mut s, "tex.data", v).unwrap();
    let shiny = s
        .log()
        .objects
        .iter()
        .find(|r| r.key == "shiny")
        .unwrap()
        .handle;
    assert_eq!(c.images.len(), 1);
    assert!(matches!(c.images[0].data, TensorData::Host(_)));
    assert_eq!(c.bsdfs, [shiny], "the plastic's sampling weight changed");
    assert!(c.textures.is_empty() && c.emitters.is_empty() && !c.geometry && !c.sensor);
    // a checkerboard constant: one texture record (the constant); the rough plastic's
    // weight reads the checkerboard's mean
    let v = tex("c0", "0.1, 0.9, 0.2");
    let c = set(&mut s, "checks.color0.value", v).unwrap();
    assert_eq!(c.textures.len(), 1);
    assert_eq!(c.bsdfs.len(), 1);
    assert!(c.images.is_empty());
    // a mesh transform: geometry only, from the cached mesh
    let v = tex("torus_pos", "0, 0, 0");
    let c = set(&mut s, "torus.to_world", v).unwrap();
    assert!(c.geometry && c.bsdfs.is_empty() && c.textures.is_empty());
    assert_eq!(s.cache.loads(), loads, "no file was read again");
    // a camera: the sensor only
    let c = set(&mut s, "cam.x_fov", ParamValue::Float(20.0)).unwrap();
    assert!(c.sensor && !c.geometry && c.bsdfs.is_empty());
}

#[test]
fn refused_updates_change_nothing_and_name_the_key() {
    let files = files();
    let mut s = load(&defaults(&files));
    let before = render(&s);
    let flat = FlatScene::from_scene(s.setup()).unwrap();
    // accepted by the generic checks, refused by the plugin: equal inner and outer IORs
    let e = set(&mut s, "rough.eta", ParamValue::Float(1.0))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"rough.eta\"") && e.contains("must differ"),
        "{e}"
    );
    let e = set(&mut s, "frost.eta", ParamValue::Float(1.0))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"frost.eta\"") && e.contains("must differ"),
        "{e}"
    );
    // refused by the declared range before anything happens
    let e = set(
        &mut s,
        "bulb.intensity.value",
        ParamValue::Color(Vec3::new(1.0, -1.0, 0.0)),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("bulb.intensity.value") && e.contains("non-negative"),
        "{e}"
    );
    let e = set(&mut s, "cam.x_fov", ParamValue::Float(180.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("(0, 180)"), "{e}");
    assert_eq!(s.version(), 0);
    assert_same_debug(&FlatScene::from_scene(s.setup()).unwrap(), &flat, "refused");
    assert!(same_bits(&render(&s), &before));
    // a refused update among accepted ones: nothing of the batch is applied
    let mut p = s.traverse();
    p.set("sky.scale", ParamValue::Float(3.0)).unwrap();
    p.set("rough.eta", ParamValue::Float(1.0)).unwrap();
    assert!(s.update(&p.staged()).is_err());
    assert_eq!(value(&s, "sky.scale"), ParamValue::Float(1.0));
    assert!(same_bits(&render(&s), &before));
}

/// Device values for tests: host data behind the device interface, counting reads.
#[derive(Debug)]
struct FakeDevice {
    data: Vec<f32>,
    reads: AtomicUsize,
}

impl DeviceValues for FakeDevice {
    fn len(&self) -> usize {
        self.data.len()
    }
    fn to_host(&self) -> Result<Vec<f32>> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        Ok(self.data.clone())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn device_tensor(t: &ParamValue) -> (ParamValue, Arc<FakeDevice>) {
    let ParamValue::Tensor(t) = t else {
        panic!("not a tensor")
    };
    let dev = Arc::new(FakeDevice {
        data: t.host_data().unwrap().data.clone(),
        reads: AtomicUsize::new(0),
    });
    let v = ParamValue::Tensor(TensorValue {
        shape: t.shape,
        data: TensorData::Device(dev.clone()),
    });
    (v, dev)
}

#[test]
fn device_data_stays_on_the_device_unless_the_host_needs_it() {
    // a diffuse reads nothing of its texture's values: no host copy
    let desc = load_string(
        r#"<scene version="3.0.0"><texture type="bitmap" id="tex"><string name="filename" value="TEX"/></texture>
           <shape type="rectangle"><bsdf type="diffuse"><ref name="reflectance" id="tex"/></bsdf></shape></scene>"#
            .replace("TEX", &files().tex[0])
            .as_str(),
        &[],
    )
    .unwrap();
    let mut s = LoadedScene::new(desc).unwrap();
    assert!(s.keeps_on_device("tex.data"));
    assert!(!s.keeps_on_device("no.such.key"));
    let original = value(&s, "tex.data");
    let files = files();
    let mut vars = defaults(&files);
    vars.iter_mut().find(|(k, _)| *k == "tex").unwrap().1 = files.tex[1].clone();
    let new = value(&load(&vars), "tex.data");
    let (v, dev) = device_tensor(&new);
    let c = set(&mut s, "tex.data", v.clone()).unwrap();
    assert_eq!(dev.reads.load(Ordering::Relaxed), 0, "no host copy");
    assert_eq!(s.device_images(), [0]);
    assert!(matches!(
        c.images[..],
        [ImageChange {
            image: 0,
            data: TensorData::Device(_)
        }]
    ));
    assert!(c.bsdfs.is_empty(), "the diffuse record does not change");
    assert_eq!(value(&s, "tex.data"), v);
    // undo: the original host array, which the host slot still holds, goes back to
    // the device as a change
    let c = set(&mut s, "tex.data", original).unwrap();
    assert!(
        s.device_images().is_empty(),
        "undo leaves nothing device-only"
    );
    assert!(matches!(
        c.images[..],
        [ImageChange {
            image: 0,
            data: TensorData::Host(_)
        }]
    ));
    set(&mut s, "tex.data", v.clone()).unwrap();
    // a CPU render needs the values: fetched once
    s.fetch_device_images().unwrap();
    assert_eq!(dev.reads.load(Ordering::Relaxed), 1);
    assert!(s.device_images().is_empty());
    let ParamValue::Tensor(t) = &new else {
        unreachable!()
    };
    assert_eq!(
        s.setup().scene.textures.images[0].data,
        t.host_data().unwrap().data
    );

    // a plastic reads its texture's mean: the values come to the host at update
    let mut s = load(&defaults(&files));
    assert!(!s.keeps_on_device("tex.data"));
    let (v, dev) = device_tensor(&new);
    let c = set(&mut s, "tex.data", v).unwrap();
    assert_eq!(dev.reads.load(Ordering::Relaxed), 1);
    assert!(s.device_images().is_empty());
    assert!(matches!(c.images[0].data, TensorData::Host(_)));
    let fresh = load(&vars);
    assert!(same_bits(&render(&s), &render(&fresh)));
}

#[test]
fn keys_follow_mitsuba_names() {
    let files = files();
    let s = load(&defaults(&files));
    let keys: Vec<&str> = s.params().decls().iter().map(|d| d.key.as_str()).collect();
    let mut want: HashMap<&str, &str> = HashMap::new();
    for (k, kind) in [
        ("cam.to_world", "transform"),
        ("cam.x_fov", "float"),
        ("sky.data", "tensor"),
        ("sky.scale", "float"),
        ("bulb.position", "vector"),
        ("bulb.intensity.value", "color"),
        ("shiny.eta", "float"),
        ("shiny.specular_reflectance.value", "float"),
        ("lamp.emitter.radiance.value", "color"),
        ("lamp.bsdf.bsdf", "-"),
    ] {
        want.insert(k, kind);
    }
    for (k, kind) in want {
        if kind == "-" {
            assert!(!keys.contains(&k), "{k} is not a parameter");
            continue;
        }
        let d = s.params().decls().iter().find(|d| d.key == k);
        let d = d.unwrap_or_else(|| panic!("{k} missing from {keys:?}"));
        assert_eq!(d.value.kind(), kind, "{k}");
    }
    let ParamValue::Tensor(t) = value(&s, "sky.data") else {
        unreachable!()
    };
    assert_eq!(
        t.shape,
        [8, 16, 3],
        "an envmap's data is the image as given"
    );
    let _ = PathBuf::new();
}

#[test]
fn a_geometry_update_keeps_sphere_texture_coordinates_unread_where_nothing_reads_them() {
    let xml = r#"<scene version="3.0.0">
        <shape type="sphere" id="ball"><transform name="to_world"><translate x="1"/></transform>
            <bsdf type="diffuse"/></shape>
        <shape type="cube"><transform name="to_world"><translate x="-3"/></transform></shape>
        <emitter type="constant"/></scene>"#;
    let mut s = LoadedScene::new(load_string(xml, &[]).unwrap()).unwrap();
    assert!(s.setup().scene.geom.uv_unread);
    let mut moved = value(&s, "ball.to_world");
    let ParamValue::Transform(m) = &mut moved else {
        panic!("{moved:?}")
    };
    let mut up = m.m;
    up.w_axis.y += 0.5;
    *m = crate::math::Transform::from_matrix(up).unwrap();
    set(&mut s, "ball.to_world", moved).unwrap();
    assert_eq!(s.version(), 1);
    assert!(
        s.setup().scene.geom.uv_unread,
        "the rebuilt geometry keeps the flag"
    );
}
