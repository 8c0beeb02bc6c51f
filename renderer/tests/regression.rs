//! Whole-image regression tests against Mitsuba 3 references.
//!
//! Every case of `tests/references/cases.txt` names a scene file and overrides; its
//! reference `tests/references/<name>.exr` (mean) and `<name>_se.exr` (standard error of
//! that mean) were rendered by Mitsuba 3 `scalar_rgb` in 8 independent batches
//! (`tests/references/make_references.py`; CI needs no Mitsuba).
//!
//! The test renders the same scene with heliograph's CPU backend in [`HG_BATCHES`]
//! independent batches (seeds 1..=B) and compares, for every `block`×`block` pixel block and
//! channel, heliograph's mean with the reference mean by a two-sided Welch t-test:
//!
//! * heliograph's variance of the block mean: the batch-to-batch variance / B (B-1 dof);
//! * the reference's: (mean of the block's per-pixel standard errors)², an upper bound that
//!   stays valid when the filter correlates neighbouring pixels (7 dof);
//! * a floor `(REL_FLOOR·|ref| + ABS_FLOOR)²` for float round-off on noise-free blocks.
//!
//! A case fails when any block's p-value is below `ALPHA / number_of_tests` (Bonferroni:
//! the chance that a correct renderer fails a case is at most `ALPHA`). On failure the
//! message lists the worst blocks and `target/regression/<name>_{hg,diff}.exr` are written.
//!
//! Run: `cargo test -p heliograph --test regression` (all cases, ~seconds each), or one
//! case: `cargo test -p heliograph --test regression cbox`.

use std::path::{Path, PathBuf};

use heliograph::backend::cpu;
use heliograph::desc::xml;
use heliograph::io::{read_image, write_image, Image};
use heliograph::math::stats::t_two_sided_p;
use heliograph::render::RenderOptions;
use heliograph::scene::build_scene;

/// Independent heliograph batches per case (their spread gives the variance estimate).
const HG_BATCHES: usize = 32;
/// Independent Mitsuba batches behind each reference (see make_references.py).
const REF_BATCHES: usize = 8;
/// Family-wise false-failure probability per case.
const ALPHA: f64 = 1e-3;
/// Relative tolerance floor (float round-off between renderers on noise-free blocks).
const REL_FLOOR: f64 = 0.005;
/// Absolute tolerance floor.
const ABS_FLOOR: f64 = 1e-4;

// ---------------------------------------------------------------------------------------
// Cases

/// One line of `tests/references/cases.txt`.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    scene: PathBuf,
    defines: Vec<(String, String)>,
    hg_spp: u32,
    block: usize,
}

/// The repository root (the parent of the `renderer` crate).
fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn refs_dir() -> PathBuf {
    repo_root().join("tests").join("references")
}

/// Parses the case list; panics with the offending line on a malformed entry.
fn read_cases() -> Vec<Case> {
    let path = refs_dir().join("cases.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if !line.is_empty() {
            let case = parse_case(line).unwrap_or_else(|| {
                panic!("{}:{}: malformed case line {line:?}", path.display(), i + 1)
            });
            cases.push(case);
        }
    }
    cases
}

/// One case line: name, scene, defines, ref_spp, hg_spp, block.
fn parse_case(line: &str) -> Option<Case> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() != 6 {
        return None;
    }
    let mut defines = Vec::new();
    if f[2] != "-" {
        for kv in f[2].split(',') {
            let (k, v) = kv.split_once('=')?;
            defines.push((k.to_string(), v.to_string()));
        }
    }
    Some(Case {
        name: f[0].to_string(),
        scene: repo_root().join(f[1]),
        defines,
        hg_spp: f[4].parse().ok()?,
        block: f[5].parse().ok()?,
    })
}

fn case(name: &str) -> Case {
    read_cases()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no case {name:?} in tests/references/cases.txt"))
}

// ---------------------------------------------------------------------------------------
// Images

