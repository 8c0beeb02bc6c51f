//! BVH tests: exact agreement with brute force over every primitive.

use super::*;
use crate::math::warp::square_to_uniform_sphere;
use crate::math::{Pcg32, Transform};
use crate::shapes::rectangle::Planar;
use crate::shapes::{AnyShape, Disk, Geometry, Rectangle, Sphere, TriMesh};
use glam::Affine3A;

fn v3(rng: &mut Pcg32) -> Vec3 {
    Vec3::new(rng.next_f32(), rng.next_f32(), rng.next_f32())
}

/// A triangle soup in the unit cube (with a few identical triangles and
/// axis-aligned ones), plus analytic shapes.
fn soup(n_tris: usize, seed: u64) -> Geometry {
    soup_sized(n_tris, seed, 1.0)
}

/// [`soup`] with triangle sizes scaled by `scale`.
fn soup_sized(n_tris: usize, seed: u64, scale: f32) -> Geometry {
    let mut rng = Pcg32::new(seed, 1);
    let mut m = TriMesh::default();
    for i in 0..n_tris {
        let c = v3(&mut rng);
        let size = (0.02 + 0.1 * rng.next_f32()) * scale;
        let base = m.positions.len() as u32;
        for _ in 0..3 {
            let mut p = c + (v3(&mut rng) - Vec3::splat(0.5)) * size;
            if i % 17 == 0 {
                p.z = c.z; // axis-aligned (flat in z) triangles
            }
            m.positions.push(p);
        }
        m.tris.push([base, base + 1, base + 2]);
        if i % 101 == 0 {
            m.tris.push([base, base + 1, base + 2]); // exact duplicate
        }
    }
    let mut g = Geometry::default();
    m.add_to(&mut g, false, 0);
    let sphere = Sphere::new(
        Affine3A::from_translation(Vec3::new(0.3, 0.6, 0.5))
            * Affine3A::from_scale(Vec3::splat(0.1)),
        false,
    )
    .unwrap();
    g.add_analytic(AnyShape::Sphere(sphere), 0);
    let tw = Transform::translate(Vec3::new(0.7, 0.2, 0.4))
        .then_after(&Transform::rotate(Vec3::new(1.0, 1.0, 0.0), 30.0).unwrap())
        .then_after(&Transform::scale(Vec3::splat(0.15)).unwrap());
    let plane = Planar::new(&tw, false).unwrap();
    g.add_analytic(AnyShape::Rectangle(Rectangle { plane, area: 0.09 }), 0);
    g.add_analytic(AnyShape::Disk(Disk { plane, area: 0.07 }), 0);
    g
}

fn brute_closest(g: &Geometry, ray: &Ray) -> Option<(u32, f32)> {
    let mut r = *ray;
    let mut best = None;
    for p in 0..g.prims.len() as u32 {
        if let Some((t, _)) = g.intersect_prim(p, &r) {
            r.tmax = t;
            best = Some((p, t));
        }
    }
    best
}

fn random_ray(rng: &mut Pcg32, k: usize) -> Ray {
    let o = v3(rng) * 2.0 - Vec3::splat(0.5);
    let d = match k % 7 {
        // axis-aligned directions exercise zero components
        0 => [Vec3::X, -Vec3::Y, Vec3::Z][k % 3],
        1 => Vec3::new(rng.next_f32() - 0.5, 0.0, rng.next_f32() - 0.5).normalize(),
        _ => square_to_uniform_sphere(Vec2::new(rng.next_f32(), rng.next_f32())),
    };
    let mut r = Ray::new(o, d);
    if k % 5 == 0 {
        r.tmax = 0.3 + rng.next_f32();
    }
    r
}

#[test]
fn node_layout_is_32_bytes_with_fixed_offsets() {
    assert_eq!(std::mem::size_of::<BvhNode>(), 32);
    assert_eq!(std::mem::offset_of!(BvhNode, min), 0);
    assert_eq!(std::mem::offset_of!(BvhNode, left_first), 12);
    assert_eq!(std::mem::offset_of!(BvhNode, max), 16);
    assert_eq!(std::mem::offset_of!(BvhNode, count), 28);
}

#[test]
fn closest_hits_and_occlusion_match_brute_force() {
    let g = soup(3000, 42);
    let bvh = Bvh::build(&g);
    check_structure(&g, &bvh);
    assert_matches_brute_force(&g, &bvh, 6000, 9);
}

