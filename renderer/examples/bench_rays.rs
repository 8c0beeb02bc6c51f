//! Ray throughput of the CPU traversal on a 1M-triangle mesh: primary, shadow and
//! diffuse rays through the binary tree and the wide tree at every SIMD level this
//! CPU has. A program, not a test: it prints a table.
//!
//!     cargo run --release -p heliograph --example bench_rays [-- --threads N]
//!
//! The mesh is the displaced sphere of the GPU ray benchmark (`gpu_render.rs`,
//! `benchmark_mesh1m_primary_and_diffuse_rays`): 1,000,000 triangles, seen from
//! (0, 0.8, 3) with a 45° field of view at 1024×1024, one ray per pixel.
//! - primary: the camera rays (closest hit);
//! - shadow: from each primary hit towards a random point of a sphere light of radius
//!   0.5 at (2, 3, 2) (any hit, finite `tmax`);
//! - diffuse: from each primary hit along a cosine-distributed direction about the
//!   geometric normal (closest hit; incoherent).
//!
//! Rates are CPU-time based (rays / process CPU seconds, all threads), so they do not
//! depend on how busy a shared machine is as much as wall time would; Mrays/s per core.

use std::time::Instant;

use heliograph::accel::simd::SimdLevel;
use heliograph::accel::Bvh;
use heliograph::math::warp::{square_to_cosine_hemisphere, square_to_uniform_sphere};
use heliograph::math::{Frame, Pcg32, Ray, Vec2, Vec3};
use heliograph::shapes::{Geometry, TriMesh};
use rayon::prelude::*;

/// The displaced UV sphere of `2 * rings * segments` triangles (radius 1, ±4% bumps).
fn bumpy_sphere(rings: u32, segments: u32) -> Geometry {
    let mut m = TriMesh::default();
    for j in 0..=rings {
        let theta = std::f32::consts::PI * (j as f32 + 0.5) / (rings as f32 + 1.0);
        for i in 0..segments {
            let phi = 2.0 * std::f32::consts::PI * i as f32 / segments as f32;
            let r = 1.0 + 0.04 * (23.0 * theta).sin() * (31.0 * phi).cos();
            m.positions.push(Vec3::new(
                r * theta.sin() * phi.cos(),
                r * theta.cos(),
                r * theta.sin() * phi.sin(),
            ));
        }
    }
    for j in 0..rings {
        for i in 0..segments {
            let (a, b) = (j * segments + i, j * segments + (i + 1) % segments);
            let (c, d) = (a + segments, b + segments);
            m.tris.push([a, b, c]);
            m.tris.push([b, d, c]);
        }
    }
    let mut g = Geometry::default();
    m.add_to(&mut g, false, 0);
    g
}

/// The camera rays: pinhole at (0, 0.8, 3) looking at the origin, 45° vertical fov.
fn primary_rays(res: u32) -> Vec<Ray> {
    let o = Vec3::new(0.0, 0.8, 3.0);
    let fwd = (-o).normalize();
    let right = fwd.cross(Vec3::Y).normalize();
    let up = right.cross(fwd);
    let h = (22.5f32).to_radians().tan();
    (0..res * res)
        .map(|i| {
            let (x, y) = ((i % res) as f32 + 0.5, (i / res) as f32 + 0.5);
            let (u, v) = (2.0 * x / res as f32 - 1.0, 1.0 - 2.0 * y / res as f32);
            Ray::new(o, (fwd + right * (u * h) + up * (v * h)).normalize())
        })
        .collect()
}

/// Shadow and diffuse rays from the primary hits.
fn secondary_rays(g: &Geometry, bvh: &Bvh, primary: &[Ray]) -> (Vec<Ray>, Vec<Ray>) {
    let mut rng = Pcg32::new(7, 1);
    let light = Vec3::new(2.0, 3.0, 2.0);
    let (mut shadow, mut diffuse) = (Vec::new(), Vec::new());
    for r in primary {
        let Some((prim, t, c)) = bvh.intersect_binary(g, r) else {
            continue;
        };
        let hit = g.surface_interaction(prim, r, t, c);
        let n = if hit.ng.dot(r.d) < 0.0 {
            hit.ng
        } else {
            -hit.ng
        };
        let p = hit.p + n * 1e-4;
        let u = Vec2::new(rng.next_f32(), rng.next_f32());
        let to = light + square_to_uniform_sphere(u) * 0.5 - p;
        let mut s = Ray::new(p, to.normalize());
        s.tmax = to.length() * (1.0 - 1e-4);
        shadow.push(s);
        let u = Vec2::new(rng.next_f32(), rng.next_f32());
        diffuse.push(Ray::new(
            p,
            Frame::from_normal(n).to_world(square_to_cosine_hemisphere(u)),
        ));
    }
    (shadow, diffuse)
}

/// Process CPU seconds (user + system) from /proc; 0 elsewhere.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / 100.0
}

/// Mrays/s per core and wall Mrays/s of `trace` over `rays` (best of 3), and its hit count.
fn rate(rays: &[Ray], trace: impl Fn(&Ray) -> bool + Sync) -> (f64, f64, usize) {
    let (mut best_cpu, mut best_wall, mut hits) = (f64::INFINITY, f64::INFINITY, 0);
    for _ in 0..3 {
        let (c0, w0) = (cpu_seconds(), Instant::now());
        hits = rays.par_iter().filter(|r| trace(r)).count();
        best_wall = best_wall.min(w0.elapsed().as_secs_f64());
        best_cpu = best_cpu.min((cpu_seconds() - c0).max(0.01));
    }
    let n = rays.len() as f64 / 1e6;
    (n / best_cpu, n / best_wall, hits)
}

fn main() {
    let threads = std::env::args()
        .skip_while(|a| a != "--threads")
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .ok();
    let t0 = Instant::now();
    let g = bumpy_sphere(500, 1000);
    let bvh = Bvh::build(&g);
    println!(
        "mesh: {} triangles, build {:.2} s ({} binary nodes, {} wide nodes), {} threads",
        g.prims.len(),
        t0.elapsed().as_secs_f64(),
        bvh.nodes.len(),
        bvh.wide.nodes.len(),
        rayon::current_num_threads()
    );
    let primary = primary_rays(1024);
    let (shadow, diffuse) = secondary_rays(&g, &bvh, &primary);
    println!(
        "{:<10} {:<8} {:>9} {:>14} {:>12} {:>9}",
        "rays", "tree", "count", "Mrays/s/core", "Mrays/s", "hits"
    );
    let sets = [
        ("primary", &primary, false),
        ("shadow", &shadow, true),
        ("diffuse", &diffuse, false),
    ];
    for (name, rays, any) in sets {
        let row = |tree: &str, r: (f64, f64, usize)| {
            println!(
                "{name:<10} {tree:<8} {:>9} {:>14.2} {:>12.2} {:>9}",
                rays.len(),
                r.0,
                r.1,
                r.2
            )
        };
        row(
            "binary",
            rate(rays, |r| {
                if any {
                    bvh.occluded_binary(&g, r)
                } else {
                    bvh.intersect_binary(&g, r).is_some()
                }
            }),
        );
        for level in SimdLevel::ALL.into_iter().filter(|l| l.supported()) {
            row(
                level.name(),
                rate(rays, |r| {
                    if any {
                        bvh.occluded_wide(&g, r, level)
                    } else {
                        bvh.intersect_wide(&g, r, level).is_some()
                    }
                }),
            );
        }
    }
}