/// A linear RGB image in f64 (row 0 = top).
#[derive(Clone, Debug, PartialEq)]
struct Rgb {
    w: usize,
    h: usize,
    data: Vec<f64>,
}

impl Rgb {
    fn new(w: usize, h: usize) -> Self {
        Rgb {
            w,
            h,
            data: vec![0.0; w * h * 3],
        }
    }

    /// The first three channels of an image (alpha, if any, is not compared).
    fn from_image(img: &Image) -> Self {
        assert!(
            img.channels >= 3,
            "expected an RGB(A) image, got {} channels",
            img.channels
        );
        let mut out = Rgb::new(img.width, img.height);
        for p in 0..img.width * img.height {
            for c in 0..3 {
                out.data[p * 3 + c] = img.data[p * img.channels + c] as f64;
            }
        }
        out
    }

    fn to_image(&self) -> Image {
        Image {
            width: self.w,
            height: self.h,
            channels: 3,
            data: self.data.iter().map(|&v| v as f32).collect(),
        }
    }

    fn at(&self, x: usize, y: usize, c: usize) -> f64 {
        self.data[(y * self.w + x) * 3 + c]
    }

    fn map(&self, mut f: impl FnMut(usize, usize, usize) -> f64) -> Rgb {
        let mut out = Rgb::new(self.w, self.h);
        for y in 0..self.h {
            for x in 0..self.w {
                for c in 0..3 {
                    out.data[(y * self.w + x) * 3 + c] = f(x, y, c);
                }
            }
        }
        out
    }

    /// The image upside down (a v-flipped texture lookup would look like this).
    fn flipped_vertically(&self) -> Rgb {
        self.map(|x, y, c| self.at(x, self.h - 1 - y, c))
    }

    fn scaled(&self, s: f64) -> Rgb {
        self.map(|x, y, c| s * self.at(x, y, c))
    }

    /// Mean of the channel-`c` values of the pixels in `[x0, x1) × [y0, y1)`.
    fn block_mean(&self, x0: usize, x1: usize, y0: usize, y1: usize, c: usize) -> f64 {
        let mut s = 0.0;
        for y in y0..y1 {
            for x in x0..x1 {
                s += self.at(x, y, c);
            }
        }
        s / ((x1 - x0) * (y1 - y0)) as f64
    }
}

fn mean_image(batches: &[Rgb]) -> Rgb {
    let mut m = Rgb::new(batches[0].w, batches[0].h);
    for b in batches {
        for (a, v) in m.data.iter_mut().zip(&b.data) {
            *a += v / batches.len() as f64;
        }
    }
    m
}

/// The Mitsuba reference: mean and per-pixel standard error of the mean.
struct Reference {
    mean: Rgb,
    se: Rgb,
}

fn load_reference(name: &str) -> Reference {
    let load = |file: String| {
        let path = refs_dir().join(&file);
        let img = read_image(&path).unwrap_or_else(|e| {
            panic!(
                "cannot read reference {}: {e}\n(regenerate with tests/references/make_references.py)",
                path.display()
            )
        });
        Rgb::from_image(&img)
    };
    Reference {
        mean: load(format!("{name}.exr")),
        se: load(format!("{name}_se.exr")),
    }
}

// ---------------------------------------------------------------------------------------
// Statistics (Student's t p-values come from heliograph::math::stats)

/// One block and channel of the comparison.
#[derive(Clone, Debug)]
struct BlockTest {
    x: usize,
    y: usize,
    c: usize,
    hg: f64,
    reference: f64,
    sigma: f64,
    t: f64,
    p: f64,
}

/// The outcome of comparing a batch stack with a reference.
#[derive(Debug)]
struct Verdict {
    /// All block tests, worst (smallest p) first.
    tests: Vec<BlockTest>,
    /// Per-test significance level after the Bonferroni correction.
    threshold: f64,
}

impl Verdict {
    fn passed(&self) -> bool {
        self.tests.iter().all(|t| t.p >= self.threshold)
    }

