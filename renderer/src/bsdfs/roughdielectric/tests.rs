//! Tests of `roughdielectric`: eval, pdf and sample against Mitsuba 3.9.1's values
//! (`mitsuba_values.rs`), chi-square of `sample` against `pdf`, sample weights against
//! `eval / pdf`, energy, reciprocity, errors and the flat record.

use super::super::testutil::*;
use super::super::AnyBsdf;
use super::mitsuba_values::{eval_cases, sample_cases};
use super::*;
use crate::desc::props::Value;
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
    /// Mitsuba's eval / pdf at `wo`.
    pub ratio: [f32; 3],
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

fn v(a: [f64; 3]) -> Vec3 {
    Vec3::new(a[0] as f32, a[1] as f32, a[2] as f32)
}

fn close(a: f32, b: f32, rel: f32) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + 1e-6
}

fn record(s: &Setup) -> RoughDielectric {
    match s.bsdf() {
        AnyBsdf::RoughDielectric(d) => *d,
        b => panic!("not a roughdielectric: {b:?}"),
    }
}

#[test]
fn eval_and_pdf_match_mitsuba() {
    let mut nonzero = 0;
    for c in eval_cases() {
        let s = Setup::new("roughdielectric", &c.params);
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
            assert!(
                close(gp, *p, 1e-3),
                "{}: wi {wi} wo {wo}: pdf {gp} vs Mitsuba {p}",
                c.name
            );
            nonzero += usize::from(*p > 1e-3 && want.max_element() > 1e-3);
        }
    }
    assert!(nonzero >= 50, "the table exercises too little: {nonzero}");
}

#[test]
fn samples_agree_with_mitsubas_at_its_sampled_directions() {
    // The visible-normal warps differ from Mitsuba's (same density, other mapping), so
    // `sample` is compared through pdf and eval/pdf at Mitsuba's sampled direction.
    for c in sample_cases() {
        let s = Setup::new("roughdielectric", &c.params);
        let rec = record(&s);
        let visible = rec.distr.sample_visible != 0;
        assert!(c.rows.len() >= 12, "{}", c.name);
        for r in &c.rows {
            let (wi, wo) = (v(r.wi), Vec3::from_array(r.wo).normalize());
            let msg = format!("{}: wi {wi} wo {wo}", c.name);
            let p = s.pdf(wi, wo);
            assert!(close(p, r.pdf, 2e-3), "{msg}: pdf {p} vs Mitsuba {}", r.pdf);
            let w = s.eval(wi, wo) / p;
            // with visible normals Mitsuba's weight is eval/pdf; without, its weight
            // leaves out D / D_widened (module docs), so compare with its eval/pdf
            let want = Color::from_array(if visible { r.weight } else { r.ratio });
            assert!(
                (w - want).abs().max_element() <= 2e-3 * want.max_element(),
                "{msg}: eval/pdf {w} vs Mitsuba {want}"
            );
            let eta = if wi.z * wo.z > 0.0 {
                1.0
            } else if wi.z > 0.0 {
                rec.eta
            } else {
                1.0 / rec.eta
            };
            assert!(close(eta, r.eta, 1e-5), "{msg}: eta {eta} vs {}", r.eta);
        }
    }
}

/// GGX and Beckmann, isotropic and anisotropic, with and without visible normals,
/// into a denser (η = 1.5) and a lighter (η = 1/1.5) medium.
fn variants_with(alphas: &[(f64, f64)]) -> Vec<Setup> {
    let mut v = Vec::new();
    for d in ["ggx", "beckmann"] {
        for &(au, av) in alphas {
            for vis in [true, false] {
                for (int, ext) in [(1.5, 1.0), (1.0, 1.5)] {
                    v.push(Setup::new(
                        "roughdielectric",
                        &[
                            ("distribution", Value::String(d.into())),
                            ("alpha_u", Value::Float(au)),
                            ("alpha_v", Value::Float(av)),
                            ("sample_visible", Value::Bool(vis)),
                            ("int_ior", Value::Float(int)),
                            ("ext_ior", Value::Float(ext)),
                        ],
                    ));
                }
            }
        }
    }
    v
}

fn variants() -> Vec<Setup> {
    variants_with(&[(0.1, 0.1), (0.3, 0.3), (0.7, 0.7), (0.1, 0.4)])
}

