//! Tests of the shape registry and the shapes' geometry queries.

use std::sync::Arc;

#[test]
fn the_registry_has_every_shape_with_its_manual_and_suggests_the_nearest() {
    use crate::plugin::registry::testing::{check_registry, scene_error};
    check_registry("shape", REGISTRY, KNOWN);
    let e = scene_error(r#"<shape type="sphre"/>"#);
    assert!(
        e.contains("did you mean \"sphere\"") && e.contains("<string>:2:"),
        "{e}"
    );
}

use super::test_util::{shape_desc, try_build};
use super::*;
use crate::desc::props::{Props, Value};
use crate::error::Loc;

fn nested(category: Category, kind: &str) -> Value {
    Value::Object(Arc::new(ObjectDesc {
        category,
        kind: kind.into(),
        id: None,
        props: Props::new(Loc::new("test.xml", 20, 9)),
        loc: Loc::new("test.xml", 20, 9),
    }))
}

#[test]
fn bsdfs_default_is_shared_and_nested_one_is_used() {
    let geom = try_build(&[
        shape_desc("sphere", vec![]),
        shape_desc(
            "rectangle",
            vec![("mat", nested(Category::Bsdf, "diffuse"))],
        ),
        shape_desc("cube", vec![]),
    ])
    .unwrap();
    let s = &geom.shapes;
    assert_eq!(s.len(), 3);
    assert_eq!(s[0].bsdf, s[2].bsdf, "one shared default BSDF");
    assert_ne!(s[0].bsdf, s[1].bsdf);
    assert!(s.iter().all(|s| s.emitter == NO_EMITTER));
    assert_eq!(geom.area_dists.len(), 3);
    // prims: sphere, rectangle, then the cube's 12 triangles
    assert_eq!(geom.prims.len(), 14);
    assert_eq!(geom.prims[2], Prim { shape: 2, index: 0 });
}

#[test]
fn unknown_plugins_wrong_emitters_and_leftover_keys_are_errors() {
    let e = try_build(&[shape_desc("teapot", vec![])])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("teapot") && e.contains("sphere") && e.contains("test.xml:3"),
        "{e}"
    );
    let point = nested(Category::Emitter, "point");
    let e = try_build(&[shape_desc("disk", vec![("light", point)])])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("area") && e.contains("point") && e.contains("test.xml:20"),
        "{e}"
    );
    let tex = nested(Category::Texture, "bitmap");
    let e = try_build(&[shape_desc("disk", vec![("t", tex)])])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("nested texture") && e.contains("disk"), "{e}");
    // a group is built at the top level only, and placed by instances
    let e = try_build(&[shape_desc("shapegroup", vec![])])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("only allowed at the scene's top level") && e.contains("test.xml:3"),
        "{e}"
    );
    let e = try_build(&[shape_desc("cube", vec![("flip_normals", Value::Int(1))])])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("flip_normals") && e.contains("boolean"), "{e}");
}

#[test]
fn built_scene_intersects_through_the_bvh() {
    use crate::desc::SceneDesc;
    let tw = Transform::translate(Vec3::new(0.0, 0.0, -5.0));
    let shapes = [
        shape_desc(
            "sphere",
            vec![("center", Value::Point(Vec3::new(3.0, 0.0, 0.0)))],
        ),
        shape_desc("cube", vec![("to_world", Value::Transform(tw))]),
    ];
    let mut root = Props::new(Loc::new("test.xml", 1, 1));
    for s in &shapes {
        root.push_object(s.clone(), s.loc.clone());
    }
    let root = Arc::new(ObjectDesc {
        category: Category::Scene,
        kind: "scene".into(),
        id: None,
        props: root,
        loc: Loc::new("test.xml", 1, 1),
    });
    let setup = crate::scene::build_scene(&SceneDesc::new(root)).unwrap();
    let h = setup
        .scene
        .intersect(&Ray::new(Vec3::new(3.0, 0.0, 10.0), -Vec3::Z))
        .unwrap();
    assert!((h.t - 9.0).abs() < 1e-5 && h.shape == 0);
    let h = setup
        .scene
        .intersect(&Ray::new(Vec3::new(0.2, 0.1, 10.0), -Vec3::Z))
        .unwrap();
    assert!((h.t - 14.0).abs() < 1e-5 && h.shape == 1 && (h.ng - Vec3::Z).length() < 1e-6);
    assert!(setup
        .scene
        .intersect(&Ray::new(Vec3::new(1.5, 0.0, 10.0), -Vec3::Z))
        .is_none());
    let mut r = Ray::new(Vec3::new(0.2, 0.1, 10.0), -Vec3::Z);
    r.tmax = 13.9;
    assert!(!setup.scene.occluded(&r));
    r.tmax = 14.1;
    assert!(setup.scene.occluded(&r));
    let (c, radius) = setup.scene.bsphere;
    assert!(radius > 4.0 && c.is_finite());
}
