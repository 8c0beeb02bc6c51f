//! Statistics shared by the GPU image tests: block means and Welch's t-test per block
//! and channel with a Bonferroni correction.
#![allow(dead_code)]

pub mod harness;
pub mod parity;
pub mod ptracer;
pub mod rays;

use heliograph::math::stats::t_two_sided_p;

/// Edge of the blocks whose means are compared, in pixels.
pub const BLOCK: usize = 16;

/// Block means (BLOCK×BLOCK pixels) of each channel: [block][channel].
pub fn block_means(img: &[f32], w: usize, h: usize, ch: usize) -> Vec<Vec<f64>> {
    let (bw, bh) = (w / BLOCK, h / BLOCK);
    let mut out = vec![vec![0.0; ch]; bw * bh];
    for y in 0..bh * BLOCK {
        for x in 0..bw * BLOCK {
            for c in 0..ch {
                out[(y / BLOCK) * bw + x / BLOCK][c] += img[(y * w + x) * ch + c] as f64;
            }
        }
    }
    let n = (BLOCK * BLOCK) as f64;
    out.iter_mut().flatten().for_each(|v| *v /= n);
    out
}

/// Smallest Bonferroni-corrected p-value of Welch's test over blocks and channels
/// (`a[k]`, `b[k]`: block means of seed k), and where; means within 1e-6 (relative)
/// count as equal.
pub fn worst_p(a: &[Vec<Vec<f64>>], b: &[Vec<Vec<f64>>]) -> (f64, usize, usize) {
    let tests = a[0].len() * a[0][0].len();
    let mut worst = (f64::INFINITY, 0, 0);
    for blk in 0..a[0].len() {
        for c in 0..a[0][0].len() {
            let stats = |v: &[Vec<Vec<f64>>]| {
                let n = v.len() as f64;
                let m = v.iter().map(|s| s[blk][c]).sum::<f64>() / n;
                let var = v.iter().map(|s| (s[blk][c] - m).powi(2)).sum::<f64>() / (n - 1.0);
                (m, var / n, n)
            };
            let ((ma, va, na), (mb, vb, nb)) = (stats(a), stats(b));
            let se2 = va + vb;
            // means within 1e-6 agree whatever the variances: f32 images cannot resolve
            // less, and a channel that is 1 everywhere (alpha) develops to a * (1 / a),
            // which is 1 - 2^-24 for ~14% of the weight sums a: a side whose weights are
            // all 1 (a box or tent film on the GPU) has exactly 1 and no variance, the
            // other 1 - 1e-8 with a tiny one, and Welch's t would call that a difference
            let p = if (ma - mb).abs() <= 1e-6 * ma.abs().max(1e-6) {
                1.0
            } else if se2 <= 0.0 {
                0.0
            } else {
                let dof = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0)).max(1e-300);
                t_two_sided_p((ma - mb) / se2.sqrt(), dof)
            };
            let p = (p * tests as f64).min(1.0);
            if p < worst.0 {
                worst = (p, blk, c);
            }
        }
    }
    worst
}
