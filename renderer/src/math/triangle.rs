//! The watertight ray–triangle test (Woop, Benthin and Wald 2013) that meshes, the
//! BVH's leaves and the wide walk share, so that every path through the scene finds
//! the same hits bit for bit.

use super::{Ray, Vec2, Vec3, RAY_TMIN};

/// A ray prepared for watertight triangle tests: the axis permutation that
/// makes the direction's largest component z, and the shear that maps the
/// direction onto +z (Woop, Benthin and Wald 2013, "Watertight Ray/Triangle
/// Intersection"; as in pbrt-v4).
#[derive(Clone, Copy, Debug)]
pub struct TriRay {
    /// Ray origin.
    pub o: Vec3,
    /// Axes (kx, ky, kz) of the permutation.
    pub k: [usize; 3],
    /// Shear (Sx, Sy) and scale Sz.
    pub s: Vec3,
}

impl TriRay {
    /// Prepares `ray` (a zero direction gives NaN shears: every test misses).
    #[inline]
    pub fn new(ray: &Ray) -> Self {
        let a = ray.d.abs();
        let kz = if a.x > a.y {
            if a.x > a.z {
                0
            } else {
                2
            }
        } else if a.y > a.z {
            1
        } else {
            2
        };
        // kx = kz + 1 and ky = kz + 2 (mod 3), picked rather than indexed (an index into
        // a vector is a chain of branches)
        let d = ray.d;
        let (k, dx, dy, dz) = match kz {
            0 => ([1, 2, 0], d.y, d.z, d.x),
            1 => ([2, 0, 1], d.z, d.x, d.y),
            _ => ([0, 1, 2], d.x, d.y, d.z),
        };
        // one vector division: the quotients -dx/dz, -dy/dz, 1/dz
        let s = glam::Vec3A::new(-dx, -dy, 1.0) / glam::Vec3A::splat(dz);
        TriRay {
            o: ray.o,
            k,
            s: s.into(),
        }
    }

    /// A vertex relative to the origin, permuted and sheared (z not yet scaled).
    #[inline(always)]
    fn local(&self, p: Vec3) -> Vec3 {
        let q = p - self.o;
        let (x, y, z) = (q[self.k[0]], q[self.k[1]], q[self.k[2]]);
        Vec3::new(x + self.s.x * z, y + self.s.y * z, z)
    }
}

/// Edge functions of the sheared triangle; recomputed in f64 when one is
/// exactly zero, so that edges shared by two triangles are never missed.
#[inline(always)]
fn edge_functions(a: Vec3, b: Vec3, c: Vec3) -> (f32, f32, f32) {
    let e0 = b.x * c.y - b.y * c.x;
    let e1 = c.x * a.y - c.y * a.x;
    let e2 = a.x * b.y - a.y * b.x;
    if e0 != 0.0 && e1 != 0.0 && e2 != 0.0 {
        return (e0, e1, e2);
    }
    let f = |u: Vec3, v: Vec3| (u.x as f64 * v.y as f64 - u.y as f64 * v.x as f64) as f32;
    (f(b, c), f(c, a), f(a, b))
}

/// Watertight ray–triangle test: `(t, (b1, b2))` for `RAY_TMIN < t < tmax`,
/// where `b1`, `b2` weight `p[1]`, `p[2]`. NaN anywhere rejects.
#[inline(always)]
pub fn intersect_tri_watertight(p: [Vec3; 3], r: &TriRay, tmax: f32) -> Option<(f32, Vec2)> {
    let (a, b, c) = (r.local(p[0]), r.local(p[1]), r.local(p[2]));
    let (e0, e1, e2) = edge_functions(a, b, c);
    let neg = e0 < 0.0 || e1 < 0.0 || e2 < 0.0;
    let pos = e0 > 0.0 || e1 > 0.0 || e2 > 0.0;
    let det = e0 + e1 + e2;
    if (neg && pos) || det == 0.0 || det.is_nan() {
        return None;
    }
    let inv_det = 1.0 / det;
    let t = (e0 * a.z + e1 * b.z + e2 * c.z) * r.s.z * inv_det;
    if t > RAY_TMIN && t < tmax {
        Some((t, Vec2::new(e1 * inv_det, e2 * inv_det)))
    } else {
        None
    }
}
