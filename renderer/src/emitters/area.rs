//! `area`: a diffuse area light, nested in the shape that emits. It emits on
//! the front side of the shape's normal only (flip it with the shape's
//! `flip_normals`).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `radiance` | rgb, float or texture | 1 | emitted radiance (a texture is looked up at the surface point: its uv, and on meshes its triangle, for `mesh_attribute`) |
//!
//! An area light inherits its shape's placement: `to_world` is not allowed here.
//! Direct-illumination sampling picks a point uniformly by area on the shape.
//!
//! ```xml
//! <shape type="rectangle">
//!     <emitter type="area"><rgb name="radiance" value="10"/></emitter>
//! </shape>
//! ```

use super::registry::RecordCtx;
use super::{EmitterCtx, EmitterPlugin, EmitterRay, EmitterSample};
use crate::desc::params::Range;
use crate::desc::props::Props;
use crate::error::{Error, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::warp::square_to_cosine_hemisphere;
use crate::math::{Color, Frame, Vec2, Vec3, PI};
use crate::plugin::patch::EditableKey;
use crate::plugin::{BuildContext, TexRef};
use crate::shapes::{Hit, PositionSample};
use crate::textures::SurfacePoint;
use crate::{device_record, editable_constant};

/// The area light record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct AreaEmitter {
    /// The emitting shape.
    pub shape: u32,
    /// Radiance texture.
    pub radiance: TexRef,
}
device_record!(AreaEmitter { shape, radiance });

impl AreaEmitter {
    /// The radiance at a point of the shape: triangle `prim` at barycentrics `bary`
    /// on a mesh, texture coordinates `uv` (what a `mesh_attribute` or a bitmap reads).
    #[inline]
    fn radiance_at(&self, ctx: &EmitterCtx, uv: Vec2, prim: u32, bary: Vec2) -> Color {
        let sp = SurfacePoint {
            shape: self.shape,
            prim,
            bary,
            ..SurfacePoint::at_uv(uv)
        };
        ctx.tex.eval(self.radiance, &sp)
    }
}

impl EmitterPlugin for AreaEmitter {
    type Record = Self;
    const SURFACE: bool = true;
    const EDITABLE: &'static [EditableKey] =
        &[editable_constant!(AreaEmitter, "radiance.value", radiance)];

    /// Reads the plugin's parameters for the emitter of `shape`.
    fn build(p: &Props, shape: u32, ctx: &mut dyn BuildContext) -> Result<Self> {
        if p.has("to_world") {
            p.mark_used("to_world");
            return Err(Error::param(
                &p.entry_loc("to_world"),
                "to_world",
                "an area emitter takes its placement from its shape; move the transform there",
            ));
        }
        let radiance = ctx.texture_in(
            p,
            "radiance",
            Some(Color::ONE),
            Range::NonNegative,
            SpectrumUse::Emission,
        )?;
        if let Some(c) = ctx.texture_constant(radiance) {
            if !(c.min_element() >= 0.0) {
                let loc = p.entry_loc("radiance");
                return Err(Error::param(
                    &loc,
                    "radiance",
                    format!("must be non-negative, got {c}"),
                ));
            }
        }
        Ok(AreaEmitter { shape, radiance })
    }

    fn record(&self, _at: &RecordCtx) -> Self {
        *self
    }

    /// Picks a point uniformly by area on the shape; `None` if it faces away from `p`.
    #[inline]
    fn sample_direction(&self, ctx: &EmitterCtx, p: Vec3, u: Vec2) -> Option<EmitterSample> {
        let ps = ctx.geom.sample_position(self.shape, u);
        let (d, dist, pdf) = towards(p, &ps)?;
        Some(EmitterSample {
            d,
            dist,
            pdf,
            radiance: self.radiance_at(ctx, ps.uv, ps.prim, ps.bary),
            delta: false,
            uv: ps.uv,
        })
    }

    /// A ray leaving the light (light tracing): a point uniformly by area, a
    /// cosine-weighted direction on its emitting side.
    #[inline]
    fn sample_ray(&self, ctx: &EmitterCtx, u_pos: Vec2, u_dir: Vec2) -> Option<EmitterRay> {
        let (ps, weight) = self.sample_position(ctx, u_pos)?;
        let d = Frame::from_normal(ps.n).to_world(square_to_cosine_hemisphere(u_dir));
        // L cos θ / (pdf_area · cos θ / π)
        Some(EmitterRay {
            p: ps.p,
            n: ps.n,
            d,
            weight: weight * PI,
        })
    }

