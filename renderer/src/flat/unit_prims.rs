//! The GPU's brute-force records for scenes of a few primitives: each primitive (or pair
//! of triangles forming a parallelogram) as an affine map into a unit shape.
//!
//! A scene of at most [`UNIT_PRIMS_MAX`] primitives may skip the BVH on the GPU
//! (`backend/cuda/features.rs`): every ray tests every record, in order, so all lanes of
//! a warp run the same test on the same record and no lane idles while another walks
//! deeper (a Cornell box warp kept only ~9 of 32 lanes busy in the walk). That pays only
//! if a test is cheap and the records few, so each record is the rows of an affine map
//! from world space into a space where its primitive is a unit shape in the plane z = 0:
//!
//! | kind | unit shape | local x, y of a hit |
//! |---|---|---|
//! | [`UNIT_TRIANGLE`] | x, y >= 0, x + y <= 1 (Woop's unit triangle) | weights of two of its vertices |
//! | [`UNIT_PAIR`] | 0 <= x, y <= 1: two triangles sharing the diagonal x + y = 1 | as a triangle, per half |
//! | [`UNIT_SQUARE`] | \|x\|, \|y\| <= 1 (a `rectangle`'s `to_local`) | the rectangle's local point |
//! | [`UNIT_DISK`] | x² + y² <= 1 (a `disk`'s `to_local`) | the disk's local point |
//! | [`UNIT_SPHERE`] | its own test: centre and radius in the first row | — |
//!
//! A scene with a `cylinder` gets no records (it walks its BVH on the GPU too).
//!
//! One test serves the planar kinds: local z of the origin and direction give t, then x
//! and y at t decide, branch-free: inside iff min(x, y) >= lo and max(x, y) + w min(x, y)
//! <= 1, with (lo, w) = (0, 1) for a triangle, (0, 0) for a pair, (-1, 0) for a square or
//! disk (a disk adds x² + y² <= 1). Two triangles of one mesh that share an edge and whose
//! four vertices form a parallelogram (a quad of a triangulated quad mesh, a face of a
//! `cube`) become one [`UNIT_PAIR`]: one test instead of two, and no crack along their
//! shared diagonal. The kernel turns the winning record's x, y into the hit triangle and
//! its barycentrics once per ray ([`FlatUnitPrim::roles`]).
//!
//! The triangle test is not watertight across records (an edge shared by two records can,
//! rarely, be missed by a ray through it, as with Möller–Trumbore); the BVH path and the
//! CPU keep the watertight test. Maps are built in f64 from the vertices; a degenerate
//! triangle (no area) gets [`UNIT_NONE`] (all rows zero: t is NaN, never a hit), as the
//! watertight test never hits it either.

use glam::DVec3;

use crate::accel::LeafPrim;
use crate::shapes::record::FlatShape;
use crate::shapes::tag::{
    DISK as SHAPE_DISK, MESH as SHAPE_MESH, RECTANGLE as SHAPE_RECTANGLE, SPHERE as SHAPE_SPHERE,
};

/// Scenes with at most this many primitives get [`FlatUnitPrim`]s (the brute-force
/// threshold of `backend/cuda/features.rs` counts records, at most [`UNIT_RECORDS_MAX`]).
pub const UNIT_PRIMS_MAX: usize = 96;

/// The most records a brute-force module takes: they travel as a kernel parameter
/// (64 bytes each), which together with the others must stay under 4 KiB.
pub const UNIT_RECORDS_MAX: usize = 48;

/// `FlatUnitPrim::kind`: never hit (a degenerate triangle, or padding: all rows zero).
pub const UNIT_NONE: u32 = 0;
/// `FlatUnitPrim::kind`: the unit triangle x, y >= 0, x + y <= 1.
pub const UNIT_TRIANGLE: u32 = 1;
/// `FlatUnitPrim::kind`: the unit square 0 <= x, y <= 1, triangle `prim` below the
/// diagonal x + y = 1 and triangle `prim_b` above it.
pub const UNIT_PAIR: u32 = 2;
/// `FlatUnitPrim::kind`: the square |x|, |y| <= 1 (`rectangle`).
pub const UNIT_SQUARE: u32 = 3;
/// `FlatUnitPrim::kind`: the disk x² + y² <= 1 (`disk`).
pub const UNIT_DISK: u32 = 4;
/// `FlatUnitPrim::kind`: a sphere, centre and radius in `rows[0..4]`.
pub const UNIT_SPHERE: u32 = 5;

