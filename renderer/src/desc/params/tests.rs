//! Tests of [`super::SceneParams`]: checks, staging and `keep`.

use super::*;
use crate::desc::props::Props;
use crate::desc::{Category, ObjectDesc, SceneDesc};
use crate::scene::LoadedScene;

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

/// The seed scenario's dict, as `load_dict` builds it (top-level keys are ids).
fn seed() -> LoadedScene {
    let px = Arc::new(PixelArray {
        width: 6,
        height: 4,
        channels: 3,
        data: vec![0.5; 72],
    });
    let tex = obj(
        Category::Texture,
        "bitmap",
        None,
        vec![("bitmap", Value::Pixels(px))],
    );
    let bsdf = obj(Category::Bsdf, "diffuse", None, vec![("reflectance", tex)]);
    let shape = obj(
        Category::Shape,
        "rectangle",
        Some("shape"),
        vec![("bsdf", bsdf)],
    );
    let emitter = obj(Category::Emitter, "constant", Some("emitter"), vec![]);
    let bulb = obj(Category::Emitter, "point", Some("bulb"), vec![]);
    let film = obj(
        Category::Film,
        "hdrfilm",
        None,
        vec![("width", Value::Int(8)), ("height", Value::Int(8))],
    );
    let sensor = obj(
        Category::Sensor,
        "perspective",
        Some("sensor"),
        vec![("film", film)],
    );
    let root = obj(
        Category::Scene,
        "scene",
        None,
        vec![
            ("shape", shape),
            ("emitter", emitter),
            ("bulb", bulb),
            ("sensor", sensor),
        ],
    );
    let Value::Object(root) = root else {
        unreachable!()
    };
    LoadedScene::new(SceneDesc::new(root)).unwrap()
}

const KEY: &str = "shape.bsdf.reflectance.data";

fn pixels(h: usize, w: usize, v: f32) -> ParamValue {
    ParamValue::Tensor(TensorValue::host(Arc::new(PixelArray {
        width: w,
        height: h,
        channels: 3,
        data: vec![v; w * h * 3],
    })))
}

#[test]
fn the_seed_scene_lists_mitsubas_keys() {
    let p = seed().traverse();
    let keys: Vec<&str> = p.keys().collect();
    assert_eq!(
        keys,
        [
            "shape.to_world",
            "shape.bsdf.reflectance.data",
            "emitter.radiance.value",
            "bulb.position",
            "bulb.intensity.value",
            "sensor.to_world",
            "sensor.x_fov",
            "sensor.near_clip",
            "sensor.far_clip",
        ]
    );
    assert_eq!(p.get(KEY).unwrap().shape(), vec![4, 6, 3]);
    assert_eq!(
        p.get("emitter.radiance.value").unwrap(),
        &ParamValue::Float(1.0)
    );
    // Mitsuba 3.9.1: x_fov = 34.0221 degrees for the default 50 mm lens, square film
    let ParamValue::Float(fov) = p.get("sensor.x_fov").unwrap() else {
        panic!("not a float")
    };
    assert!((fov - 34.022057).abs() < 1e-4, "{fov}");
    assert!(p.table().contains("shape.bsdf.reflectance.data") && p.table().contains("(4, 6, 3)"));
}

#[test]
fn refused_values_name_key_and_shapes_and_stage_nothing() {
    let mut p = seed().traverse();
    let e = p.set(KEY, pixels(5, 5, 0.1)).unwrap_err().to_string();
    assert!(
        e.contains(KEY) && e.contains("(4, 6, 3)") && e.contains("(5, 5, 3)"),
        "{e}"
    );
    let e = p.set(KEY, ParamValue::Float(1.0)).unwrap_err().to_string();
    assert!(
        e.contains("expected a tensor") && e.contains("got a float of shape ()"),
        "{e}"
    );
    let ParamValue::Tensor(t) = pixels(4, 6, 0.1) else {
        unreachable!()
    };
    let mut nan = (**t.host_data().unwrap()).clone();
    nan.data[3 * 6 + 3 * 2 + 1] = f32::NAN;
    nan.data[40] = f32::INFINITY;
    let e = p
        .set(KEY, ParamValue::Tensor(TensorValue::host(Arc::new(nan))))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("NaN") && e.contains("row 1, column 2, channel 1"),
        "{e}"
    );
    for (key, v, want) in [
        ("sensor.x_fov", ParamValue::Float(180.0), "(0, 180)"),
        ("sensor.near_clip", ParamValue::Float(0.0), "(0, inf)"),
        (
            "emitter.radiance.value",
            ParamValue::Float(-1.0),
            "non-negative",
        ),
        (
            "emitter.radiance.value",
            ParamValue::Float(f64::INFINITY),
            "NaN or infinite",
        ),
        (
            "sensor.to_world",
            ParamValue::Transform(Transform {
                m: glam::Mat4::ZERO,
                inv: glam::Mat4::ZERO,
            }),
            "singular",
        ),
    ] {
        let e = p.set(key, v).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(want), "{key}: {e}");
    }
    let e = p.get("nope").unwrap_err().to_string();
    assert!(
        e.contains("\"nope\"") && e.contains("sensor.to_world"),
        "{e}"
    );
    assert!(p.changed().is_empty() && p.staged().is_empty());
    assert_eq!(p.get(KEY).unwrap().shape(), vec![4, 6, 3]);
}

#[test]
fn staged_values_are_read_back_the_last_one_wins_and_keep_filters() {
    let s = seed();
    let mut p = s.traverse();
    p.set("emitter.radiance.value", ParamValue::Float(2.0))
        .unwrap();
    p.set(KEY, pixels(4, 6, 0.25)).unwrap();
    p.set("emitter.radiance.value", ParamValue::Float(3.0))
        .unwrap();
    assert_eq!(p.changed(), ["emitter.radiance.value", KEY]);
    assert_eq!(
        p.get("emitter.radiance.value").unwrap(),
        &ParamValue::Float(3.0)
    );
    let staged = p.staged();
    assert_eq!(staged.len(), 2);
    assert_eq!(staged[0].1, ParamValue::Float(3.0));
    // a vector given for a point position stays a vector; a colour for it is accepted
    p.set("bulb.position", ParamValue::Color(Vec3::new(1.0, 2.0, 3.0)))
        .unwrap();
    assert_eq!(
        p.get("bulb.position").unwrap(),
        &ParamValue::Vector(Vec3::new(1.0, 2.0, 3.0))
    );
    p.keep(|k| k.starts_with("emitter") || k == KEY);
    assert_eq!(p.len(), 2);
    assert_eq!(p.changed(), ["emitter.radiance.value", KEY]);
    assert!(!p.contains("bulb.position") && p.get("bulb.position").is_err());
    // the scene itself is untouched until it is updated
    assert_eq!(
        s.traverse().get("emitter.radiance.value").unwrap(),
        &ParamValue::Float(1.0)
    );
}

#[test]
fn a_view_reads_the_values_another_view_updated() {
    let mut s = seed();
    let mut a = s.traverse();
    let mut b = s.traverse();
    a.set("emitter.radiance.value", ParamValue::Float(5.0))
        .unwrap();
    s.update(&a.staged()).unwrap();
    a.commit(s.params());
    assert!(a.changed().is_empty());
    b.set(KEY, pixels(4, 6, 0.75)).unwrap();
    b.refresh(s.params());
    assert_eq!(
        b.get("emitter.radiance.value").unwrap(),
        &ParamValue::Float(5.0)
    );
    assert_eq!(b.changed(), [KEY], "refresh keeps what is staged");
}