    /// A point uniformly by area on the shape, with its radiance over the area density.
    #[inline]
    fn sample_position(&self, ctx: &EmitterCtx, u: Vec2) -> Option<(PositionSample, Color)> {
        let ps = ctx.geom.sample_position(self.shape, u);
        if !(ps.pdf > 0.0) {
            return None;
        }
        let w = self.radiance_at(ctx, ps.uv, ps.prim, ps.bary) / ps.pdf;
        w.is_finite().then_some((ps, w))
    }

    /// Solid-angle density of [`Self::sample_direction`] from `p` producing `hit`
    /// (uniform area density `1 / area` converted to solid angle).
    #[inline]
    fn pdf_hit(&self, ctx: &EmitterCtx, p: Vec3, hit: &Hit) -> f32 {
        let area = ctx.geom.surface_area(self.shape);
        if !(area > 0.0) {
            return 0.0;
        }
        solid_angle_pdf(p, hit.p, hit.n, 1.0 / area)
    }

    /// Radiance leaving `hit` against the ray direction `d` (zero on the back side).
    #[inline]
    fn eval_hit(&self, ctx: &EmitterCtx, hit: &Hit, d: Vec3) -> Color {
        if hit.n.dot(d) < 0.0 {
            self.radiance_at(ctx, hit.uv, hit.prim, hit.bary)
        } else {
            Color::ZERO
        }
    }
}

/// Direction, distance and solid-angle density from `p` to the sampled surface
/// point; `None` when the point's front side faces away or the density is degenerate.
#[inline]
pub fn towards(p: Vec3, ps: &PositionSample) -> Option<(Vec3, f32, f32)> {
    let v = ps.p - p;
    let dist2 = v.length_squared();
    if !(ps.pdf > 0.0) || !(dist2 > 0.0) {
        return None;
    }
    let dist = dist2.sqrt();
    let d = v / dist;
    let cos_light = -d.dot(ps.n);
    if !(cos_light > 0.0) {
        return None;
    }
    // dω = cos θ_light dA / r²
    let pdf = ps.pdf * dist2 / cos_light;
    pdf.is_finite().then_some((d, dist, pdf))
}