/// Incident directions from outside and from inside.
fn both_sides(dirs: &[Vec3]) -> Vec<Vec3> {
    dirs.iter().flat_map(|&d| [d, -d]).collect()
}

#[test]
fn chi2_sampling_matches_pdf() {
    let v = variants();
    let d = incident_dirs();
    let wis = both_sides(&d[..3]);
    for s in &v {
        for &wi in &wis {
            let r = s.chi2_polar(wi, v.len() * wis.len());
            assert!(r.is_ok(), "{} wi {wi}: {r:?}", s.desc);
        }
    }
}

#[test]
fn weight_is_eval_over_pdf_and_eta_follows_the_side() {
    for s in variants() {
        let eta = record(&s).eta;
        for wi in both_sides(&incident_dirs()) {
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
                assert!((bs.wo.length() - 1.0).abs() < 1e-4, "{bs:?}");
            }
        }
    }
}

/// Mean sample weight with refraction's radiance scaling `1/η²` undone (the energy the
/// interface passes on) and its standard error.
fn unscaled_albedo(s: &Setup, wi: Vec3, n: usize) -> (f64, f64) {
    let mut rng = Pcg32::new(5, 9);
    let (mut sum, mut sum2) = (0.0f64, 0.0f64);
    for _ in 0..n {
        let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
        if let Some(bs) = s.sample(wi, u1, u2) {
            let w = (bs.weight.x * bs.eta * bs.eta) as f64;
            sum += w;
            sum2 += w * w;
        }
    }
    let mean = sum / n as f64;
    let var = (sum2 / n as f64 - mean * mean).max(0.0);
    (mean, (var / n as f64).sqrt())
}

#[test]
fn furnace_reflection_plus_transmission_never_exceeds_one() {
    // R + T is 1 minus what single-scattering Smith loses to shadowing-masking: never
    // above 1, and for a nearly smooth interface at normal incidence within 1 % of 1
    // from either side (no total internal reflection there)
    let alphas = [(0.02, 0.02), (0.1, 0.1), (0.3, 0.3), (0.7, 0.7), (0.1, 0.5)];
    for s in variants_with(&alphas) {
        for wi in both_sides(&incident_dirs()) {
            let (a, err) = unscaled_albedo(&s, wi, 50_000);
            assert!(a <= 1.0 + 4.0 * err + 1e-3, "{} wi {wi}: {a}", s.desc);
        }
    }
    for s in variants_with(&[(0.02, 0.02)]) {
        for wi in [Vec3::Z, -Vec3::Z] {
            let (a, _) = unscaled_albedo(&s, wi, 50_000);
            assert!(a > 0.99, "{} wi {wi}: {a}", s.desc);
        }
    }
}

#[test]
fn albedo_matches_quadrature_of_eval_over_the_sphere() {
    // independent of the sampling routine: ∫ eval dωo by a midpoint rule in (cos θ, φ)
    for s in variants_with(&[(0.3, 0.3), (0.7, 0.7), (0.2, 0.5)]) {
        for wi in [incident_dirs()[1], -incident_dirs()[1]] {
            let n = 500;
            let mut q = 0.0f64;
            for i in 0..n {
                let z = -1.0 + 2.0 * (i as f32 + 0.5) / n as f32;
                let r = (1.0 - z * z).sqrt();
                for j in 0..n {
                    let phi = 2.0 * std::f32::consts::PI * (j as f32 + 0.5) / n as f32;
                    let wo = Vec3::new(r * phi.cos(), r * phi.sin(), z);
                    q += s.eval(wi, wo).x as f64;
                }
            }
            let q = q * 4.0 * std::f64::consts::PI / (n * n) as f64;
            let (a, err) = s.albedo(wi, 100_000);
            assert!(
                (a.x as f64 - q).abs() < 4.0 * err as f64 + 3e-3 * q,
                "{} wi {wi}: MC {a} vs quadrature {q}",
                s.desc
            );
        }
    }
}

