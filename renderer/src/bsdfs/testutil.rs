//! Shared test harness for the BSDF plugins: builds a BSDF from properties and
//! runs the generic checks (chi-square, sample/eval consistency, furnace,
//! reciprocity).

use std::sync::Arc;

use super::{AnyBsdf, BsdfCtx, BsdfSample};
use crate::desc::props::{Props, Value};
use crate::desc::{Category, ObjectDesc};
use crate::error::Loc;
use crate::math::chi2::{pearson, Chi2Config};
use crate::math::{Color, Pcg32, Vec2, Vec3};
use crate::scene::builder::BuildCtx;
use crate::textures::TextureStore;

/// A `<bsdf type=kind>` with the given properties (on lines 2, 3, ... of `t.xml`).
pub fn obj(kind: &str, params: &[(&str, Value)]) -> Arc<ObjectDesc> {
    obj_with(kind, params, vec![])
}

/// Like [`obj`], with nested objects.
pub fn obj_with(
    kind: &str,
    params: &[(&str, Value)],
    nested: Vec<Arc<ObjectDesc>>,
) -> Arc<ObjectDesc> {
    let mut props = Props::new(Loc::new("t.xml", 1, 1));
    for (i, (k, v)) in params.iter().enumerate() {
        props
            .insert(k, v.clone(), Loc::new("t.xml", 2 + i as u32, 1))
            .unwrap();
    }
    for o in nested {
        let loc = o.loc.clone();
        props.push_object(o, loc);
    }
    Arc::new(ObjectDesc {
        category: Category::Bsdf,
        kind: kind.into(),
        id: None,
        props,
        loc: Loc::new("t.xml", 1, 1),
    })
}

/// A checkerboard texture of the two grey levels (Mitsuba's `checkerboard`).
pub fn checker(color0: f64, color1: f64) -> Value {
    let loc = Loc::new("t.xml", 9, 1);
    let mut props = Props::new(loc.clone());
    props
        .insert("color0", Value::Float(color0), loc.clone())
        .unwrap();
    props
        .insert("color1", Value::Float(color1), loc.clone())
        .unwrap();
    Value::Object(Arc::new(ObjectDesc {
        category: Category::Texture,
        kind: "checkerboard".into(),
        id: None,
        props,
        loc,
    }))
}

/// The error message of building an invalid BSDF.
pub fn build_err(kind: &str, params: &[(&str, Value)]) -> String {
    let mut ctx = BuildCtx::default();
    match ctx.bsdf(&obj(kind, params)) {
        Ok(_) => panic!("{kind} {params:?} should not build"),
        Err(e) => e.to_string(),
    }
}

/// A built BSDF with its scene arrays.
pub struct Setup {
    /// All BSDFs (nested ones included).
    pub bsdfs: Vec<AnyBsdf>,
    /// Textures.
    pub tex: TextureStore,
    /// Handle of the BSDF under test.
    pub handle: u32,
    /// The plugin and its parameters, for failure messages.
    pub desc: String,
}

impl Setup {
    /// Builds a BSDF from properties.
    pub fn new(kind: &str, params: &[(&str, Value)]) -> Self {
        let mut s = Self::from_obj(&obj(kind, params));
        s.desc = format!("{kind} {params:?}");
        s
    }

    /// Builds a BSDF object.
    pub fn from_obj(o: &ObjectDesc) -> Self {
        let mut ctx = BuildCtx::default();
        let handle = ctx
            .bsdf(&std::sync::Arc::new(o.clone()))
            .unwrap_or_else(|e| panic!("build failed: {e}"));
        Setup {
            bsdfs: ctx.bsdfs,
            tex: ctx.textures,
            handle,
            desc: o.kind.clone(),
        }
    }

