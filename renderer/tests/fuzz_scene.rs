//! The scene fuzzer's share of `cargo test`: every seed and regression file, then a
//! short seeded pass of mutated cases, each of which must give a scene or an error
//! (no panic) in bounded time. Long runs: `cargo run --release --example fuzz_scene`.

mod fuzz;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fuzz::mutate::{generate, Rng};
use fuzz::{prepare_dir, run_case, seed_files, seed_pool, Outcome};

/// Seed of the pass in `cargo test` (the example's default is another).
const SEED: u64 = 0x5EED_0001;
/// Cases in the pass in `cargo test` (a few seconds in release builds).
const CASES: u64 = 400;
/// A case taking longer than this counts as a hang.
const CASE_LIMIT: Duration = Duration::from_secs(20);

fn case_path(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hg-fuzz-{test}-{}", std::process::id()));
    prepare_dir(&dir).expect("a writable temporary directory")
}

/// Runs one case, turning a panic into a test failure that says how to reproduce it.
fn check(text: &str, case: &std::path::Path, what: &str) -> Outcome {
    let t0 = Instant::now();
    let r = catch_unwind(AssertUnwindSafe(|| run_case(text, case)));
    let elapsed = t0.elapsed();
    let outcome = match r {
        Ok(o) => o,
        Err(_) => panic!("{what} panicked; input:\n{text}"),
    };
    assert!(
        elapsed < CASE_LIMIT,
        "{what} took {elapsed:?}; input:\n{text}"
    );
    outcome
}

#[test]
fn every_seed_and_regression_file_gives_a_scene_or_an_error() {
    let case = case_path("seeds");
    let seeds = seed_files();
    assert!(seeds.len() >= 10, "seed files missing: {}", seeds.len());
    for (path, text) in &seeds {
        let o = check(text, &case, &path.display().to_string());
        let is_corpus = path.parent().is_some_and(|d| d.ends_with("fuzz/corpus"));
        assert!(
            !is_corpus || o == Outcome::Ok,
            "{}: a seed should build: {o:?}",
            path.display()
        );
    }
}

#[test]
fn a_short_seeded_fuzz_pass_finds_nothing() {
    let case = case_path("pass");
    let seeds = seed_pool();
    let (mut ok, mut err) = (0, 0);
    for i in 0..CASES {
        let text = generate(&seeds, &mut Rng::for_case(SEED, i));
        let what = format!(
            "case {i} (reproduce: cargo run --release --example fuzz_scene -- --seed {SEED} --case {i})"
        );
        match check(&text, &case, &what) {
            Outcome::Ok => ok += 1,
            Outcome::Error(_) => err += 1,
        }
    }
    // mutations that leave a valid scene must stay common, or the pass tests little
    assert!(ok >= CASES / 10, "ok {ok}, errors {err}");
}
