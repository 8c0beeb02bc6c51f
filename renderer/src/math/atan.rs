//! Inlined `atan2` and `acos` for the hot paths that turn directions into angles
//! (environment-map and sphere coordinates): one division and a degree-9 odd
//! polynomial, no call into libm. Within 3e-7 radians of the exact angle (about one
//! float ulp of π), which is how far libm's own `f32` results may be from each other
//! across platforms.
//!
//! The argument is reduced to `|t| ≤ tan(π/8)` (by swapping the legs, and by the
//! identity `atan(a) = π/4 + atan((a − 1)/(a + 1))`), where the classic minimax
//! polynomial of Cephes' `atanf` holds.

use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};

/// tan(π/8).
const TAN_PI_8: f32 = 0.414_213_57;

/// The angle of the point `(x, y)` in `[-π, π]`, as `y.atan2(x)` (signed zeros
/// included; `(0, 0)` gives ±0 or ±π by the signs, as libm).
#[inline(always)]
pub fn atan2(y: f32, x: f32) -> f32 {
    let (ax, ay) = (x.abs(), y.abs());
    // n / d in [0, 1]: the smaller leg over the larger
    let swap = ay > ax;
    let (n, d) = if swap { (ax, ay) } else { (ay, ax) };
    let big = n > TAN_PI_8 * d;
    let (num, den, base) = if big {
        (n - d, n + d, FRAC_PI_4)
    } else {
        (n, d, 0.0)
    };
    // (0, 0): angle 0 before the quadrant is applied
    let t = if den == 0.0 { 0.0 } else { num / den };
    let z = t * t;
    let p = (((8.053_744_5e-2 * z - 1.387_768_6e-1) * z + 1.997_771_1e-1) * z - 3.333_295e-1) * z;
    let mut r = base + (p * t + t);
    if swap {
        r = FRAC_PI_2 - r;
    }
    if x.is_sign_negative() {
        r = PI - r;
    }
    r.copysign(y)
}

/// `acos(c)` for `c` in `[-1, 1]` (clamped), in `[0, π]`.
#[inline(always)]
pub fn acos(c: f32) -> f32 {
    let c = c.clamp(-1.0, 1.0);
    atan2(((1.0 - c) * (1.0 + c)).sqrt(), c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Pcg32;

    #[test]
    fn atan2_is_within_3e7_of_the_exact_angle_everywhere() {
        let mut rng = Pcg32::new(11, 2);
        let mut worst = 0.0f64;
        let mut check = |y: f32, x: f32| {
            let exact = (y as f64).atan2(x as f64);
            let err = (atan2(y, x) as f64 - exact).abs();
            assert!(err < 3e-7, "atan2({y}, {x}) = {} vs {exact}", atan2(y, x));
            worst = worst.max(err);
        };
        for _ in 0..1_000_000 {
            let a = rng.next_f32() * 2.0 - 1.0;
            let b = rng.next_f32() * 2.0 - 1.0;
            check(a, b);
            // across magnitudes, and near the reduction's seams
            let s = 10f32.powf(rng.next_f32() * 12.0 - 6.0);
            check(a * s, b);
            check(a, a * (TAN_PI_8 + (rng.next_f32() - 0.5) * 1e-3));
        }
        for (y, x) in [
            (0.0, 1.0),
            (1.0, 0.0),
            (1.0, 1.0),
            (-1.0, -1.0),
            (1e-30, -1.0),
        ] {
            check(y, x);
        }
        assert!(worst > 0.0); // the comparison ran
    }

    #[test]
    fn atan2_keeps_libms_signs_and_zeros() {
        for (y, x) in [
            (0.0f32, 0.0f32),
            (-0.0, 0.0),
            (0.0, -0.0),
            (-0.0, -0.0),
            (0.0, -1.0),
            (-0.0, -1.0),
            (0.0, 1.0),
            (-0.0, 1.0),
            (1.0, 0.0),
            (-1.0, -0.0),
        ] {
            let (a, b) = (atan2(y, x), y.atan2(x));
            assert!(
                (a - b).abs() <= 3e-7 && a.is_sign_negative() == b.is_sign_negative(),
                "atan2({y}, {x}): {a} vs {b}"
            );
        }
        assert!(atan2(f32::NAN, 1.0).is_nan() && atan2(1.0, f32::NAN).is_nan());
    }

    #[test]
    fn acos_is_within_3e7_of_the_exact_angle() {
        for k in 0..=200_000 {
            let c = -1.0 + k as f32 * 1e-5;
            let exact = (c.clamp(-1.0, 1.0) as f64).acos();
            assert!((acos(c) as f64 - exact).abs() < 3e-7, "acos({c})");
        }
        assert_eq!(acos(1.5), 0.0);
        assert!((acos(-1.5) - PI).abs() < 3e-7);
    }
}
