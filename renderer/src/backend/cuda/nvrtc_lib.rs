//! Where the CUDA backend finds NVRTC (CUDA's runtime compiler, `libnvrtc.so.13`), so
//! that `pip install "heliograph[cuda]"` is all a machine with an NVIDIA driver needs.
//!
//! Places, in order (the first that holds a usable NVRTC wins):
//!
//! 1. an explicit file: the CLI's `--nvrtc PATH`, else `$HELIOGRAPH_NVRTC`. When one is
//!    given it is the only place: a wrong path is an error naming it, never a silent
//!    fall-back to some other NVRTC;
//! 2. the `nvidia-cuda-nvrtc` wheel (the `cuda` extra of the Python package) under one
//!    of the Python environment's import folders, `<folder>/nvidia/cu13/lib/libnvrtc.so.13`;
//!    the Python package passes `sys.path` at import ([`set_python_paths`]), so NVRTC
//!    comes from where `import nvidia` would;
//! 3. the system loader (`LD_LIBRARY_PATH`, `ldconfig`: a CUDA toolkit).
//!
//! cudarc (`dynamic-loading`) opens NVRTC itself, by bare names (`libnvrtc.so`, ...,
//! `libnvrtc.so.13`, ...), and takes no path. So the chosen file is opened first, by its
//! full path, and kept open: a `dlopen` of a bare name first looks among the objects
//! already loaded for one whose SONAME matches, so cudarc's `dlopen("libnvrtc.so.13")`
//! returns that same object. One catch: cudarc tries `libnvrtc.so` (the unversioned
//! link a full toolkit installs) before `libnvrtc.so.13`, and when the loader finds one,
//! cudarc uses it instead. [`load`] therefore asks cudarc's own handle which file it
//! resolved and which version that is, and accepts it only if it is NVRTC 13 (and, for
//! an explicit path, only if it is that very file). NVRTC in turn opens its builtins
//! library (`libnvrtc-builtins.so.13.N`) by bare name on its first compile, which fails
//! for a wheel's folder that no loader path names: it is preloaded the same way, from
//! the folder of the NVRTC cudarc uses.
//!
//! The version: cudarc is built with the CUDA 13.0 bindings (`cuda-13000`), whose
//! symbols every NVRTC 13.x exports; 12.x lacks some and 14 may change them.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::Error;

/// The environment variable naming the NVRTC library file to use.
pub const ENV_VAR: &str = "HELIOGRAPH_NVRTC";

/// The NVRTC library's file name (and SONAME) for CUDA 13.
pub const SONAME: &str = "libnvrtc.so.13";

/// Where the `nvidia-cuda-nvrtc` wheel puts [`SONAME`], relative to its import folder.
pub const WHEEL_LIB_DIR: &str = "nvidia/cu13/lib";

/// The requirement the Python package's `cuda` extra declares (python/pyproject.toml;
/// a test checks that they agree).
pub const WHEEL_REQUIREMENT: &str = "nvidia-cuda-nvrtc>=13.0,<13.1";

/// The one command that installs a usable NVRTC.
pub const FIX: &str = "pip install \"heliograph[cuda]\"";

/// The NVRTC major version the CUDA bindings were built for (cudarc's `cuda-13000`).
pub const NVRTC_MAJOR: i32 = 13;

/// Where an NVRTC candidate comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The CLI's `--nvrtc PATH`.
    Flag,
    /// `$HELIOGRAPH_NVRTC`.
    Env,
    /// The `nvidia-cuda-nvrtc` wheel in a Python import folder.
    Wheel,
    /// Whatever the system loader finds under cudarc's names.
    System,
}

/// One place to look for NVRTC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Where it comes from.
    pub origin: Origin,
    /// The library file; `None` for [`Origin::System`] (a loader search by name).
    pub path: Option<PathBuf>,
}

impl Candidate {
    /// Whether the user named this file (no other place is tried then).
    pub fn is_explicit(&self) -> bool {
        matches!(self.origin, Origin::Flag | Origin::Env)
    }

    /// The place, for messages.
    pub fn describe(&self) -> String {
        let p = self
            .path
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match self.origin {
            Origin::Flag => format!("--nvrtc {p}"),
            Origin::Env => format!("{ENV_VAR}={p}"),
            Origin::Wheel => format!("the nvidia-cuda-nvrtc wheel: {p}"),
            Origin::System => {
                "the system loader (LD_LIBRARY_PATH, ldconfig): libnvrtc.so, libnvrtc.so.13, ..."
                    .into()
            }
        }
    }
}

/// What the CLI and the Python package told us (process-wide, set before the backend opens).
struct Config {
    flag: Option<PathBuf>,
    python_paths: Vec<PathBuf>,
}

