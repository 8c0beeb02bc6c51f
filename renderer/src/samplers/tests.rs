use super::*;
use crate::desc::xml;

/// The sampler `name` with `sample_count` and `jitter`, as a scene would build it.
fn sampler(name: &str, spp: u32, jitter: bool) -> Sampler {
    let jitter_line = if has_jitter(kind_of(name).unwrap()) {
        format!("<boolean name=\"jitter\" value=\"{jitter}\"/>")
    } else {
        String::new()
    };
    let desc = build_desc(&format!(
        "<sampler type=\"{name}\"><integer name=\"sample_count\" value=\"{spp}\"/>{jitter_line}</sampler>"
    ))
    .unwrap();
    desc
}

/// Builds the sampler of a camera holding `sampler_xml`.
fn build_desc(sampler_xml: &str) -> Result<Sampler> {
    let src = format!(
        "<scene version=\"3.0.0\"><sensor type=\"perspective\">{sampler_xml}</sensor></scene>"
    );
    let scene = xml::load_string(&src, &[])?;
    Ok(crate::scene::build_scene(&scene)?.sensor.sampler)
}

/// The `dims` first dimensions (each `(is_2d, values)`) of every sample of one pixel.
fn draws(s: &Sampler, seed: u64, pixel: u64, dims: &[bool]) -> Vec<Vec<Vec2>> {
    let flat = s.flat(s.sample_count);
    (0..s.sample_count)
        .map(|i| {
            let mut r = SampleRng::new(&flat, seed, pixel, u64::from(i));
            dims.iter()
                .map(|&two| {
                    if two {
                        r.next_2d()
                    } else {
                        Vec2::new(r.next_1d(), 0.0)
                    }
                })
                .collect()
        })
        .collect()
}

/// Whether every cell of the `nx × ny` grid holds exactly one of `pts` (the cell of a
/// point computed exactly: `floor(x · nx)` in f64 of the f32 value).
fn one_per_cell(pts: &[Vec2], nx: u32, ny: u32) -> bool {
    let mut seen = vec![0u32; (nx * ny) as usize];
    for p in pts {
        assert!(
            (0.0..1.0).contains(&p.x) && (0.0..1.0).contains(&p.y),
            "{p:?}"
        );
        let cx = (f64::from(p.x) * f64::from(nx)).floor() as u32;
        let cy = (f64::from(p.y) * f64::from(ny)).floor() as u32;
        seen[(cy * nx + cx) as usize] += 1;
    }
    seen.iter().all(|&c| c == 1)
}

/// The dimension pattern the checks walk: 2D, 1D, 2D, 1D, 2D (film, then the
/// integrator's BSDF and emitter numbers).
const DIMS: [bool; 5] = [true, false, true, false, true];

