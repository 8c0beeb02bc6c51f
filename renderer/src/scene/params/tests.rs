//! Tests of [`super::SceneParams`]: key names, validation, apply and update.

use super::*;
use crate::scene::props::Props;
use crate::scene::xml::load_string;

fn obj(cat: Category, kind: &str, id: Option<&str>, props: Vec<(&str, Value)>) -> Value {
    let loc = Loc::unknown("<dict>");
    let mut p = Props::new(loc.clone());
    for (k, v) in props {
        p.insert(k, v, loc.clone()).unwrap();
    }
    Value::Object(Arc::new(ObjectDesc {
        category: cat,
        kind: kind.into(),
        id: id.map(str::to_string),
        props: p,
        loc,
    }))
}

fn pixels(h: usize, w: usize, v: f32) -> Arc<PixelArray> {
    Arc::new(PixelArray {
        width: w,
        height: h,
        channels: 3,
        data: vec![v; w * h * 3],
    })
}

/// The seed scenario's dict, as `load_dict` builds it (top-level keys are ids).
fn seed_desc() -> SceneDesc {
    let tex = obj(
        Category::Texture,
        "bitmap",
        None,
        vec![("bitmap", Value::Pixels(pixels(4, 6, 0.5)))],
    );
    let bsdf = obj(Category::Bsdf, "diffuse", None, vec![("reflectance", tex)]);
    let shape = obj(
        Category::Shape,
        "rectangle",
        Some("shape"),
        vec![("bsdf", bsdf)],
    );
    let emitter = obj(Category::Emitter, "constant", Some("emitter"), vec![]);
    let look = Transform::look_at(Vec3::new(0., 0., 5.), Vec3::ZERO, Vec3::Y).unwrap();
    let film = obj(
        Category::Film,
        "hdrfilm",
        None,
        vec![("width", Value::Int(8))],
    );
    let sensor = obj(
        Category::Sensor,
        "perspective",
        Some("sensor"),
        vec![("to_world", Value::Transform(look)), ("film", film)],
    );
    let root = obj(
        Category::Scene,
        "scene",
        None,
        vec![("shape", shape), ("emitter", emitter), ("sensor", sensor)],
    );
    let Value::Object(root) = root else {
        unreachable!()
    };
    SceneDesc { root }
}

fn camera_scene(xml_sensor: &str) -> (SceneDesc, Scene) {
    let xml = format!("<scene version=\"3.0.0\">{xml_sensor}<bsdf type=\"diffuse\" id=\"mat\"><rgb name=\"reflectance\" value=\"0.2, 0.3, 0.4\"/></bsdf></scene>");
    let desc = load_string(&xml, &[]).unwrap();
    let scene = build_scene(&desc).unwrap();
    (desc, scene)
}

const SENSOR: &str = r#"<sensor type="perspective"><float name="fov" value="40"/><string name="fov_axis" value="y"/>
    <film type="hdrfilm"><integer name="width" value="64"/><integer name="height" value="32"/></film></sensor>"#;

