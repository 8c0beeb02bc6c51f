//! The scene fuzzer shared by `tests/fuzz_scene.rs` (a short seeded pass and the
//! committed corpus, in `cargo test`) and `examples/fuzz_scene.rs` (long runs in a
//! supervised child process with a per-case time limit and a memory limit).
//!
//! A case is a mutated scene file: one of the seed files (`tests/fuzz/corpus/`,
//! `tests/fuzz/regressions/`, the parser's `tests/fixtures/xml/`, the shipped
//! `scenes/`) with a few structure-aware
//! mutations (tags and attributes inserted, deleted, duplicated, renamed; values
//! replaced by NaN, infinities, huge and boundary numbers; ids and refs shuffled;
//! includes, deep nesting, raw byte edits). Case `i` of seed `s` is a pure function
//! of `(s, i)` and the seed files, so a finding is reproduced from its number.
//!
//! Running a case parses it with `xml::load_file`, builds it and, when its film is
//! tiny, renders one sample per pixel. Any result or error is fine; a panic, an
//! abort, a hang or running out of memory is a finding.
#![allow(dead_code)]

pub mod mutate;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use heliograph::backend::cpu;
use heliograph::desc::xml;
use heliograph::render::RenderOptions;
use heliograph::scene::build_scene;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("renderer/ has a parent")
        .to_path_buf()
}

/// The seed files, in a fixed order.
pub fn seed_files() -> Vec<(PathBuf, String)> {
    let root = repo_root();
    let mut out = Vec::new();
    for dir in [
        root.join("renderer/tests/fuzz/corpus"),
        root.join("renderer/tests/fuzz/regressions"),
        root.join("renderer/tests/fixtures/xml"),
        root.join("scenes"),
    ] {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "xml"))
            .collect();
        paths.sort();
        for p in paths {
            if let Ok(text) = std::fs::read_to_string(&p) {
                out.push((p, text));
            }
        }
    }
    out
}

/// The texts cases start from: the shipped scenes once, the fuzz seeds and the
/// regressions three times (the shipped scenes load meshes, an environment map and a
/// roughplastic BSDF, whose albedo table takes 0.4 s: drawn as often as the rest,
/// they would take most of the fuzzer's time).
pub fn seed_pool() -> Vec<String> {
    let mut pool = Vec::new();
    for (path, text) in seed_files() {
        let shipped = path.parent().is_some_and(|d| d.ends_with("scenes"));
        let copies = if shipped { 1 } else { 3 };
        pool.extend(std::iter::repeat_n(text, copies));
    }
    pool
}

/// What one case did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Parsed and built (and rendered when tiny).
    Ok,
    /// A clean error.
    Error(String),
}

/// A directory laid out for cases: `scenes/case.xml` (the case), include targets
/// next to it, and `assets` linked to the repository's, so that `../assets/...`
/// paths of the shipped scenes resolve.
pub fn prepare_dir(dir: &Path) -> std::io::Result<PathBuf> {
    let scenes = dir.join("scenes");
    std::fs::create_dir_all(&scenes)?;
    let files = [
        (
            "inc_a.xml",
            "<scene version=\"3.0.0\"><include filename=\"inc_b.xml\"/></scene>",
        ),
        (
            "inc_b.xml",
            "<scene version=\"3.0.0\"><include filename=\"inc_a.xml\"/></scene>",
        ),
        (
            "ok.xml",
            "<scene version=\"3.0.0\"><bsdf type=\"diffuse\" id=\"inc_mat\"/></scene>",
        ),
        ("object.xml", "<bsdf type=\"conductor\" id=\"inc_obj\"/>"),
        (
            "bad.xml",
            "<scene version=\"3.0.0\"><bsdf type=\"diffuse\"></scene>",
        ),
    ];
    for (name, text) in files {
        std::fs::write(scenes.join(name), text)?;
    }
    let assets = dir.join("assets");
    if !assets.exists() {
        link_dir(&repo_root().join("assets"), &assets)?;
    }
    Ok(scenes.join("case.xml"))
}

#[cfg(unix)]
fn link_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(from, to)
}

#[cfg(not(unix))]
fn link_dir(_from: &Path, _to: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Films of at most this many pixels are rendered (1 spp) after building.
const RENDER_PIXELS: u64 = 1024;

/// Runs one case written to `case_path` (from [`prepare_dir`]).
pub fn run_case(text: &str, case_path: &Path) -> Outcome {
    if let Err(e) = std::fs::write(case_path, text) {
        return Outcome::Error(format!("cannot write the case: {e}"));
    }
    // `$fuzz` is defined where a mutation used it (a define no file names is an error)
    let defines: Vec<(String, String)> = if text.contains("$fuzz") {
        vec![("fuzz".into(), "1".into())]
    } else {
        Vec::new()
    };
    let desc = match xml::load_file(case_path, &defines) {
        Ok(d) => d,
        Err(e) => return Outcome::Error(e.to_string()),
    };
    let scene = match build_scene(&desc) {
        Ok(s) => s,
        Err(e) => return Outcome::Error(e.to_string()),
    };
    let [w, h] = scene.sensor.film.crop_size;
    if w as u64 * h as u64 <= RENDER_PIXELS {
        let opts = RenderOptions {
            spp: Some(1),
            seed: 0,
        };
        if let Err(e) = cpu::render(&Arc::new(scene), &opts) {
            return Outcome::Error(e.to_string());
        }
    }
    Outcome::Ok
}