/// `rays` random rays (from `seed`) find the brute-force nearest hit through `bvh` (the
/// same distance; another primitive only on a tie), and the same occlusion.
fn assert_matches_brute_force(g: &Geometry, bvh: &Bvh, rays: usize, seed: u64) {
    let mut rng = Pcg32::new(seed, 2);
    let mut hits = 0;
    for k in 0..rays {
        let ray = random_ray(&mut rng, k);
        let want = brute_closest(g, &ray);
        let got = bvh.intersect(g, &ray);
        match (want, got) {
            (None, None) => {}
            (Some((wp, wt)), Some((gp, gt, _))) => {
                hits += 1;
                assert_eq!(wt, gt, "ray {k}: t differs");
                if wp != gp {
                    // only a tie may pick another primitive
                    let t_other = g.intersect_prim(wp, &ray).map(|h| h.0);
                    assert_eq!(t_other, Some(gt), "ray {k}: prim {gp} vs {wp}");
                }
            }
            _ => panic!("ray {k}: brute force {want:?}, bvh {got:?}"),
        }
        assert_eq!(bvh.occluded(g, &ray), want.is_some(), "ray {k}: occlusion");
    }
    assert!(hits > rays / 12, "the test rays should mostly hit ({hits})");
}

/// Every primitive appears once; every box contains its children / prims; leaves are small.
fn check_structure(g: &Geometry, bvh: &Bvh) {
    let mut seen = vec![0u32; g.prims.len()];
    let mut stack = vec![(0usize, 0usize)];
    let mut max_depth = 0;
    while let Some((i, depth)) = stack.pop() {
        max_depth = max_depth.max(depth);
        let n = bvh.nodes[i];
        let b = n.bounds();
        let inside = |c: Aabb| c.min.cmpge(b.min).all() && c.max.cmple(b.max).all();
        if n.is_leaf() {
            assert!(n.count as usize <= super::build::MAX_LEAF || depth > 60);
            for s in n.left_first..n.left_first + n.count {
                let p = bvh.prim_indices[s as usize];
                seen[p as usize] += 1;
                assert!(inside(g.prim_bounds(p)));
            }
        } else {
            for c in [n.left_first as usize, n.left_first as usize + 1] {
                assert!(inside(bvh.nodes[c].bounds()));
                stack.push((c, depth + 1));
            }
        }
    }
    assert!(seen.iter().all(|&c| c == 1));
    assert!(max_depth < STACK_SIZE - 8, "depth {max_depth}");
}

#[test]
fn empty_and_single_prim_scenes() {
    let g = Geometry::default();
    let bvh = Bvh::build(&g);
    assert!(bvh.nodes.is_empty() && bvh.bounds().is_empty());
    let ray = Ray::new(Vec3::ZERO, Vec3::Z);
    assert!(bvh.intersect(&g, &ray).is_none() && !bvh.occluded(&g, &ray));
    let mut g = Geometry::default();
    let s = Sphere::new(Affine3A::from_translation(Vec3::new(0.0, 0.0, 5.0)), false).unwrap();
    g.add_analytic(AnyShape::Sphere(s), 0);
    let bvh = Bvh::build(&g);
    let (p, t, _) = bvh.intersect(&g, &ray).unwrap();
    assert_eq!((p, t), (0, 4.0));
    let mut short = ray;
    short.tmax = 3.9;
    assert!(!bvh.occluded(&g, &short));
}