/// One record for the GPU's brute-force test, 64 bytes. CUDA twin: `FlatUnitPrim` in
/// `flat.cuh`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatUnitPrim {
    /// Rows of the 3×4 map into unit space: local coordinate r of a point p is
    /// `rows[4r] p.x + rows[4r + 1] p.y + rows[4r + 2] p.z + rows[4r + 3]`. Spheres:
    /// centre and radius.
    pub rows: [f32; 12],
    /// The primitive (index into `FlatScene::prims`); a pair's triangle below the
    /// diagonal.
    pub prim: u32,
    /// A pair's triangle above the diagonal (else unused, zero).
    pub prim_b: u32,
    /// `UNIT_*`.
    pub kind: u32,
    /// Triangles and pairs: which weights are the barycentrics (b1, b2) the hit record
    /// wants, 2 bits each ([`FlatUnitPrim::roles`]).
    pub roles: u32,
}

/// The weights of a hit at unit coordinates (x, y) on the vertices of the triangle it
/// lies in: for `prim`, (1 - x - y, x, y) on its (origin, x end, y end); for a pair's
/// `prim_b`, (x + y - 1, 1 - y, 1 - x) on its (far corner, x end, y end).
pub fn unit_weights(kind: u32, x: f32, y: f32) -> (bool, [f32; 3]) {
    if kind == UNIT_PAIR && x + y > 1.0 {
        (true, [x + y - 1.0, 1.0 - y, 1.0 - x])
    } else {
        (false, [1.0 - x - y, x, y])
    }
}

impl FlatUnitPrim {
    /// For a triangle's own vertex order (1, 2), the indices into the weights of
    /// [`unit_weights`]: bits 0-1 and 2-3 for `prim`, bits 4-5 and 6-7 for `prim_b`.
    pub fn roles(&self, upper: bool) -> [usize; 2] {
        let r = if upper { self.roles >> 4 } else { self.roles };
        [(r & 3) as usize, ((r >> 2) & 3) as usize]
    }

    /// The triangle hit at unit coordinates (x, y) and its barycentrics (b1, b2) in the
    /// mesh's vertex order (what the kernel's brute force hands the hit record).
    pub fn triangle_hit(&self, x: f32, y: f32) -> (u32, [f32; 2]) {
        let (upper, w) = unit_weights(self.kind, x, y);
        let [r1, r2] = self.roles(upper);
        (if upper { self.prim_b } else { self.prim }, [w[r1], w[r2]])
    }
}

/// A record that no ray hits (all rows zero): the padding of a module's records.
pub const UNIT_PADDING: FlatUnitPrim = FlatUnitPrim {
    rows: [0.0; 12],
    prim: 0,
    prim_b: 0,
    kind: UNIT_NONE,
    roles: 0,
};

/// The brute-force kernels' `UnitPrims` parameter (flat.cuh) as 32-bit words: `units`
/// padded with [`UNIT_PADDING`] to `cap` records, then their count; `None` when there
/// are more than `cap`.
pub fn kernel_param(units: &[FlatUnitPrim], cap: usize) -> Option<Vec<u32>> {
    (units.len() <= cap).then(|| {
        let mut v = units.to_vec();
        v.resize(cap, UNIT_PADDING);
        let mut words: Vec<u32> = super::as_bytes(&v)
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        words.push(units.len() as u32);
        words
    })
}

/// The rows of a column-major 3×4 affine map (x axis, y axis, z axis, translation).
fn rows_of(cols: &[f32; 12]) -> [f32; 12] {
    let mut r = [0.0; 12];
    for row in 0..3 {
        for col in 0..4 {
            r[4 * row + col] = cols[3 * col + row];
        }
    }
    r
}

fn dvec(p: [f32; 3]) -> DVec3 {
    DVec3::from(p.map(f64::from))
}

/// The map taking `o` to the origin, `ex` to (1, 0, 0), `ey` to (0, 1, 0) and the unit
/// normal of their plane to z, or `None` when the three points span no area.
fn plane_rows(o: [f32; 3], ex: [f32; 3], ey: [f32; 3]) -> Option<[f32; 12]> {
    let (a, e1, e2) = (dvec(o), dvec(ex) - dvec(o), dvec(ey) - dvec(o));
    let n = e1.cross(e2);
    let len = n.length();
    if !(len > 0.0 && len.is_finite()) {
        return None;
    }
    let inv = glam::DMat3::from_cols(e1, e2, n / len).inverse();
    let t = -(inv * a);
    let mut r = [0.0f32; 12];
    for row in 0..3 {
        let v = inv.row(row);
        r[4 * row..4 * row + 4].copy_from_slice(&[
            v.x as f32,
            v.y as f32,
            v.z as f32,
            t[row] as f32,
        ]);
    }
    r.iter().all(|x| x.is_finite()).then_some(r)
}

