//! Tests of `principledthin`: eval, pdf and sample against Mitsuba 3.9.1's values
//! (`mitsuba_values.rs`), chi-square of `sample` against `pdf`, sample weights against
//! `eval / pdf`, energy, symmetry, errors and the flat record.

use super::super::principled::tests::{
    check_eval_cases, check_sample_cases, quadrature_albedo, unscaled_albedo,
};
pub use super::super::principled::tests::{checker, EvalCase, SampleCase, SampleRow};
use super::super::testutil::*;
use super::super::AnyBsdf;
use super::mitsuba_values::{eval_cases, sample_cases};
use super::*;
use crate::desc::props::Value;
use crate::math::Pcg32;
use crate::plugin::record::read_record;

fn record(s: &Setup) -> PrincipledThin {
    match s.bsdf() {
        AnyBsdf::PrincipledThin(d) => *d,
        b => panic!("not a principledthin: {b:?}"),
    }
}

#[test]
fn eval_and_pdf_match_mitsuba() {
    let n = check_eval_cases("principledthin", eval_cases(), |_, _| false);
    assert!(n >= 40, "the table exercises too little: {n}");
}

#[test]
fn samples_agree_with_mitsubas_at_its_sampled_directions() {
    // a sheet does not bend light: eta is 1 on either side
    check_sample_cases("principledthin", sample_cases(), |_| 1.0);
}