static CONFIG: Mutex<Config> = Mutex::new(Config {
    flag: None,
    python_paths: Vec::new(),
});

fn config() -> std::sync::MutexGuard<'static, Config> {
    // The data is two plain values: a panic while holding the lock leaves them valid.
    CONFIG.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sets the CLI's `--nvrtc PATH` (it takes precedence over `$HELIOGRAPH_NVRTC`).
pub fn set_flag_path(path: Option<PathBuf>) {
    config().flag = path;
}

/// Sets the Python environment's import folders (`sys.path`), searched in order for
/// the NVRTC wheel.
pub fn set_python_paths(paths: Vec<PathBuf>) {
    config().python_paths = paths;
}

/// The places to look, in order, given the `--nvrtc` flag, the value of
/// `$HELIOGRAPH_NVRTC` (empty counts as unset) and the Python import folders.
pub fn candidates(
    flag: Option<&Path>,
    env: Option<&OsStr>,
    python_paths: &[PathBuf],
) -> Vec<Candidate> {
    // dlopen treats a name without a slash as a loader search, not a file: anchor it.
    let file = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    if let Some(p) = flag {
        return vec![Candidate {
            origin: Origin::Flag,
            path: Some(file(p)),
        }];
    }
    if let Some(e) = env.filter(|e| !e.is_empty()) {
        return vec![Candidate {
            origin: Origin::Env,
            path: Some(file(Path::new(e))),
        }];
    }
    let mut out: Vec<Candidate> = Vec::new();
    for dir in python_paths {
        let path = Some(file(&dir.join(WHEEL_LIB_DIR).join(SONAME)));
        if !out.iter().any(|c| c.path == path) {
            out.push(Candidate {
                origin: Origin::Wheel,
                path,
            });
        }
    }
    out.push(Candidate {
        origin: Origin::System,
        path: None,
    });
    out
}

/// Why NVRTC `version` (major, minor) cannot serve the CUDA 13 bindings, if it cannot.
pub fn check_version(version: (i32, i32)) -> Result<(), String> {
    let (major, minor) = version;
    let need =
        format!("heliograph's CUDA backend needs NVRTC {NVRTC_MAJOR}.x (CUDA {NVRTC_MAJOR})");
    if major < NVRTC_MAJOR {
        Err(format!("NVRTC {major}.{minor} is too old: {need}"))
    } else if major > NVRTC_MAJOR {
        Err(format!(
            "NVRTC {major}.{minor} is newer than the CUDA {NVRTC_MAJOR} interface this build \
             of heliograph uses: {need}"
        ))
    } else {
        Ok(())
    }
}

/// Checks a file named by the user before trying to load it: it must exist and not be a
/// folder.
pub fn check_file(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!(
            "is a folder; name the library file itself, e.g. {}",
            path.join(SONAME).display()
        ));
    }
    if !path.exists() {
        return Err("no such file".into());
    }
    Ok(())
}

/// The error when no usable NVRTC was found: each place tried with the reason, and the fix.
pub fn not_found(tried: &[(String, String)]) -> Error {
    let mut msg =
        format!("NVRTC {NVRTC_MAJOR} (CUDA's runtime compiler, {SONAME}) not found; tried:");
    for (place, why) in tried {
        msg.push_str(&format!("\n  - {place}: {why}"));
    }
    msg.push_str(&format!(
        "\nfix: {FIX} (it installs the {WHEEL_REQUIREMENT} wheel), or set {ENV_VAR} \
         (or the CLI's --nvrtc) to the path of {SONAME}"
    ));
    Error::CudaUnavailable(msg)
}

/// The error for an explicit or found NVRTC `place` that cannot be used, and why.
pub fn unusable(place: &str, why: &str) -> Error {
    Error::CudaUnavailable(format!("{place}: {why}; fix: {FIX}, or set {ENV_VAR} to the path of an NVRTC {NVRTC_MAJOR}.x {SONAME}"))
}

/// The NVRTC library the backend uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nvrtc {
    /// The file cudarc's handle resolves to.
    pub path: PathBuf,
    /// `nvrtcVersion` (major, minor).
    pub version: (i32, i32),
    /// Where it was found.
    pub origin: Origin,
}

#[cfg(feature = "cuda")]
pub use loader::{load, loaded};

/// Finding NVRTC: an error, in a build without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
pub fn load() -> crate::error::Result<Nvrtc> {
    Err(Error::CudaUnavailable(
        "this build of heliograph has no CUDA support (cargo feature \"cuda\")".into(),
    ))
}

/// The NVRTC in use: none, in a build without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
pub fn loaded() -> Option<Nvrtc> {
    None
}

