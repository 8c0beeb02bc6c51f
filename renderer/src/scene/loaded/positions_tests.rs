//! Tests of mesh vertex positions as parameters: a write moves the mesh in place and
//! refits the BVH, giving the geometry a fresh load of the edited description gives
//! and the same hits; a write that changes the primitive set rebuilds; the two keys and
//! `to_world` stay consistent; refused writes change nothing.

use std::sync::Arc;

use super::tests::{assert_same_debug, defaults, files, load, render, same_bits, set, value};
use super::*;
use crate::accel::BvhNode;
use crate::desc::params::ArrayValue;
use crate::math::{Pcg32, Ray, Transform, Vec3};
use crate::scene::Scene;
use crate::shapes::test_util::closest;
use crate::shapes::AnyShape;

fn positions(s: &LoadedScene, key: &str) -> ArrayValue {
    match value(s, key) {
        ParamValue::Array(a) => a,
        v => panic!("{key} is not an array: {v:?}"),
    }
}

fn points(a: &ArrayValue) -> Vec<Vec3> {
    a.data
        .chunks_exact(3)
        .map(|c| Vec3::new(c[0], c[1], c[2]))
        .collect()
}

fn array(shape: Vec<usize>, p: &[Vec3]) -> ParamValue {
    let data = p.iter().flat_map(|v| v.to_array()).collect();
    ParamValue::Array(ArrayValue {
        shape,
        data: Arc::new(data),
    })
}

fn torus_handle(s: &LoadedScene) -> usize {
    let rec = s.log().objects.iter().find(|r| r.key == "torus").unwrap();
    rec.handle as usize
}

/// The torus's world-space vertices in `s`'s geometry.
fn torus_vertices(s: &LoadedScene) -> Vec<Vec3> {
    let AnyShape::Mesh(m) = s.setup().scene.geom.shapes[torus_handle(s)].geom else {
        panic!("the torus is a mesh")
    };
    let v0 = m.first_vertex as usize;
    s.setup().scene.geom.mesh.positions[v0..v0 + m.vertex_count as usize].to_vec()
}

/// Every box of `s`'s BVH holds its primitives (leaves) or children (interior nodes).
fn assert_boxes_hold_their_contents(s: &Scene) {
    let holds = |outer: &BvhNode, b: crate::math::Aabb| {
        (0..3).all(|a| outer.min[a] <= b.min[a] && b.max[a] <= outer.max[a])
    };
    for (i, n) in s.bvh.nodes.iter().enumerate() {
        if n.is_leaf() {
            for slot in n.left_first..n.left_first + n.count {
                let p = s.bvh.prim_indices[slot as usize];
                assert!(holds(n, s.geom.prim_bounds(p)), "leaf {i}, prim {p}");
            }
        } else {
            let l = n.left_first as usize;
            for c in [l, l + 1] {
                assert!(holds(n, s.bvh.nodes[c].bounds()), "node {i}, child {c}");
            }
        }
    }
}

/// `n` rays through both scenes' bounding sphere hit the same primitive at the same
/// distance in both, as brute force over `a`'s primitives does, and shadow rays agree.
fn assert_same_hits(a: &Scene, b: &Scene, n: usize) {
    let (c, r) = a.bsphere;
    let mut rng = Pcg32::new(5, 9);
    let mut unit = || {
        let z = 2.0 * rng.next_f32() - 1.0;
        let phi = std::f32::consts::TAU * rng.next_f32();
        let s = (1.0 - z * z).max(0.0).sqrt();
        (Vec3::new(s * phi.cos(), s * phi.sin(), z), rng.next_f32())
    };
    let mut hits = 0;
    for i in 0..n {
        let (from, _) = unit();
        let (to, k) = unit();
        let o = c + from * (2.0 * r);
        let mut ray = Ray::new(o, (c + to * (k * r) - o).normalize());
        let ha = a.bvh.intersect(&*a.geom, &ray);
        let hb = b.bvh.intersect(&*b.geom, &ray);
        let brute = closest(&a.geom, &ray);
        let key = |h: Option<(u32, f32, crate::math::Vec2)>| h.map(|(p, t, _)| (p, t.to_bits()));
        assert_eq!(key(ha), key(hb), "ray {i}: refit vs fresh tree");
        assert_eq!(
            ha.map(|h| h.1.to_bits()),
            brute.map(|h| h.t.to_bits()),
            "ray {i}: tree vs brute force"
        );
        hits += ha.is_some() as usize;
        ray.tmax = 3.0 * r * k;
        assert_eq!(
            a.bvh.occluded(&*a.geom, &ray),
            b.bvh.occluded(&*b.geom, &ray),
            "shadow ray {i}"
        );
    }
    assert!(hits > n / 10, "only {hits} of {n} rays hit something");
}

