use std::path::Path;

use super::*;
use crate::shapes::Geometry;

fn one_tri(flip: bool, normals: Option<Vec<Vec3>>, uvs: Option<Vec<Vec2>>) -> Geometry {
    let m = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        normals,
        uvs,
        tris: vec![[0, 1, 2]],
        attributes: Vec::new(),
    };
    let mut g = Geometry::default();
    m.add_to(&mut g, flip, 0);
    g
}

#[test]
fn ccw_triangle_faces_plus_z_and_barycentric_uv() {
    let g = one_tri(false, None, None);
    let ray = Ray::new(Vec3::new(0.25, 0.5, 2.0), -Vec3::Z);
    let (t, c) = g.intersect_prim(0, &ray).expect("hit");
    assert!((t - 2.0).abs() < 1e-6);
    let h = g.surface_interaction(0, &ray, t, c);
    assert!((h.ng - Vec3::Z).length() < 1e-6 && (h.n - Vec3::Z).length() < 1e-6);
    // without uvs the uv is the barycentric (b1, b2) = (x, y) for this triangle
    assert!((h.uv - Vec2::new(0.25, 0.5)).length() < 1e-6);
    // edges and misses
    assert!(g
        .intersect_prim(0, &Ray::new(Vec3::new(0.6, 0.6, 1.0), -Vec3::Z))
        .is_none());
    let mut short = ray;
    short.tmax = 1.5;
    assert!(g.intersect_prim(0, &short).is_none());
    // parallel ray: no hit, no NaN
    assert!(g
        .intersect_prim(0, &Ray::new(Vec3::new(-1.0, 0.2, 0.0), Vec3::X))
        .is_none());
    let f = one_tri(true, None, None);
    let h = f.surface_interaction(0, &ray, t, c);
    assert!((h.ng + Vec3::Z).length() < 1e-6 && (h.n + Vec3::Z).length() < 1e-6);
}

#[test]
fn shading_normals_and_uvs_interpolate() {
    let n = vec![Vec3::Z, Vec3::new(1.0, 0.0, 1.0).normalize(), Vec3::Z];
    let uv = vec![
        Vec2::new(0.0, 0.0),
        Vec2::new(2.0, 0.0),
        Vec2::new(0.0, 4.0),
    ];
    let g = one_tri(false, Some(n.clone()), Some(uv));
    let ray = Ray::new(Vec3::new(0.5, 0.25, 1.0), -Vec3::Z);
    let (t, c) = g.intersect_prim(0, &ray).unwrap();
    let h = g.surface_interaction(0, &ray, t, c);
    assert!((h.uv - Vec2::new(1.0, 1.0)).length() < 1e-5, "{:?}", h.uv);
    let want = (n[0] * 0.25 + n[1] * 0.5 + n[2] * 0.25).normalize();
    assert!((h.n - want).length() < 1e-5);
    assert!((h.ng - Vec3::Z).length() < 1e-6);
    // u grows along x at rate 2 → dp/du = (0.5, 0, 0)
    assert!(
        (h.dpdu - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-5,
        "{:?}",
        h.dpdu
    );
}

#[test]
fn degenerate_triangles_get_no_prim_and_validation_errors_name_the_file() {
    let m = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::X * 2.0, Vec3::Y],
        normals: None,
        uvs: None,
        tris: vec![[0, 1, 2], [0, 1, 3]],
        attributes: Vec::new(),
    };
    let mut g = Geometry::default();
    m.add_to(&mut g, false, 0);
    assert_eq!(g.prims.len(), 1);
    assert!((g.surface_area(0) - 0.5).abs() < 1e-6);
    for _ in 0..10 {
        let s = g.sample_position(0, Vec2::new(0.3, 0.999));
        assert!(s.p.is_finite() && s.p.z == 0.0 && s.p.y >= 0.0);
    }
    let path = Path::new("dir/m.obj");
    let bad = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::new(f32::NAN, 0.0, 0.0)],
        tris: vec![[0, 1, 2]],
        ..Default::default()
    };
    let e = bad.validate(path).unwrap_err().to_string();
    assert!(e.contains("dir/m.obj") && e.contains("non-finite"), "{e}");
    let bad = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        tris: vec![[0, 1, 3]],
        ..Default::default()
    };
    let e = bad.validate(path).unwrap_err().to_string();
    assert!(e.contains("vertex 3") && e.contains("only 3"), "{e}");
    let e = TriMesh::default().validate(path).unwrap_err().to_string();
    assert!(e.contains("no faces"), "{e}");
}

#[test]
fn mixed_meshes_keep_attribute_arrays_parallel() {
    let mut g = Geometry::default();
    let plain = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        tris: vec![[0, 1, 2]],
        ..Default::default()
    };
    plain.clone().add_to(&mut g, false, 0);
    let mut with_uv = plain.clone();
    with_uv.uvs = Some(vec![Vec2::ONE; 3]);
    with_uv.add_to(&mut g, false, 0);
    plain.add_to(&mut g, false, 0);
    assert_eq!(g.mesh.uvs.len(), g.mesh.positions.len());
    assert!(g.mesh.normals.is_empty());
    let ray = Ray::new(Vec3::new(0.2, 0.2, 1.0), -Vec3::Z);
    let h = g.surface_interaction(1, &ray, 1.0, Vec2::new(0.2, 0.2));
    assert_eq!(h.uv, Vec2::ONE);
    assert_eq!(h.shape, 1);
}

#[test]
fn smooth_normals_of_a_tent_average_the_faces() {
    // two faces meeting at the ridge x = 0 with slopes ±45°
    let mut m = TriMesh {
        positions: vec![
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(0.0, 1.0, 1.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(-1.0, 0.0, 0.0),
        ],
        tris: vec![[0, 2, 1], [0, 1, 3]],
        ..Default::default()
    };
    m.compute_vertex_normals().unwrap();
    let n = m.normals.unwrap();
    assert!((n[0] - Vec3::Z).length() < 1e-5, "{:?}", n[0]);
    assert!((n[2] - Vec3::new(1.0, 0.0, 1.0).normalize()).length() < 1e-5);
}