/// Opening the library (cudarc is compiled in only with the `cuda` feature).
#[cfg(feature = "cuda")]
mod loader;

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(c: &[Candidate]) -> Vec<(Origin, Option<PathBuf>)> {
        c.iter().map(|c| (c.origin, c.path.clone())).collect()
    }

    #[test]
    fn the_flag_beats_the_environment_and_either_is_the_only_place() {
        let py = [PathBuf::from("/venv/site")];
        let c = candidates(
            Some(Path::new("/a/libnvrtc.so.13")),
            Some(OsStr::new("/b/libnvrtc.so.13")),
            &py,
        );
        assert_eq!(
            paths(&c),
            [(Origin::Flag, Some("/a/libnvrtc.so.13".into()))]
        );
        let c = candidates(None, Some(OsStr::new("/b/libnvrtc.so.13")), &py);
        assert_eq!(paths(&c), [(Origin::Env, Some("/b/libnvrtc.so.13".into()))]);
        assert!(c[0].is_explicit());
        assert_eq!(c[0].describe(), "HELIOGRAPH_NVRTC=/b/libnvrtc.so.13");
    }

    #[test]
    fn without_an_explicit_file_the_wheels_come_first_then_the_system() {
        let py = [
            PathBuf::from("/venv/site"),
            PathBuf::from("/user/site"),
            PathBuf::from("/venv/site"),
        ];
        // an empty variable counts as unset
        let c = candidates(None, Some(OsStr::new("")), &py);
        assert_eq!(
            paths(&c),
            [
                (
                    Origin::Wheel,
                    Some("/venv/site/nvidia/cu13/lib/libnvrtc.so.13".into())
                ),
                (
                    Origin::Wheel,
                    Some("/user/site/nvidia/cu13/lib/libnvrtc.so.13".into())
                ),
                (Origin::System, None),
            ]
        );
        assert!(!c[0].is_explicit() && !c[2].is_explicit());
        assert!(c[2].describe().contains("LD_LIBRARY_PATH"));
        assert_eq!(
            paths(&candidates(None, None, &[])),
            [(Origin::System, None)]
        );
    }

    #[test]
    fn a_relative_file_becomes_absolute_so_dlopen_does_not_search_for_it() {
        let c = candidates(None, Some(OsStr::new("libnvrtc.so.13")), &[]);
        let p = c[0].path.as_ref().unwrap();
        assert!(p.is_absolute() && p.ends_with("libnvrtc.so.13"), "{p:?}");
    }

    #[test]
    fn only_nvrtc_13_is_accepted_and_the_message_names_both_versions() {
        assert!(check_version((13, 0)).is_ok());
        assert!(
            check_version((13, 2)).is_ok(),
            "13.x keeps the 13.0 symbols"
        );
        let old = check_version((12, 4)).unwrap_err();
        assert!(
            old.contains("12.4") && old.contains("too old") && old.contains("13.x"),
            "{old}"
        );
        let new = check_version((14, 0)).unwrap_err();
        assert!(
            new.contains("14.0") && new.contains("newer") && new.contains("13.x"),
            "{new}"
        );
    }

    #[test]
    fn a_folder_or_a_missing_file_is_refused_before_loading() {
        let dir = std::env::temp_dir();
        let e = check_file(&dir).unwrap_err();
        assert!(e.contains("folder") && e.contains(SONAME), "{e}");
        let e = check_file(&dir.join("hg-no-such-nvrtc.so")).unwrap_err();
        assert_eq!(e, "no such file");
    }

    #[test]
    fn not_found_lists_every_place_and_the_fix() {
        let tried = [
            (
                "the nvidia-cuda-nvrtc wheel: /v/nvidia/cu13/lib/libnvrtc.so.13".to_string(),
                "no such file".to_string(),
            ),
            ("the system loader".to_string(), "none found".to_string()),
        ];
        let e = not_found(&tried).to_string();
        assert!(e.starts_with("CUDA unavailable: NVRTC 13"), "{e}");
        assert!(
            e.contains("/v/nvidia/cu13/lib/libnvrtc.so.13: no such file"),
            "{e}"
        );
        assert!(e.contains("the system loader: none found"), "{e}");
        assert!(e.contains(FIX) && e.contains(ENV_VAR), "{e}");
        let e = unusable("HELIOGRAPH_NVRTC=/x", "no such file").to_string();
        assert!(
            e.contains("HELIOGRAPH_NVRTC=/x: no such file") && e.contains(FIX),
            "{e}"
        );
    }

    #[test]
    fn the_python_extra_requires_the_wheel_this_lookup_expects() {
        let toml = include_str!("../../../../python/pyproject.toml");
        assert!(
            toml.contains(&format!("\"{WHEEL_REQUIREMENT}")),
            "python/pyproject.toml's cuda extra must require {WHEEL_REQUIREMENT}"
        );
    }
}
