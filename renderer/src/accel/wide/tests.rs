//! Wide-BVH tests: every SIMD level finds the binary tree's hits on the shipped meshes.

use super::*;
use crate::accel::simd::SimdLevel;
use crate::desc::xml;
use crate::math::warp::square_to_uniform_sphere;
use crate::math::{Pcg32, Ray, Vec2, Vec3};
use crate::scene::{build_scene, RenderSetup};
use crate::shapes::Geometry;

/// A scene holding the shipped meshes (icosphere, torus) and analytic shapes.
fn shipped_meshes() -> RenderSetup {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/meshes");
    let path = |f: &str| assets.join(f).to_string_lossy().into_owned();
    let xml = format!(
        r#"<scene version="3.0.0">
            <shape type="ply"><string name="filename" value="{}"/></shape>
            <shape type="obj"><string name="filename" value="{}"/>
                <transform name="to_world"><translate x="1.5"/></transform></shape>
            <shape type="sphere"><point name="center" value="-1.5, 0, 0"/>
                <float name="radius" value="0.5"/></shape>
            <shape type="rectangle"><transform name="to_world">
                <translate z="-1.2"/><scale value="3"/></transform></shape>
            <shape type="rectangle"><transform name="to_world">
                <translate y="-1.1"/><rotate x="1" angle="-90"/><scale value="2"/></transform></shape>
            <shape type="disk"><transform name="to_world">
                <translate x="-1.5" y="1.0"/><rotate x="1" angle="60"/><scale value="0.6"/></transform></shape>
        </scene>"#,
        path("icosphere.ply"),
        path("torus.obj")
    );
    build_scene(&xml::load_string(&xml, &[]).unwrap()).unwrap()
}

fn u2(rng: &mut Pcg32) -> Vec2 {
    Vec2::new(rng.next_f32(), rng.next_f32())
}

/// Ray `k` of the test: from a shell around the scene (or inside it) towards a random
/// point, a mesh vertex, or a point on a mesh edge; some axis-aligned, some shortened.
fn test_ray(g: &Geometry, rng: &mut Pcg32, k: usize) -> Ray {
    let pos = &g.mesh.positions;
    let target = match k % 4 {
        0 => Vec3::new(
            rng.next_f32() * 5.0 - 2.5,
            rng.next_f32() * 3.0 - 1.5,
            rng.next_f32() * 3.0 - 1.5,
        ),
        1 => pos[rng.next_u32() as usize % pos.len()],
        _ => {
            let t = g.mesh.tris[rng.next_u32() as usize % g.mesh.tris.len()];
            let e = rng.next_u32() as usize % 3;
            let (a, b) = (pos[t[e] as usize], pos[t[(e + 1) % 3] as usize]);
            // the edge's midpoint or an arbitrary point of it
            let s = if k % 8 < 4 { 0.5 } else { rng.next_f32() };
            a + (b - a) * s
        }
    };
    let o = if k % 3 == 0 {
        target + square_to_uniform_sphere(u2(rng)) * (0.2 + rng.next_f32())
    } else {
        square_to_uniform_sphere(u2(rng)) * 4.0
    };
    let d = if k % 50 == 0 {
        // axis-aligned directions: zero components in the box and triangle tests
        [Vec3::X, -Vec3::Y, Vec3::Z, -Vec3::X][k / 50 % 4]
    } else {
        (target - o).normalize()
    };
    let mut r = Ray::new(if k % 50 == 0 { target - d * 3.0 } else { o }, d);
    if k % 5 == 0 {
        r.tmax = rng.next_f32() * 6.0;
    }
    r
}

/// Whether two distances agree within a few ulps of their size.
fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 4.0 * f32::EPSILON * a.abs().max(b.abs())
}

#[test]
fn wide_and_binary_trees_find_the_same_hits_on_a_million_rays() {
    let setup = shipped_meshes();
    let (g, bvh) = (&*setup.scene.geom, &*setup.scene.bvh);
    assert!(!bvh.wide.nodes.is_empty() && g.mesh.tris.len() > 1000);
    let levels: Vec<SimdLevel> = SimdLevel::ALL
        .into_iter()
        .filter(|l| l.supported())
        .collect();
    let mut rng = Pcg32::new(14, 7);
    let (mut hits, mut ties) = (0usize, 0usize);
    for k in 0..1_000_000 {
        let ray = test_ray(g, &mut rng, k);
        let want = bvh.intersect_binary(g, &ray);
        let blocked = bvh.occluded_binary(g, &ray);
        assert_eq!(blocked, want.is_some(), "ray {k}: binary occlusion");
        hits += want.is_some() as usize;
        for &level in &levels {
            let got = bvh.intersect_wide(g, &ray, level);
            match (want, got) {
                (None, None) => {}
                (Some((wp, wt, _)), Some((gp, gt, _))) => {
                    assert!(close(wt, gt), "ray {k} {level:?}: t {wt} vs {gt}");
                    if wp != gp {
                        // a tie: the binary tree's primitive is hit at the same distance
                        let other = g.intersect_prim(gp, &ray).map(|h| h.0);
                        assert!(
                            other.is_some_and(|t| close(t, wt)),
                            "ray {k} {level:?}: prim {gp} at {gt} vs {wp} at {wt}"
                        );
                        ties += 1;
                    }
                }
                _ => panic!("ray {k} {level:?}: binary {want:?}, wide {got:?} ({ray:?})"),
            }
            assert_eq!(
                bvh.occluded_wide(g, &ray, level),
                blocked,
                "ray {k} {level:?}"
            );
        }
    }
    assert!(hits > 600_000, "most test rays should hit ({hits})");
    // ties happen only on edges and vertices shared by two triangles
    assert!(ties < hits / 10, "{ties} ties in {hits} hits");
}

