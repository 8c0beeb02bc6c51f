//! Warps from the unit square to common domains, with their densities.
//! Every function takes its random numbers as arguments.

use super::sincos::{sin_cos_pi, sin_cos_pi_near};
use super::{safe_sqrt, Vec2, Vec3, INV_FOUR_PI, INV_PI, INV_TWO_PI};

/// Concentric map of the unit square onto the unit disk (Shirley & Chiu 1997).
pub fn square_to_uniform_disk_concentric(u: Vec2) -> Vec2 {
    let (x, y) = (2.0 * u.x - 1.0, 2.0 * u.y - 1.0);
    // φ = (π/4)(y/x) where |x| > |y|, else π/2 − (π/4)(x/y), where cos φ and sin φ trade
    // places; chosen by selects, not branches (either side is as likely)
    let steep = x.abs() <= y.abs();
    let (n, d) = if steep { (x, y) } else { (y, x) };
    if d == 0.0 {
        return Vec2::ZERO; // x = y = 0
    }
    let (s, c) = sin_cos_pi_near(0.25 * (n / d));
    let (cos_phi, sin_phi) = if steep { (s, c) } else { (c, s) };
    Vec2::new(d * cos_phi, d * sin_phi)
}

/// Cosine-weighted direction on the hemisphere around +z.
pub fn square_to_cosine_hemisphere(u: Vec2) -> Vec3 {
    let p = square_to_uniform_disk_concentric(u);
    let z = safe_sqrt(1.0 - p.length_squared());
    Vec3::new(p.x, p.y, z)
}

/// Density of [`square_to_cosine_hemisphere`] (solid angle).
pub fn cosine_hemisphere_pdf(v: Vec3) -> f32 {
    if v.z > 0.0 {
        v.z * INV_PI
    } else {
        0.0
    }
}

/// Uniform direction on the unit sphere.
pub fn square_to_uniform_sphere(u: Vec2) -> Vec3 {
    let z = 1.0 - 2.0 * u.y;
    let r = safe_sqrt(1.0 - z * z);
    let (s, c) = sin_cos_pi(2.0 * u.x);
    Vec3::new(r * c, r * s, z)
}

/// Density of [`square_to_uniform_sphere`].
pub const UNIFORM_SPHERE_PDF: f32 = INV_FOUR_PI;

/// Uniform direction on the hemisphere around +z.
pub fn square_to_uniform_hemisphere(u: Vec2) -> Vec3 {
    let z = u.y;
    let r = safe_sqrt(1.0 - z * z);
    let (s, c) = sin_cos_pi(2.0 * u.x);
    Vec3::new(r * c, r * s, z)
}

/// Density of [`square_to_uniform_hemisphere`].
pub const UNIFORM_HEMISPHERE_PDF: f32 = INV_TWO_PI;

/// Uniform direction in the cone of half-angle `acos(cos_max)` around +z.
pub fn square_to_uniform_cone(u: Vec2, cos_max: f32) -> Vec3 {
    let z = 1.0 - u.y * (1.0 - cos_max);
    let r = safe_sqrt(1.0 - z * z);
    let (s, c) = sin_cos_pi(2.0 * u.x);
    Vec3::new(r * c, r * s, z)
}

/// Density of [`square_to_uniform_cone`] inside the cone.
pub fn uniform_cone_pdf(cos_max: f32) -> f32 {
    INV_TWO_PI / (1.0 - cos_max)
}

/// Uniform barycentrics `(b1, b2)` on a triangle (b0 = 1 - b1 - b2).
pub fn square_to_uniform_triangle(u: Vec2) -> Vec2 {
    let t = safe_sqrt(1.0 - u.x);
    Vec2::new(1.0 - t, t * u.y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_hemisphere_lands_on_hemisphere() {
        for i in 0..64 {
            for j in 0..64 {
                let u = Vec2::new((i as f32 + 0.5) / 64.0, (j as f32 + 0.5) / 64.0);
                let v = square_to_cosine_hemisphere(u);
                assert!((v.length() - 1.0).abs() < 1e-5 && v.z >= 0.0);
                assert!((square_to_uniform_sphere(u).length() - 1.0).abs() < 1e-5);
                let b = square_to_uniform_triangle(u);
                assert!(b.x >= 0.0 && b.y >= 0.0 && b.x + b.y <= 1.0 + 1e-6);
            }
        }
    }
}
