//! The GPU's brute-force records for scenes of a few primitives: each leaf slot as an
//! affine map into a unit shape.
//!
//! A scene of at most [`UNIT_PRIMS_MAX`] primitives may skip the BVH on the GPU
//! (`backend/cuda/features.rs`): every ray tests every primitive, in slot order, so all
//! lanes of a warp run the same test on the same primitive and no lane idles while
//! another walks deeper (a Cornell box warp kept only ~9 of 32 lanes busy in the walk).
//! That pays only if a test is cheap, so each primitive gets a [`FlatUnitPrim`]: the rows
//! of an affine map `to_unit` from world space into a space where the primitive is a
//! unit shape in the plane z = 0 — the triangle (0,0), (1,0), (0,1) (its barycentrics
//! (b1, b2) are then the local x, y: Woop's unit-triangle test), the square [-1, 1]² of a
//! `rectangle` or the unit disk of a `disk` (their `to_local`, whose local x, y the hit
//! record wants) — so one test serves them all: local z of the origin and direction give
//! t, then local x and y at t decide, branch-free for triangles and squares alike:
//! inside iff min(x, y) >= `lo` and max(x, y) + `w` min(x, y) <= 1 (triangle: lo 0, w 1,
//! i.e. x, y >= 0 and x + y <= 1; square: lo -1, w 0, i.e. -1 <= x, y <= 1; a disk is
//! its square and x² + y² <= 1). Spheres keep their own test (centre and radius in the
//! first row).
//!
//! The triangle test is not watertight (an edge shared by two triangles can, rarely, be
//! missed by a ray through it, as with Möller–Trumbore); the BVH path and the CPU keep
//! the watertight test. The map of a triangle is built in f64 from its vertices; a
//! degenerate triangle (no area) gets [`UNIT_NONE`] and is never hit, as the watertight
//! test never hits it.

use glam::DVec3;

use super::{FlatShape, SHAPE_DISK, SHAPE_MESH, SHAPE_RECTANGLE, SHAPE_SPHERE};
use crate::accel::LeafPrim;

/// Scenes with at most this many primitives get [`FlatUnitPrim`]s (the brute-force
/// threshold of `backend/cuda/features.rs` may be at most this).
pub const UNIT_PRIMS_MAX: usize = 64;

/// `FlatUnitPrim::kind`: never hit (a degenerate triangle; its `lo` is +inf).
pub const UNIT_NONE: u32 = 0;
/// `FlatUnitPrim::kind`: the unit triangle x, y >= 0, x + y <= 1.
pub const UNIT_TRIANGLE: u32 = 1;
/// `FlatUnitPrim::kind`: the square |x|, |y| <= 1 (`rectangle`).
pub const UNIT_SQUARE: u32 = 2;
/// `FlatUnitPrim::kind`: the disk x² + y² <= 1 (`disk`).
pub const UNIT_DISK: u32 = 3;
/// `FlatUnitPrim::kind`: a sphere, centre and radius in `rows[0..4]`.
pub const UNIT_SPHERE: u32 = 4;

/// One primitive for the GPU's brute-force test, 64 bytes (four 16-byte loads). CUDA
/// twin: `FlatUnitPrim` in `flat.cuh`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatUnitPrim {
    /// Rows of the 3×4 map into unit space: local coordinate r of a point p is
    /// `rows[4r] p.x + rows[4r + 1] p.y + rows[4r + 2] p.z + rows[4r + 3]`. Spheres:
    /// centre and radius.
    pub rows: [f32; 12],
    /// The primitive (index into `FlatScene::prims`).
    pub prim: u32,
    /// Lower bound of the local x and y (0 triangle, -1 square and disk, +inf never).
    pub lo: f32,
    /// Weight of min(x, y) in the upper bound (1 triangle, 0 square and disk).
    pub w: f32,
    /// `UNIT_*`.
    pub kind: u32,
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