    fn failures(&self) -> usize {
        self.tests.iter().filter(|t| t.p < self.threshold).count()
    }

    /// A table of the `n` worst blocks.
    fn worst(&self, n: usize) -> String {
        let mut s = String::from(
            "  block(x,y)  ch   heliograph    reference      sigma        t        p\n",
        );
        for b in self.tests.iter().take(n) {
            s += &format!(
                "  ({:3},{:3})  {}  {:11.5} {:11.5} {:10.2e} {:8.2} {:9.2e}\n",
                b.x,
                b.y,
                ["R", "G", "B"][b.c],
                b.hg,
                b.reference,
                b.sigma,
                b.t,
                b.p
            );
        }
        s
    }
}

/// Welch t-test of one block: heliograph batch means against the reference.
fn test_block(batch_means: &[f64], reference: f64, ref_se: f64) -> (f64, f64, f64, f64) {
    let b = batch_means.len() as f64;
    let hg = batch_means.iter().sum::<f64>() / b;
    let var_hg = batch_means.iter().map(|m| (m - hg).powi(2)).sum::<f64>() / (b - 1.0) / b;
    let var_ref = ref_se * ref_se;
    let floor = REL_FLOOR * reference.abs() + ABS_FLOOR;
    let var = var_hg + var_ref + floor * floor;
    let diff = hg - reference;
    let t = diff / var.sqrt();
    // Welch–Satterthwaite; the floor counts as exactly known.
    let denom = var_hg * var_hg / (b - 1.0) + var_ref * var_ref / (REF_BATCHES as f64 - 1.0);
    let dof = if denom > 0.0 {
        (var * var / denom).clamp(1.0, 1e6)
    } else {
        1e6
    };
    (hg, var.sqrt(), t, t_two_sided_p(t, dof))
}

/// Compares heliograph batches with a reference, block by block and channel by channel.
fn compare(batches: &[Rgb], reference: &Reference, block: usize, alpha: f64) -> Verdict {
    let (w, h) = (reference.mean.w, reference.mean.h);
    let mut tests = Vec::new();
    for y0 in (0..h).step_by(block) {
        for x0 in (0..w).step_by(block) {
            let (x1, y1) = ((x0 + block).min(w), (y0 + block).min(h));
            for c in 0..3 {
                let means: Vec<f64> = batches
                    .iter()
                    .map(|b| b.block_mean(x0, x1, y0, y1, c))
                    .collect();
                let r = reference.mean.block_mean(x0, x1, y0, y1, c);
                let se = reference.se.block_mean(x0, x1, y0, y1, c);
                let (hg, sigma, t, p) = test_block(&means, r, se);
                tests.push(BlockTest {
                    x: x0,
                    y: y0,
                    c,
                    hg,
                    reference: r,
                    sigma,
                    t,
                    p,
                });
            }
        }
    }
    tests.sort_by(|a, b| a.p.total_cmp(&b.p));
    let threshold = alpha / tests.len().max(1) as f64;
    Verdict { tests, threshold }
}

// ---------------------------------------------------------------------------------------
// Rendering and the per-case check

/// Renders `case` with the CPU backend in `HG_BATCHES` batches of `hg_spp` samples.
fn render_batches(case: &Case) -> Vec<Rgb> {
    let desc = xml::load_file(&case.scene, &case.defines).unwrap_or_else(|e| {
        panic!(
            "case {}: cannot load {}: {e}",
            case.name,
            case.scene.display()
        )
    });
    let scene = build_scene(&desc).unwrap_or_else(|e| {
        panic!(
            "case {}: cannot build {}: {e}",
            case.name,
            case.scene.display()
        )
    });
    (0..HG_BATCHES)
        .map(|k| {
            let opts = RenderOptions {
                spp: Some(case.hg_spp),
                seed: k as u64 + 1,
            };
            let img = cpu::render(&scene, &opts)
                .unwrap_or_else(|e| panic!("case {}: render failed: {e}", case.name));
            Rgb::from_image(&img)
        })
        .collect()
}