fn p(params: &[(&'static str, Value)]) -> Setup {
    Setup::new("principledthin", params)
}

fn f(x: f64) -> Value {
    Value::Float(x)
}

/// Configurations covering every lobe, alone and mixed.
fn variants() -> Vec<Setup> {
    vec![
        p(&[]),
        // (the chi-square's grid resolves lobes down to α ≈ 0.05: the transmitted
        // lobe's roughness is (0.65 η − 0.35) roughness)
        p(&[
            ("spec_trans", f(1.0)),
            ("roughness", f(0.6)),
            ("eta", f(1.33)),
        ]),
        p(&[
            ("spec_trans", f(0.6)),
            ("roughness", f(0.45)),
            ("anisotropic", f(0.6)),
            ("eta", f(1.8)),
        ]),
        p(&[("diff_trans", f(2.0))]),
        p(&[
            ("diff_trans", f(0.8)),
            ("sheen", f(0.7)),
            ("flatness", f(0.5)),
            ("spec_trans", f(0.3)),
            ("specular_reflectance_sampling_rate", f(3.0)),
            ("diffuse_transmittance_sampling_rate", f(0.4)),
        ]),
    ]
}

#[test]
fn chi2_sampling_matches_pdf() {
    let v = variants();
    let d = incident_dirs();
    let tests = v.len() * d.len() * 2;
    for s in &v {
        for &wi in &d {
            for wi in [wi, -wi] {
                let r = s.chi2(wi, tests);
                assert!(r.is_ok(), "{} wi {wi}: {r:?}", s.desc);
            }
        }
    }
}

#[test]
fn weight_is_eval_over_pdf_and_the_sheet_is_symmetric() {
    let mut rng = Pcg32::new(3, 8);
    for s in variants() {
        for wi in incident_dirs() {
            for wi in [wi, -wi] {
                assert!(s.check_consistency(wi, 2000) > 100, "{} wi {wi}", s.desc);
            }
        }
        // both sides look the same: eval(−wi, −wo) = eval(wi, wo), same for pdf
        for _ in 0..200 {
            let a = random_upper(&mut rng);
            let b = random_upper(&mut rng);
            let b = if rng.next_f32() < 0.5 { b } else { -b };
            assert_eq!(s.eval(a, b), s.eval(-a, -b), "{}", s.desc);
            assert_eq!(s.pdf(a, b), s.pdf(-a, -b), "{}", s.desc);
        }
    }
}

#[test]
fn albedo_matches_quadrature_of_eval() {
    for s in variants() {
        for wi in [incident_dirs()[1], -incident_dirs()[2]] {
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
fn furnace() {
    let white = Value::Rgb(Color::ONE);
    // all diffuse transmission: a white Lambertian transmitter passes everything
    let lambert = p(&[("base_color", white.clone()), ("diff_trans", f(2.0))]);
    for wi in incident_dirs() {
        for wi in [wi, -wi] {
            let (a, err) = unscaled_albedo(&lambert, wi, 20_000);
            assert!((a - 1.0).abs() <= 4.0 * err + 1e-4, "wi {wi}: {a}");
        }
    }
    // a white specular sheet whose transmitted lobe is as rough as the reflected one
    // (0.65 η − 0.35 = 1) splits each microfacet's reflection F / 1 − F: R + T only
    // loses what shadowing-masking loses, never above 1
    let eta = 1.35 / 0.65;
    for r in [0.1, 0.4, 0.8] {
        let sheet = p(&[
            ("base_color", white.clone()),
            ("spec_trans", f(1.0)),
            ("roughness", f(r)),
            ("eta", f(eta)),
        ]);
        for wi in incident_dirs() {
            let (a, err) = unscaled_albedo(&sheet, wi, 50_000);
            assert!(a <= 1.0 + 4.0 * err + 1e-3, "r {r} wi {wi}: {a}");
            if r == 0.1 && wi == Vec3::Z {
                assert!(a > 0.98, "{a}");
            }
        }
    }
}

#[test]
fn flattens_to_its_twin() {
    let s = p(&[("spec_trans", f(0.5))]);
    let rec = record(&s);
    let words = s.bsdf().record_words(&[]);
    assert_eq!(words.len(), 16, "56 bytes in a 64-byte slot");
    assert_eq!(read_record::<PrincipledThin>(&words), Some(rec));
    assert!(!s.is_delta() && s.bsdf().transmits(&s.bsdfs, &s.tex));
    let g = Vec3::new(0.0, 1.0, 0.0);
    assert!(s.sample(g, 0.5, Vec2::splat(0.5)).is_none());
    assert_eq!(s.eval(g, Vec3::Z), Color::ZERO);
    assert_eq!(s.pdf(g, Vec3::Z), 0.0);
    // transmission keeps eta 1
    let mut rng = Pcg32::new(2, 2);
    for _ in 0..200 {
        let (u1, u2) = (rng.next_f32(), Vec2::new(rng.next_f32(), rng.next_f32()));
        if let Some(bs) = s.sample(Vec3::new(0.3, 0.1, 0.9).normalize(), u1, u2) {
            assert_eq!(bs.eta, 1.0);
        }
    }
}

#[test]
fn parameter_errors_name_the_key_and_place() {
    let e = build_err("principledthin", &[("diff_trans", f(2.5))]);
    assert!(
        e.contains("diff_trans") && e.contains("[0, 2]") && e.contains("t.xml:2"),
        "{e}"
    );
    let e = build_err(
        "principledthin",
        &[("sheen", f(0.1)), ("spec_trans", f(1.2))],
    );
    assert!(e.contains("spec_trans") && e.contains("t.xml:3"), "{e}");
    let e = build_err("principledthin", &[("eta", f(0.0))]);
    assert!(e.contains("eta") && e.contains("> 0"), "{e}");
    let e = build_err("principledthin", &[("roughness", checker(-0.5, 0.1))]);
    assert!(e.contains("roughness") && e.contains("mean"), "{e}");
    let e = build_err(
        "principledthin",
        &[("diffuse_transmittance_sampling_rate", f(f64::NAN))],
    );
    assert!(e.contains("diffuse_transmittance_sampling_rate"), "{e}");
    // principled's keys that the thin model does not have
    let e = build_err("principledthin", &[("clearcoat", f(0.5))]);
    assert!(e.contains("clearcoat"), "{e}");
    // a sheet transmits: it cannot be made two-sided (as Mitsuba), while an opaque
    // `principled` can
    let mut ctx = crate::scene::builder::BuildCtx::default();
    let e = ctx
        .bsdf(&obj_with("twosided", &[], vec![obj("principledthin", &[])]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("principledthin"), "{e}");
    let s = Setup::from_obj(&obj_with("twosided", &[], vec![obj("principled", &[])]));
    let (wi, wo) = (Vec3::new(0.2, 0.1, -0.9).normalize(), -Vec3::Z);
    assert!(s.eval(wi, wo).x > 0.0 && s.pdf(wi, wo) > 0.0);
}
