//! Tests of `principled`: eval, pdf and sample against Mitsuba 3.9.1's values
//! (`mitsuba_values.rs`), chi-square of `sample` against `pdf`, sample weights against
//! `eval / pdf`, energy, reciprocity, errors and the flat record. The types here are
//! shared with `principledthin`'s tests.

use super::super::testutil::*;
use super::super::AnyBsdf;
use super::mitsuba_values::{eval_cases, sample_cases};
use super::*;
use crate::math::Pcg32;
use crate::plugin::record::read_record;

/// One direction pair: (wi, wo, eval, pdf).
pub type EvalRow = ([f64; 3], [f64; 3], [f32; 3], f32);

/// Mitsuba's eval and pdf of one BSDF at fixed directions.
pub struct EvalCase {
    /// What the configuration exercises.
    pub name: &'static str,
    /// The BSDF's parameters.
    pub params: Vec<(&'static str, Value)>,
    /// The pairs.
    pub rows: Vec<EvalRow>,
}

/// One Mitsuba `sample` call: its input `wi` and outputs.
pub struct SampleRow {
    /// Incident direction.
    pub wi: [f64; 3],
    /// Sampled direction.
    pub wo: [f32; 3],
    /// Its density.
    pub pdf: f32,
    /// Mitsuba's sample weight.
    pub weight: [f32; 3],
    /// Relative IOR along the sampled path.
    pub eta: f32,
}

/// Mitsuba's samples of one BSDF.
pub struct SampleCase {
    /// What the configuration exercises.
    pub name: &'static str,
    /// The BSDF's parameters.
    pub params: Vec<(&'static str, Value)>,
    /// The calls.
    pub rows: Vec<SampleRow>,
}

pub use super::super::testutil::checker;

pub fn v(a: [f64; 3]) -> Vec3 {
    Vec3::new(a[0] as f32, a[1] as f32, a[2] as f32)
}

pub fn close(a: f32, b: f32, rel: f32) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + 1e-6
}

/// Checks eval and pdf of `kind` against Mitsuba's rows; `skip_pdf(case, wi)` marks
/// rows whose pdf differs on purpose (checked to be 0 here). Returns the number of
/// rows with a nonzero value and density.
pub fn check_eval_cases(
    kind: &str,
    cases: Vec<EvalCase>,
    skip_pdf: impl Fn(&EvalCase, Vec3) -> bool,
) -> usize {
    let mut nonzero = 0;
    for c in &cases {
        let s = Setup::new(kind, &c.params);
        for (wi, wo, f, p) in &c.rows {
            let (wi, wo) = (v(*wi), v(*wo));
            let (got, want) = (s.eval(wi, wo), Color::from_array(*f));
            for i in 0..3 {
                assert!(
                    close(got[i], want[i], 1e-3),
                    "{}: wi {wi} wo {wo}: eval {got} vs Mitsuba {want}",
                    c.name
                );
            }
            let gp = s.pdf(wi, wo);
            if skip_pdf(c, wi) {
                assert_eq!(gp, 0.0, "{}: wi {wi} wo {wo}", c.name);
                continue;
            }
            assert!(
                close(gp, *p, 1e-3),
                "{}: wi {wi} wo {wo}: pdf {gp} vs Mitsuba {p}",
                c.name
            );
            nonzero += usize::from(*p > 1e-3 && want.max_element() > 1e-3);
        }
    }
    nonzero
}

/// Checks pdf and eval/pdf at Mitsuba's sampled directions (the visible-normal warps
/// map random numbers differently, so the directions themselves differ) and the eta.
pub fn check_sample_cases(kind: &str, cases: Vec<SampleCase>, eta_of: impl Fn(&Setup) -> f32) {
    for c in cases {
        let s = Setup::new(kind, &c.params);
        assert!(c.rows.len() >= 8, "{}", c.name);
        for r in &c.rows {
            let (wi, wo) = (v(r.wi), Vec3::from_array(r.wo).normalize());
            let msg = format!("{}: wi {wi} wo {wo}", c.name);
            let p = s.pdf(wi, wo);
            assert!(close(p, r.pdf, 2e-3), "{msg}: pdf {p} vs Mitsuba {}", r.pdf);
            let w = s.eval(wi, wo) / p;
            let want = Color::from_array(r.weight);
            assert!(
                (w - want).abs().max_element() <= 2e-3 * want.max_element() + 1e-6,
                "{msg}: eval/pdf {w} vs Mitsuba {want}"
            );
            let eta = if wi.z * wo.z > 0.0 {
                1.0
            } else if wi.z > 0.0 {
                eta_of(&s)
            } else {
                1.0 / eta_of(&s)
            };
            assert!(close(eta, r.eta, 1e-5), "{msg}: eta {eta} vs {}", r.eta);
        }
    }
}

/// Monte Carlo albedo (mean weight, with refraction's radiance scaling `1/η²` undone)
/// and its standard error.
pub fn unscaled_albedo(s: &Setup, wi: Vec3, n: usize) -> (f64, f64) {
    let mut rng = Pcg32::new(5, 9);
    let (mut sum, mut sum2) = (0.0f64, 0.0f64);
    for _ in 0..n {
        let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
        if let Some(bs) = s.sample(wi, u1, u2) {
            let w = (bs.weight.max_element() * bs.eta * bs.eta) as f64;
            sum += w;
            sum2 += w * w;
        }
    }
    let mean = sum / n as f64;
    let var = (sum2 / n as f64 - mean * mean).max(0.0);
    (mean, (var / n as f64).sqrt())
}

/// ∫ eval dωo (first channel) by a midpoint rule in (cos θ, φ) over the sphere:
/// independent of the sampling routine.
pub fn quadrature_albedo(s: &Setup, wi: Vec3) -> f64 {
    let n = 600;
    let mut q = 0.0f64;
    for i in 0..n {
        let z = -1.0 + 2.0 * (i as f32 + 0.5) / n as f32;
        let r = (1.0 - z * z).sqrt();
        for j in 0..n {
            let phi = 2.0 * PI * (j as f32 + 0.5) / n as f32;
            let wo = Vec3::new(r * phi.cos(), r * phi.sin(), z);
            q += s.eval(wi, wo).x as f64;
        }
    }
    q * 4.0 * std::f64::consts::PI / (n * n) as f64
}

/// Whether the configuration refracts (Mitsuba's `sample` from the inside works only
/// then).
fn transmits(c: &EvalCase) -> bool {
    c.params.iter().any(|(k, _)| *k == "spec_trans")
}

fn record(s: &Setup) -> Principled {
    match s.bsdf() {
        AnyBsdf::Principled(d) => *d,
        b => panic!("not a principled: {b:?}"),
    }
}

#[test]
fn eval_and_pdf_match_mitsuba() {
    // from the inside without refraction Mitsuba's pdf is nonzero while its sample
    // returns nothing; here the pdf is 0 (module docs)
    let n = check_eval_cases("principled", eval_cases(), |c, wi| {
        wi.z < 0.0 && !transmits(c)
    });
    assert!(n >= 40, "the table exercises too little: {n}");
}

#[test]
fn samples_agree_with_mitsubas_at_its_sampled_directions() {
    check_sample_cases("principled", sample_cases(), |s| record(s).eta);
}

fn p(params: &[(&'static str, Value)]) -> Setup {
    Setup::new("principled", params)
}

fn f(x: f64) -> Value {
    Value::Float(x)
}

/// Configurations covering every lobe, alone and mixed.
fn variants() -> Vec<Setup> {
    vec![
        p(&[]),
        // (the chi-square's grid resolves lobes down to α ≈ 0.05)
        p(&[
            ("roughness", f(0.45)),
            ("metallic", f(1.0)),
            ("anisotropic", f(0.7)),
        ]),
        p(&[
            ("spec_trans", f(1.0)),
            ("roughness", f(0.3)),
            ("eta", f(1.5)),
        ]),
        p(&[
            ("spec_trans", f(0.5)),
            ("metallic", f(0.2)),
            ("roughness", f(0.4)),
            ("eta", f(0.7)),
        ]),
        p(&[
            ("clearcoat", f(1.0)),
            ("clearcoat_gloss", f(0.5)),
            ("sheen", f(0.8)),
            ("flatness", f(0.6)),
            ("roughness", f(0.7)),
        ]),
        p(&[
            ("clearcoat", f(0.5)),
            ("spec_trans", f(0.4)),
            ("anisotropic", f(0.5)),
            ("roughness", f(0.35)),
            ("diffuse_reflectance_sampling_rate", f(0.3)),
            ("clearcoat_sampling_rate", f(4.0)),
            ("main_specular_sampling_rate", f(2.0)),
        ]),
    ]
}

fn refracts(s: &Setup) -> bool {
    s.desc.contains("spec_trans")
}

#[test]
fn chi2_sampling_matches_pdf() {
    let v = variants();
    let d = incident_dirs();
    let tests = v.len() * d.len() * 2;
    for s in &v {
        for &wi in &d {
            for wi in [wi, -wi] {
                if wi.z < 0.0 && !refracts(s) {
                    assert!(s.sample(wi, 0.5, Vec2::splat(0.5)).is_none());
                    continue;
                }
                // a refracted lobe at normal incidence is too thin for cells even in cos θ
                let r = if refracts(s) {
                    s.chi2_polar(wi, tests)
                } else {
                    s.chi2(wi, tests)
                };
                assert!(r.is_ok(), "{} wi {wi}: {r:?}", s.desc);
            }
        }
    }
}

#[test]
fn weight_is_eval_over_pdf_and_eta_follows_the_side() {
    for s in variants() {
        let eta = record(&s).eta;
        for wi in incident_dirs() {
            for wi in [wi, -wi] {
                if wi.z < 0.0 && !refracts(&s) {
                    continue;
                }
                assert!(s.check_consistency(wi, 2000) > 100, "{} wi {wi}", s.desc);
                let mut rng = Pcg32::new(1, 2);
                for _ in 0..500 {
                    let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
                    let Some(bs) = s.sample(wi, u1, u2) else {
                        continue;
                    };
                    let want = match (wi.z * bs.wo.z > 0.0, wi.z > 0.0) {
                        (true, _) => 1.0,
                        (false, true) => eta,
                        (false, false) => 1.0 / eta,
                    };
                    assert!(!bs.delta && bs.eta == want, "{} wi {wi}: {bs:?}", s.desc);
                }
            }
        }
    }
}

#[test]
fn albedo_matches_quadrature_of_eval() {
    for s in variants() {
        for wi in [incident_dirs()[1], incident_dirs()[2]] {
            let q = quadrature_albedo(&s, wi);
            let (a, err) = s.albedo(wi, 100_000);
            assert!(
                (a.x as f64 - q).abs() < 4.0 * err as f64 + 5e-3 * q + 1e-4,
                "{} wi {wi}: MC {a} vs quadrature {q}",
                s.desc
            );
        }
    }
}

#[test]
fn furnace_physical_lobes_never_exceed_one() {
    // A white Schlick metal and a clear rough dielectric (R + T without the radiance
    // scaling) lose energy only to shadowing-masking: never above 1, and the nearly
    // smooth dielectric at normal incidence from outside is within 1 % of 1. (The
    // Disney diffuse, sheen and clearcoat lobes are not energy conserving by design.)
    let white = Value::Rgb(Color::ONE);
    for r in [0.1, 0.4, 0.8] {
        let metal = p(&[
            ("base_color", white.clone()),
            ("metallic", f(1.0)),
            ("roughness", f(r)),
        ]);
        let glass = p(&[
            ("base_color", white.clone()),
            ("spec_trans", f(1.0)),
            ("roughness", f(r)),
            ("eta", f(1.5)),
        ]);
        for wi in incident_dirs() {
            let (a, err) = unscaled_albedo(&metal, wi, 50_000);
            assert!(a <= 1.0 + 4.0 * err + 1e-3, "metal r {r} wi {wi}: {a}");
            for wi in [wi, -wi] {
                let (a, err) = unscaled_albedo(&glass, wi, 50_000);
                assert!(a <= 1.0 + 4.0 * err + 1e-3, "glass r {r} wi {wi}: {a}");
            }
        }
    }
    let glass = p(&[
        ("base_color", white),
        ("spec_trans", f(1.0)),
        ("roughness", f(0.1)),
        ("eta", f(1.5)),
    ]);
    let (a, _) = unscaled_albedo(&glass, Vec3::Z, 50_000);
    assert!(a > 0.99, "{a}");
}

#[test]
fn reflection_is_reciprocal() {
    for s in variants().iter().filter(|s| !refracts(s)) {
        s.check_reciprocity(300);
    }
}

#[test]
fn flattens_to_its_twin_and_reads_specular() {
    let s = p(&[("specular", f(0.5))]);
    let rec = record(&s);
    // specular 0.5: F0 = 0.04, eta = 1.5
    assert!((rec.eta - 1.5).abs() < 1e-5, "{}", rec.eta);
    assert_eq!(
        (rec.diffuse_rate, rec.specular_rate, rec.clearcoat_rate),
        (1.0, 1.0, 1.0)
    );
    let words = s.bsdf().record_words(&[]);
    assert_eq!(words.len(), 16, "60 bytes in a 64-byte slot");
    assert_eq!(read_record::<Principled>(&words), Some(rec));
    // eta 1 is moved off 1 only where the BSDF refracts, as Mitsuba
    assert_eq!(record(&p(&[("eta", f(1.0))])).eta, 1.0);
    assert_eq!(
        record(&p(&[("eta", f(1.0)), ("spec_trans", f(0.5))])).eta,
        1.001
    );
    let e = record(&p(&[("specular", f(0.0)), ("spec_trans", f(0.5))])).eta;
    assert!((e - (2.0 / (1.0 - (0.08f32 * 1e-3).sqrt()) - 1.0)).abs() < 1e-6);
    // grazing incidence scatters nothing
    let g = Vec3::new(1.0, 0.0, 0.0);
    assert!(s.sample(g, 0.5, Vec2::splat(0.5)).is_none());
    assert_eq!(s.eval(g, Vec3::Z), Color::ZERO);
    assert_eq!(s.pdf(g, Vec3::Z), 0.0);
    assert!(!s.is_delta() && !s.bsdf().transmits(&s.bsdfs, &s.tex));
    assert_eq!(
        s.bsdf().diffuse_reflectance(&s.ctx(), Vec3::Z),
        Color::splat(0.5)
    );
}

#[test]
fn parameter_errors_name_the_key_and_place() {
    let e = build_err("principled", &[("roughness", f(1.5))]);
    assert!(
        e.contains("roughness")
            && e.contains("[0, 1]")
            && e.contains("1.5")
            && e.contains("t.xml:2"),
        "{e}"
    );
    let e = build_err(
        "principled",
        &[("metallic", f(0.2)), ("spec_trans", f(-0.1))],
    );
    assert!(e.contains("spec_trans") && e.contains("t.xml:3"), "{e}");
    let e = build_err("principled", &[("clearcoat", checker(0.5, 3.0))]);
    assert!(e.contains("clearcoat") && e.contains("mean is 1.75"), "{e}");
    let e = build_err("principled", &[("eta", f(1.4)), ("specular", f(0.5))]);
    assert!(e.contains("not both") && e.contains("specular"), "{e}");
    let e = build_err("principled", &[("specular", f(2.0))]);
    assert!(e.contains("specular") && e.contains("[0, 1]"), "{e}");
    let e = build_err("principled", &[("eta", f(0.0))]);
    assert!(e.contains("eta") && e.contains("> 0"), "{e}");
    let e = build_err("principled", &[("clearcoat_sampling_rate", f(-1.0))]);
    assert!(
        e.contains("clearcoat_sampling_rate") && e.contains(">= 0"),
        "{e}"
    );
    let e = build_err(
        "principled",
        &[("base_color", Value::Rgb(Color::new(0.5, -0.1, 0.2)))],
    );
    assert!(
        e.contains("base_color") && e.contains("non-negative") && e.contains("-0.1"),
        "{e}"
    );
    let e = build_err("principled", &[("alpha", f(0.1))]);
    assert!(e.contains("alpha"), "{e}");
    let e = build_err(
        "principled",
        &[("roughness", Value::String("rough".into()))],
    );
    assert!(e.contains("roughness"), "{e}");
}