/// A triangle's vertices in its mesh order.
fn verts(lp: &LeafPrim) -> [[f32; 3]; 3] {
    [lp.p0, lp.p1, lp.p2]
}

/// The roles bits of a triangle whose vertices, in its mesh order, are the weights'
/// entries `order` (a permutation of 0, 1, 2): its vertices 1 and 2.
fn role_bits(order: [usize; 3]) -> u32 {
    order[1] as u32 | (order[2] as u32) << 2
}

/// A single triangle's record (origin its vertex 0: x, y are its barycentrics).
fn triangle(lp: &LeafPrim) -> FlatUnitPrim {
    let [p0, p1, p2] = verts(lp);
    match plane_rows(p0, p1, p2) {
        Some(rows) => FlatUnitPrim {
            rows,
            prim: lp.prim,
            prim_b: 0,
            kind: UNIT_TRIANGLE,
            roles: role_bits([0, 1, 2]),
        },
        None => FlatUnitPrim {
            prim: lp.prim,
            ..UNIT_PADDING
        },
    }
}

/// The pair record of triangles `a` and `b` when they share an edge (the same vertex
/// positions) and their four vertices form a parallelogram to `tol` times its size.
fn pair(a: &LeafPrim, b: &LeafPrim) -> Option<FlatUnitPrim> {
    let (va, vb) = (verts(a), verts(b));
    // a's vertex k off the shared edge (i, j); b's vertex off it, d
    let shared: Vec<(usize, usize)> = (0..3)
        .flat_map(|i| (0..3).map(move |j| (i, j)))
        .filter(|&(i, j)| va[i] == vb[j])
        .collect();
    let [(i, bi), (j, bj)] = shared.as_slice() else {
        return None;
    };
    let (i, j, bi, bj) = (*i, *j, *bi, *bj);
    let k = 3 - i - j;
    let bd = 3 - bi - bj;
    let (o, ex, ey, d) = (dvec(va[k]), dvec(va[i]), dvec(va[j]), dvec(vb[bd]));
    let size = (ex - o).length().max((ey - o).length());
    if !((d - (ex + ey - o)).length() <= 1e-6 * size) {
        return None;
    }
    let rows = plane_rows(va[k], va[i], va[j])?;
    // weights: a: (origin k, x end i, y end j); b: (far corner d, x end i, y end j)
    let mut ra = [0usize; 3];
    ra[k] = 0;
    ra[i] = 1;
    ra[j] = 2;
    let mut rb = [0usize; 3];
    rb[bd] = 0;
    rb[bi] = 1;
    rb[bj] = 2;
    Some(FlatUnitPrim {
        rows,
        prim: a.prim,
        prim_b: b.prim,
        kind: UNIT_PAIR,
        roles: role_bits(ra) | role_bits(rb) << 4,
    })
}

