//! Ray queries through the parity kernel (`renderer/kernels/parity.cu`, kind 4): closest
//! hits (t, shape, world-space position, normals, uv, the hit's BSDF) and shadow rays,
//! shared by the host run (`gpu_plugins_on_host.rs`) and the GPU run (`gpu_render.rs`),
//! both compared with the CPU backend's Rust traversal (`RenderSetup::intersect` /
//! `RenderSetup::occluded`) on the instanced scene `scenes/instances.xml`.
#![allow(dead_code)]

use heliograph::desc::xml;
use heliograph::math::{Pcg32, Ray, Vec3};
use heliograph::scene::{build_scene, RenderSetup};

use super::harness::repo_root;

/// The instanced scene (`scenes/instances.xml`: four instances of a group of a torus mesh
/// and a sphere, rotated, scaled, squashed and mirrored, over a floor that is no
/// instance), at a small film size.
pub fn instanced_scene() -> RenderSetup {
    let path = repo_root().join("scenes/instances.xml");
    let desc = xml::load_file(&path, &[("res".into(), "16".into())]).unwrap();
    let scene = build_scene(&desc).unwrap();
    assert!(
        scene.scene.geom.groups.len() == 1 && scene.scene.geom.shape_count() > 4,
        "instances.xml: one group and its instances"
    );
    scene
}

fn rand3(rng: &mut Pcg32, lo: Vec3, hi: Vec3) -> Vec3 {
    lo + (hi - lo) * Vec3::new(rng.next_f32(), rng.next_f32(), rng.next_f32())
}

/// `n` ray queries (16 floats each, parity.cu kind 4): half from far around the scene at
/// its objects, half from inside the objects' region in uniform directions (rays that
/// start inside instance boxes); each with a shadow distance before or past the CPU's
/// hit, well away from it (rounding never decides it).
pub fn ray_queries(scene: &RenderSetup, n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Pcg32::new(seed, 17);
    let (lo, hi) = (Vec3::new(-2.6, -0.2, -2.6), Vec3::new(2.6, 2.0, 3.2));
    let mut out = Vec::with_capacity(n * 16);
    for i in 0..n {
        let (o, d) = if i % 2 == 0 {
            let o = rand3(&mut rng, Vec3::splat(-1.0), Vec3::ONE).normalize() * 9.0
                + Vec3::new(0.0, 0.8, 0.0);
            let o = Vec3::new(o.x, o.y.abs() + 0.1, o.z);
            (o, (rand3(&mut rng, lo, hi) - o).normalize())
        } else {
            let d = loop {
                let v = rand3(&mut rng, Vec3::splat(-1.0), Vec3::ONE);
                if v.length_squared() > 1e-3 && v.length_squared() <= 1.0 {
                    break v.normalize();
                }
            };
            (rand3(&mut rng, lo, hi), d)
        };
        let s = rng.next_f32();
        let factor = if s < 0.5 { 0.1 + s } else { 1.05 + s };
        let tmax = match scene.scene.intersect(&Ray::new(o, d)) {
            Some(h) => h.t * factor,
            None => 20.0 * factor,
        };
        let mut q = [0.0f32; 16];
        q[0] = 4.0;
        q[4..7].copy_from_slice(&o.to_array());
        q[7..10].copy_from_slice(&d.to_array());
        q[10] = tmax;
        out.extend_from_slice(&q);
    }
    out
}

/// What the CPU and the kernel disagree on, and how much was exercised.
#[derive(Debug, Default)]
pub struct RayReport {
    /// Rays.
    pub rays: usize,
    /// Rays that hit on the CPU.
    pub hits: usize,
    /// Hits inside an instance (on a group's shape) on the CPU.
    pub instance_hits: usize,
    /// Shadow rays blocked on the CPU.
    pub blocked: usize,
    /// Rays where hit or miss, the shape, or the shadow answer differ.
    pub differ: Vec<String>,
    /// Hits on the same shape whose t, position, normals, uv or BSDF differ beyond the
    /// tolerances.
    pub inexact: Vec<String>,
}

/// Compares the kernel's answers `got` with the CPU's on `queries` ([`ray_queries`]):
/// t within `tol` relative, the position within `tol` times the scene's size, the normals
/// within `tol` (1 - cos), uv within `tol` (modulo 1: a sphere's seam).
pub fn check_rays(scene: &RenderSetup, queries: &[f32], got: &[f32], tol: f32) -> RayReport {
    assert_eq!(queries.len(), got.len());
    let own = scene.scene.geom.shape_count() as u32;
    let mut r = RayReport::default();
    for (i, (q, g)) in queries.chunks(16).zip(got.chunks(16)).enumerate() {
        r.rays += 1;
        let (o, d) = (Vec3::new(q[4], q[5], q[6]), Vec3::new(q[7], q[8], q[9]));
        let ray = Ray::new(o, d);
        let mut shadow = ray;
        shadow.tmax = q[10];
        let blocked = scene.scene.occluded(&shadow);
        r.blocked += usize::from(blocked);
        if blocked != (g[14] == 1.0) {
            r.differ.push(format!(
                "ray {i} {ray:?}: shadow up to {}: CPU {blocked}",
                q[10]
            ));
        }
        let h = scene.scene.intersect(&ray);
        match (h, g[0] == 1.0) {
            (None, false) => continue,
            (Some(h), true) if h.shape == g[2] as u32 => {
                r.hits += 1;
                r.instance_hits += usize::from(h.shape >= own);
                let v = |k: usize| Vec3::new(g[k], g[k + 1], g[k + 2]);
                let d = (h.uv - heliograph::math::Vec2::new(g[12], g[13])).abs();
                let duv = d.min(heliograph::math::Vec2::ONE - d).max_element();
                let bsdf = scene.scene.geom.shapes[h.shape as usize].bsdf;
                let ok = (h.t - g[1]).abs() <= tol * h.t.max(1.0)
                    && (h.p - v(3)).length() <= tol * 10.0
                    && h.ng.dot(v(6)) >= 1.0 - tol
                    && h.n.dot(v(9)) >= 1.0 - tol
                    && duv <= tol * 10.0
                    && bsdf == g[15] as u32;
                if !ok {
                    r.inexact.push(format!(
                        "ray {i} {ray:?}: CPU {h:?} (bsdf {bsdf}) vs kernel {:?}",
                        &g[..16]
                    ));
                }
            }
            (h, _) => {
                r.hits += usize::from(h.is_some());
                r.differ.push(format!(
                    "ray {i} {ray:?}: CPU {h:?} vs kernel hit {} shape {} t {}",
                    g[0], g[2], g[1]
                ))
            }
        }
    }
    println!(
        "{} rays: {} hits ({} in instances), {} shadow rays blocked; {} differ, {} inexact",
        r.rays,
        r.hits,
        r.instance_hits,
        r.blocked,
        r.differ.len(),
        r.inexact.len()
    );
    for m in r.differ.iter().chain(&r.inexact).take(8) {
        println!("  {m}");
    }
    r
}