/// The map taking triangle (p0, p1, p2) to the unit triangle (p1 - p0 to x, p2 - p0 to
/// y, the unit normal to z), or `None` when the triangle has no area.
fn triangle_rows(p0: [f32; 3], p1: [f32; 3], p2: [f32; 3]) -> Option<[f32; 12]> {
    let (a, b, c) = (
        DVec3::from(p0.map(f64::from)),
        DVec3::from(p1.map(f64::from)),
        DVec3::from(p2.map(f64::from)),
    );
    let (e1, e2) = (b - a, c - a);
    let n = e1.cross(e2);
    let len = n.length();
    if !(len > 0.0 && len.is_finite()) {
        return None;
    }
    let m = glam::DMat3::from_cols(e1, e2, n / len);
    let inv = m.inverse();
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

/// A record that no ray hits: the padding of a module's unit records.
pub const UNIT_PADDING: FlatUnitPrim = FlatUnitPrim {
    rows: [0.0; 12],
    prim: 0,
    lo: f32::INFINITY,
    w: 0.0,
    kind: UNIT_NONE,
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

/// The unit records of `leaf` (leaf order) for a scene whose shapes are `shapes`;
/// empty when there are more than [`UNIT_PRIMS_MAX`] primitives.
pub fn unit_prims(leaf: &[LeafPrim], shapes: &[FlatShape]) -> Vec<FlatUnitPrim> {
    if leaf.len() > UNIT_PRIMS_MAX {
        return Vec::new();
    }
    leaf.iter()
        .map(|lp| {
            let sh = &shapes[lp.shape as usize];
            let (kind, rows) = match sh.kind {
                SHAPE_MESH => match triangle_rows(lp.p0, lp.p1, lp.p2) {
                    Some(r) => (UNIT_TRIANGLE, r),
                    None => (UNIT_NONE, [0.0; 12]),
                },
                SHAPE_RECTANGLE => (UNIT_SQUARE, rows_of(&sh.to_local)),
                SHAPE_DISK => (UNIT_DISK, rows_of(&sh.to_local)),
                SHAPE_SPHERE => {
                    let mut r = [0.0; 12];
                    r[..3].copy_from_slice(&sh.center);
                    r[3] = sh.radius;
                    (UNIT_SPHERE, r)
                }
                _ => (UNIT_NONE, [0.0; 12]),
            };
            let (lo, w) = match kind {
                UNIT_TRIANGLE => (0.0, 1.0),
                UNIT_SQUARE | UNIT_DISK => (-1.0, 0.0),
                _ => (UNIT_PADDING.lo, UNIT_PADDING.w),
            };
            FlatUnitPrim {
                rows,
                prim: lp.prim,
                lo,
                w,
                kind,
            }
        })
        .collect()
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

    #[test]
    fn a_triangle_maps_onto_the_unit_triangle_with_its_barycentrics() {
        let (p0, p1, p2) = ([0.3, -1.0, 2.0], [1.7, 0.2, 2.5], [-0.4, 0.9, 1.1]);
        let r = triangle_rows(p0, p1, p2).unwrap();
        for (p, want) in [(p0, [0.0, 0.0]), (p1, [1.0, 0.0]), (p2, [0.0, 1.0])] {
            let l = apply(&r, p);
            assert!(
                (l[0] - want[0]).abs() < 1e-5 && (l[1] - want[1]).abs() < 1e-5 && l[2].abs() < 1e-5
            );
        }
        // a point at barycentrics (0.2, 0.5), lifted 0.7 along the unit normal
        let q = |b1: f32, b2: f32| {
            [0, 1, 2].map(|k| p0[k] + b1 * (p1[k] - p0[k]) + b2 * (p2[k] - p0[k]))
        };
        let e1 = DVec3::from(p1.map(f64::from)) - DVec3::from(p0.map(f64::from));
        let e2 = DVec3::from(p2.map(f64::from)) - DVec3::from(p0.map(f64::from));
        let n = e1.cross(e2).normalize();
        let base = q(0.2, 0.5);
        let lifted = [0, 1, 2].map(|k| base[k] + 0.7 * n[k] as f32);
        let l = apply(&r, lifted);
        assert!(
            (l[0] - 0.2).abs() < 1e-5 && (l[1] - 0.5).abs() < 1e-5 && (l[2] - 0.7).abs() < 1e-5
        );
        // no area, no map
        assert!(triangle_rows(p0, p1, p1).is_none());
        assert!(triangle_rows([0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]).is_none());
    }

    /// The kernel's branch-free inside rule (kernels/geometry.cuh intersect_unit).
    fn inside(p: &FlatUnitPrim, x: f32, y: f32) -> bool {
        let (a, b) = (x.min(y), x.max(y));
        a >= p.lo && b + p.w * a <= 1.0 && (p.kind != UNIT_DISK || x * x + y * y <= 1.0)
    }

    #[test]
    fn the_inside_rule_is_each_unit_shape() {
        let rec = |kind| {
            let lp = LeafPrim::default();
            let mut shape = FlatShape {
                kind: match kind {
                    UNIT_TRIANGLE => SHAPE_MESH,
                    UNIT_SQUARE => SHAPE_RECTANGLE,
                    _ => SHAPE_DISK,
                },
                ..FlatShape::default()
            };
            shape.to_local[0] = 1.0;
            let lp = LeafPrim {
                p1: [1.0, 0.0, 0.0],
                p2: [0.0, 1.0, 0.0],
                ..lp
            };
            unit_prims(&[lp], &[shape])[0]
        };
        let (tri, square, disk) = (rec(UNIT_TRIANGLE), rec(UNIT_SQUARE), rec(UNIT_DISK));
        assert_eq!(
            (tri.kind, square.kind, disk.kind),
            (UNIT_TRIANGLE, UNIT_SQUARE, UNIT_DISK)
        );
        for i in -30..=30 {
            for j in -30..=30 {
                let (x, y) = (i as f32 / 20.0, j as f32 / 20.0);
                assert_eq!(
                    inside(&tri, x, y),
                    x >= 0.0 && y >= 0.0 && x + y <= 1.0,
                    "{x} {y}"
                );
                assert_eq!(
                    inside(&square, x, y),
                    x.abs() <= 1.0 && y.abs() <= 1.0,
                    "{x} {y}"
                );
                assert_eq!(inside(&disk, x, y), x * x + y * y <= 1.0, "{x} {y}");
            }
        }
        let none = unit_prims(
            &[LeafPrim::default()],
            &[FlatShape {
                kind: SHAPE_MESH,
                ..FlatShape::default()
            }],
        )[0];
        assert_eq!(none.kind, UNIT_NONE);
        assert!(
            !inside(&none, 0.0, 0.0),
            "a triangle without area is never hit"
        );
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