#[test]
fn collapsed_nodes_cover_every_leaf_once() {
    let setup = shipped_meshes();
    let bvh = &*setup.scene.bvh;
    let w = &bvh.wide;
    let mut slots = vec![0u32; bvh.leaf_prims.len()];
    let mut reached = vec![0u32; w.nodes.len()];
    let mut stack = vec![0usize];
    let mut shapes = 0;
    let mut packed_leaves = 0;
    while let Some(i) = stack.pop() {
        reached[i] += 1;
        let n = &w.nodes[i];
        let used = n.child.iter().filter(|&&c| c != EMPTY).count();
        assert!(
            used >= 1 && n.child[..used].iter().all(|&c| c != EMPTY),
            "node {i}"
        );
        for &c in &n.child[..used] {
            if c & LEAF_BIT == 0 {
                stack.push(c as usize);
                continue;
            }
            if c & SHAPE_BIT != 0 {
                // one analytic shape, referenced by its slot
                let slot = (c & INDEX_BITS) as usize;
                assert_eq!(c & PACK_BIT, 0);
                assert_eq!(bvh.leaf_prims[slot].is_tri, 0);
                slots[slot] += 1;
                shapes += 1;
                continue;
            }
            if c & PACK_BIT != 0 {
                // one pack and nothing else: its used lanes are the leaf's slots
                let p = &w.packs[(c & INDEX_BITS) as usize];
                let used = (0..4).filter(|&l| !p.v[0][0][l].is_nan()).count();
                assert!(p.slot[used..].iter().all(|&s| s == p.slot[0]));
                for l in 0..4 {
                    if l < used {
                        slots[p.slot[l] as usize] += 1;
                        assert_ne!(bvh.leaf_prims[p.slot[l] as usize].is_tri, 0);
                    }
                    assert_eq!(p.prim[l], bvh.leaf_prims[p.slot[l] as usize].prim);
                }
                packed_leaves += 1;
                continue;
            }
            let leaf = &w.leaves[(c & INDEX_BITS) as usize];
            assert!(
                leaf.packs != 1 || leaf.analytic,
                "a leaf of one pack alone is referenced by its pack"
            );
            for s in leaf.first..leaf.first + leaf.count {
                slots[s as usize] += 1;
            }
            let tris = (leaf.first..leaf.first + leaf.count)
                .filter(|&s| bvh.leaf_prims[s as usize].is_tri != 0)
                .count();
            assert_eq!(leaf.packs as usize, tris.div_ceil(4));
            assert_eq!(leaf.analytic, tris < leaf.count as usize);
        }
    }
    assert!(reached.iter().all(|&r| r == 1), "every node reached once");
    assert!(slots.iter().all(|&s| s == 1), "every primitive in one leaf");
    assert_eq!(
        shapes, 4,
        "two rectangles, a disk and a sphere, each in a leaf of its own"
    );
    assert!(
        packed_leaves > 0,
        "the meshes' leaves are referenced by their packs"
    );
    // collapsing shrinks the node count (up to 8 children instead of 2)
    let binary_interior = bvh.nodes.iter().filter(|n| !n.is_leaf()).count();
    assert!(
        w.nodes.len() * 2 < binary_interior,
        "{} vs {binary_interior}",
        w.nodes.len()
    );
}

#[test]
fn a_single_primitive_and_an_empty_scene() {
    let setup = shipped_meshes();
    let g = &*setup.scene.geom;
    let one = Geometry {
        shapes: g.shapes.clone(),
        prims: vec![g.prims[0]],
        mesh: g.mesh.clone(),
        ..Default::default()
    };
    let bvh = Bvh::build(&one);
    assert!(bvh.wide.nodes.is_empty(), "a lone leaf is walked as it is");
    let empty = Bvh::build(&Geometry::default());
    assert!(empty.wide.nodes.is_empty());
    let ray = Ray::new(Vec3::new(0.0, 0.0, 5.0), -Vec3::Z);
    for l in SimdLevel::ALL.into_iter().filter(|l| l.supported()) {
        let hit = bvh.intersect_wide(&one, &ray, l).map(|h| h.0);
        assert_eq!(hit, bvh.intersect_binary(&one, &ray).map(|h| h.0));
        assert_eq!(hit.is_some(), bvh.occluded_wide(&one, &ray, l));
        assert!(empty.intersect_wide(&one, &ray, l).is_none());
        assert!(!empty.occluded_wide(&one, &ray, l));
    }
}
