//! Small math types shared by every plugin: rays, frames, transforms, boxes,
//! sampling warps and discrete distributions.

pub mod atan;
pub mod chi2;
pub mod distribution;
pub mod rng;
pub mod sincos;
pub mod spectrum;
pub mod stats;
pub mod transform;
pub mod triangle;
pub mod warp;

pub use distribution::{Distribution1D, Distribution2D};
pub use glam::{Mat3, Mat4, Vec2, Vec3, Vec4};
pub use rng::Pcg32;
pub use transform::Transform;

/// Whether a scene number survives rendering in single precision: finite, and finite
/// once rounded to `f32` (NaN, infinities and magnitudes above 3.4e38 are not).
pub fn fits_f32(x: f64) -> bool {
    x.is_finite() && (x as f32).is_finite()
}

/// Whether every value is finite (no NaN or infinity). Tests 64 values per step on
/// their exponent bits, which the compiler vectorises; a texture update checks
/// millions of values per call.
pub fn all_finite(values: &[f32]) -> bool {
    const EXP: u32 = 0x7f80_0000;
    let chunks = values.chunks_exact(64);
    let rest = chunks.remainder();
    for chunk in chunks {
        let mut any = false;
        for v in chunk {
            any |= v.to_bits() & EXP == EXP;
        }
        if any {
            return false;
        }
    }
    rest.iter().all(|v| v.is_finite())
}

/// Linear RGB radiance or reflectance.
pub type Color = Vec3;

/// π as f32.
pub const PI: f32 = std::f32::consts::PI;
/// 1/π.
pub const INV_PI: f32 = std::f32::consts::FRAC_1_PI;
/// 1/(2π).
pub const INV_TWO_PI: f32 = 0.5 * std::f32::consts::FRAC_1_PI;
/// 1/(4π).
pub const INV_FOUR_PI: f32 = 0.25 * std::f32::consts::FRAC_1_PI;
/// Relative offset used to push secondary ray origins off surfaces.
pub const RAY_EPSILON: f32 = 1e-4;
/// Smallest accepted hit distance: intersections at `t <= RAY_TMIN` are ignored.
pub const RAY_TMIN: f32 = 1e-6;
/// The largest `f32` below 1: what a sample rescaled into [0, 1) is clamped to.
pub const ONE_MINUS_EPSILON: f32 = 1.0 - f32::EPSILON / 2.0;

/// A ray `o + t d` for `t` in `[0, tmax)`.
#[derive(Clone, Copy, Debug)]
pub struct Ray {
    /// Origin.
    pub o: Vec3,
    /// Direction (unit length unless stated otherwise).
    pub d: Vec3,
    /// Largest accepted hit distance.
    pub tmax: f32,
}

impl Ray {
    /// A ray with unbounded extent.
    pub fn new(o: Vec3, d: Vec3) -> Self {
        Ray {
            o,
            d,
            tmax: f32::INFINITY,
        }
    }

    /// The point at distance `t`.
    pub fn at(&self, t: f32) -> Vec3 {
        self.o + t * self.d
    }
}

/// Offsets `p` along the geometric normal `ng` towards the side `d` points to,
/// scaled with the magnitude of `p` so that it survives float rounding.
pub fn offset_origin(p: Vec3, ng: Vec3, d: Vec3) -> Vec3 {
    let scale = RAY_EPSILON * (1.0 + p.abs().max_element());
    if ng.dot(d) >= 0.0 {
        p + ng * scale
    } else {
        p - ng * scale
    }
}

/// An orthonormal frame `(s, t, n)`; `to_local` / `to_world` change basis.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// First tangent.
    pub s: Vec3,
    /// Second tangent.
    pub t: Vec3,
    /// Normal.
    pub n: Vec3,
}

impl Frame {
    /// A frame around `n` with an arbitrary but continuous tangent
    /// (Duff et al. 2017, "Building an Orthonormal Basis, Revisited").
    pub fn from_normal(n: Vec3) -> Self {
        let sign = 1.0f32.copysign(n.z);
        let a = -1.0 / (sign + n.z);
        let b = n.x * n.y * a;
        let s = Vec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x);
        let t = Vec3::new(b, sign + n.y * n.y * a, -n.y);
        Frame { s, t, n }
    }

    /// A frame around `n` whose first tangent follows `dpdu` where it can
    /// (so anisotropic roughness is aligned with the surface parametrisation).
    pub fn from_normal_tangent(n: Vec3, dpdu: Vec3) -> Self {
        let s = dpdu - n * n.dot(dpdu);
        let len2 = s.length_squared();
        if len2 < 1e-12 || !len2.is_finite() {
            return Frame::from_normal(n);
        }
        let s = s / len2.sqrt();
        Frame {
            s,
            t: n.cross(s),
            n,
        }
    }

    /// World → local.
    pub fn to_local(&self, v: Vec3) -> Vec3 {
        Vec3::new(v.dot(self.s), v.dot(self.t), v.dot(self.n))
    }

    /// Local → world.
    pub fn to_world(&self, v: Vec3) -> Vec3 {
        self.s * v.x + self.t * v.y + self.n * v.z
    }
}

/// An axis-aligned bounding box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

impl Default for Aabb {
    fn default() -> Self {
        Aabb::EMPTY
    }
}

impl Aabb {
    /// The empty box (union identity).
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    /// The box around one point.
    pub fn point(p: Vec3) -> Self {
        Aabb { min: p, max: p }
    }

    /// Grows the box to contain `p`.
    pub fn expand(&mut self, p: Vec3) {
        self.min = self.min.min(p);
        self.max = self.max.max(p);
    }

