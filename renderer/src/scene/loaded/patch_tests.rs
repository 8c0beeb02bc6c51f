//! Tests of the values [`super::LoadedScene::update`] writes in place: for every
//! editable key of every plugin, the update replays no build and leaves bit for bit
//! the records of a fresh load of the edited description.

use super::tests::{assert_same_debug, files, set, value};
use super::*;
use crate::desc::xml::load_string;
use crate::flat::FlatScene;
use crate::plugin::patch::{EditableKey, Place};

/// A small scene holding plugin `name` of `category` with properties
/// `props`; a texture is a plastic's diffuse reflectance (whose sampling weight reads
/// the texture's mean).
fn scene(category: &str, name: &str, props: &str) -> String {
    let named = if category == "texture" {
        r#" name="diffuse_reflectance""#
    } else {
        ""
    };
    let obj = format!(r#"<{category} type="{name}"{named}>{props}</{category}>"#);
    let body = match (category, name) {
        ("emitter", "area") => format!(r#"<shape type="sphere">{obj}</shape>"#),
        ("emitter", _) => format!(r#"{obj}<shape type="sphere"/>"#),
        ("bsdf", _) => format!(r#"<shape type="sphere">{obj}</shape><emitter type="constant"/>"#),
        _ => format!(
            r#"<shape type="sphere"><bsdf type="plastic">{obj}</bsdf></shape><emitter type="constant"/>"#
        ),
    };
    format!(
        r#"<scene version="3.0.0"><sensor type="perspective"><film type="hdrfilm">
           <integer name="width" value="8"/><integer name="height" value="6"/></film></sensor>
           {body}</scene>"#
    )
}

/// The description of editable key `e`, holding value `i` (0 or 1) of two.
fn property(e: &EditableKey, i: usize) -> String {
    match e.place {
        Place::Image => format!(r#"<string name="filename" value="{}"/>"#, files().tex[i]),
        Place::Constant { .. } => {
            let name = e.key.strip_suffix(".value").expect("a constant's key");
            let rgb = ["0.25, 0.5, 0.75", "0.5, 0.125, 0.375"][i];
            format!(r#"<rgb name="{name}" value="{rgb}"/>"#)
        }
    }
}

fn load(xml: &str) -> LoadedScene {
    LoadedScene::new(load_string(xml, &[]).unwrap()).unwrap()
}

/// Every editable key of every plugin, with its category and plugin name.
fn editable_keys() -> Vec<(&'static str, &'static str, EditableKey)> {
    let mut v = Vec::new();
    for e in crate::bsdfs::REGISTRY {
        v.extend(e.editable.iter().map(|k| ("bsdf", e.info.name, *k)));
    }
    for e in crate::textures::REGISTRY {
        v.extend(e.editable.iter().map(|k| ("texture", e.info.name, *k)));
    }
    for e in crate::emitters::REGISTRY {
        v.extend(e.editable.iter().map(|k| ("emitter", e.info.name, *k)));
    }
    v
}

#[test]
fn every_editable_key_is_written_in_place_as_a_fresh_load_builds_it() {
    let keys = editable_keys();
    assert!(keys.len() >= 15, "{} editable keys", keys.len());
    for (category, name, e) in keys {
        let mut s = load(&scene(category, name, &property(&e, 0)));
        let fresh = load(&scene(category, name, &property(&e, 1)));
        // the key of the plugin's object (named by its place in the description)
        let key = (fresh.params().decls().iter())
            .find(|d| {
                d.key.ends_with(&format!(".{}", e.key)) && fresh.log.objects[d.owner].kind == name
            })
            .map(|d| d.key.clone())
            .unwrap_or_else(|| panic!("{category} {name}: no {} declared", e.key));
        let what = format!("{category} {name}: {key}");
        let v = value(&fresh, &key);
        assert_ne!(v, value(&s, &key), "{what}: the edit changes the value");
        // a write in place, not a replay of the plugin's build (a reader whose plugin
        // has no hook for the means it reads is rebuilt)
        let mut p = s.traverse();
        p.set(&key, v.clone()).unwrap();
        let staged = p.staged();
        let plan = s.plan(&staged).unwrap();
        let replay: Vec<usize> = plan.replay.iter().map(|(r, _)| *r).collect();
        assert!(
            replay.iter().all(|&r| s.reads_means(r)),
            "{what}: replays {replay:?}"
        );
        let changes = set(&mut s, &key, v).unwrap();
        assert!(!changes.is_empty(), "{what}");
        let (a, b) = (
            FlatScene::from_scene(s.setup()).unwrap(),
            FlatScene::from_scene(fresh.setup()).unwrap(),
        );
        assert_same_debug(&a, &b, &what);
        for k in fresh.traverse().keys() {
            assert_eq!(value(&s, k), value(&fresh, k), "{what}: then {k} differs");
        }
    }
}