#[test]
fn seed_scene_keys_follow_mitsuba_names() {
    let (_, scene) = camera_scene(SENSOR);
    let p = SceneParams::traverse(&seed_desc(), &scene);
    let keys: Vec<&str> = p.keys().collect();
    for k in [
        "shape.to_world",
        "shape.bsdf.reflectance.data",
        "emitter.radiance.value",
        "sensor.to_world",
        "sensor.x_fov",
        "sensor.near_clip",
    ] {
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
    assert_eq!(
        p.get("shape.bsdf.reflectance.data").unwrap().shape(),
        vec![4, 6, 3]
    );
    assert_eq!(
        p.get("emitter.radiance.value").unwrap(),
        &ParamValue::Float(1.0)
    );
    assert_eq!(
        p.get("shape.to_world").unwrap(),
        &ParamValue::Transform(Transform::IDENTITY)
    );
}

#[test]
fn xml_names_ids_categories_and_skips_refs() {
    let xml = r#"<scene version="3.0.0">
        <bsdf type="diffuse" id="mat"><rgb name="reflectance" value="0.1, 0.2, 0.3"/></bsdf>
        <shape type="sphere"><bsdf type="diffuse"/></shape>
        <shape type="sphere" id="ball"><ref id="mat"/><emitter type="area"><rgb name="radiance" value="2"/></emitter></shape>
        <shape type="sphere"/></scene>"#;
    let desc = load_string(xml, &[]).unwrap();
    let (_, scene) = camera_scene("");
    let p = SceneParams::traverse(&desc, &scene);
    let keys: Vec<&str> = p.keys().collect();
    assert_eq!(
        keys,
        [
            "mat.reflectance.value",
            "shape.to_world",
            "shape.bsdf.reflectance.value",
            "ball.to_world",
            "ball.emitter.radiance.value",
            "shape_1.to_world",
        ]
    );
    let c = p.get("mat.reflectance.value").unwrap();
    assert_eq!(c, &ParamValue::Color(Vec3::new(0.1, 0.2, 0.3)));
    assert_eq!(
        p.get("shape.bsdf.reflectance.value").unwrap(),
        &ParamValue::Float(0.5)
    );
}

#[test]
fn refused_values_name_key_and_shapes_and_change_nothing() {
    let (_, scene) = camera_scene(SENSOR);
    let mut p = SceneParams::traverse(&seed_desc(), &scene);
    let key = "shape.bsdf.reflectance.data";
    let e = p
        .set(key, ParamValue::Tensor(pixels(5, 5, 0.1)))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(key) && e.contains("(4, 6, 3)") && e.contains("(5, 5, 3)"),
        "{e}"
    );
    let e = p.set(key, ParamValue::Float(1.0)).unwrap_err().to_string();
    assert!(
        e.contains("expected a tensor") && e.contains("got a float of shape ()"),
        "{e}"
    );
    let mut nan = (*pixels(4, 6, 0.1)).clone();
    nan.data[7] = f32::NAN;
    let e = p
        .set(key, ParamValue::Tensor(Arc::new(nan)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("NaN"), "{e}");
    let e = p
        .set("sensor.x_fov", ParamValue::Float(180.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("(0, 180)"), "{e}");
    let e = p.get("nope").unwrap_err().to_string();
    assert!(
        e.contains("\"nope\"") && e.contains("sensor.to_world"),
        "{e}"
    );
    assert!(p.changed().is_empty());
    assert_eq!(p.get(key).unwrap(), &ParamValue::Tensor(pixels(4, 6, 0.5)));
}

#[test]
fn apply_writes_new_values_without_touching_the_old_description() {
    let (_, scene) = camera_scene(SENSOR);
    let desc = seed_desc();
    let mut p = SceneParams::traverse(&desc, &scene);
    p.set(
        "shape.bsdf.reflectance.data",
        ParamValue::Tensor(pixels(4, 6, 0.25)),
    )
    .unwrap();
    p.set("emitter.radiance.value", ParamValue::Float(3.0))
        .unwrap();
    assert_eq!(
        p.changed(),
        ["shape.bsdf.reflectance.data", "emitter.radiance.value"]
    );
    let new = p.apply(&desc).unwrap();
    let fresh = SceneParams::traverse(&new, &scene);
    assert_eq!(
        fresh.get("shape.bsdf.reflectance.data").unwrap(),
        &ParamValue::Tensor(pixels(4, 6, 0.25))
    );
    assert_eq!(
        fresh.get("emitter.radiance.value").unwrap(),
        &ParamValue::Float(3.0)
    );
    let old = SceneParams::traverse(&desc, &scene);
    assert_eq!(
        old.get("shape.bsdf.reflectance.data").unwrap(),
        &ParamValue::Tensor(pixels(4, 6, 0.5))
    );
}

#[test]
fn x_fov_reads_the_built_camera_and_update_rebuilds() {
    let (desc, scene) = camera_scene(SENSOR);
    let mut p = SceneParams::traverse(&desc, &scene);
    // fov 40 degrees on the y axis of a 2:1 film
    let want = 2.0 * ((20f64).to_radians().tan() * 2.0).atan().to_degrees();
    let ParamValue::Float(got) = *p.get("sensor.x_fov").unwrap() else {
        panic!()
    };
    assert!((got - want).abs() < 1e-3, "{got} vs {want}");
    p.set("sensor.x_fov", ParamValue::Float(30.0)).unwrap();
    p.set(
        "mat.reflectance.value",
        ParamValue::Vector(Vec3::new(0.9, 0.8, 0.7)),
    )
    .unwrap();
    let (new_desc, new_scene) = p.update(&desc).unwrap();
    assert!((new_scene.sensor.camera.x_fov - 30.0).abs() < 1e-4);
    assert!(p.changed().is_empty());
    let again = SceneParams::traverse(&new_desc, &new_scene);
    let c = again.get("mat.reflectance.value").unwrap();
    assert_eq!(c, &ParamValue::Color(Vec3::new(0.9, 0.8, 0.7)));
}

#[test]
fn file_bitmaps_are_parameters_and_updates_replace_the_file() {
    let dir = std::env::temp_dir().join(format!("hg_params_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tex.exr");
    let img = crate::io::Image {
        width: 3,
        height: 2,
        channels: 3,
        data: (0..18).map(|i| i as f32 / 18.0).collect(),
    };
    crate::io::write_image(&file, &img).unwrap();
    let xml = format!(
        r#"<scene version="3.0.0"><bsdf type="diffuse" id="mat"><texture type="bitmap" name="reflectance">
        <string name="filename" value="{}"/></texture></bsdf></scene>"#,
        file.display()
    );
    let desc = load_string(&xml, &[]).unwrap();
    let scene = build_scene(&desc).unwrap();
    let mut p = SceneParams::traverse(&desc, &scene);
    let ParamValue::Tensor(px) = p.get("mat.reflectance.data").unwrap().clone() else {
        panic!("not a tensor")
    };
    assert_eq!((px.height, px.width, px.channels), (2, 3, 3));
    assert_eq!(px.data, img.data);
    p.set(
        "mat.reflectance.data",
        ParamValue::Tensor(pixels(2, 3, 0.25)),
    )
    .unwrap();
    let (new_desc, new_scene) = p.update(&desc).unwrap();
    let again = SceneParams::traverse(&new_desc, &new_scene);
    assert_eq!(
        again.get("mat.reflectance.data").unwrap(),
        &ParamValue::Tensor(pixels(2, 3, 0.25))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn keep_filters_keys_and_reindexes() {
    let (_, scene) = camera_scene(SENSOR);
    let mut p = SceneParams::traverse(&seed_desc(), &scene);
    p.keep(|k| k.starts_with("sensor."));
    let keys: Vec<&str> = p.keys().collect();
    assert_eq!(
        keys,
        [
            "sensor.to_world",
            "sensor.x_fov",
            "sensor.near_clip",
            "sensor.far_clip"
        ]
    );
    assert!(p.get("shape.to_world").is_err());
    p.set("sensor.x_fov", ParamValue::Float(20.0)).unwrap();
    assert_eq!(p.changed(), ["sensor.x_fov"]);
}

#[test]
fn sensor_only_changes_rebuild_only_the_sensor_and_match_a_full_rebuild() {
    let xml = format!(
        "<scene version=\"3.0.0\">{SENSOR}<shape type=\"sphere\"/><emitter type=\"constant\"/></scene>"
    );
    let desc = load_string(&xml, &[]).unwrap();
    let scene = build_scene(&desc).unwrap();
    let mut p = SceneParams::traverse(&desc, &scene);
    p.set("sensor.x_fov", ParamValue::Float(25.0)).unwrap();
    let look = Transform::look_at(Vec3::new(0., 1., 6.), Vec3::ZERO, Vec3::Y).unwrap();
    p.set("sensor.to_world", ParamValue::Transform(look))
        .unwrap();
    let mut q = p.clone();
    let (fast_desc, fast) = p.update_from(&desc, &scene).unwrap();
    let (full_desc, full) = q.update(&desc).unwrap();
    assert_eq!(format!("{:?}", fast.sensor), format!("{:?}", full.sensor));
    assert_eq!(fast.sensor.camera.x_fov, 25.0);
    assert_eq!(
        format!("{:?}", fast_desc.root),
        format!("{:?}", full_desc.root)
    );
    assert_eq!(fast.geom.shapes.len(), 1);
    // a non-sensor change takes the full path
    let mut p = SceneParams::traverse(&fast_desc, &fast);
    p.set(
        "shape.to_world",
        ParamValue::Transform(Transform::translate(Vec3::X)),
    )
    .unwrap();
    p.set("sensor.x_fov", ParamValue::Float(30.0)).unwrap();
    let (_, moved) = p.update_from(&fast_desc, &fast).unwrap();
    assert!(
        moved.bsphere.0.x > 0.5,
        "the sphere moved: {:?}",
        moved.bsphere
    );
}

#[test]
fn shapes_format_as_numpy() {
    assert_eq!(shape_str(&[]), "()");
    assert_eq!(shape_str(&[3]), "(3,)");
    assert_eq!(shape_str(&[4, 6, 3]), "(4, 6, 3)");
}