/// Leaves of analytic shapes hold one primitive (or several with one centre, which no
/// split separates): five walls of a room around the soup (its sphere, and a rectangle
/// and a disk in one plane), which SAH would otherwise group in a leaf whose box every
/// ray inside the room enters; the triangles still share leaves.
#[test]
fn analytic_shapes_get_leaves_of_their_own() {
    let mut g = soup(300, 7);
    for (axis, angle, offset) in [
        (Vec3::X, -90.0, Vec3::new(0.5, -0.1, 0.5)), // floor
        (Vec3::X, 90.0, Vec3::new(0.5, 1.1, 0.5)),   // ceiling
        (Vec3::Y, 0.0, Vec3::new(0.5, 0.5, -0.1)),   // back
        (Vec3::Y, 90.0, Vec3::new(-0.1, 0.5, 0.5)),  // left
        (Vec3::Y, -90.0, Vec3::new(1.1, 0.5, 0.5)),  // right
    ] {
        let tw = Transform::translate(offset)
            .then_after(&Transform::rotate(axis, angle).unwrap())
            .then_after(&Transform::scale(Vec3::splat(0.6)).unwrap());
        let plane = Planar::new(&tw, false).unwrap();
        g.add_analytic(AnyShape::Rectangle(Rectangle { plane, area: 1.44 }), 0);
    }
    let bvh = Bvh::build(&g);
    check_structure(&g, &bvh);
    let (mut analytic, mut shared_tri_leaves) = (0, 0);
    for n in bvh.nodes.iter().filter(|n| n.is_leaf()) {
        let prims = &bvh.prim_indices[n.left_first as usize..(n.left_first + n.count) as usize];
        if prims.iter().any(|&p| !g.prim_is_triangle(p)) {
            // only shapes with one centre (the soup's rectangle and disk) can share one
            let centre = |p: u32| g.prim_bounds(p).center();
            assert!(
                prims.iter().all(|&p| centre(p) == centre(prims[0])),
                "an analytic shape shares leaf {prims:?}"
            );
            analytic += prims.len();
        } else if prims.len() > 1 {
            shared_tri_leaves += 1;
        }
    }
    assert_eq!(analytic, 8, "sphere, rectangle, disk and five walls");
    assert!(
        shared_tri_leaves > 20,
        "triangles should still share leaves ({shared_tri_leaves})"
    );
    // and the walk still finds the nearest hits
    assert_matches_brute_force(&g, &bvh, 3000, 3);
}

#[test]
fn many_identical_prims_build_and_traverse() {
    // 1000 copies of one triangle: centroid bounds are a point, the build must
    // still terminate with bounded depth and find the hit.
    let mut m = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        ..Default::default()
    };
    m.tris = vec![[0, 1, 2]; 1000];
    let mut g = Geometry::default();
    m.add_to(&mut g, false, 0);
    let bvh = Bvh::build(&g);
    check_structure(&g, &bvh);
    let ray = Ray::new(Vec3::new(0.2, 0.2, 1.0), -Vec3::Z);
    assert_eq!(bvh.intersect(&g, &ray).map(|h| h.1), Some(1.0));
}

/// Build time and traversal rate for small and large soups; run with
/// `cargo test -p heliograph --lib bench_build_and_trace -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_build_and_trace() {
    for (n, scale) in [(10_000usize, 1.0f32), (1_000_000, 0.1)] {
        let g = soup_sized(n, 5, scale);
        let t0 = std::time::Instant::now();
        let bvh = Bvh::build(&g);
        let build = t0.elapsed();
        let mut rng = Pcg32::new(1, 1);
        let rays: Vec<Ray> = (0..1_000_000).map(|k| random_ray(&mut rng, k)).collect();
        let c0 = cpu_seconds();
        let hits = rays
            .iter()
            .filter(|r| bvh.intersect(&g, r).is_some())
            .count();
        let trace = cpu_seconds() - c0;
        let (nodes, prims) = traversal_stats(&g, &bvh, &rays[..100_000]);
        println!(
            "{n} tris: build {:.2} s, {} nodes; 1M rays {trace:.2} CPU s ({:.2} Mrays/s, \
             {hits} hits, {nodes:.1} nodes and {prims:.1} prims per ray)",
            build.as_secs_f64(),
            bvh.nodes.len(),
            1.0 / trace
        );
    }
}

/// A closed, finely tessellated unit sphere (`2 m²` triangles): a realistic
/// surface without the overlap of a random soup.
fn tessellated_sphere(m: usize) -> Geometry {
    let mut mesh = TriMesh::default();
    for i in 0..=m {
        for j in 0..=2 * m {
            let theta = std::f32::consts::PI * i as f32 / m as f32;
            let phi = std::f32::consts::PI * j as f32 / m as f32;
            let (st, ct) = theta.sin_cos();
            mesh.positions
                .push(Vec3::new(st * phi.cos(), st * phi.sin(), ct));
        }
    }
    let row = (2 * m + 1) as u32;
    for i in 0..m as u32 {
        for j in 0..2 * m as u32 {
            let a = i * row + j;
            mesh.tris.push([a, a + row, a + row + 1]);
            mesh.tris.push([a, a + row + 1, a + 1]);
        }
    }
    let mut g = Geometry::default();
    mesh.add_to(&mut g, false, 0);
    g
}