    /// The evaluation context.
    pub fn ctx(&self) -> BsdfCtx<'_> {
        BsdfCtx {
            bsdfs: &self.bsdfs,
            tex: &self.tex,
            at: crate::textures::SurfacePoint::at_uv(Vec2::new(0.3, 0.6)),
        }
    }

    /// The record under test.
    pub fn bsdf(&self) -> &AnyBsdf {
        &self.bsdfs[self.handle as usize]
    }

    /// `sample` of the BSDF under test.
    pub fn sample(&self, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        self.bsdf().sample(&self.ctx(), wi, u1, u2)
    }

    /// `eval` of the BSDF under test.
    pub fn eval(&self, wi: Vec3, wo: Vec3) -> Color {
        self.bsdf().eval(&self.ctx(), wi, wo)
    }

    /// `pdf` of the BSDF under test.
    pub fn pdf(&self, wi: Vec3, wo: Vec3) -> f32 {
        self.bsdf().pdf(&self.ctx(), wi, wo)
    }

    /// `is_delta` of the BSDF under test.
    pub fn is_delta(&self) -> bool {
        self.bsdf().is_delta(&self.ctx())
    }

    /// Chi-square test of the non-delta samples against `pdf` (delta samples
    /// are dropped; their share is accounted for by `pdf` integrating to less than 1).
    pub fn chi2(&self, wi: Vec3, test_count: usize) -> Result<f64, String> {
        chi2_fine(
            test_count,
            |u1, u2| self.sample(wi, u1, u2).filter(|s| !s.delta).map(|s| s.wo),
            |wo| self.pdf(wi, wo),
        )
    }

    /// Chi-square test of `sample` against `pdf` on a 20 × 20 (θ, φ) grid whose expected
    /// counts integrate `pdf sin θ` on a 40 × 40 sub-grid per cell. Cells even in θ rather
    /// than cos θ ([`chi2_fine`]): a refracted lobe at normal incidence is
    /// `α (η−1)/η` wide in angle, which in cos θ is thinner than any sub-cell.
    pub fn chi2_polar(&self, wi: Vec3, test_count: usize) -> Result<f64, String> {
        use crate::math::chi2::{pearson, Chi2Config};
        use std::f64::consts::PI;
        let cfg = Chi2Config {
            theta_bins: 20,
            phi_bins: 20,
            samples: 100_000,
            test_count,
            ..Default::default()
        };
        let (nt, np, sub) = (cfg.theta_bins, cfg.phi_bins, 40);
        let cell = |d: Vec3| {
            let t = (d.z as f64).clamp(-1.0, 1.0).acos() / PI * nt as f64;
            let p = (d.y as f64).atan2(d.x as f64).rem_euclid(2.0 * PI) / (2.0 * PI) * np as f64;
            (t as usize).min(nt - 1) * np + (p as usize).min(np - 1)
        };
        let mut rng = Pcg32::new(cfg.seed, 1);
        let mut observed = vec![0.0f64; nt * np];
        for _ in 0..cfg.samples {
            let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
            if let Some(bs) = self.sample(wi, u1, u2) {
                if !bs.wo.is_finite() || (bs.wo.length() - 1.0).abs() > 1e-3 {
                    return Err(format!("non-unit or non-finite direction {:?}", bs.wo));
                }
                observed[cell(bs.wo)] += 1.0;
            }
        }
        let (dt, dp) = (PI / (nt * sub) as f64, 2.0 * PI / (np * sub) as f64);
        let mut expected = vec![0.0f64; nt * np];
        for i in 0..nt * sub {
            let t = (i as f64 + 0.5) * dt;
            for j in 0..np * sub {
                let p = (j as f64 + 0.5) * dp;
                let d = Vec3::new(
                    (t.sin() * p.cos()) as f32,
                    (t.sin() * p.sin()) as f32,
                    t.cos() as f32,
                );
                let w = self.pdf(wi, d) as f64 * t.sin() * dt * dp;
                expected[(i / sub) * np + j / sub] += w * cfg.samples as f64;
            }
        }
        pearson(&observed, &expected, &cfg)
    }

    /// Checks `weight == eval/pdf` and `pdf == pdf(wo)` on non-delta samples;
    /// returns how many were checked.
    pub fn check_consistency(&self, wi: Vec3, n: usize) -> usize {
        let mut rng = Pcg32::new(11, 3);
        let mut checked = 0;
        for _ in 0..n {
            let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
            let Some(s) = self.sample(wi, u1, u2) else {
                continue;
            };
            assert!(
                s.weight.is_finite() && s.weight.min_element() >= 0.0,
                "{s:?}"
            );
            if s.delta {
                continue;
            }
            let (f, p) = (self.eval(wi, s.wo), self.pdf(wi, s.wo));
            assert!(
                (p - s.pdf).abs() <= 1e-3 * p.max(1.0),
                "wi {wi} wo {}: sampled pdf {} vs pdf() {p}",
                s.wo,
                s.pdf
            );
            let w = f / p;
            let tol = 1e-3 * w.max_element().max(1.0);
            assert!(
                (w - s.weight).abs().max_element() <= tol,
                "wi {wi} wo {}: weight {} vs eval/pdf {w}",
                s.wo,
                s.weight
            );
            checked += 1;
        }
        checked
    }

    /// Monte Carlo estimate of the directional albedo ∫ f |cos θo| dωo (the mean
    /// sample weight) with its standard error (max over channels).
    pub fn albedo(&self, wi: Vec3, n: usize) -> (Color, f32) {
        let mut rng = Pcg32::new(5, 9);
        let (mut sum, mut sum2) = (Color::ZERO, Color::ZERO);
        for _ in 0..n {
            let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
            if let Some(s) = self.sample(wi, u1, u2) {
                sum += s.weight;
                sum2 += s.weight * s.weight;
            }
        }
        let mean = sum / n as f32;
        let var = (sum2 / n as f32 - mean * mean).max(Color::ZERO);
        (mean, (var / n as f32).max_element().sqrt())
    }

    /// Checks `eval(wi, wo)/|cos wo| == eval(wo, wi)/|cos wi|` at random pairs.
    pub fn check_reciprocity(&self, n: usize) {
        let mut rng = Pcg32::new(21, 4);
        for _ in 0..n {
            let a = random_upper(&mut rng);
            let b = random_upper(&mut rng);
            let f1 = self.eval(a, b) / b.z.abs();
            let f2 = self.eval(b, a) / a.z.abs();
            let tol = 1e-3 * f1.max_element().max(f2.max_element()).max(1e-3);
            assert!(
                (f1 - f2).abs().max_element() <= tol,
                "a {a} b {b}: {f1} vs {f2}"
            );
        }
    }
}

