//! The camera record every sensor plugin builds: Mitsuba's projective cameras — the
//! pinhole `perspective`, the `thinlens` camera with a circular aperture and a focal
//! plane, and the parallel `orthographic` — turned into rays the same way on the CPU
//! and on the GPU (`sensors::record::FlatCamera`, kernels/common.cuh `camera_ray`).
//!
//! Camera space looks down +z with +y up; image x grows towards local −x (Mitsuba's
//! convention). A film position `(px, py)` in pixels of the full film maps to
//! `sx = 1 − 2·px/width`, `sy = 1 − 2·py/height`:
//!
//! - `perspective`: the direction `(sx·tan(x_fov/2), sy·tan(x_fov/2)/aspect, 1)`;
//! - `thinlens`: the same direction, through a point of the aperture disk (radius
//!   `aperture_radius`, sampled with the concentric map) towards where the pinhole ray
//!   meets the plane at `focus_distance`;
//! - `orthographic`: the direction +z from `(sx, sy/aspect)` on the near plane (the
//!   film spans [−1, 1] in local x: scale `to_world` for a wider view).
//!
//! Rays start at the near clip plane and end at the far one, measured along the view
//! axis, as in Mitsuba.

use crate::films::Film;
use crate::math::warp::square_to_uniform_disk_concentric;
use crate::math::{Ray, Transform, Vec2, Vec3};

/// [`Camera::kind`] of a pinhole camera.
pub const CAMERA_PERSPECTIVE: u32 = 0;
/// [`Camera::kind`] of an orthographic camera.
pub const CAMERA_ORTHOGRAPHIC: u32 = 1;
/// [`Camera::kind`] of a thin-lens camera.
pub const CAMERA_THINLENS: u32 = 2;

/// A connection from a scene point to the camera (light tracing): where it lands on the
/// film and the importance it carries.
#[derive(Clone, Copy, Debug)]
pub struct SensorConnection {
    /// Film position in crop-window pixels (pixel (x, y) spans [x, x+1)).
    pub pos: Vec2,
    /// The camera's aperture point (the pinhole), in world space.
    pub p: Vec3,
    /// Importance towards the point over the squared distance: `1 / (A cos³θ d²)`, with `A`
    /// the area of the crop window on the plane at depth 1 and θ the angle to the view
    /// axis, so that a pixel's value is the mean radiance over it once multiplied by the
    /// number of pixels.
    pub weight: f32,
}

/// A camera (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Camera {
    /// `CAMERA_*`.
    pub kind: u32,
    /// Camera to world.
    pub to_world: Transform,
    /// Horizontal field of view in degrees (0 for `orthographic`).
    pub x_fov: f32,
    /// tan(x_fov / 2).
    pub tan_half_x: f32,
    /// Full film width / height.
    pub aspect: f32,
    /// Near clip distance.
    pub near_clip: f32,
    /// Far clip distance.
    pub far_clip: f32,
    /// `thinlens`: radius of the aperture (0 otherwise).
    pub aperture_radius: f32,
    /// `thinlens`: distance of the plane in focus (0 otherwise).
    pub focus_distance: f32,
}

impl Camera {
    /// A pinhole camera with horizontal field of view `x_fov` (degrees) for `film`.
    pub fn perspective(
        to_world: Transform,
        x_fov: f32,
        film: &Film,
        near_clip: f32,
        far_clip: f32,
    ) -> Camera {
        Camera {
            kind: CAMERA_PERSPECTIVE,
            to_world,
            x_fov,
            tan_half_x: (0.5 * x_fov.to_radians()).tan(),
            aspect: film.width as f32 / film.height as f32,
            near_clip,
            far_clip,
            aperture_radius: 0.0,
            focus_distance: 0.0,
        }
    }

    /// Whether [`Self::sample_direction`] connects points to this camera: the pinhole
    /// `perspective` only.
    pub fn can_connect(&self) -> bool {
        self.kind == CAMERA_PERSPECTIVE
    }