#[test]
fn moving_a_mesh_refits_the_bvh_and_gives_what_a_fresh_load_gives() {
    let mut s = load(&defaults(&files()));
    let before = render(&s);
    let p0 = positions(&s, "torus.positions");
    let n = p0.shape[0];
    assert_eq!(p0.shape, [n, 3]);
    assert_eq!(positions(&s, "torus.vertex_positions").shape, [3 * n]);
    assert_eq!(
        points(&p0),
        torus_vertices(&s),
        "the parameter shows world space"
    );
    // a non-rigid move: stretched, bent and shifted
    let moved: Vec<Vec3> = points(&p0)
        .iter()
        .map(|p| Vec3::new(1.2 * p.x + 0.1, p.y + 0.2 * (3.0 * p.x).sin(), p.z - 0.2))
        .collect();
    let c = set(&mut s, "torus.positions", array(vec![n, 3], &moved)).unwrap();
    assert!(c.refit && !c.geometry, "{c:?}");
    assert!(c.bsdfs.is_empty() && c.textures.is_empty() && c.emitters.is_empty() && !c.sensor);
    assert_eq!(torus_vertices(&s), moved);
    assert_eq!(points(&positions(&s, "torus.vertex_positions")), moved);
    assert_eq!(
        value(&s, "torus.to_world"),
        ParamValue::Transform(Transform::IDENTITY),
        "the written positions include the transform"
    );
    let fresh = LoadedScene::new(s.desc().clone()).unwrap();
    assert_same_debug(&s.setup().scene.geom, &fresh.setup().scene.geom, "geometry");
    assert_eq!(s.setup().scene.bsphere, fresh.setup().scene.bsphere);
    assert_eq!(
        s.setup().scene.bvh.nodes.len(),
        LoadedScene::new(load(&defaults(&files())).desc().clone())
            .unwrap()
            .setup()
            .scene
            .bvh
            .nodes
            .len(),
        "a refit keeps the tree"
    );
    assert_boxes_hold_their_contents(&s.setup().scene);
    assert_same_hits(&s.setup().scene, &fresh.setup().scene, 20_000);
    let after = render(&s);
    assert!(same_bits(&after, &render(&fresh)));
    assert!(!same_bits(&after, &before), "the torus moved");
}

#[test]
fn a_triangle_that_degenerates_rebuilds_instead_of_refitting() {
    let mut s = load(&defaults(&files()));
    let p0 = positions(&s, "torus.vertex_positions");
    let prims = s.setup().scene.geom.prims.len();
    let mut moved = points(&p0);
    // collapse the torus's first triangle onto its first vertex
    let AnyShape::Mesh(m) = s.setup().scene.geom.shapes[torus_handle(&s)].geom else {
        panic!("the torus is a mesh")
    };
    let tri = s.setup().scene.geom.mesh.tris[m.first_tri as usize];
    let v = tri.map(|i| (i - m.first_vertex) as usize);
    moved[v[1]] = moved[v[0]];
    moved[v[2]] = moved[v[0]];
    let c = set(
        &mut s,
        "torus.vertex_positions",
        array(p0.shape.clone(), &moved),
    )
    .unwrap();
    assert!(c.geometry && !c.refit, "{c:?}");
    assert!(s.setup().scene.geom.prims.len() < prims);
    let fresh = LoadedScene::new(s.desc().clone()).unwrap();
    assert_same_debug(&s.setup().scene.geom, &fresh.setup().scene.geom, "geometry");
    assert_same_hits(&s.setup().scene, &fresh.setup().scene, 5_000);
}