fn output_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    target.join("regression")
}

/// Writes heliograph's mean image and its difference to the reference for inspection.
fn write_outputs(name: &str, hg: &Rgb, reference: &Rgb) -> String {
    let dir = output_dir();
    let _ = std::fs::create_dir_all(&dir);
    let diff = hg.map(|x, y, c| hg.at(x, y, c) - reference.at(x, y, c));
    let (p_hg, p_diff) = (
        dir.join(format!("{name}_hg.exr")),
        dir.join(format!("{name}_diff.exr")),
    );
    let mut msg = String::new();
    for (p, img) in [(&p_hg, hg), (&p_diff, &diff)] {
        match write_image(p, &img.to_image()) {
            Ok(()) => msg += &format!("  wrote {}\n", p.display()),
            Err(e) => msg += &format!("  could not write {}: {e}\n", p.display()),
        }
    }
    msg
}

/// Renders a case and asserts that it matches its Mitsuba reference.
fn check_case(name: &str) {
    let case = case(name);
    let reference = load_reference(name);
    let batches = render_batches(&case);
    let (w, h) = (reference.mean.w, reference.mean.h);
    assert!(
        batches[0].w == w && batches[0].h == h,
        "case {name}: heliograph rendered {}x{}, the Mitsuba reference is {w}x{h}",
        batches[0].w,
        batches[0].h
    );
    let verdict = compare(&batches, &reference, case.block, ALPHA);
    if !verdict.passed() {
        let files = write_outputs(name, &mean_image(&batches), &reference.mean);
        panic!(
            "case {name} ({}): {} of {} block tests differ from the Mitsuba reference \
             (p < {:.2e}, {}x{} blocks, {HG_BATCHES} batches x {} spp); worst:\n{}{files}",
            case.scene.display(),
            verdict.failures(),
            verdict.tests.len(),
            verdict.threshold,
            case.block,
            case.block,
            case.hg_spp,
            verdict.worst(12)
        );
    }
}

/// One `#[test]` per case, so cases run in parallel and fail separately.
macro_rules! regression_cases {
    ($($name:ident),* $(,)?) => {
        /// Case names with a test function (checked against cases.txt).
        const TESTED: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                check_case(stringify!($name));
            }
        )*
    };
}

regression_cases!(
    cbox,
    cbox_depth2,
    cbox_depth3,
    seed,
    showcase,
    bitmap_uv_srgb,
    default_fov,
    one_sided,
    envmap_rotated,
    filter_box,
    filter_gaussian,
    checkerboard,
    bsdfs_constant,
    bsdfs_envmap,
    emitter_point,
    emitter_directional,
    emitter_area,
    emitter_spot,
    emitter_projector,
    meshes,
    crop,
    sensor_thinlens,
    sensor_orthographic,
    roughdielectric,
    principled,
    surface_data,
);

#[test]
fn every_listed_case_has_a_test_and_references() {
    let cases = read_cases();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names, TESTED,
        "cases.txt and the regression_cases! list differ"
    );
    for c in &cases {
        assert!(
            c.scene.is_file(),
            "case {}: no scene file {}",
            c.name,
            c.scene.display()
        );
        for f in [format!("{}.exr", c.name), format!("{}_se.exr", c.name)] {
            assert!(
                refs_dir().join(&f).is_file(),
                "case {}: missing reference {f}",
                c.name
            );
        }
        assert!(
            c.block >= 1 && c.hg_spp >= 1,
            "case {}: block and hg_spp must be >= 1",
            c.name
        );
    }
}

/// The criterion must reject wrong images of a real render: the reference scaled by 1.1,
/// and the reference upside down (what a flipped texture lookup would produce).
#[test]
fn criterion_rejects_wrong_references() {
    let case = case("seed");
    let batches = render_batches(&case);
    let reference = load_reference("seed");
    for (what, wrong) in [
        ("scaled by 1.1", reference.mean.scaled(1.1)),
        ("flipped vertically", reference.mean.flipped_vertically()),
    ] {
        let bad = Reference {
            mean: wrong,
            se: reference.se.clone(),
        };
        let v = compare(&batches, &bad, case.block, ALPHA);
        assert!(
            !v.passed(),
            "a reference {what} was accepted:\n{}",
            v.worst(5)
        );
    }
}

