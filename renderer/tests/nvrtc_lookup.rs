//! How the CUDA backend finds NVRTC (backend/cuda/nvrtc_lib.rs), end to end and without
//! a GPU: an explicit file, the wheel's layout in a Python import folder, an unversioned
//! `libnvrtc.so` on the loader path that cudarc opens first, and the errors for a wrong
//! file, a wrong version or none at all.
//!
//! A library a process has loaded stays loaded, so each case runs in a child process:
//! this test binary again, running only [`child_load`], configured by environment
//! variables, which prints what `nvrtc_lib::load()` returned (and whether NVRTC then
//! compiles the depth module). Fake NVRTC libraries (the right or wrong version or
//! SONAME) are built with the C compiler when there is one. The cases that need a real
//! NVRTC take it from `HELIOGRAPH_NVRTC` (tests/run_all.sh sets it to the wheel it
//! installs); without one they print SKIP, unless `HELIOGRAPH_REQUIRE_NVRTC=1`.
#![cfg(feature = "cuda")]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use heliograph::backend::cuda::{kernels, nvrtc_compile_offline, nvrtc_lib};

/// Set in a child: it runs [`child_load`] for real.
const CHILD: &str = "HG_NVRTC_LOOKUP_CHILD";
/// The child's Python import folders (a path list).
const CHILD_PY: &str = "HG_NVRTC_LOOKUP_PY";
/// The child's `--nvrtc` flag.
const CHILD_FLAG: &str = "HG_NVRTC_LOOKUP_FLAG";

/// The child side: loads NVRTC as configured and prints `LOADED path version origin`
/// and `COMPILED` (or `COMPILE-ERROR ...`), or `ERROR message`, each on a line of its
/// own (libtest's `test child_load ...` precedes the first).
#[test]
fn child_load() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    if let Some(p) = std::env::var_os(CHILD_PY) {
        nvrtc_lib::set_python_paths(std::env::split_paths(&p).collect());
    }
    nvrtc_lib::set_flag_path(std::env::var_os(CHILD_FLAG).map(PathBuf::from));
    match nvrtc_lib::load() {
        Ok(n) => {
            println!(
                "\nLOADED {} {}.{} {:?}",
                n.path.display(),
                n.version.0,
                n.version.1,
                n.origin
            );
            match nvrtc_compile_offline(kernels::DEPTH_MODULE, "", "sm_90", &[]) {
                Ok(_) => println!("COMPILED"),
                Err(e) => println!("COMPILE-ERROR {e}"),
            }
        }
        Err(e) => println!("\nERROR {}", e.to_string().replace('\n', " | ")),
    }
}

/// What a child reported.
#[derive(Debug)]
enum Outcome {
    Loaded {
        path: PathBuf,
        line: String,
        compiled: bool,
    },
    Error(String),
}

/// Runs [`child_load`] in a new process with `HELIOGRAPH_NVRTC` = `env` (unset if None),
/// the Python folders `py` and the flag `flag`.
fn child(env: Option<&Path>, py: &[PathBuf], flag: Option<&Path>) -> Outcome {
    child_with(env, py, flag, None)
}

