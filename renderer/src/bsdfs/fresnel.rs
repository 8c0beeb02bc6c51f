//! Fresnel equations shared by the specular and microfacet BSDFs (unpolarised
//! light; Mitsuba 3's `fresnel.h` conventions).

use crate::math::{safe_sqrt, Color, Vec3};

/// The result of [`fresnel_dielectric`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DielectricFresnel {
    /// Unpolarised reflectance.
    pub r: f32,
    /// Cosine of the refracted direction (its sign is opposite to `cos_theta_i`).
    pub cos_theta_t: f32,
    /// Relative IOR across the interface in the direction of travel (`eta` or `1/eta`).
    pub eta_it: f32,
    /// Its reciprocal.
    pub eta_ti: f32,
}

/// Reflectance of a dielectric interface with relative IOR `eta = n_int / n_ext`
/// for incident cosine `cos_theta_i` (negative: arriving from the inside).
/// Total internal reflection gives `r = 1`, `cos_theta_t = 0`.
pub fn fresnel_dielectric(cos_theta_i: f32, eta: f32) -> DielectricFresnel {
    let outside = cos_theta_i >= 0.0;
    let (eta_it, eta_ti) = if outside {
        (eta, 1.0 / eta)
    } else {
        (1.0 / eta, eta)
    };
    // Snell: sin²θt = eta_ti² sin²θi
    let cos_t2 = 1.0 - eta_ti * eta_ti * (1.0 - cos_theta_i * cos_theta_i);
    let ci = cos_theta_i.abs();
    let ct = safe_sqrt(cos_t2);
    let r = if eta == 1.0 {
        0.0
    } else if ci == 0.0 {
        1.0
    } else {
        let a_s = (ci - eta_it * ct) / (ci + eta_it * ct);
        let a_p = (ct - eta_it * ci) / (ct + eta_it * ci);
        0.5 * (a_s * a_s + a_p * a_p)
    };
    DielectricFresnel {
        r,
        cos_theta_t: if outside { -ct } else { ct },
        eta_it,
        eta_ti,
    }
}

/// The refracted direction in the local frame (normal +z) from [`fresnel_dielectric`]'s
/// `cos_theta_t` and `eta_ti`: tangential part scaled by `-eta_ti`, normal part `cos_theta_t`.
pub fn refract_local(wi: Vec3, cos_theta_t: f32, eta_ti: f32) -> Vec3 {
    Vec3::new(-eta_ti * wi.x, -eta_ti * wi.y, cos_theta_t)
}

/// Reflectance of a conductor with complex IOR `eta + i k` (relative to the outside
/// medium) at incident cosine `cos_theta_i >= 0`; exact unpolarised formula
/// (Moeller, "Optics", via the squared amplitudes of s and p waves).
pub fn fresnel_conductor(cos_theta_i: f32, eta: f32, k: f32) -> f32 {
    let c2 = cos_theta_i * cos_theta_i;
    let s2 = 1.0 - c2;
    let s4 = s2 * s2;
    let t1 = eta * eta - k * k - s2;
    // a² + b² = |(eta + ik)² - sin²θ|
    let a2pb2 = safe_sqrt(t1 * t1 + 4.0 * eta * eta * k * k);
    let a = safe_sqrt(0.5 * (a2pb2 + t1));
    let term1 = a2pb2 + c2;
    let term2 = 2.0 * cos_theta_i * a;
    let rs = (term1 - term2) / (term1 + term2);
    let term3 = a2pb2 * c2 + s4;
    let term4 = term2 * s2;
    let rp = rs * (term3 - term4) / (term3 + term4);
    0.5 * (rs + rp)
}

/// [`fresnel_conductor`] per RGB channel.
pub fn fresnel_conductor_rgb(cos_theta_i: f32, eta: Color, k: Color) -> Color {
    Color::new(
        fresnel_conductor(cos_theta_i, eta.x, k.x),
        fresnel_conductor(cos_theta_i, eta.y, k.y),
        fresnel_conductor(cos_theta_i, eta.z, k.z),
    )
}