    /// The union of two boxes.
    pub fn union(&self, o: &Aabb) -> Aabb {
        Aabb {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }

    /// The box centre.
    pub fn center(&self) -> Vec3 {
        0.5 * (self.min + self.max)
    }

    /// Edge lengths (negative for the empty box).
    pub fn extent(&self) -> Vec3 {
        self.max - self.min
    }

    /// Surface area (0 for the empty box).
    pub fn surface_area(&self) -> f32 {
        let e = self.extent();
        if e.x < 0.0 {
            return 0.0;
        }
        2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
    }

    /// Whether the box is empty.
    pub fn is_empty(&self) -> bool {
        self.min.x > self.max.x
    }

    /// The bounding sphere (centre, radius).
    pub fn bounding_sphere(&self) -> (Vec3, f32) {
        if self.is_empty() {
            return (Vec3::ZERO, 0.0);
        }
        let c = self.center();
        (c, (self.max - c).length())
    }
}

/// Rec. 709 luminance of a linear RGB colour.
pub fn luminance(c: Color) -> f32 {
    0.212671 * c.x + 0.715160 * c.y + 0.072169 * c.z
}

/// Reflects `wi` about the local normal (0, 0, 1).
pub fn reflect_local(wi: Vec3) -> Vec3 {
    Vec3::new(-wi.x, -wi.y, wi.z)
}

/// Reflects `wi` about the unit vector `m` (both pointing away from the surface).
pub fn reflect(wi: Vec3, m: Vec3) -> Vec3 {
    2.0 * wi.dot(m) * m - wi
}

/// `x.floor() as i32` without a call to `floorf` (the baseline x86-64 target has no
/// rounding instruction): the same value for every `f32`, NaN included (0).
#[inline(always)]
pub fn floor_i32(x: f32) -> i32 {
    let i = x as i32;
    i.saturating_sub((x < i as f32) as i32)
}

/// `x.ceil() as i32` without a call to `ceilf`; the same value for every `f32`.
#[inline(always)]
pub fn ceil_i32(x: f32) -> i32 {
    let i = x as i32;
    i.saturating_add((x > i as f32) as i32)
}

/// `x.floor()` without a call to `floorf` where `|x| < 2^23` (every such float
/// converts to an integer exactly); libm's elsewhere, NaN and infinities included. The
/// same value for every `f32`.
#[inline(always)]
pub fn floor_f32(x: f32) -> f32 {
    if x.abs() < 8_388_608.0 {
        // SAFETY: |x| < 2^23 fits an i32
        let t = unsafe { x.to_int_unchecked::<i32>() } as f32;
        // truncation rounds towards zero: one down for negative fractions (-0.5 -> -1)
        let f = if t > x { t - 1.0 } else { t };
        // keep the sign of a zero result as floorf does (-0.0 -> -0.0; -0.5 -> -1)
        if f == 0.0 {
            0.0f32.copysign(x)
        } else {
            f
        }
    } else {
        x.floor()
    }
}

/// Safe square root: 0 for negative arguments (rounding).
pub fn safe_sqrt(x: f32) -> f32 {
    x.max(0.0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_and_ceil_helpers_match_the_float_ones() {
        let mut rng = Pcg32::new(3, 4);
        let special = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2.5,
            -2.5,
            1e-30,
            -1e-30,
            1e-45,
            -1e-45,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            8388607.5,
            -8388607.5,
            8388608.0,
            -8388609.0,
            16777217.0,
            2147483520.0,
            -2147483648.0,
            3e9,
            -3e9,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        // random values at magnitudes 2^-20 .. 2^39, and the integers around them
        let random = (0..100_000).flat_map(|_| {
            let x = (rng.next_f32() - 0.5) * 2f32.powi((rng.next_u32() % 60) as i32 - 20);
            [x, x.floor(), x.floor().next_up(), x.floor().next_down()]
        });
        for x in special.into_iter().chain(random) {
            assert_eq!(
                floor_f32(x).to_bits(),
                x.floor().to_bits(),
                "floor_f32 {x:e}"
            );
            assert_eq!(floor_i32(x), x.floor() as i32, "floor {x}");
            assert_eq!(ceil_i32(x), x.ceil() as i32, "ceil {x}");
        }
    }

    #[test]
    fn all_finite_finds_every_non_finite_value() {
        let mut v: Vec<f32> = (0..200).map(|i| i as f32 * 0.5 - 30.0).collect();
        v.push(f32::MAX);
        v.push(f32::MIN_POSITIVE / 4.0); // subnormal
        assert!(super::all_finite(&v));
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            for i in [0, 63, 64, 150, v.len() - 1] {
                let mut w = v.clone();
                w[i] = bad;
                assert!(!super::all_finite(&w), "{bad} at {i}");
            }
        }
        assert!(super::all_finite(&[]));
    }

    #[test]
    fn frame_is_orthonormal() {
        for n in [
            Vec3::Z,
            -Vec3::Z,
            Vec3::X,
            Vec3::new(0.3, -0.5, 0.8).normalize(),
        ] {
            let f = Frame::from_normal(n);
            assert!(
                f.s.dot(f.t).abs() < 1e-6 && f.s.dot(f.n).abs() < 1e-6 && f.t.dot(f.n).abs() < 1e-6
            );
            assert!((f.s.cross(f.t) - f.n).length() < 1e-5, "right-handed");
            let v = Vec3::new(0.1, 0.7, -0.2);
            assert!((f.to_world(f.to_local(v)) - v).length() < 1e-6);
        }
    }
}