#[test]
fn stratified_puts_one_sample_in_each_cell_of_each_dimension() {
    for spp in [1, 4, 9, 16, 64, 100] {
        for jitter in [true, false] {
            let s = sampler("stratified", spp, jitter);
            let res = isqrt(u64::from(spp)) as u32;
            for pixel in [0, 1, 977, 1 << 40] {
                let d = draws(&s, 3, pixel, &DIMS);
                for (k, &two) in DIMS.iter().enumerate() {
                    let pts: Vec<Vec2> = d.iter().map(|v| v[k]).collect();
                    let ok = if two {
                        one_per_cell(&pts, res, res)
                    } else {
                        one_per_cell(&pts, spp, 1)
                    };
                    assert!(
                        ok,
                        "spp {spp} jitter {jitter} pixel {pixel} dim {k}: {pts:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn multijitter_fills_each_cell_column_and_row_once() {
    // 10 rounds up to a 4 x 3 grid, 8 is 4 x 2: rectangular grids too
    for (spp, n, nx, ny) in [
        (4, 4, 2, 2),
        (8, 8, 4, 2),
        (10, 12, 4, 3),
        (16, 16, 4, 4),
        (64, 64, 8, 8),
    ] {
        for jitter in [true, false] {
            let s = sampler("multijitter", spp, jitter);
            assert_eq!(s.sample_count, n, "spp {spp}");
            for pixel in [0, 5, 4096] {
                let d = draws(&s, 11, pixel, &DIMS);
                for (k, &two) in DIMS.iter().enumerate() {
                    let pts: Vec<Vec2> = d.iter().map(|v| v[k]).collect();
                    let what = format!("spp {spp} jitter {jitter} pixel {pixel} dim {k}");
                    if !two {
                        assert!(one_per_cell(&pts, n, 1), "{what}");
                        continue;
                    }
                    assert!(one_per_cell(&pts, nx, ny), "{what}: cells");
                    assert!(one_per_cell(&pts, n, 1), "{what}: columns");
                    let swapped: Vec<Vec2> = pts.iter().map(|p| Vec2::new(p.y, p.x)).collect();
                    assert!(one_per_cell(&swapped, n, 1), "{what}: rows");
                }
            }
        }
    }
}

#[test]
fn ldsampler_points_form_a_0_m_2_net() {
    for (spp, m) in [(4, 2), (16, 4), (64, 6), (256, 8)] {
        let s = sampler("ldsampler", spp, true);
        for pixel in [0, 7, 100_000] {
            let d = draws(&s, 5, pixel, &DIMS);
            for (k, &two) in DIMS.iter().enumerate() {
                let pts: Vec<Vec2> = d.iter().map(|v| v[k]).collect();
                if !two {
                    assert!(
                        one_per_cell(&pts, spp, 1),
                        "spp {spp} pixel {pixel} dim {k}"
                    );
                    continue;
                }
                // every elementary interval of area 1/n: 2^i x 2^(m-i) cells
                for i in 0..=m {
                    assert!(
                        one_per_cell(&pts, 1 << i, 1 << (m - i)),
                        "spp {spp} pixel {pixel} dim {k}: intervals 2^-{i} x 2^-{}",
                        m - i
                    );
                }
            }
        }
    }
}

#[test]
fn the_stratification_check_rejects_independent_samples() {
    // the same checks on the independent sampler's numbers fail: they can fail
    let s = sampler("independent", 16, true);
    let d = draws(&s, 3, 0, &DIMS);
    let pts: Vec<Vec2> = d.iter().map(|v| v[0]).collect();
    assert!(!one_per_cell(&pts, 4, 4));
    assert!(!one_per_cell(&pts, 16, 1));
}

#[test]
fn counts_round_up_as_mitsuba() {
    let count = |name: &str, spp: u32| sampler(name, spp, true).sample_count;
    for (spp, n) in [(1, 1), (2, 4), (4, 4), (5, 9), (10, 16), (16, 16), (17, 25)] {
        assert_eq!(count("stratified", spp), n, "stratified {spp}");
    }
    for (spp, n) in [(1, 1), (2, 2), (3, 3), (5, 6), (7, 8), (10, 12), (17, 20)] {
        assert_eq!(count("multijitter", spp), n, "multijitter {spp}");
    }
    for (spp, n) in [
        (1, 4),
        (4, 4),
        (5, 16),
        (16, 16),
        (17, 64),
        (32, 64),
        (65, 256),
    ] {
        assert_eq!(count("ldsampler", spp), n, "ldsampler {spp}");
    }
    assert_eq!(count("independent", 7), 7);
    // a render's spp override rounds the same way; past u32::MAX it is an error
    let s = sampler("stratified", 4, true);
    assert_eq!(s.effective(10), Ok(16));
    let e = s.effective(u32::MAX).unwrap_err();
    assert!(e.contains("more than 4294967295"), "{e}");
    assert!(s.effective(0).is_err());
}

#[test]
fn permutations_are_bijections_for_every_seed() {
    for n in (1..=70).chain([255, 256, 1000]) {
        for seed in [0, 1, 0x8000_0000, u32::MAX, 0x1234_5678] {
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let p = permute_kensler(i, n, seed);
                assert!(
                    !std::mem::replace(&mut seen[p as usize], true),
                    "n {n} seed {seed}"
                );
            }
        }
    }
    for m in 0..10 {
        let n = 1u32 << m;
        for seed in [0, 9, u32::MAX] {
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let p = permute_pow2(i, n, seed);
                assert!(
                    !std::mem::replace(&mut seen[p as usize], true),
                    "n {n} seed {seed}"
                );
            }
        }
    }
}

#[test]
fn stratum_points_lie_strictly_inside_their_stratum() {
    // the worst jitter values at both ends, for counts up to the exact range
    for n in [1u32, 2, 3, 7, 64, 1000, 1 << 20, (1 << 23) - 1, 1 << 23] {
        for k in [0, n / 2, n - 1] {
            for j in [None, Some(0), Some(1), Some((1 << 24) - 1), Some(0x7fffff)] {
                let x = stratum_point(k, n, j);
                let cell = (f64::from(x) * f64::from(n)).floor() as u32;
                assert!(cell == k && x < 1.0, "n {n} k {k} j {j:?}: {x}");
            }
        }
    }
    assert_eq!(
        stratum_point(1, 4, None),
        0.375,
        "the centre without jitter"
    );
}

/// Mean of `f` over the sampler's first 2D dimension at dimension index `skip` (after
/// `skip` 1D draws), per pixel: one estimate per pixel.
fn estimates(s: &Sampler, pixels: u64, skip: usize, f: impl Fn(Vec2) -> f64) -> Vec<f64> {
    let flat = s.flat(s.sample_count);
    (0..pixels)
        .map(|px| {
            let sum: f64 = (0..s.sample_count)
                .map(|i| {
                    let mut r = SampleRng::new(&flat, 1, px, u64::from(i));
                    (0..skip).for_each(|_| {
                        r.next_1d();
                    });
                    f(r.next_2d())
                })
                .sum();
            sum / f64::from(s.sample_count)
        })
        .collect()
}

#[test]
fn strata_integrate_a_smooth_function_far_better_than_independent_samples() {
    // ∫∫ e^x sin(πy) dx dy = (e - 1) · 2/π. Criterion: over 2000 pixels (independent
    // estimates), each sampler's RMS error at 64 spp is below 1/3 of the independent
    // sampler's (strata: error ~ n^-1 against n^-1/2; measured about 1/4 for stratified,
    // whose 2D cells leave each axis less evenly covered, and about 1/10 for multijitter
    // and ldsampler), and its mean lies within 4 standard errors of the truth (unbiased).
    let truth = (std::f64::consts::E - 1.0) * 2.0 / std::f64::consts::PI;
    let f = |p: Vec2| f64::from(p.x).exp() * (std::f64::consts::PI * f64::from(p.y)).sin();
    let rms =
        |e: &[f64]| (e.iter().map(|v| (v - truth).powi(2)).sum::<f64>() / e.len() as f64).sqrt();
    for skip in [0, 3] {
        let ind = rms(&estimates(&sampler("independent", 64, true), 2000, skip, f));
        for name in ["stratified", "multijitter", "ldsampler"] {
            let e = estimates(&sampler(name, 64, true), 2000, skip, f);
            let err = rms(&e);
            println!("dim {skip}: {name} rms {err:.2e}, independent {ind:.2e}");
            let n = e.len() as f64;
            let mean = e.iter().sum::<f64>() / n;
            let sd = (e.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            assert!(
                err < ind / 3.0,
                "{name} (dim {skip}): rms {err:.2e} vs independent {ind:.2e}"
            );
            assert!(
                (mean - truth).abs() < 4.0 * sd / n.sqrt() + 1e-7,
                "{name} (dim {skip}): mean {mean} vs {truth} (sd {sd:.2e})"
            );
        }
    }
}

#[test]
fn numbers_depend_on_seed_pixel_and_index_only() {
    for name in KNOWN {
        let s = sampler(name, 16, true);
        let flat = s.flat(16);
        let run = |seed, pixel, index| {
            let mut r = SampleRng::new(&flat, seed, pixel, index);
            (r.next_2d(), r.next_1d(), r.next_2d())
        };
        assert_eq!(run(1, 2, 3), run(1, 2, 3), "{name}: reproducible");
        assert_ne!(run(1, 2, 3), run(2, 2, 3), "{name}: the seed matters");
        assert_ne!(run(1, 2, 3), run(1, 3, 3), "{name}: the pixel matters");
        // the sampler's `seed` adds to the render's
        let shifted = Sampler { seed: 1, ..s }.flat(16);
        let mut r = SampleRng::new(&shifted, 1, 2, 3);
        assert_eq!(
            (r.next_2d(), r.next_1d(), r.next_2d()),
            run(2, 2, 3),
            "{name}"
        );
    }
}

#[test]
fn independent_numbers_are_the_plain_pcg_stream() {
    // `independent` keeps the stream images were rendered with before the other samplers
    let mut r = SampleRng::independent(7, 9, 2);
    let mut p = Pcg32::new(mix64(7u64.wrapping_mul(0x9e3779b97f4a7c15) ^ 2), 9);
    assert_eq!(r.next_1d(), p.next_f32());
    let v = r.next_2d();
    assert_eq!((v.x, v.y), (p.next_f32(), p.next_f32()));
}

#[test]
fn bad_sampler_input_names_the_key_and_suggests_the_name() {
    let e = build_desc("<sampler type=\"stratifed\"/>")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"stratifed\"; did you mean \"stratified\"?") && e.contains("ldsampler"),
        "{e}"
    );
    for bad in ["0", "-4"] {
        let e = build_desc(&format!(
            "<sampler type=\"multijitter\"><integer name=\"sample_count\" value=\"{bad}\"/></sampler>"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("<string>:1:") && e.contains("\"sample_count\"") && e.contains(bad),
            "{e}"
        );
    }
    // jitter is not an ldsampler parameter: unread, so an error
    let e = build_desc(
        "<sampler type=\"ldsampler\"><boolean name=\"jitter\" value=\"false\"/></sampler>",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("jitter"), "{e}");
    let e =
        build_desc("<sampler type=\"stratified\"><integer name=\"jitter\" value=\"2\"/></sampler>")
            .unwrap_err()
            .to_string();
    assert!(e.contains("jitter"), "{e}");
}

#[test]
fn the_registry_has_every_sampler_with_its_manual() {
    crate::plugin::registry::testing::check_registry("sampler", REGISTRY, KNOWN);
}