    /// Connects world point `p` to a pinhole camera (the inverse of [`Self::sample_ray`]):
    /// `None` outside the crop window, outside the clip range, or for another camera kind.
    #[inline]
    pub fn sample_direction(&self, p: Vec3, film: &Film) -> Option<SensorConnection> {
        if self.kind != CAMERA_PERSPECTIVE {
            return None;
        }
        let local = self.to_world.inv.transform_point3(p);
        if !(local.z >= self.near_clip && local.z <= self.far_clip) {
            return None;
        }
        let pos = self.film_position(local, film)?;
        let o = self.to_world.point(Vec3::ZERO);
        let dist2 = (o - p).length_squared();
        let weight = self.importance(local, film) / dist2;
        (weight.is_finite() && weight > 0.0).then_some(SensorConnection { pos, p: o, weight })
    }

    /// Importance `1 / (A cos³θ)` of camera-space direction `local` (any length), with
    /// `A` the area of the crop window on the plane at depth 1.
    #[inline]
    fn importance(&self, local: Vec3, film: &Film) -> f32 {
        let (w, h) = (film.width as f32, film.height as f32);
        let [cw, ch] = film.crop_size;
        let cos = local.z / local.length();
        let area = (2.0 * self.tan_half_x * cw as f32 / w)
            * (2.0 * self.tan_half_x / self.aspect * ch as f32 / h);
        1.0 / (area * cos * cos * cos)
    }

    /// The crop-window film position and importance of world direction `d` leaving a
    /// pinhole camera (what the camera sees at infinity, beyond the clip range); `None`
    /// outside the crop window or for another camera kind.
    #[inline]
    pub fn connect_direction(&self, d: Vec3, film: &Film) -> Option<(Vec2, f32)> {
        if self.kind != CAMERA_PERSPECTIVE {
            return None;
        }
        let local = self.to_world.inv.transform_vector3(d);
        if !(local.z > 0.0) {
            return None;
        }
        let pos = self.film_position(local, film)?;
        let importance = self.importance(local, film);
        (importance.is_finite() && importance > 0.0).then_some((pos, importance))
    }

    /// The crop-window film position of camera-space direction `local` (`local.z > 0`).
    #[inline]
    fn film_position(&self, local: Vec3, film: &Film) -> Option<Vec2> {
        let (w, h) = (film.width as f32, film.height as f32);
        // sample_ray: local direction (sx tan, sy tan / aspect, 1), sx = 1 − 2 px / width
        let sx = local.x / (local.z * self.tan_half_x);
        let sy = local.y * self.aspect / (local.z * self.tan_half_x);
        let [ox, oy] = film.crop_offset;
        let [cw, ch] = film.crop_size;
        let pos = Vec2::new(
            (1.0 - sx) * 0.5 * w - ox as f32,
            (1.0 - sy) * 0.5 * h - oy as f32,
        );
        (pos.x >= 0.0 && pos.x <= cw as f32 && pos.y >= 0.0 && pos.y <= ch as f32).then_some(pos)
    }

    /// Whether [`Self::sample_ray`] uses its aperture sample (a thin lens): the
    /// backends draw one only then, so that the other cameras' random sequences stay.
    #[inline]
    pub fn needs_aperture_sample(&self) -> bool {
        self.kind == CAMERA_THINLENS
    }

    /// The ray through full-film position `pos` (pixels), through the aperture point
    /// `aperture` (a point of the unit square; only a thin lens reads it).
    #[inline]
    pub fn sample_ray(&self, pos: Vec2, aperture: Vec2, film: &Film) -> Ray {
        if self.kind == CAMERA_PERSPECTIVE {
            // one lane of the pinhole code
            return self.sample_rays(&[pos], &[aperture], film)[0];
        }
        let sx = 1.0 - 2.0 * pos.x / film.width as f32;
        let sy = 1.0 - 2.0 * pos.y / film.height as f32;
        let origin = self.to_world.point(Vec3::ZERO);
        if self.kind == CAMERA_ORTHOGRAPHIC {
            let near_p = Vec3::new(sx, sy / self.aspect, self.near_clip);
            let d = self.to_world.vector(Vec3::Z).normalize();
            return Ray {
                o: origin + self.to_world.vector(near_p),
                d,
                tmax: self.far_clip - self.near_clip,
            };
        }
        let d_local = Vec3::new(
            sx * self.tan_half_x,
            sy * self.tan_half_x / self.aspect,
            1.0,
        );
        // a thin lens
        let a = square_to_uniform_disk_concentric(aperture) * self.aperture_radius;
        let lens = Vec3::new(a.x, a.y, 0.0);
        let dir = (d_local * self.focus_distance - lens).normalize();
        let d = self.to_world.vector(dir).normalize();
        let (t_near, t_far) = (self.near_clip / dir.z, self.far_clip / dir.z);
        Ray {
            o: origin + self.to_world.vector(lens) + d * t_near,
            d,
            tmax: t_far - t_near,
        }
    }