// ---------------------------------------------------------------------------------------
// Tests of the statistics on synthetic data (no renderer involved)

/// SplitMix64 → uniform and normal deviates (independent of the crate under test).
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// A 32x24 test image with gradients and a sharp, asymmetric edge.
fn truth() -> Rgb {
    Rgb::new(32, 24).map(|x, y, c| {
        let base = 0.2 + 0.5 * x as f64 / 31.0 + 0.1 * c as f64;
        if x < 12 && y < 8 {
            base + 0.6
        } else {
            base * (1.0 + 0.3 * (y as f64 / 23.0))
        }
    })
}

/// Noisy batches around `mean` with per-pixel relative noise `rel` per batch.
fn synthetic_batches(mean: &Rgb, n: usize, rel: f64, rng: &mut Rng) -> Vec<Rgb> {
    (0..n)
        .map(|_| mean.map(|x, y, c| mean.at(x, y, c) * (1.0 + rel * rng.normal())))
        .collect()
}

/// A synthetic reference: `mean` plus noise of the stated standard error.
fn synthetic_reference(mean: &Rgb, rel_se: f64, rng: &mut Rng) -> Reference {
    let se = mean.scaled(rel_se);
    let noisy = mean.map(|x, y, c| mean.at(x, y, c) + se.at(x, y, c) * rng.normal());
    Reference { mean: noisy, se }
}

#[test]
fn criterion_accepts_a_correct_renderer() {
    let mut rng = Rng(7);
    let t = truth();
    let reference = synthetic_reference(&t, 0.002, &mut rng);
    let batches = synthetic_batches(&t, HG_BATCHES, 0.05, &mut rng);
    let v = compare(&batches, &reference, 4, ALPHA);
    assert!(
        v.passed(),
        "correct synthetic image rejected:\n{}",
        v.worst(5)
    );
}

#[test]
fn criterion_false_failure_rate_is_at_most_alpha() {
    // 300 independent correct "renders" at a lenient alpha, noisy enough that the tolerance
    // floor is negligible: Bonferroni keeps the rate of failed cases at or below alpha
    // (about 0.095 for 288 independent tests; binomial(300, 0.095): mean 28.5, sd 5.1), and
    // a rate far below it would mean the test has little power.
    let (alpha, trials) = (0.1, 300);
    let mut rng = Rng(11);
    let t = truth();
    let mut failed = 0;
    for _ in 0..trials {
        let reference = synthetic_reference(&t, 0.001, &mut rng);
        let batches = synthetic_batches(&t, HG_BATCHES, 1.0, &mut rng);
        failed += usize::from(!compare(&batches, &reference, 4, alpha).passed());
    }
    assert!(
        (8..=45).contains(&failed),
        "{failed} of {trials} correct renders failed at alpha {alpha} (expected about 28)"
    );
}

#[test]
fn criterion_rejects_wrong_images() {
    let mut rng = Rng(3);
    let t = truth();
    let reference = synthetic_reference(&t, 0.002, &mut rng);
    let shifted = t.map(|x, y, c| t.at(x.saturating_sub(1), y, c));
    for (what, wrong) in [
        ("scaled by 1.1", t.scaled(1.1)),
        ("scaled by 1.03", t.scaled(1.03)),
        ("flipped vertically", t.flipped_vertically()),
        ("shifted by one pixel", shifted),
    ] {
        let batches = synthetic_batches(&wrong, HG_BATCHES, 0.05, &mut rng);
        let v = compare(&batches, &reference, 4, ALPHA);
        assert!(!v.passed(), "an image {what} was accepted:\n{}", v.worst(5));
    }
}