/// [`child`] with `LD_LIBRARY_PATH` = `ld_path` (read by the loader at start-up).
fn child_with(
    env: Option<&Path>,
    py: &[PathBuf],
    flag: Option<&Path>,
    ld_path: Option<&Path>,
) -> Outcome {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    if let Some(p) = ld_path {
        cmd.env("LD_LIBRARY_PATH", p);
    }
    cmd.args(["--exact", "child_load", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env_remove(nvrtc_lib::ENV_VAR)
        .env_remove(CHILD_PY)
        .env_remove(CHILD_FLAG);
    if let Some(e) = env {
        cmd.env(nvrtc_lib::ENV_VAR, e);
    }
    if !py.is_empty() {
        cmd.env(CHILD_PY, std::env::join_paths(py).unwrap());
    }
    if let Some(f) = flag {
        cmd.env(CHILD_FLAG, f);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the child failed (a panic?):\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(l) = stdout.lines().find_map(|l| l.strip_prefix("LOADED ")) {
        let path = PathBuf::from(l.split(' ').next().unwrap());
        return Outcome::Loaded {
            path,
            line: l.to_string(),
            compiled: stdout.lines().any(|l| l == "COMPILED"),
        };
    }
    match stdout.lines().find_map(|l| l.strip_prefix("ERROR ")) {
        Some(e) => Outcome::Error(e.to_string()),
        None => panic!("the child printed no outcome:\n{stdout}"),
    }
}

fn error(o: Outcome) -> String {
    match o {
        Outcome::Error(e) => e,
        o => panic!("expected an error, got {o:?}"),
    }
}

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvrtc_lookup_{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The real NVRTC of this machine's tests: `HELIOGRAPH_NVRTC`, or None after printing
/// SKIP (a failure under `HELIOGRAPH_REQUIRE_NVRTC=1`).
fn real_nvrtc(test: &str) -> Option<PathBuf> {
    let p = std::env::var_os(nvrtc_lib::ENV_VAR).map(PathBuf::from);
    match p.filter(|p| p.is_file()) {
        Some(p) => Some(p),
        None => {
            let require = std::env::var("HELIOGRAPH_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
            assert!(
                !require,
                "{test}: HELIOGRAPH_REQUIRE_NVRTC=1 but HELIOGRAPH_NVRTC names no file"
            );
            println!("SKIP: {test}: set HELIOGRAPH_NVRTC to a libnvrtc.so.13 to run it");
            None
        }
    }
}

/// Builds a fake NVRTC in `dir`: a shared library `file` with SONAME `soname` whose
/// `nvrtcVersion` reports `version` (no such function when None); None without a C
/// compiler.
fn fake_nvrtc(
    dir: &Path,
    file: &str,
    soname: &str,
    version: Option<(i32, i32)>,
) -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let src = dir.join(format!("{file}.c"));
    let body = match version {
        Some((a, b)) => {
            format!("int nvrtcVersion(int* a, int* b) {{ *a = {a}; *b = {b}; return 0; }}\n")
        }
        None => "int not_nvrtc(void) { return 0; }\n".into(),
    };
    std::fs::write(&src, body).unwrap();
    let out = dir.join(file);
    let ok = Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(format!("-Wl,-soname,{soname}"))
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("SKIP: no C compiler ({cc}) to build a fake NVRTC");
        return None;
    }
    Some(out)
}

#[test]
fn an_explicit_file_that_is_missing_a_folder_or_not_a_library_is_named_in_the_error() {
    let dir = scratch("explicit");
    let missing = dir.join("nowhere/libnvrtc.so.13");
    let e = error(child(Some(&missing), &[], None));
    assert!(
        e.contains(&format!(
            "HELIOGRAPH_NVRTC={}: no such file",
            missing.display()
        )),
        "{e}"
    );
    assert!(e.contains("pip install \"heliograph[cuda]\""), "{e}");
    let e = error(child(Some(&dir), &[], None));
    assert!(
        e.contains("is a folder") && e.contains("libnvrtc.so.13"),
        "{e}"
    );
    let text = dir.join("libnvrtc.so.13");
    std::fs::write(&text, "not a library").unwrap();
    let e = error(child(Some(&text), &[], None));
    assert!(e.contains("could not be loaded"), "{e}");
    // the flag wins over the variable, and is named as such
    let e = error(child(Some(&text), &[], Some(&missing)));
    assert!(
        e.contains(&format!("--nvrtc {}: no such file", missing.display())),
        "{e}"
    );
}

#[test]
fn a_library_of_the_wrong_version_or_soname_is_refused_with_both_versions() {
    let dir = scratch("versions");
    let Some(old) = fake_nvrtc(&dir, "libnvrtc.so.12", "libnvrtc.so.12", Some((12, 4))) else {
        return;
    };
    let e = error(child(Some(&old), &[], None));
    assert!(
        e.contains("NVRTC 12.4 is too old") && e.contains("13.x"),
        "{e}"
    );
    let new = fake_nvrtc(&dir, "libnvrtc.so.14", "libnvrtc.so.14", Some((14, 0))).unwrap();
    let e = error(child(Some(&new), &[], None));
    assert!(
        e.contains("NVRTC 14.0 is newer") && e.contains("13.x"),
        "{e}"
    );
    let other = fake_nvrtc(&dir, "libnotnvrtc.so", "libnotnvrtc.so", None).unwrap();
    let e = error(child(Some(&other), &[], None));
    assert!(e.contains("not an NVRTC library"), "{e}");
    let renamed = fake_nvrtc(&dir, "libnvrtc.so.13", "libnvrtc-x.so", Some((13, 0))).unwrap();
    let e = error(child(Some(&renamed), &[], None));
    assert!(e.contains("SONAME is not libnvrtc.so.13"), "{e}");
    // the right version and SONAME, but no builtins library beside it or on the loader
    // path (which a system NVRTC would put there)
    if let Outcome::Loaded { line, .. } = child(None, &[], None) {
        println!("SKIP: a missing builtins library: this machine has an NVRTC ({line})");
        return;
    }
    let alone = scratch("versions_alone");
    let lone = fake_nvrtc(&alone, "libnvrtc.so.13", "libnvrtc.so.13", Some((13, 0))).unwrap();
    let e = error(child(Some(&lone), &[], None));
    assert!(
        e.contains("libnvrtc-builtins.so.13.0") && e.contains(&alone.display().to_string()),
        "{e}"
    );
}

#[test]
fn without_any_nvrtc_the_error_lists_every_place_and_the_fix() {
    let dir = scratch("none");
    let sites = [dir.join("venv-site"), dir.join("user-site")];
    match child(None, &sites, None) {
        Outcome::Error(e) => {
            for s in &sites {
                let want = format!(
                    "{}: no such file",
                    s.join("nvidia/cu13/lib/libnvrtc.so.13").display()
                );
                assert!(e.contains(&want), "{want} missing from: {e}");
            }
            assert!(
                e.contains("the system loader") && e.contains("none found"),
                "{e}"
            );
            assert!(e.contains("fix: pip install \"heliograph[cuda]\""), "{e}");
        }
        Outcome::Loaded { line, .. } => {
            println!("SKIP: this machine has a system NVRTC ({line}): nothing is missing");
        }
    }
}

#[test]
fn the_explicit_file_is_used_and_compiles() {
    let Some(real) = real_nvrtc("the_explicit_file_is_used_and_compiles") else {
        return;
    };
    match child(Some(&real), &[], None) {
        Outcome::Loaded {
            path,
            line,
            compiled,
        } => {
            assert_eq!(
                std::fs::canonicalize(&path).unwrap(),
                std::fs::canonicalize(&real).unwrap(),
                "{line}"
            );
            assert!(line.contains(" 13.") && line.ends_with("Env"), "{line}");
            assert!(compiled, "{line}: NVRTC did not compile the depth module");
        }
        o => panic!("{o:?}"),
    }
}

/// `dir/site/nvidia/cu13/lib` (the layout `pip install nvidia-cuda-nvrtc` gives) with
/// the library and its builtins linked from the real ones; returns that folder.
fn wheel_layout(dir: &Path, real: &Path) -> PathBuf {
    let lib = dir.join("site").join(nvrtc_lib::WHEEL_LIB_DIR);
    std::fs::create_dir_all(&lib).unwrap();
    let real = std::fs::canonicalize(real).unwrap();
    let real_dir = real.parent().unwrap();
    for entry in std::fs::read_dir(real_dir).unwrap() {
        let name: OsString = entry.unwrap().file_name();
        if name.to_string_lossy().starts_with("libnvrtc") {
            std::os::unix::fs::symlink(real_dir.join(&name), lib.join(&name)).unwrap();
        }
    }
    lib
}

/// The wheel's layout in the second of two import folders.
#[test]
fn the_wheel_layout_in_a_python_import_folder_is_found_and_used() {
    let test = "the_wheel_layout_in_a_python_import_folder_is_found_and_used";
    let Some(real) = real_nvrtc(test) else {
        return;
    };
    if let Outcome::Loaded { line, .. } = child(None, &[], None) {
        println!("SKIP: {test}: the system's NVRTC ({line}) would answer cudarc first");
        return;
    }
    let dir = scratch("wheel");
    let empty = dir.join("empty-site");
    std::fs::create_dir_all(&empty).unwrap();
    let lib = wheel_layout(&dir, &real);
    let site = dir.join("site");
    match child(None, &[empty, site.clone()], None) {
        Outcome::Loaded {
            path,
            line,
            compiled,
        } => {
            assert_eq!(path, lib.join(nvrtc_lib::SONAME), "{line}");
            assert!(line.ends_with("Wheel"), "{line}");
            assert!(compiled, "{line}: NVRTC did not compile the depth module");
        }
        o => panic!("{o:?}"),
    }
}

/// cudarc asks the loader for `libnvrtc.so` before `libnvrtc.so.13`: an unversioned
/// library on the loader path (a toolkit's) is used instead of the wheel's when it is a
/// 13.x, named in an error when it is not, and never replaces an explicit file.
#[test]
fn an_unversioned_libnvrtc_so_on_the_loader_path_shadows_the_wheel_and_is_named() {
    let test = "an_unversioned_libnvrtc_so_on_the_loader_path_shadows_the_wheel_and_is_named";
    let Some(real) = real_nvrtc(test) else {
        return;
    };
    if let Outcome::Loaded { line, .. } = child(None, &[], None) {
        println!("SKIP: {test}: this machine's own NVRTC ({line}) is on the loader path");
        return;
    }
    let dir = scratch("shadow");
    let lib = wheel_layout(&dir, &real);
    let site = [dir.join("site")];
    let (old, new) = (dir.join("old"), dir.join("new"));
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    let Some(old_lib) = fake_nvrtc(&old, "libnvrtc.so", "libnvrtc.so.12", Some((12, 4))) else {
        return;
    };
    let e = error(child_with(None, &site, None, Some(&old)));
    assert!(
        e.contains(&lib.join(nvrtc_lib::SONAME).display().to_string())
            && e.contains(&old_lib.display().to_string())
            && e.contains("NVRTC 12.4")
            && e.contains("LD_LIBRARY_PATH"),
        "{e}"
    );
    let new_lib = fake_nvrtc(&new, "libnvrtc.so", "libnvrtc.so.13", Some((13, 0))).unwrap();
    let builtins = "libnvrtc-builtins.so.13.0";
    std::os::unix::fs::symlink(lib.join(builtins), new.join(builtins)).unwrap();
    match child_with(None, &site, None, Some(&new)) {
        Outcome::Loaded { path, line, .. } => {
            assert_eq!(path, new_lib, "{line}");
            assert!(line.ends_with("System"), "{line}");
        }
        o => panic!("{o:?}"),
    }
    let e = error(child_with(Some(&real), &[], None, Some(&new)));
    assert!(
        e.starts_with("CUDA unavailable: HELIOGRAPH_NVRTC=")
            && e.contains(&new_lib.display().to_string()),
        "{e}"
    );
}
