//! Opening NVRTC and making cudarc use it (see the parent module); needs cudarc, so
//! only in builds with the `cuda` feature.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use cudarc::nvrtc::sys as nsys;

use super::{
    candidates, check_file, check_version, config, not_found, unusable, Candidate, Nvrtc, Origin,
    ENV_VAR, SONAME,
};
use crate::error::{Error, Result};

static LOADED: OnceLock<Nvrtc> = OnceLock::new();
/// Serialises [`load`]: two threads opening the backend must not race the preload.
static LOADING: Mutex<()> = Mutex::new(());

/// A candidate preloaded, with its file.
type Chosen = (Candidate, PathBuf);
/// A place tried and why it did not serve.
type Tried = (String, String);

/// `nvrtcVersion`'s signature in every NVRTC release.
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;

/// The NVRTC in use, if [`load`] succeeded in this process.
pub fn loaded() -> Option<Nvrtc> {
    LOADED.get().cloned()
}

/// Finds NVRTC (module docs), makes cudarc use it and checks its version; the
/// outcome of the first success is kept for the process. Needs no GPU or driver.
pub fn load() -> Result<Nvrtc> {
    if let Some(n) = LOADED.get() {
        return Ok(n.clone());
    }
    let _serial = LOADING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(n) = LOADED.get() {
        return Ok(n.clone());
    }
    let (flag, paths) = {
        let c = config();
        (c.flag.clone(), c.python_paths.clone())
    };
    let env = std::env::var_os(ENV_VAR);
    let (chosen, mut tried) = preload_first(candidates(flag.as_deref(), env.as_deref(), &paths))?;
    // SAFETY: only tries to dlopen the library under cudarc's names.
    if !unsafe { nsys::is_culib_present() } {
        let system = Candidate {
            origin: Origin::System,
            path: None,
        };
        tried.push((system.describe(), "none found".into()));
        return Err(not_found(&tried));
    }
    let (path, version) = cudarc_nvrtc()?;
    let origin = origin_of(chosen.as_ref(), &path, version)?;
    if let Err(why) = check_version(version) {
        return Err(unusable(&path.display().to_string(), &why));
    }
    // Only now, for the NVRTC cudarc uses: a builtins library loaded for another
    // copy would answer this one's dlopen too.
    let dir = std::fs::canonicalize(&path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    preload_builtins(dir.as_deref().or(path.parent()), version)
        .map_err(|why| unusable(&path.display().to_string(), &why))?;
    let n = Nvrtc {
        path,
        version,
        origin,
    };
    Ok(LOADED.get_or_init(|| n).clone())
}

/// Preloads the first candidate with a path that is a usable NVRTC; returns it (None
/// when only the system loader is left) and the places that were not, with why. An
/// explicit candidate that is not usable is an error.
fn preload_first(candidates: Vec<Candidate>) -> Result<(Option<Chosen>, Vec<Tried>)> {
    let mut tried = Vec::new();
    for c in candidates {
        let Some(path) = c.path.clone() else {
            break; // the system loader: cudarc's own search
        };
        match preload(&path) {
            Ok(()) => return Ok((Some((c, path)), tried)),
            Err(why) if c.is_explicit() => return Err(unusable(&c.describe(), &why)),
            Err(why) => tried.push((c.describe(), why)),
        }
    }
    Ok((None, tried))
}

/// Where the NVRTC cudarc resolved (`path`, `version`) came from, given the file
/// preloaded for it: when cudarc found another file first, that is accepted only if
/// the preloaded one was not named by the user and the other is a 13.x.
fn origin_of(chosen: Option<&Chosen>, path: &Path, version: (i32, i32)) -> Result<Origin> {
    let Some((c, file)) = chosen else {
        return Ok(Origin::System);
    };
    if same_file(file, path) {
        return Ok(c.origin);
    }
    let shadowed = check_version(version).err();
    if !c.is_explicit() && shadowed.is_none() {
        return Ok(Origin::System);
    }
    let why = shadowed
        .unwrap_or_else(|| format!("NVRTC {}.{}, not the file named", version.0, version.1));
    Err(Error::CudaUnavailable(format!(
        "{}: cudarc's search by name (libnvrtc.so first, then libnvrtc.so.13, ...) finds \
         {} instead ({why}): an unversioned libnvrtc.so on the loader path (a CUDA \
         toolkit's), or another NVRTC this process loaded earlier; take that folder off \
         LD_LIBRARY_PATH (or the ldconfig configuration)",
        c.describe(),
        path.display(),
    )))
}

/// Opens `path` and keeps it open for the life of the process when it is an NVRTC of
/// the right version and SONAME (so cudarc's `dlopen` of that name returns it);
/// otherwise closes it again, so that a wrong library cannot answer cudarc's search
/// either.
fn preload(path: &Path) -> Result<(), String> {
    check_file(path)?;
    // SAFETY: loading runs the library's initialisers; NVRTC's have no requirements.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| format!("could not be loaded: {e}"))?;
    // SAFETY: VersionFn is nvrtcVersion's signature.
    let f = unsafe { lib.get::<VersionFn>(b"nvrtcVersion\0") }
        .map(|s| *s)
        .map_err(|_| "not an NVRTC library (it has no nvrtcVersion)".to_string())?;
    let version = call_version(f)?;
    check_version(version)?;
    if !loaded_as(SONAME) {
        return Err(format!(
            "its SONAME is not {SONAME}, the name cudarc asks the loader for; use the \
             {SONAME} file itself"
        ));
    }
    // Never unloaded: cudarc holds plain pointers into it for the rest of the process.
    std::mem::forget(lib);
    Ok(())
}

/// NVRTC opens its builtins library (`libnvrtc-builtins.so.MAJOR.MINOR`) by bare name
/// when it first compiles, so a wheel's NVRTC, whose folder no loader path names,
/// would fail there; opening the one next to it first (kept open) makes NVRTC's
/// `dlopen` return it, as for NVRTC itself. Without one next to it the loader must
/// find it: an error now says so instead of a compile failing later.
fn preload_builtins(dir: Option<&Path>, version: (i32, i32)) -> Result<(), String> {
    let name = format!("libnvrtc-builtins.so.{}.{}", version.0, version.1);
    let beside = dir.map(|d| d.join(&name)).filter(|p| p.is_file());
    let opened = match &beside {
        // SAFETY: as for NVRTC.
        Some(p) => unsafe { libloading::Library::new(p) },
        // SAFETY: as for NVRTC.
        None => unsafe { libloading::Library::new(&name) },
    };
    match opened {
        Ok(lib) => {
            // Kept for the process, like NVRTC.
            std::mem::forget(lib);
            Ok(())
        }
        Err(e) => Err(format!(
            "NVRTC needs {name}, which is {} ({e})",
            match (&beside, dir) {
                (Some(_), _) => "next to it but could not be loaded".to_string(),
                (None, Some(d)) => format!("neither in {} nor on the loader path", d.display()),
                (None, None) => "not on the loader path".to_string(),
            }
        )),
    }
}

/// Whether an object answering to `name` (its file name or SONAME) is loaded: what a
/// later `dlopen(name)` from cudarc or NVRTC would return without a search.
#[cfg(unix)]
fn loaded_as(name: &str) -> bool {
    let flags = libc::RTLD_LAZY | libc::RTLD_NOLOAD;
    // SAFETY: RTLD_NOLOAD never loads anything; the handle only bumps a count.
    unsafe { libloading::os::unix::Library::open(Some(name), flags) }.is_ok()
}

#[cfg(not(unix))]
fn loaded_as(_name: &str) -> bool {
    true
}

/// Calls `nvrtcVersion`.
fn call_version(f: VersionFn) -> Result<(i32, i32), String> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints.
    match unsafe { f(&mut major, &mut minor) } {
        0 => Ok((major, minor)),
        e => Err(format!("nvrtcVersion failed (error {e})")),
    }
}