#[test]
fn reciprocity_with_the_radiance_scaling() {
    // Walter's BTDF f⁰ obeys f⁰(a→b)/n_b² = f⁰(b→a)/n_a²; radiance transport scales it
    // by (n_a/n_b)², so f(a→b)/n_a² = f(b→a)/n_b² (n: the index on each direction's side)
    let mut rng = Pcg32::new(21, 4);
    for s in variants() {
        let eta = record(&s).eta;
        let n2 = |w: Vec3| if w.z > 0.0 { 1.0 } else { eta * eta };
        let mut refracted = 0;
        for i in 0..1000 {
            // random pairs on either side, and pairs sampled from the lobes
            let a = random_upper(&mut rng);
            let a = if rng.next_f32() < 0.5 { a } else { -a };
            let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
            let side = if rng.next_f32() < 0.5 { 1.0 } else { -1.0 };
            let b = match s.sample(a, u1, u2) {
                Some(bs) if i % 2 == 0 => bs.wo,
                _ => random_upper(&mut rng) * side,
            };
            let f1 = s.eval(a, b) / b.z.abs() / n2(a);
            let f2 = s.eval(b, a) / a.z.abs() / n2(b);
            // f32 rounding of the half vector moves Fresnel a little near the critical angle
            let tol = 5e-3 * f1.max_element().max(f2.max_element()).max(1e-3);
            assert!(
                (f1 - f2).abs().max_element() <= tol,
                "{}: a {a} b {b}: {f1} vs {f2}",
                s.desc
            );
            refracted += usize::from(a.z * b.z < 0.0 && f1.x > 1e-3);
        }
        assert!(refracted > 100, "{}: {refracted}", s.desc);
    }
}

#[test]
fn two_sided_not_delta_and_flattens_to_its_twin() {
    let s = Setup::new("roughdielectric", &[("alpha", Value::Float(0.2))]);
    assert!(!s.is_delta() && s.bsdf().transmits(&s.bsdfs, &s.tex));
    let rec = record(&s);
    assert!((rec.eta - 1.5046 / 1.000277).abs() < 1e-6, "bk7 / air");
    assert_eq!(rec.distr.kind, super::super::microfacet::BECKMANN);
    assert_eq!(rec.distr.sample_visible, 1);
    // the kernels read the record itself
    let words = s.bsdf().record_words(&[]);
    assert_eq!(words.len(), 8, "28 bytes in a 32-byte slot");
    assert_eq!(read_record::<RoughDielectric>(&words), Some(rec));
    // grazing incidence has no half vector
    let g = Vec3::new(1.0, 0.0, 0.0);
    assert!(s.sample(g, 0.5, Vec2::splat(0.5)).is_none());
    assert_eq!(s.eval(g, -Vec3::Z), Color::ZERO);
    assert_eq!(s.pdf(g, -Vec3::Z), 0.0);
}

#[test]
fn parameter_errors_name_the_key_and_place() {
    let e = build_err(
        "roughdielectric",
        &[
            ("int_ior", Value::Float(1.333)),
            ("ext_ior", Value::String("water".into())),
        ],
    );
    assert!(
        e.contains("must differ") && e.contains("int_ior") && e.contains("t.xml:2"),
        "{e}"
    );
    let e = build_err("roughdielectric", &[("alpha", Value::Float(-0.1))]);
    assert!(e.contains("alpha") && e.contains(">= 0"), "{e}");
    let e = build_err(
        "roughdielectric",
        &[("alpha", Value::Float(0.1)), ("alpha_v", Value::Float(0.2))],
    );
    assert!(e.contains("not both"), "{e}");
    let e = build_err("roughdielectric", &[("alpha_u", Value::Float(0.2))]);
    assert!(e.contains("alpha_v"), "{e}");
    let e = build_err(
        "roughdielectric",
        &[("distribution", Value::String("phong".into()))],
    );
    assert!(e.contains("ggx") && e.contains("beckmann"), "{e}");
    let e = build_err(
        "roughdielectric",
        &[("int_ior", Value::String("glas".into()))],
    );
    assert!(e.contains("glas") && e.contains("bk7"), "{e}");
    let e = build_err("roughdielectric", &[("roughness", Value::Float(0.1))]);
    assert!(e.contains("roughness"), "{e}");
    // a transmissive BSDF cannot be made two-sided
    let mut ctx = crate::scene::builder::BuildCtx::default();
    let e = ctx
        .bsdf(&obj_with(
            "twosided",
            &[],
            vec![obj("roughdielectric", &[])],
        ))
        .unwrap_err()
        .to_string();
    assert!(e.contains("roughdielectric"), "{e}");
}