/// A uniformly random direction on the upper hemisphere (not too grazing).
pub fn random_upper(rng: &mut Pcg32) -> Vec3 {
    let z = 0.05 + 0.95 * rng.next_f32();
    let phi = 2.0 * std::f32::consts::PI * rng.next_f32();
    let r = (1.0 - z * z).sqrt();
    Vec3::new(r * phi.cos(), r * phi.sin(), z)
}

/// Incident directions used by the tests: normal, oblique, grazing, off-axis.
pub fn incident_dirs() -> [Vec3; 4] {
    [
        Vec3::Z,
        Vec3::new(0.5, 0.0, 0.866).normalize(),
        Vec3::new(0.3, -0.8, 0.3).normalize(),
        Vec3::new(-0.95, 0.1, 0.1).normalize(),
    ]
}

/// Chi-square test as [`crate::math::chi2::chi2_test`], on a 20 × 20 (cos θ, φ) grid
/// whose expected counts are integrated on a 32 × 32 sub-grid per cell: glossy
/// lobes are only ~0.01 wide in cos θ, too narrow for the harness's 16 × 16
/// midpoint rule on 10 × 20 cells.
pub fn chi2_fine(
    test_count: usize,
    mut sample: impl FnMut(f32, Vec2) -> Option<Vec3>,
    pdf: impl Fn(Vec3) -> f32,
) -> Result<f64, String> {
    let cfg = Chi2Config {
        theta_bins: 20,
        phi_bins: 20,
        samples: 100_000,
        test_count,
        ..Default::default()
    };
    let (nt, np) = (cfg.theta_bins, cfg.phi_bins);
    let two_pi = 2.0 * std::f64::consts::PI;
    let mut rng = Pcg32::new(cfg.seed, 1);
    let mut observed = vec![0.0f64; nt * np];
    for _ in 0..cfg.samples {
        let u1 = rng.next_f32();
        let u2 = Vec2::new(rng.next_f32(), rng.next_f32());
        if let Some(d) = sample(u1, u2) {
            if !d.is_finite() || (d.length() - 1.0).abs() > 1e-3 {
                return Err(format!("non-unit or non-finite direction {d:?}"));
            }
            let ct = (((d.z as f64 + 1.0) * 0.5 * nt as f64) as usize).min(nt - 1);
            let phi = (d.y as f64).atan2(d.x as f64).rem_euclid(two_pi);
            let cp = ((phi / two_pi * np as f64) as usize).min(np - 1);
            observed[ct * np + cp] += 1.0;
        }
    }
    let (sz, sp) = (32, 32);
    let dz = 2.0 / (nt * sz) as f64;
    let dphi = two_pi / (np * sp) as f64;
    let mut expected = vec![0.0f64; nt * np];
    for i in 0..nt * sz {
        let z = -1.0 + (i as f64 + 0.5) * dz;
        let r = (1.0 - z * z).max(0.0).sqrt();
        for j in 0..np * sp {
            let phi = (j as f64 + 0.5) * dphi;
            let d = Vec3::new((r * phi.cos()) as f32, (r * phi.sin()) as f32, z as f32);
            expected[(i / sz) * np + j / sp] += pdf(d) as f64 * dz * dphi * cfg.samples as f64;
        }
    }
    pearson(&observed, &expected, &cfg)
}
