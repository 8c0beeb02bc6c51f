//! Inlined `sin(πx)` and `cos(πx)` together, for the warps that turn random numbers
//! into angles (`φ = 2πu`, the concentric disk, lat–long maps): no call into libm.
//!
//! The argument is reduced exactly: `x = n/2 + r` with `n` the nearest integer to `2x`
//! and `|r| ≤ 1/4` (the subtraction is exact in `f32`), then `sin(πr)` and `cos(πr)`
//! come from their Taylor series to degree 9 and 10 (the remainder is below 2e-9
//! for `|πr| ≤ π/4`), and the quarter turn `n mod 4` swaps and negates them. The result
//! is within 1e-7 of the exact value everywhere (8.4e-8 measured over `[0, 2)`): closer
//! than libm's `(PI * x).sin_cos()` (4.1e-7), which rounds `π·x` before reducing it.

/// `1.5 · 2²³`: added to a float of magnitude below 2²², it leaves the nearest integer
/// (ties to even) in the low mantissa bits, and subtracted again, that integer as a
/// float — the rounding without SSE4.1's `roundss`.
const ROUNDER: f32 = 12_582_912.0;

/// `(sin πx, cos πx)`.
#[inline(always)]
pub fn sin_cos_pi(x: f32) -> (f32, f32) {
    let x2 = 2.0 * x;
    if !(x2.abs() < 4_194_304.0) {
        return sin_cos_pi_far(x);
    }
    let k = x2 + ROUNDER;
    let n = k - ROUNDER;
    let quarter = k.to_bits() & 3;
    let (s, c) = sin_cos_pi_near(0.5 * (x2 - n));
    let (s, c) = if quarter & 1 != 0 { (c, -s) } else { (s, c) };
    if quarter & 2 != 0 {
        (-s, -c)
    } else {
        (s, c)
    }
}

/// `(sin πr, cos πr)` for `|r| ≤ 1/4`: the series in `r` with coefficients
/// `±π^k / k!`.
#[inline(always)]
pub fn sin_cos_pi_near(r: f32) -> (f32, f32) {
    let z = r * r;
    let s = ((((0.082_145_89 * z - 0.599_264_5) * z + 2.550_164) * z - 5.167_713) * z
        + std::f32::consts::PI)
        * r;
    let c = ((((-0.025_806_89 * z + 0.235_330_63) * z - 1.335_262_8) * z + 4.058_712) * z
        - 4.934_802)
        * z
        + 1.0;
    (s, c)
}

/// Arguments of 2²¹ and more (whole or half numbers) and non-finite ones, through libm
/// in `f64` (never on a renderer's hot path).
#[cold]
fn sin_cos_pi_far(x: f32) -> (f32, f32) {
    let (s, c) = (std::f64::consts::PI * (x as f64 % 2.0)).sin_cos();
    (s as f32, c as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Pcg32;

    fn exact(x: f32) -> (f64, f64) {
        // reduce in f64 before multiplying by π: exact for every f32
        let r = x as f64 % 2.0;
        (std::f64::consts::PI * r).sin_cos()
    }

    fn check(x: f32) {
        let (s, c) = sin_cos_pi(x);
        let (es, ec) = exact(x);
        assert!(
            (s as f64 - es).abs() <= 1e-7 && (c as f64 - ec).abs() <= 1e-7,
            "sin_cos_pi({x:e}) = ({s:e}, {c:e}), exact ({es:e}, {ec:e})"
        );
    }

    #[test]
    fn sin_cos_pi_is_within_1e7_everywhere() {
        let mut rng = Pcg32::new(5, 9);
        for _ in 0..1_000_000 {
            let u = rng.next_f32();
            check(u);
            check(2.0 * u);
            check(8.0 * u - 4.0);
            check(0.25 * (2.0 * u - 1.0));
            // across magnitudes up to and past the reduction's limit
            check((u - 0.5) * 10f32.powf(rng.next_f32() * 14.0 - 6.0));
        }
        // the reduction's seams (odd multiples of 1/4) and the quarter turns
        for k in -40..=40 {
            let x = k as f32 * 0.25;
            for y in [x, x.next_up(), x.next_down()] {
                check(y);
            }
        }
    }

    #[test]
    fn small_arguments_keep_their_relative_precision() {
        for x in [1e-30f32, -3e-20, 1e-10, 1e-5] {
            let (s, c) = sin_cos_pi(x);
            let es = std::f64::consts::PI * x as f64;
            assert!(
                ((s as f64 - es) / es).abs() < 1.2e-7,
                "sin(π·{x:e}) = {s:e}"
            );
            assert_eq!(c, 1.0);
        }
        assert_eq!(sin_cos_pi(0.0), (0.0, 1.0));
        assert!(sin_cos_pi(0.0).0.is_sign_positive());
    }

    #[test]
    fn quarter_turns_are_exact() {
        assert_eq!(sin_cos_pi(0.5), (1.0, 0.0));
        assert_eq!(sin_cos_pi(1.0), (0.0, -1.0));
        assert_eq!(sin_cos_pi(1.5), (-1.0, 0.0));
        assert_eq!(sin_cos_pi(2.0), (0.0, 1.0));
        assert_eq!(sin_cos_pi(-0.5), (-1.0, 0.0));
    }

    #[test]
    fn non_finite_arguments_give_nan() {
        for x in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let (s, c) = sin_cos_pi(x);
            assert!(s.is_nan() && c.is_nan(), "sin_cos_pi({x})");
        }
    }
}