/// The unit records of `leaf` (leaf order; a triangle paired into a parallelogram takes
/// its partner along) for a scene whose shapes are `shapes`; empty when there are more
/// than [`UNIT_PRIMS_MAX`] primitives or when `walks_bvh` (a shape of the scene has no
/// unit record: [`crate::shapes::ShapeRecord::walks_bvh`]).
pub fn unit_prims(leaf: &[LeafPrim], shapes: &[FlatShape], walks_bvh: bool) -> Vec<FlatUnitPrim> {
    if leaf.len() > UNIT_PRIMS_MAX || walks_bvh {
        return Vec::new();
    }
    let mut used = vec![false; leaf.len()];
    let mut out = Vec::with_capacity(leaf.len());
    for s in 0..leaf.len() {
        if used[s] {
            continue;
        }
        used[s] = true;
        let lp = &leaf[s];
        let sh = &shapes[lp.shape as usize];
        let rec = match sh.kind {
            SHAPE_MESH => {
                let partner = (s + 1..leaf.len())
                    .filter(|&t| !used[t] && leaf[t].shape == lp.shape)
                    .find_map(|t| pair(lp, &leaf[t]).map(|p| (t, p)));
                match partner {
                    Some((t, p)) => {
                        used[t] = true;
                        p
                    }
                    None => triangle(lp),
                }
            }
            SHAPE_RECTANGLE | SHAPE_DISK => FlatUnitPrim {
                rows: rows_of(&sh.to_local),
                prim: lp.prim,
                prim_b: 0,
                kind: if sh.kind == SHAPE_RECTANGLE {
                    UNIT_SQUARE
                } else {
                    UNIT_DISK
                },
                roles: 0,
            },
            SHAPE_SPHERE => {
                let mut rows = [0.0; 12];
                rows[..3].copy_from_slice(&sh.center);
                rows[3] = sh.radius;
                FlatUnitPrim {
                    rows,
                    prim: lp.prim,
                    prim_b: 0,
                    kind: UNIT_SPHERE,
                    roles: 0,
                }
            }
            _ => FlatUnitPrim {
                prim: lp.prim,
                ..UNIT_PADDING
            },
        };
        out.push(rec);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Local coordinates of p under `rows`.
    fn apply(rows: &[f32; 12], p: [f32; 3]) -> [f32; 3] {
        [0, 1, 2].map(|r| {
            rows[4 * r] * p[0] + rows[4 * r + 1] * p[1] + rows[4 * r + 2] * p[2] + rows[4 * r + 3]
        })
    }

    /// The kernel's branch-free inside rule (kernels/geometry.cuh intersect_unit).
    fn inside(p: &FlatUnitPrim, x: f32, y: f32) -> bool {
        let lo = if p.kind >= UNIT_SQUARE { -1.0 } else { 0.0 };
        let w = if p.kind == UNIT_TRIANGLE { 1.0 } else { 0.0 };
        let (a, b) = (x.min(y), x.max(y));
        a >= lo && b + w * a <= 1.0 && (p.kind != UNIT_DISK || x * x + y * y <= 1.0)
    }

    fn tri(p0: [f32; 3], p1: [f32; 3], p2: [f32; 3], prim: u32) -> LeafPrim {
        LeafPrim {
            p0,
            p1,
            p2,
            prim,
            is_tri: 1,
            shape: 0,
        }
    }

    fn mesh() -> Vec<FlatShape> {
        vec![FlatShape {
            kind: SHAPE_MESH,
            ..FlatShape::default()
        }]
    }

    /// The point at barycentrics (b1, b2) of a leaf triangle.
    fn at(lp: &LeafPrim, b: [f32; 2]) -> [f32; 3] {
        let [p0, p1, p2] = verts(lp);
        [0, 1, 2].map(|c| (1.0 - b[0] - b[1]) * p0[c] + b[0] * p1[c] + b[1] * p2[c])
    }

    #[test]
    fn a_triangle_maps_onto_the_unit_triangle_with_its_barycentrics() {
        let lp = tri([0.3, -1.0, 2.0], [1.7, 0.2, 2.5], [-0.4, 0.9, 1.1], 7);
        let rec = triangle(&lp);
        assert_eq!((rec.kind, rec.prim), (UNIT_TRIANGLE, 7));
        for b in [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.2, 0.5]] {
            let l = apply(&rec.rows, at(&lp, b));
            assert!((l[0] - b[0]).abs() < 1e-5 && (l[1] - b[1]).abs() < 1e-5 && l[2].abs() < 1e-5);
            let (prim, got) = rec.triangle_hit(l[0], l[1]);
            assert_eq!(prim, 7);
            assert!((got[0] - b[0]).abs() < 1e-5 && (got[1] - b[1]).abs() < 1e-5);
        }
        // lifted along the unit normal, local z is the height
        let e1 = dvec(lp.p1) - dvec(lp.p0);
        let n = e1.cross(dvec(lp.p2) - dvec(lp.p0)).normalize();
        let p = at(&lp, [0.2, 0.5]);
        let lifted = [0, 1, 2].map(|k| p[k] + 0.7 * n[k] as f32);
        assert!((apply(&rec.rows, lifted)[2] - 0.7).abs() < 1e-5);
        // no area: never hit (zero rows)
        let flat = triangle(&tri([0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], 3));
        assert_eq!((flat.kind, flat.rows), (UNIT_NONE, [0.0; 12]));
    }

    /// Two triangles of a quad, in several vertex orders: one pair record, and every
    /// point of the quad reports the triangle it lies in with that triangle's own
    /// barycentrics.
    #[test]
    fn quads_pair_up_and_report_each_half_with_its_own_barycentrics() {
        let (p, q, r, s) = (
            [0.0, 0.0, 0.0],
            [2.0, 0.5, 0.0],
            [2.5, 2.0, 1.0],
            [0.5, 1.5, 1.0],
        );
        // the quad p q r s (a parallelogram: p + r = q + s), split along q s or p r
        let cases = [
            (tri(p, q, s, 1), tri(q, r, s, 2)),
            (tri(s, p, q, 1), tri(r, s, q, 2)),
            (tri(q, s, p, 1), tri(s, q, r, 2)),
            (tri(p, q, r, 1), tri(p, r, s, 2)),
        ];
        for (a, b) in cases {
            let recs = unit_prims(&[a, b], &mesh(), false);
            assert_eq!(recs.len(), 1, "{a:?} {b:?}");
            let rec = recs[0];
            assert_eq!(rec.kind, UNIT_PAIR);
            for (lp, prim) in [(a, 1), (b, 2)] {
                for bary in [[0.2, 0.3], [0.6, 0.1], [0.05, 0.9], [0.3, 0.3]] {
                    let l = apply(&rec.rows, at(&lp, bary));
                    assert!(l[2].abs() < 1e-5 && inside(&rec, l[0], l[1]));
                    let (got_prim, got) = rec.triangle_hit(l[0], l[1]);
                    assert_eq!(got_prim, prim, "{lp:?} at {bary:?}: local {l:?}");
                    assert!(
                        (got[0] - bary[0]).abs() < 1e-5 && (got[1] - bary[1]).abs() < 1e-5,
                        "{lp:?} at {bary:?}: {got:?}"
                    );
                }
            }
            // outside the quad: not inside
            let l = apply(&rec.rows, [-1.0, -1.0, 0.0]);
            assert!(!inside(&rec, l[0], l[1]));
        }
        // not a parallelogram (r moved), or not sharing an edge: two triangles
        let r2 = [2.5, 2.2, 1.0];
        assert_eq!(
            unit_prims(&[tri(p, q, s, 1), tri(q, r2, s, 2)], &mesh(), false).len(),
            2
        );
        let far = tri([5.0, 5.0, 5.0], [6.0, 5.0, 5.0], [5.0, 6.0, 5.0], 2);
        let recs = unit_prims(&[tri(p, q, s, 1), far], &mesh(), false);
        assert_eq!(
            recs.iter().map(|r| r.kind).collect::<Vec<_>>(),
            [UNIT_TRIANGLE; 2]
        );
    }

    #[test]
    fn the_inside_rule_is_each_unit_shape() {
        let planar = |kind| FlatUnitPrim {
            kind,
            ..UNIT_PADDING
        };
        let (tri, pair, square, disk) = (
            planar(UNIT_TRIANGLE),
            planar(UNIT_PAIR),
            planar(UNIT_SQUARE),
            planar(UNIT_DISK),
        );
        for i in -30..=30 {
            for j in -30..=30 {
                let (x, y) = (i as f32 / 20.0, j as f32 / 20.0);
                assert_eq!(
                    inside(&tri, x, y),
                    x >= 0.0 && y >= 0.0 && x + y <= 1.0,
                    "{x} {y}"
                );
                let unit = (0.0..=1.0).contains(&x) && (0.0..=1.0).contains(&y);
                assert_eq!(inside(&pair, x, y), unit, "{x} {y}");
                assert_eq!(
                    inside(&square, x, y),
                    x.abs() <= 1.0 && y.abs() <= 1.0,
                    "{x} {y}"
                );
                assert_eq!(inside(&disk, x, y), x * x + y * y <= 1.0, "{x} {y}");
            }
        }
    }

    #[test]
    fn the_kernel_parameter_is_padded_records_then_their_count() {
        let a = tri([0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], 4);
        let rec = triangle(&a);
        let p = kernel_param(&[rec, rec], 4).unwrap();
        assert_eq!(p.len(), 4 * 16 + 1, "4 records of 16 words, then the count");
        assert_eq!((p[12], p[14]), (4, UNIT_TRIANGLE));
        assert!(
            p[32..64].iter().all(|&w| w == 0),
            "padding: zero rows, kind none"
        );
        assert_eq!(p[64], 2);
        assert!(kernel_param(&[rec, rec], 1).is_none());
    }

    #[test]
    fn rows_transpose_column_major_maps() {
        let cols = [
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
        ];
        // x axis (1, 2, 3), y axis (4, 5, 6), z axis (7, 8, 9), translation (10, 11, 12)
        assert_eq!(
            rows_of(&cols),
            [1.0, 4.0, 7.0, 10.0, 2.0, 5.0, 8.0, 11.0, 3.0, 6.0, 9.0, 12.0]
        );
    }
}