/// Build time and traversal rate on a tessellated sphere hit by rays from a
/// surrounding shell towards random interior points (every ray hits);
/// run with `--ignored --nocapture`.
#[test]
#[ignore]
fn bench_tessellated_sphere() {
    for m in [70usize, 700] {
        let g = tessellated_sphere(m);
        let t0 = std::time::Instant::now();
        let bvh = Bvh::build(&g);
        let build = t0.elapsed().as_secs_f64();
        let mut rng = Pcg32::new(3, 3);
        let u2 = |rng: &mut Pcg32| Vec2::new(rng.next_f32(), rng.next_f32());
        let rays: Vec<Ray> = (0..1_000_000)
            .map(|_| {
                let o = square_to_uniform_sphere(u2(&mut rng)) * 3.0;
                let target = square_to_uniform_sphere(u2(&mut rng)) * 0.5;
                Ray::new(o, (target - o).normalize())
            })
            .collect();
        let c0 = cpu_seconds();
        let hits = rays
            .iter()
            .filter(|r| bvh.intersect(&g, r).is_some())
            .count();
        let trace = cpu_seconds() - c0;
        let (nodes, prims) = traversal_stats(&g, &bvh, &rays[..100_000]);
        println!(
            "sphere {} tris: build {build:.2} s; 1M rays {trace:.2} CPU s ({:.2} Mrays/s, \
             {hits} hits, {nodes:.1} nodes and {prims:.1} prims per ray)",
            g.prims.len(),
            1.0 / trace
        );
    }
}

/// CPU time of this process (user + system), from /proc (Linux); 0 elsewhere.
/// The bench uses it instead of wall time because the build machine is shared.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // after the command name: state is field 0, utime 11, stime 12; 100 ticks/s
    (ticks(11) + ticks(12)) / 100.0
}

/// Average node visits and primitive tests per ray (diagnostics for the bench).
fn traversal_stats(g: &Geometry, bvh: &Bvh, rays: &[Ray]) -> (f64, f64) {
    let (mut nodes, mut prims) = (0usize, 0usize);
    for ray in rays {
        let rb = RayBox::new(ray);
        let mut tmax = ray.tmax;
        let mut stack = vec![(0u32, rb.enter(&bvh.nodes[0], tmax))];
        while let Some((i, te)) = stack.pop() {
            if te > tmax {
                continue;
            }
            nodes += 1;
            let n = bvh.nodes[i as usize];
            if n.is_leaf() {
                for s in n.left_first..n.left_first + n.count {
                    prims += 1;
                    let mut r = *ray;
                    r.tmax = tmax;
                    if let Some((t, _)) = g.intersect_prim(bvh.prim_indices[s as usize], &r) {
                        tmax = t;
                    }
                }
            } else {
                let (a, b) = (n.left_first, n.left_first + 1);
                let ta = rb.enter(&bvh.nodes[a as usize], tmax);
                let tb = rb.enter(&bvh.nodes[b as usize], tmax);
                let mut push = |x: u32, t: f32| {
                    if t != f32::INFINITY {
                        stack.push((x, t))
                    }
                };
                if ta <= tb {
                    push(b, tb);
                    push(a, ta);
                } else {
                    push(a, ta);
                    push(b, tb);
                }
            }
        }
    }
    let n = rays.len() as f64;
    (nodes as f64 / n, prims as f64 / n)
}

#[test]
fn closed_mesh_has_no_cracks_at_edges_and_vertices() {
    // Rays from inside through every vertex and every edge midpoint of a closed
    // mesh hit exactly where two or more triangles meet: a non-watertight test
    // lets some of them through.
    let g = tessellated_sphere(24);
    let bvh = Bvh::build(&g);
    let mut targets: Vec<Vec3> = g.mesh.positions.clone();
    for t in &g.mesh.tris {
        for k in 0..3 {
            let (a, b) = (t[k] as usize, t[(k + 1) % 3] as usize);
            targets.push(0.5 * (g.mesh.positions[a] + g.mesh.positions[b]));
        }
    }
    let mut rng = Pcg32::new(8, 8);
    for o in [Vec3::ZERO, Vec3::new(0.1, -0.2, 0.05)] {
        for &p in &targets {
            let ray = Ray::new(o, (p - o).normalize());
            assert!(
                bvh.intersect(&g, &ray).is_some(),
                "ray from {o} through {p} escaped"
            );
            assert!(bvh.occluded(&g, &ray));
        }
    }
    for _ in 0..100_000 {
        let o = (v3(&mut rng) - Vec3::splat(0.5)) * 0.5;
        let d = square_to_uniform_sphere(Vec2::new(rng.next_f32(), rng.next_f32()));
        assert!(bvh.intersect(&g, &Ray::new(o, d)).is_some());
    }
}
