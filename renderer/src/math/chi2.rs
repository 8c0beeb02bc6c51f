//! Chi-square goodness-of-fit testing of direction samplers against their
//! densities (as pbrt's and Mitsuba's test suites do): histogram many sampled
//! directions over a (cos θ, φ) grid of equal solid-angle cells, integrate the
//! claimed pdf over each cell numerically, pool sparse cells, and compute the
//! p-value of Pearson's statistic. Used by the BSDF and emitter tests.

use super::stats::regularized_gamma_q;
use super::{Pcg32, Vec2, Vec3, PI};

/// Settings of one chi-square test.
#[derive(Clone, Copy, Debug)]
pub struct Chi2Config {
    /// Cells along cos θ.
    pub theta_bins: usize,
    /// Cells along φ.
    pub phi_bins: usize,
    /// Number of samples drawn.
    pub samples: usize,
    /// Significance level of the test (before correction for several tests).
    pub significance: f64,
    /// Number of tests run together, for the Šidák correction.
    pub test_count: usize,
    /// RNG seed.
    pub seed: u64,
}

impl Default for Chi2Config {
    fn default() -> Self {
        Chi2Config {
            theta_bins: 10,
            phi_bins: 20,
            samples: 200_000,
            significance: 0.01,
            test_count: 1,
            seed: 7,
        }
    }
}

fn cell_of(d: Vec3, cfg: &Chi2Config) -> usize {
    let ct = ((d.z.clamp(-1.0, 1.0) + 1.0) * 0.5 * cfg.theta_bins as f32) as usize;
    let mut phi = d.y.atan2(d.x);
    if phi < 0.0 {
        phi += 2.0 * PI;
    }
    let cp = (phi / (2.0 * PI) * cfg.phi_bins as f32) as usize;
    ct.min(cfg.theta_bins - 1) * cfg.phi_bins + cp.min(cfg.phi_bins - 1)
}

/// Expected sample counts per cell: `samples · ∫_cell pdf dω` by a midpoint rule
/// on a 16×16 sub-grid (cells are equal-area in (cos θ, φ), so dω = dz dφ).
fn expected_counts(pdf: &dyn Fn(Vec3) -> f32, cfg: &Chi2Config) -> Vec<f64> {
    let sub = 16;
    let (nt, np) = (cfg.theta_bins, cfg.phi_bins);
    let dz = 2.0 / (nt * sub) as f64;
    let dphi = 2.0 * std::f64::consts::PI / (np * sub) as f64;
    let mut out = vec![0.0; nt * np];
    for i in 0..nt * sub {
        let z = -1.0 + (i as f64 + 0.5) * dz;
        let r = (1.0 - z * z).max(0.0).sqrt();
        for j in 0..np * sub {
            let phi = (j as f64 + 0.5) * dphi;
            let d = Vec3::new((r * phi.cos()) as f32, (r * phi.sin()) as f32, z as f32);
            let p = pdf(d) as f64;
            out[(i / sub) * np + j / sub] += p * dz * dphi;
        }
    }
    out.iter().map(|v| v * cfg.samples as f64).collect()
}

/// Runs the test. `sample(u1, u2)` returns a unit direction (or `None` when the
/// sampler fails, e.g. absorption); `pdf(d)` is the density it claims. `Ok` holds
/// the p-value; `Err` a description of the mismatch.
pub fn chi2_test(
    cfg: &Chi2Config,
    mut sample: impl FnMut(f32, Vec2) -> Option<Vec3>,
    pdf: impl Fn(Vec3) -> f32,
) -> Result<f64, String> {
    let mut rng = Pcg32::new(cfg.seed, 1);
    let mut observed = vec![0.0f64; cfg.theta_bins * cfg.phi_bins];
    for _ in 0..cfg.samples {
        let u1 = rng.next_f32();
        let u2 = Vec2::new(rng.next_f32(), rng.next_f32());
        if let Some(d) = sample(u1, u2) {
            if !d.is_finite() || (d.length() - 1.0).abs() > 1e-3 {
                return Err(format!(
                    "sampler returned a non-unit or non-finite direction {d:?}"
                ));
            }
            observed[cell_of(d, cfg)] += 1.0;
        }
    }
    let expected = expected_counts(&pdf, cfg);
    pearson(&observed, &expected, cfg)
}

/// Pearson's test on histograms, pooling cells whose expectation is below 5.
pub fn pearson(observed: &[f64], expected: &[f64], cfg: &Chi2Config) -> Result<f64, String> {
    let mut idx: Vec<usize> = (0..observed.len()).collect();
    idx.sort_by(|&a, &b| expected[a].total_cmp(&expected[b]));
    let (mut chsq, mut dof) = (0.0f64, 0i64);
    let (mut pool_o, mut pool_e) = (0.0f64, 0.0f64);
    for &i in &idx {
        let (o, e) = (observed[i], expected[i]);
        if e <= 0.0 {
            if o > 0.0 {
                return Err(format!(
                    "{o} samples fell into cell {i}, where the pdf integrates to zero"
                ));
            }
            continue;
        }
        if e < 5.0 || pool_e > 0.0 && pool_e < 5.0 {
            pool_o += o;
            pool_e += e;
            continue;
        }
        chsq += (o - e) * (o - e) / e;
        dof += 1;
    }
    if pool_e > 0.0 {
        chsq += (pool_o - pool_e) * (pool_o - pool_e) / pool_e;
        dof += 1;
    }
    dof -= 1;
    if dof < 1 {
        return Err("too few non-empty cells for a chi-square test".into());
    }
    let p = regularized_gamma_q(dof as f64 / 2.0, chsq / 2.0);
    // Šidák correction for running several tests at once
    let alpha = 1.0 - (1.0 - cfg.significance).powf(1.0 / cfg.test_count as f64);
    if p < alpha || !p.is_finite() {
        return Err(format!(
            "rejected: chi2 = {chsq:.1} with {dof} dof, p = {p:.3e} < {alpha:.3e}"
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::warp;

    #[test]
    fn accepts_a_correct_sampler_and_rejects_a_wrong_pdf() {
        let cfg = Chi2Config::default();
        let ok = chi2_test(
            &cfg,
            |_, u| Some(warp::square_to_cosine_hemisphere(u)),
            warp::cosine_hemisphere_pdf,
        );
        assert!(ok.is_ok(), "{ok:?}");
        // claim a uniform-hemisphere pdf for cosine samples: must be rejected
        let bad = chi2_test(
            &cfg,
            |_, u| Some(warp::square_to_cosine_hemisphere(u)),
            |d| {
                if d.z > 0.0 {
                    warp::UNIFORM_HEMISPHERE_PDF
                } else {
                    0.0
                }
            },
        );
        assert!(bad.is_err());
        let sphere = chi2_test(
            &cfg,
            |_, u| Some(warp::square_to_uniform_sphere(u)),
            |_| warp::UNIFORM_SPHERE_PDF,
        );
        assert!(sphere.is_ok(), "{sphere:?}");
    }
}