/// Hemispherical average `2 ∫ F(μ) μ dμ` of the dielectric reflectance ("diffuse
/// Fresnel reflectance"), by the fits Mitsuba 3 uses: Egan & Hilgeman (1973) for
/// `eta < 1`, d'Eon & Irving (2011) otherwise.
pub fn fresnel_diffuse_reflectance(eta: f32) -> f32 {
    let inv = 1.0 / eta;
    if eta < 1.0 {
        0.0636 * inv + eta * (eta * -1.4399 + 0.7099) + 0.6681
    } else {
        let c = [0.919317, -3.4793, 6.75335, -7.80989, 4.98554, -1.36881];
        c.iter().rev().fold(0.0, |acc, &ci| acc * inv + ci)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dielectric_normal_incidence_and_snell() {
        for eta in [1.33f32, 1.5046, 2.419] {
            let f = fresnel_dielectric(1.0, eta);
            let want = ((eta - 1.0) / (eta + 1.0)).powi(2);
            assert!((f.r - want).abs() < 1e-6, "eta {eta}: {} vs {want}", f.r);
            // from the inside the normal-incidence reflectance is the same
            assert!((fresnel_dielectric(-1.0, eta).r - want).abs() < 1e-6);
            // Snell's law: eta_i sin θi = eta_t sin θt
            let wi = Vec3::new(0.6, 0.0, 0.8);
            let f = fresnel_dielectric(wi.z, eta);
            let wt = refract_local(wi, f.cos_theta_t, f.eta_ti);
            assert!((wt.length() - 1.0).abs() < 1e-5 && wt.z < 0.0);
            let (si, st) = (0.6f32, (1.0 - wt.z * wt.z).sqrt());
            assert!((si - eta * st).abs() < 1e-5, "{si} vs {}", eta * st);
            assert!(wt.x < 0.0, "refraction keeps going forward");
        }
    }

    #[test]
    fn dielectric_total_internal_reflection_and_brewster() {
        let eta = 1.5f32;
        // inside, beyond the critical angle sin θc = 1/1.5
        let f = fresnel_dielectric(-0.5, eta);
        assert_eq!(f.r, 1.0);
        // Brewster angle: tan θB = eta → p-polarised reflectance vanishes, R = Rs/2
        let tb = eta.atan();
        let (ci, ct) = (tb.cos(), (tb.sin() / eta).asin().cos());
        let rs = ((ci - eta * ct) / (ci + eta * ct)).powi(2);
        let f = fresnel_dielectric(ci, eta);
        assert!((f.r - 0.5 * rs).abs() < 1e-6, "{} vs {}", f.r, 0.5 * rs);
    }

    #[test]
    fn conductor_normal_incidence_and_limits() {
        // normal incidence: ((n-1)² + k²) / ((n+1)² + k²); gold's red channel
        let (n, k) = (0.14304f32, 3.98300f32);
        let want = ((n - 1.0).powi(2) + k * k) / ((n + 1.0).powi(2) + k * k);
        assert!((fresnel_conductor(1.0, n, k) - want).abs() < 1e-5);
        // k = 0 reduces to the dielectric formula
        for c in [0.1f32, 0.5, 0.9] {
            let a = fresnel_conductor(c, 1.5, 0.0);
            let b = fresnel_dielectric(c, 1.5).r;
            assert!((a - b).abs() < 1e-5, "cos {c}: {a} vs {b}");
        }
        // eta = 0, k = 1 (Mitsuba's `none`): a lossless perfect mirror at every angle
        for c in [0.01f32, 0.3, 0.7, 1.0] {
            assert!((fresnel_conductor(c, 0.0, 1.0) - 1.0).abs() < 1e-5);
        }
        assert!((fresnel_conductor(0.0, 0.2, 3.0) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn diffuse_reflectance_fit_matches_quadrature() {
        for eta in [1.0 / 1.49f32, 1.33, 1.49, 2.0] {
            let n = 20000;
            let mut sum = 0.0f64;
            for i in 0..n {
                let mu = (i as f32 + 0.5) / n as f32;
                sum += 2.0 * (fresnel_dielectric(mu, eta).r * mu) as f64 / n as f64;
            }
            let fit = fresnel_diffuse_reflectance(eta) as f64;
            assert!(
                (fit - sum).abs() < 0.01 * sum.max(0.05),
                "eta {eta}: {fit} vs {sum}"
            );
        }
    }
}