/// The file and version of the NVRTC cudarc opened (its handle is opened here if
/// cudarc had not yet).
fn cudarc_nvrtc() -> Result<(PathBuf, (i32, i32))> {
    let unavailable = |e: String| Error::CudaUnavailable(format!("NVRTC: {e}"));
    let f = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: is_culib_present() found a library under cudarc's names, so
        // culib() opens it rather than panicking (the guard covers the rest).
        let lib = unsafe { nsys::culib() };
        // SAFETY: VersionFn is nvrtcVersion's signature.
        unsafe { lib.get::<VersionFn>(b"nvrtcVersion\0") }.map(|s| *s)
    }))
    .map_err(|_| unavailable("cudarc could not open the library".into()))?
    .map_err(|e| {
        unavailable(format!(
            "the library cudarc opened has no nvrtcVersion: {e}"
        ))
    })?;
    let path = library_file(f as *const c_void)
        .ok_or_else(|| unavailable("cannot tell which file cudarc opened".into()))?;
    let version = call_version(f).map_err(unavailable)?;
    Ok((path, version))
}

/// The shared library that holds `addr`.
#[cfg(unix)]
fn library_file(addr: *const c_void) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: Dl_info is plain data; all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables and fills `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated name owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes())))
}

#[cfg(not(unix))]
fn library_file(_addr: *const c_void) -> Option<PathBuf> {
    None
}

/// Whether two paths name the same file (links resolved).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