/// Area density `pdf_area` at surface point `q` (front normal `n`) seen from `p`,
/// as a solid-angle density; 0 from behind.
#[inline]
pub fn solid_angle_pdf(p: Vec3, q: Vec3, n: Vec3, pdf_area: f32) -> f32 {
    let v = q - p;
    let dist2 = v.length_squared();
    if !(dist2 > 0.0) {
        return 0.0;
    }
    let cos_light = -(v / dist2.sqrt()).dot(n);
    if !(cos_light > 0.0) {
        return 0.0;
    }
    pdf_area * dist2 / cos_light
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::chi2::{chi2_test, Chi2Config};
    use crate::math::warp::square_to_uniform_disk_concentric;
    use crate::math::{Pcg32, PI};

    /// Uniform-by-area samples of a disk of radius `r` at height `h`, emitting downwards.
    fn disk(r: f32, h: f32, u: Vec2) -> PositionSample {
        let q = square_to_uniform_disk_concentric(u) * r;
        PositionSample {
            p: Vec3::new(q.x, q.y, h),
            n: -Vec3::Z,
            uv: u,
            pdf: 1.0 / (PI * r * r),
            prim: 0,
            bary: Vec2::ZERO,
        }
    }

    #[test]
    fn irradiance_from_a_disk_matches_the_analytic_value() {
        // E = L π sin²θ at a point on the axis of a disk of radius r at distance h
        let (r, h, l) = (1.5f32, 2.0f32, 3.0f32);
        let sin2 = r * r / (r * r + h * h);
        let want = l * PI * sin2;
        let mut rng = Pcg32::new(3, 5);
        let n = 400_000;
        let mut sum = 0.0f64;
        for _ in 0..n {
            let ps = disk(r, h, Vec2::new(rng.next_f32(), rng.next_f32()));
            if let Some((d, dist, pdf)) = towards(Vec3::ZERO, &ps) {
                assert!((dist - ps.p.length()).abs() < 1e-5);
                let consistent = solid_angle_pdf(Vec3::ZERO, ps.p, ps.n, ps.pdf);
                assert!((pdf - consistent).abs() <= 1e-5 * pdf);
                sum += (l * d.z / pdf) as f64;
            }
        }
        let est = (sum / n as f64) as f32;
        assert!((est - want).abs() < 2e-3 * want, "{est} vs {want}");
    }

    #[test]
    fn back_side_gives_nothing() {
        // reference point above the downward-facing disk sees its back
        let ps = disk(1.0, 2.0, Vec2::new(0.3, 0.6));
        assert!(towards(Vec3::new(0.0, 0.0, 5.0), &ps).is_none());
        assert_eq!(
            solid_angle_pdf(Vec3::new(0.0, 0.0, 5.0), ps.p, ps.n, ps.pdf),
            0.0
        );
        assert!(towards(ps.p, &ps).is_none());
    }

    #[test]
    fn sampled_directions_pass_chi2_against_the_hit_density() {
        // density of directions towards the disk: ray-cast each direction against it
        let (r, h) = (1.0f32, 0.7f32);
        let p = Vec3::new(0.4, -0.2, 0.0);
        let pdf = |d: Vec3| {
            if d.z <= 0.0 {
                return 0.0;
            }
            let q = p + d * (h / d.z);
            if q.x * q.x + q.y * q.y > r * r {
                return 0.0;
            }
            solid_angle_pdf(p, q, -Vec3::Z, 1.0 / (PI * r * r))
        };
        let cfg = Chi2Config {
            theta_bins: 20,
            phi_bins: 40,
            ..Chi2Config::default()
        };
        let res = chi2_test(&cfg, |_, u| towards(p, &disk(r, h, u)).map(|t| t.0), pdf);
        assert!(res.is_ok(), "{res:?}");
    }

    /// End to end with the real `disk` shape: irradiance on its axis, hit density
    /// and radiance at ray hits. Skipped (with a note) where the shape plugins are
    /// not merged yet, i.e. on the `lights` branch alone.
    #[test]
    fn disk_light_through_the_shape_plugins() {
        use crate::desc::props::Value;
        use crate::desc::{Category, ObjectDesc};
        use crate::error::{Error, Loc};
        use crate::math::{Ray, Transform};
        use std::sync::Arc;

        let (r, h, l) = (0.8f32, 1.5f32, 2.0f32);
        let loc = Loc::new("a.xml", 1, 1);
        let mut ep = Props::new(loc.clone());
        ep.insert("radiance", Value::Float(l as f64), loc.clone())
            .unwrap();
        let em = ObjectDesc {
            category: Category::Emitter,
            kind: "area".into(),
            id: None,
            props: ep,
            loc: loc.clone(),
        };
        let to_world = Transform::translate(Vec3::new(0.0, 0.0, h))
            .then_after(&Transform::scale(Vec3::splat(r)).unwrap());
        let mut sp = Props::new(loc.clone());
        sp.insert("to_world", Value::Transform(to_world), loc.clone())
            .unwrap();
        sp.insert("flip_normals", Value::Bool(true), loc.clone())
            .unwrap();
        sp.insert("light", Value::Object(Arc::new(em)), loc.clone())
            .unwrap();
        let disk = ObjectDesc {
            category: Category::Shape,
            kind: "disk".into(),
            id: None,
            props: sp,
            loc,
        };
        let mut ctx = crate::scene::builder::BuildCtx::default();
        match crate::shapes::build(&disk, &mut ctx) {
            Err(Error::UnknownPlugin { .. }) => {
                eprintln!("skipped: the disk shape plugin is not available on this branch");
                return;
            }
            res => drop(res.unwrap()),
        }
        let e = ctx.emitters[ctx.geom.shapes[0].emitter as usize];
        let c = crate::emitters::EmitterCtx {
            geom: &ctx.geom,
            tex: &ctx.textures,
            dists: &ctx.dists2d,
            bsphere: (Vec3::ZERO, 2.0),
        };
        let mut rng = Pcg32::new(9, 1);
        let (n, mut sum) = (200_000, 0.0f64);
        for _ in 0..n {
            let u = Vec2::new(rng.next_f32(), rng.next_f32());
            let Some(s) = e.sample_direction(&c, Vec3::ZERO, u) else {
                continue;
            };
            sum += (s.radiance.x * s.d.z / s.pdf) as f64;
            let ray = Ray::new(Vec3::ZERO, s.d);
            let (t, coords) = ctx
                .geom
                .intersect_prim(0, &ray)
                .expect("sampled direction hits the disk");
            let hit = ctx.geom.surface_interaction(0, &ray, t, coords);
            assert!((t - s.dist).abs() < 1e-3 * s.dist);
            assert!((e.pdf_hit(&c, Vec3::ZERO, &hit) - s.pdf).abs() < 1e-3 * s.pdf);
            assert_eq!(e.eval_hit(&c, &hit, s.d), Vec3::splat(l));
        }
        let want = l * PI * r * r / (r * r + h * h);
        let est = (sum / n as f64) as f32;
        assert!((est - want).abs() < 3e-3 * want, "{est} vs {want}");
        // from above, the reference point sees the disk's back
        assert!(e
            .sample_direction(&c, Vec3::new(0.0, 0.0, 3.0), Vec2::splat(0.3))
            .is_none());
    }

    /// A `mesh_attribute` radiance is read where the emitter is: at the triangle a ray
    /// hits (seen directly) and at the triangle a sample lands on (emitter sampling,
    /// light tracing). The unit quad's two triangles carry face weights 0.25 (x > y)
    /// and 0.75 (y > x).
    #[test]
    fn a_mesh_attribute_radiance_is_read_at_the_emitting_triangle() {
        use crate::desc::xml;
        use crate::integrators::surface_emission;
        use crate::math::Ray;
        use crate::scene::build_scene;
        let dir = std::env::temp_dir().join(format!("hg_area_attr_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ply = dir.join("quad.ply");
        std::fs::write(
            &ply,
            "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\n\
             property float z\nelement face 2\nproperty list uchar int vertex_indices\n\
             property float weight_0\nend_header\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n\
             3 0 1 2 0.25\n3 0 2 3 0.75\n",
        )
        .unwrap();
        let src = format!(
            r#"<scene version="3.0.0"><shape type="ply"><string name="filename" value="{}"/>
               <emitter type="area"><texture type="mesh_attribute" name="radiance">
               <string name="name" value="face_weight"/></texture></emitter></shape></scene>"#,
            ply.display()
        );
        let setup = build_scene(&xml::load_string(&src, &[]).unwrap()).unwrap();
        let face = |x: f32, y: f32| if x > y { 0.25 } else { 0.75 };
        // seen directly, from above (the front side)
        for (x, y) in [(0.7, 0.2), (0.2, 0.7), (0.9, 0.85), (0.1, 0.15)] {
            let ray = Ray::new(Vec3::new(x, y, 1.0), -Vec3::Z);
            let hit = setup.scene.intersect(&ray).expect("the quad");
            let (le, pdf) = surface_emission(&setup.scene, &hit, ray.d, ray.o).unwrap();
            assert_eq!(le, Color::splat(face(x, y)), "at ({x}, {y})");
            assert!(pdf > 0.0);
        }
        // sampled: each sample carries its own triangle's value
        let (e, c) = (setup.scene.emitters[0], setup.scene.emitter_ctx());
        let mut rng = crate::math::Pcg32::new(5, 7);
        let mut seen = [0; 2];
        for _ in 0..2000 {
            let u = Vec2::new(rng.next_f32(), rng.next_f32());
            let s = e.sample_direction(&c, Vec3::new(0.5, 0.5, 2.0), u).unwrap();
            let q = Vec3::new(0.5, 0.5, 2.0) + s.d * s.dist;
            assert_eq!(s.radiance, Color::splat(face(q.x, q.y)), "at {q}");
            let (ps, w) = e.sample_position(&c, u).unwrap();
            assert_eq!(
                w,
                Color::splat(face(ps.p.x, ps.p.y) / ps.pdf),
                "at {}",
                ps.p
            );
            seen[usize::from(ps.p.x > ps.p.y)] += 1;
        }
        assert!(seen[0] > 800 && seen[1] > 800, "{seen:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