#[test]
fn written_positions_and_to_world_compose_in_the_order_they_are_set() {
    let mut s = load(&defaults(&files()));
    let p0 = points(&positions(&s, "torus.positions"));
    let n = p0.len();
    let up: Vec<Vec3> = p0.iter().map(|p| *p + Vec3::new(0.5, 0.0, 0.0)).collect();
    set(&mut s, "torus.positions", array(vec![n, 3], &up)).unwrap();
    // a transform set afterwards applies to the written (world-space) positions
    let t = Transform::translate(Vec3::new(0.0, 1.0, 0.0));
    let c = set(&mut s, "torus.to_world", ParamValue::Transform(t)).unwrap();
    assert!(c.geometry);
    let want: Vec<Vec3> = up.iter().map(|p| t.point(*p)).collect();
    assert_eq!(torus_vertices(&s), want);
    assert_eq!(points(&positions(&s, "torus.positions")), want);
    assert_eq!(points(&positions(&s, "torus.vertex_positions")), want);
    assert_eq!(value(&s, "torus.to_world"), ParamValue::Transform(t));
    // and positions written again replace both
    let c = set(&mut s, "torus.positions", array(vec![n, 3], &p0)).unwrap();
    assert!(c.refit);
    assert_eq!(torus_vertices(&s), p0);
    assert_eq!(
        value(&s, "torus.to_world"),
        ParamValue::Transform(Transform::IDENTITY)
    );
}

#[test]
fn refused_position_writes_name_the_key_and_change_nothing() {
    let mut s = load(&defaults(&files()));
    let p0 = positions(&s, "torus.positions");
    let n = p0.shape[0];
    let (version, desc) = (s.version(), format!("{:?}", s.desc()));
    let pts = points(&p0);
    let mut nan = pts.clone();
    nan[5].y = f32::NAN;
    for (key, v, want) in [
        (
            "torus.positions",
            array(vec![n - 1, 3], &pts[1..]),
            format!(
                "expected an array of shape ({n}, 3), got an array of shape ({}, 3)",
                n - 1
            ),
        ),
        (
            "torus.positions",
            array(vec![3 * n], &pts),
            format!("shape ({n}, 3), got an array of shape ({},)", 3 * n),
        ),
        (
            "torus.vertex_positions",
            ParamValue::Vector(Vec3::ONE),
            "got a vector of shape (3,)".to_string(),
        ),
        (
            "torus.positions",
            array(vec![n, 3], &nan),
            "NaN or infinite values (the first at flat index 16, row 5, column 1)".to_string(),
        ),
    ] {
        let e = set(&mut s, key, v).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(&want), "{e}");
    }
    assert_eq!(s.version(), version);
    assert_eq!(format!("{:?}", s.desc()), desc);
    assert_eq!(positions(&s, "torus.positions"), p0);
}

#[test]
fn every_mesh_has_positions_and_analytic_shapes_have_none() {
    let s = load(&defaults(&files()));
    let keys: Vec<&str> = s.params().decls().iter().map(|d| d.key.as_str()).collect();
    assert!(keys.contains(&"torus.positions") && keys.contains(&"torus.vertex_positions"));
    for analytic in ["ball", "floor", "lamp"] {
        assert!(
            !keys
                .iter()
                .any(|k| k.starts_with(&format!("{analytic}.")) && k.contains("positions")),
            "{analytic}: {keys:?}"
        );
    }
}