    /// [`Self::sample_ray`] for `N` film positions at once: a pinhole camera computes
    /// them as `N` lanes of the same operations (its only code: `sample_ray` is one
    /// lane of it), which the compiler turns into SIMD (divisions and square roots
    /// computed one ray at a time queue on one unit); the other kinds ray by ray.
    #[inline]
    pub fn sample_rays<const N: usize>(
        &self,
        pos: &[Vec2; N],
        aperture: &[Vec2; N],
        film: &Film,
    ) -> [Ray; N] {
        if self.kind != CAMERA_PERSPECTIVE {
            return std::array::from_fn(|i| self.sample_ray(pos[i], aperture[i], film));
        }
        let origin = self.to_world.point(Vec3::ZERO);
        let m = crate::math::Mat3::from_mat4(self.to_world.m);
        let (w, h) = (film.width as f32, film.height as f32);
        // per lane: sx = 1 − 2 px / width, the local direction (sx tan, sy tan / aspect,
        // 1), its 1/z once normalised, and its world direction
        let mut d = [[0.0f32; N]; 3];
        let (mut t_near, mut tmax) = ([0.0f32; N], [0.0f32; N]);
        for i in 0..N {
            let sx = 1.0 - 2.0 * pos[i].x / w;
            let sy = 1.0 - 2.0 * pos[i].y / h;
            let (lx, ly) = (sx * self.tan_half_x, sy * self.tan_half_x / self.aspect);
            // the local direction's z is 1: its square and its products with the
            // matrix's third column are exact
            let inv_z = 1.0 / (lx * lx + ly * ly + 1.0).sqrt();
            let vx = m.x_axis.x * lx + m.y_axis.x * ly + m.z_axis.x;
            let vy = m.x_axis.y * lx + m.y_axis.y * ly + m.z_axis.y;
            let vz = m.x_axis.z * lx + m.y_axis.z * ly + m.z_axis.z;
            let rcp = 1.0 / (vx * vx + vy * vy + vz * vz).sqrt();
            let (tn, tf) = (self.near_clip / inv_z, self.far_clip / inv_z);
            (d[0][i], d[1][i], d[2][i]) = (vx * rcp, vy * rcp, vz * rcp);
            t_near[i] = tn;
            tmax[i] = tf - tn;
        }
        std::array::from_fn(|i| {
            let d = Vec3::new(d[0][i], d[1][i], d[2][i]);
            Ray {
                o: origin + d * t_near[i],
                d,
                tmax: tmax[i],
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Pcg32;

    fn film() -> Film {
        Film {
            width: 64,
            height: 48,
            ..Film::default()
        }
    }

    #[test]
    fn rays_in_lanes_are_bitwise_the_single_rays() {
        let film = film();
        let mut rng = Pcg32::new(3, 4);
        let transforms = [
            Transform::IDENTITY,
            Transform::look_at(
                Vec3::new(0.3, 1.7, -4.0),
                Vec3::new(0.1, 0.2, 0.5),
                Vec3::new(0.1, 1.0, 0.2),
            )
            .unwrap(),
            Transform::translate(Vec3::new(2.0, -1.0, 0.5))
                .then_after(&Transform::scale(Vec3::new(1.5, 0.5, 2.0)).unwrap()),
        ];
        for (k, to_world) in transforms.into_iter().enumerate() {
            let mut cam = Camera::perspective(to_world, 20.0 + 30.0 * k as f32, &film, 0.01, 1e4);
            for kind in [CAMERA_PERSPECTIVE, CAMERA_ORTHOGRAPHIC, CAMERA_THINLENS] {
                cam.kind = kind;
                (cam.aperture_radius, cam.focus_distance) = (0.1, 3.0);
                for _ in 0..2000 {
                    let mut u =
                        || Vec2::new(rng.next_f32() * 70.0 - 3.0, rng.next_f32() * 50.0 - 1.0);
                    let pos: [Vec2; 8] = std::array::from_fn(|_| u());
                    let ap: [Vec2; 8] = std::array::from_fn(|_| u() / 70.0);
                    let bits = |r: &Ray| {
                        [r.o.x, r.o.y, r.o.z, r.d.x, r.d.y, r.d.z, r.tmax].map(f32::to_bits)
                    };
                    for (i, r) in cam.sample_rays(&pos, &ap, &film).iter().enumerate() {
                        let one = cam.sample_ray(pos[i], ap[i], &film);
                        assert_eq!(
                            bits(r),
                            bits(&one),
                            "kind {kind}, transform {k}, {:?}",
                            pos[i]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn thin_lens_rays_of_a_pixel_meet_where_the_pinhole_ray_meets_the_focal_plane() {
        let film = film();
        let to_world = Transform::translate(Vec3::new(0.5, -1.0, 2.0));
        let mut cam = Camera::perspective(to_world, 50.0, &film, 0.1, 100.0);
        let pinhole = cam;
        cam.kind = CAMERA_THINLENS;
        cam.aperture_radius = 0.3;
        cam.focus_distance = 3.0;
        let mut rng = Pcg32::new(1, 2);
        for _ in 0..200 {
            let pos = Vec2::new(rng.next_f32() * 64.0, rng.next_f32() * 48.0);
            let p = pinhole.sample_ray(pos, Vec2::ZERO, &film);
            // the pinhole ray reaches the focal plane (local z = 3) at this point
            let o = to_world.point(Vec3::ZERO);
            let focus = o + p.d * (3.0 / p.d.z);
            let mut spread = 0.0f32;
            for _ in 0..8 {
                let a = Vec2::new(rng.next_f32(), rng.next_f32());
                let r = cam.sample_ray(pos, a, &film);
                // the ray's lens point lies within the aperture, on the lens plane
                let lens = r.o - r.d * (0.1 / r.d.z);
                assert!((lens.z - o.z).abs() < 1e-5 && (lens - o).length() <= 0.3 + 1e-5);
                spread = spread.max((lens - o).length());
                // and it passes through the pinhole ray's focal point
                let at = r.o + r.d * ((focus.z - r.o.z) / r.d.z);
                assert!((at - focus).length() < 1e-4, "{at} vs {focus}");
                // its extent ends at the far plane
                let end = r.o + r.d * r.tmax;
                assert!((end.z - o.z - 100.0).abs() < 1e-2, "{end}");
            }
            assert!(spread > 0.05, "the aperture is sampled");
        }
    }

    #[test]
    fn orthographic_rays_are_parallel_and_start_on_the_scaled_near_plane() {
        let film = film();
        let to_world = Transform::scale(Vec3::new(2.0, 2.0, 1.0)).unwrap();
        let cam = Camera {
            kind: CAMERA_ORTHOGRAPHIC,
            ..Camera::perspective(to_world, 50.0, &film, 0.5, 10.0)
        };
        for (pos, want) in [
            (Vec2::new(32.0, 24.0), Vec3::new(0.0, 0.0, 0.5)),
            // the left edge is local +x (Mitsuba's convention), the top +y / aspect
            (Vec2::new(0.0, 24.0), Vec3::new(2.0, 0.0, 0.5)),
            (Vec2::new(32.0, 0.0), Vec3::new(0.0, 2.0 * 48.0 / 64.0, 0.5)),
            (Vec2::new(64.0, 48.0), Vec3::new(-2.0, -1.5, 0.5)),
        ] {
            let r = cam.sample_ray(pos, Vec2::new(0.3, 0.7), &film);
            assert!((r.o - want).length() < 1e-5, "{pos}: {} vs {want}", r.o);
            assert_eq!(r.d, Vec3::Z);
            assert_eq!(r.tmax, 9.5);
        }
    }
}
