//! The CUBIN cache: compiled kernel modules kept in memory for the process and on
//! disk across processes, so that a second process skips NVRTC (the
//! first render takes under 0.5 s with a warm disk cache).
//!
//! Key: a stable 64-bit FNV-1a hash of the assembled source, the architecture
//! (`sm_90`), the driver and NVRTC versions, the compile options and the crate
//! version. Directory: `$HELIOGRAPH_CACHE_DIR`, else `$XDG_CACHE_HOME/heliograph`,
//! else `$HOME/.cache/heliograph`. A file is `HGCUBIN1`, the key, the payload length
//! and an FNV checksum of the payload, then the CUBIN; anything that does not check
//! out is ignored and recompiled, and only regular files are read. Files are written
//! to a temporary name and renamed, so concurrent processes never see half a file. A
//! cache that cannot be written (read-only, full, not a directory) never fails a
//! render: the module is compiled, one warning per process says so, and no partial
//! file is left behind. All of this is plain Rust and tested without a GPU.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::error::Result;

/// File magic and format version.
const MAGIC: &[u8; 8] = b"HGCUBIN1";
/// Header bytes: magic, key, payload length, payload checksum.
const HEADER: usize = 32;

/// Everything a compiled module depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheKey {
    /// The module name (for messages and file names).
    pub module: String,
    /// The assembled source.
    pub source: String,
    /// Target architecture, e.g. `sm_90`.
    pub arch: String,
    /// `cuDriverGetVersion`, e.g. 13000.
    pub driver_version: i32,
    /// NVRTC (major, minor).
    pub nvrtc_version: (i32, i32),
    /// NVRTC options.
    pub options: Vec<String>,
}

/// FNV-1a over `bytes`, continuing from `h`.
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// FNV-1a offset basis.
const FNV_BASIS: u64 = 0xcbf29ce484222325;

impl CacheKey {
    /// The stable hash of every input (each field length-prefixed, so fields cannot run together).
    pub fn hash(&self) -> u64 {
        let mut h = FNV_BASIS;
        let mut field = |b: &[u8]| {
            h = fnv1a(h, &(b.len() as u64).to_le_bytes());
            h = fnv1a(h, b);
        };
        field(crate::VERSION.as_bytes());
        field(self.module.as_bytes());
        field(self.source.as_bytes());
        field(self.arch.as_bytes());
        field(&self.driver_version.to_le_bytes());
        field(&self.nvrtc_version.0.to_le_bytes());
        field(&self.nvrtc_version.1.to_le_bytes());
        for o in &self.options {
            field(o.as_bytes());
        }
        h
    }

    /// The cache file name: module stem, architecture and hash.
    pub fn file_name(&self) -> String {
        let stem: String = self
            .module
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("{stem}-{}-{:016x}.cubin", self.arch, self.hash())
    }
}

/// The cache directory from environment lookups (`get(name)`).
pub fn cache_dir_from(get: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let non_empty = |k: &str| get(k).filter(|v| !v.is_empty());
    if let Some(d) = non_empty("HELIOGRAPH_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = non_empty("XDG_CACHE_HOME") {
        return Some(Path::new(&d).join("heliograph"));
    }
    non_empty("HOME").map(|h| Path::new(&h).join(".cache").join("heliograph"))
}

/// The cache directory of this process's environment.
pub fn default_cache_dir() -> Option<PathBuf> {
    cache_dir_from(|k| std::env::var(k).ok())
}

/// The bytes of a cache file holding `payload` under `key`.
pub fn encode(key: u64, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER + payload.len());
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&key.to_le_bytes());
    v.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    v.extend_from_slice(&fnv1a(FNV_BASIS, payload).to_le_bytes());
    v.extend_from_slice(payload);
    v
}

/// The payload of a cache file, or `None` when it is not a complete, intact file for `key`.
pub fn decode(key: u64, bytes: &[u8]) -> Option<&[u8]> {
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(bytes.get(i..i + 8)?.try_into().ok()?))
    };
    if bytes.get(..8)? != MAGIC || word(8)? != key {
        return None;
    }
    let len = usize::try_from(word(16)?).ok()?;
    let payload = bytes.get(HEADER..)?;
    (payload.len() == len && fnv1a(FNV_BASIS, payload) == word(24)?).then_some(payload)
}

/// Where a module came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheSource {
    /// This process had compiled or loaded it before.
    Memory,
    /// Read from the disk cache.
    Disk,
    /// Compiled by NVRTC now.
    Compiled,
}

/// How a module was obtained, for the GPU summary (first compile vs cached).
#[derive(Clone, Debug)]
pub struct ModuleStats {
    /// The module name.
    pub module: String,
    /// Where the CUBIN came from.
    pub source: CacheSource,
    /// Seconds spent obtaining the CUBIN (compile or read).
    pub seconds: f64,
    /// The cache file, when a disk cache is in use.
    pub file: Option<PathBuf>,
}

/// The process-wide in-memory cache: key hash → CUBIN.
fn memory() -> &'static Mutex<HashMap<u64, Arc<Vec<u8>>>> {
    static MEM: OnceLock<Mutex<HashMap<u64, Arc<Vec<u8>>>>> = OnceLock::new();
    MEM.get_or_init(Default::default)
}

/// A CUBIN cache over an optional directory.
#[derive(Clone, Debug)]
pub struct ProgramCache {
    /// The disk cache directory (`None`: memory only).
    pub dir: Option<PathBuf>,
}

impl ProgramCache {
    /// A cache in the default directory.
    pub fn new() -> Self {
        ProgramCache {
            dir: default_cache_dir(),
        }
    }

    /// The CUBIN for `key`: from memory, else disk, else `compile()` (then stored in
    /// both). Disk failures only cost a recompile; compile errors are returned.
    pub fn get_or_compile(
        &self,
        key: &CacheKey,
        compile: impl FnOnce() -> Result<Vec<u8>>,
    ) -> Result<(Arc<Vec<u8>>, ModuleStats)> {
        let start = Instant::now();
        let h = key.hash();
        let file = self.dir.as_ref().map(|d| d.join(key.file_name()));
        let stats = |source| ModuleStats {
            module: key.module.clone(),
            source,
            seconds: start.elapsed().as_secs_f64(),
            file: file.clone(),
        };
        if let Some(c) = memory().lock().ok().and_then(|m| m.get(&h).cloned()) {
            return Ok((c, stats(CacheSource::Memory)));
        }
        let from_disk = file
            .as_deref()
            .and_then(read_cache_file)
            .and_then(|b| decode(h, &b).map(<[u8]>::to_vec));
        let (cubin, source) = match from_disk {
            Some(c) => (c, CacheSource::Disk),
            None => {
                let c = compile()?;
                if let Some(f) = &file {
                    // best effort: a read-only or full disk only costs the next process a compile
                    if let Err(e) = write_atomically(f, &encode(h, &c)) {
                        warn_unwritable(f, &e);
                    }
                }
                (c, CacheSource::Compiled)
            }
        };
        let cubin = Arc::new(cubin);
        if let Ok(mut m) = memory().lock() {
            m.insert(h, cubin.clone());
        }
        Ok((cubin, stats(source)))
    }
}

impl Default for ProgramCache {
    fn default() -> Self {
        Self::new()
    }
}

/// The bytes of cache file `path`, or `None` when it cannot be read or is not a regular
/// file (opening a named pipe put in its place would wait for a writer forever).
fn read_cache_file(path: &Path) -> Option<Vec<u8>> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    std::fs::read(path).ok()
}

/// Writes `bytes` to a temporary file beside `path` and renames it into place; on any
/// failure (a full disk stops the write part-way) the temporary file is removed.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// Says on stderr, once per process, that a compiled module could not be saved to the
/// disk cache: rendering goes on, but every new process compiles the kernels again.
fn warn_unwritable(file: &Path, e: &std::io::Error) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if WARNED.swap(true, Ordering::Relaxed) {
        return;
    }
    eprintln!(
        "heliograph: warning: cannot write the kernel cache file {} ({e}); rendering goes on, \
         but each new process compiles the CUDA kernels again. Point HELIOGRAPH_CACHE_DIR at \
         a writable directory with free space to keep them.",
        file.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{CudaError, Error};

    /// A key unique to one test (the memory cache is shared by the whole test process).
    fn key(tag: &str) -> CacheKey {
        CacheKey {
            module: "depth.cu".into(),
            source: format!("extern \"C\" __global__ void k() {{}} // {tag}"),
            arch: "sm_90".into(),
            driver_version: 13000,
            nvrtc_version: (13, 0),
            options: vec!["--fmad=false".into()],
        }
    }

    fn forget(k: &CacheKey) {
        memory().lock().unwrap().remove(&k.hash());
    }

    fn tmp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hg-cache-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn every_input_changes_the_key() {
        let base = key("k");
        let h = base.hash();
        let variants = [
            CacheKey {
                source: base.source.clone() + " ",
                ..base.clone()
            },
            CacheKey {
                arch: "sm_80".into(),
                ..base.clone()
            },
            CacheKey {
                driver_version: 12080,
                ..base.clone()
            },
            CacheKey {
                nvrtc_version: (13, 1),
                ..base.clone()
            },
            CacheKey {
                options: vec![],
                ..base.clone()
            },
            CacheKey {
                module: "path.cu".into(),
                ..base.clone()
            },
            // field boundaries matter: moving a character between options is a new key
            CacheKey {
                options: vec!["--fmad=fals".into(), "e".into()],
                ..base.clone()
            },
        ];
        for v in &variants {
            assert_ne!(v.hash(), h, "{v:?}");
        }
        assert_eq!(key("k").hash(), h, "deterministic");
        // FNV-1a test vector: "a" -> af63dc4c8601ec8c
        assert_eq!(fnv1a(FNV_BASIS, b"a"), 0xaf63dc4c8601ec8c);
        let name = base.file_name();
        assert!(
            name.starts_with("depth_cu-sm_90-") && name.ends_with(".cubin"),
            "{name}"
        );
    }

    #[test]
    fn cache_dir_follows_the_environment_in_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let all = env(&[
            ("HELIOGRAPH_CACHE_DIR", "/a"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(cache_dir_from(all), Some(PathBuf::from("/a")));
        let xdg = env(&[
            ("HELIOGRAPH_CACHE_DIR", ""),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(cache_dir_from(xdg), Some(PathBuf::from("/x/heliograph")));
        let home = env(&[("HOME", "/h")]);
        assert_eq!(
            cache_dir_from(home),
            Some(PathBuf::from("/h/.cache/heliograph"))
        );
        assert_eq!(cache_dir_from(env(&[])), None);
    }

    #[test]
    fn encode_decode_round_trip_and_reject_damage() {
        let payload: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
        let f = encode(42, &payload);
        assert_eq!(decode(42, &f), Some(&payload[..]));
        assert_eq!(decode(43, &f), None, "other key");
        assert_eq!(decode(42, &f[..f.len() - 1]), None, "truncated");
        let mut bad = f.clone();
        bad[HEADER + 5] ^= 1;
        assert_eq!(decode(42, &bad), None, "flipped payload bit");
        let mut bad = f.clone();
        bad[0] = b'X';
        assert_eq!(decode(42, &bad), None, "magic");
        assert_eq!(decode(42, &f[..10]), None, "short header");
        assert_eq!(decode(42, &encode(42, &[])), Some(&[][..]));
    }

    #[test]
    fn compiles_once_then_serves_memory_then_disk() {
        let dir = tmp_dir("flow");
        let cache = ProgramCache {
            dir: Some(dir.clone()),
        };
        let k = key("flow");
        let mut compiles = 0;
        let (c, s) = cache
            .get_or_compile(&k, || {
                compiles += 1;
                Ok(vec![1, 2, 3])
            })
            .unwrap();
        assert_eq!((*c).clone(), vec![1, 2, 3]);
        assert_eq!(s.source, CacheSource::Compiled);
        let file = dir.join(k.file_name());
        assert_eq!(s.file.as_deref(), Some(file.as_path()));
        assert_eq!(
            decode(k.hash(), &std::fs::read(&file).unwrap()),
            Some(&[1u8, 2, 3][..])
        );
        let never = || -> Result<Vec<u8>> { panic!("must not compile again") };
        let (_, s) = cache.get_or_compile(&k, never).unwrap();
        assert_eq!(s.source, CacheSource::Memory);
        forget(&k); // as a fresh process would see it
        let (c, s) = cache.get_or_compile(&k, never).unwrap();
        assert_eq!((s.source, (*c).clone()), (CacheSource::Disk, vec![1, 2, 3]));
        // a damaged file is recompiled and rewritten
        forget(&k);
        std::fs::write(&file, b"HGCUBIN1garbage").unwrap();
        let (c, s) = cache.get_or_compile(&k, || Ok(vec![9])).unwrap();
        assert_eq!((s.source, (*c).clone()), (CacheSource::Compiled, vec![9]));
        assert_eq!(compiles, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn compile_errors_pass_through_and_cache_nothing() {
        let dir = tmp_dir("err");
        let cache = ProgramCache {
            dir: Some(dir.clone()),
        };
        let k = key("err");
        let e = cache
            .get_or_compile(&k, || {
                Err(Error::Cuda(CudaError::Compile {
                    module: "depth.cu".into(),
                    error: "NVRTC_ERROR_COMPILATION".into(),
                    options: Vec::new(),
                    log: "depth.cu(3): error: boom".into(),
                }))
            })
            .unwrap_err();
        assert!(e.to_string().contains("depth.cu(3)"), "{e}");
        assert!(!dir.join(k.file_name()).exists());
        let (_, s) = cache.get_or_compile(&k, || Ok(vec![5])).unwrap();
        assert_eq!(s.source, CacheSource::Compiled);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `dir` made read-only, or `None` where that does not stop writes (as root).
    fn read_only(dir: &Path) -> Option<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        let probe = dir.join("probe");
        match std::fs::write(&probe, b"x") {
            Err(_) => Some(()),
            Ok(()) => {
                let _ = std::fs::remove_file(&probe);
                None
            }
        }
    }

    fn writable(dir: &Path) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_read_only_directory_serves_what_it_holds_and_compiles_the_rest() {
        let dir = tmp_dir("ro-dir");
        std::fs::create_dir_all(&dir).unwrap();
        let (held, missing, damaged) = (key("ro-held"), key("ro-missing"), key("ro-damaged"));
        std::fs::write(dir.join(held.file_name()), encode(held.hash(), &[4, 4])).unwrap();
        std::fs::write(dir.join(damaged.file_name()), b"HGCUBIN1 cut short").unwrap();
        let before = names(&dir);
        let cache = ProgramCache {
            dir: Some(dir.clone()),
        };
        if read_only(&dir).is_some() {
            let never = || -> Result<Vec<u8>> { panic!("the file is in the cache") };
            let (c, s) = cache.get_or_compile(&held, never).unwrap();
            assert_eq!((s.source, (*c).clone()), (CacheSource::Disk, vec![4, 4]));
            for k in [&missing, &damaged] {
                let (c, s) = cache.get_or_compile(k, || Ok(vec![5])).unwrap();
                assert_eq!((s.source, (*c).clone()), (CacheSource::Compiled, vec![5]));
            }
            assert_eq!(names(&dir), before, "nothing written, nothing left behind");
        } else {
            eprintln!("chmod 0555 does not stop this user's writes: /proc/self stands in");
        }
        writable(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        // a directory no one can create files in, root included
        let proc = ProgramCache {
            dir: Some(PathBuf::from("/proc/self")),
        };
        let k = key("ro-proc");
        let (c, s) = proc.get_or_compile(&k, || Ok(vec![6])).unwrap();
        assert_eq!((s.source, (*c).clone()), (CacheSource::Compiled, vec![6]));
        // and a cache directory below one: create_dir_all fails
        forget(&k);
        let below = ProgramCache {
            dir: Some(PathBuf::from("/proc/self/heliograph/cache")),
        };
        let (_, s) = below.get_or_compile(&k, || Ok(vec![6])).unwrap();
        assert_eq!(s.source, CacheSource::Compiled);
    }

    /// Damages a good cache file (the bytes, the key hash).
    type Spoil = fn(Vec<u8>, u64) -> Vec<u8>;

    #[test]
    fn damaged_files_are_recompiled_and_rewritten() {
        let dir = tmp_dir("damaged");
        std::fs::create_dir_all(&dir).unwrap();
        let cache = ProgramCache {
            dir: Some(dir.clone()),
        };
        let good = |k: &CacheKey| encode(k.hash(), &[1u8; 300]);
        let damage: [(&str, Spoil); 7] = [
            ("empty", |_, _| Vec::new()),
            ("truncated header", |f, _| f[..20].to_vec()),
            ("truncated payload", |f, _| f[..f.len() - 7].to_vec()),
            ("trailing bytes", |mut f, _| {
                f.push(0);
                f
            }),
            ("flipped bit", |mut f, _| {
                f[HEADER + 100] ^= 0x10;
                f
            }),
            ("another key's file", |_, h| encode(h ^ 1, &[1u8; 300])),
            ("a huge length", |mut f, _| {
                f[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
                f
            }),
        ];
        for (what, spoil) in damage {
            let k = key(&format!("damaged-{what}"));
            let file = dir.join(k.file_name());
            std::fs::write(&file, spoil(good(&k), k.hash())).unwrap();
            let (c, s) = cache.get_or_compile(&k, || Ok(vec![2; 300])).unwrap();
            assert_eq!((s.source, c.len()), (CacheSource::Compiled, 300), "{what}");
            assert_eq!(
                decode(k.hash(), &std::fs::read(&file).unwrap()),
                Some(&[2u8; 300][..]),
                "{what}: rewritten"
            );
            forget(&k);
            let never = || -> Result<Vec<u8>> { panic!("{what}: served from disk now") };
            assert_eq!(
                cache.get_or_compile(&k, never).unwrap().1.source,
                CacheSource::Disk
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_cache_file_that_cannot_be_read_is_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp_dir("unreadable");
        std::fs::create_dir_all(&dir).unwrap();
        let cache = ProgramCache {
            dir: Some(dir.clone()),
        };
        // no read permission (root reads it anyway: then it is a plain recompile)
        let k = key("unreadable-mode");
        let file = dir.join(k.file_name());
        std::fs::write(&file, encode(k.hash() ^ 1, &[1])).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
        let (c, s) = cache.get_or_compile(&k, || Ok(vec![8])).unwrap();
        assert_eq!((s.source, (*c).clone()), (CacheSource::Compiled, vec![8]));
        assert_eq!(
            decode(k.hash(), &std::fs::read(&file).unwrap()),
            Some(&[8u8][..])
        );
        // a link to nowhere, and a link to a file whose reads fail (root included)
        for (tag, target) in [("dangling", "no-such-file"), ("eio", "/proc/self/mem")] {
            let k = key(&format!("unreadable-{tag}"));
            let file = dir.join(k.file_name());
            std::os::unix::fs::symlink(target, &file).unwrap();
            let (c, s) = cache.get_or_compile(&k, || Ok(vec![8])).unwrap();
            assert_eq!(
                (s.source, (*c).clone()),
                (CacheSource::Compiled, vec![8]),
                "{tag}"
            );
            assert!(
                !file.symlink_metadata().unwrap().is_symlink(),
                "{tag}: replaced"
            );
            assert_eq!(
                decode(k.hash(), &std::fs::read(&file).unwrap()),
                Some(&[8u8][..])
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_directory_or_a_pipe_in_place_of_a_cache_file_is_passed_over() {
        let dir = tmp_dir("not-a-file");
        std::fs::create_dir_all(&dir).unwrap();
        let cache = ProgramCache {
            dir: Some(dir.clone()),
        };
        // a directory: read and rename both fail; it is left alone
        let k = key("a-directory");
        let file = dir.join(k.file_name());
        std::fs::create_dir_all(file.join("inside")).unwrap();
        let (c, s) = cache.get_or_compile(&k, || Ok(vec![3])).unwrap();
        assert_eq!((s.source, (*c).clone()), (CacheSource::Compiled, vec![3]));
        assert!(file.join("inside").is_dir());
        // a named pipe: opening it to read would wait for a writer forever
        let k = key("a-pipe");
        let file = dir.join(k.file_name());
        let made = std::process::Command::new("mkfifo").arg(&file).status();
        if made.is_ok_and(|s| s.success()) {
            let (tx, rx) = std::sync::mpsc::channel();
            let (cache, k2) = (cache.clone(), k.clone());
            std::thread::spawn(move || {
                let _ = tx.send(
                    cache
                        .get_or_compile(&k2, || Ok(vec![3]))
                        .map(|r| r.1.source),
                );
            });
            let got = rx.recv_timeout(std::time::Duration::from_secs(20));
            if got.is_err() {
                // release the reader blocked in open(), then fail
                let _ = std::fs::OpenOptions::new().write(true).open(&file);
            }
            assert!(
                matches!(got, Ok(Ok(CacheSource::Compiled))),
                "a pipe in the cache: {got:?}"
            );
            assert!(
                std::fs::metadata(&file).unwrap().is_file(),
                "replaced by the new file"
            );
        } else {
            eprintln!("mkfifo not available: the pipe case is not run");
        }
        let leftovers: Vec<String> = names(&dir)
            .into_iter()
            .filter(|n| n.contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Set in the child process of the full-disk test: the cache directory to use.
    const FULL_DISK_CHILD: &str = "HELIOGRAPH_TEST_FULL_DISK_DIR";

    #[test]
    fn a_full_disk_costs_a_compile_warns_once_and_leaves_no_partial_file() {
        let payload = vec![3u8; 64 << 10];
        if let Some(dir) = std::env::var_os(FULL_DISK_CHILD) {
            // the child: files are limited to one block, so each 64 KiB write fails part-way
            let cache = ProgramCache {
                dir: Some(PathBuf::from(dir)),
            };
            for tag in ["full-a", "full-b", "full-c"] {
                let (c, s) = cache
                    .get_or_compile(&key(tag), || Ok(payload.clone()))
                    .unwrap();
                assert_eq!((s.source, &*c), (CacheSource::Compiled, &payload), "{tag}");
            }
            return;
        }
        let dir = tmp_dir("full");
        std::fs::create_dir_all(&dir).unwrap();
        // a module cached before the disk filled up: it must stay intact
        let kept = key("full-kept");
        let kept_bytes = encode(kept.hash(), &payload);
        std::fs::write(dir.join(kept.file_name()), &kept_bytes).unwrap();
        let stderr = crate::io::rerun_on_a_full_disk(
            concat!(
                module_path!(),
                "::a_full_disk_costs_a_compile_warns_once_and_leaves_no_partial_file"
            ),
            FULL_DISK_CHILD,
            &dir,
        );
        assert_eq!(names(&dir), vec![kept.file_name()], "no partial file left");
        assert_eq!(
            std::fs::read(dir.join(kept.file_name())).unwrap(),
            kept_bytes
        );
        assert_eq!(
            stderr.matches("cannot write the kernel cache").count(),
            1,
            "one warning for three failed writes:\n{stderr}"
        );
        assert!(stderr.contains("HELIOGRAPH_CACHE_DIR"), "{stderr}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unwritable_directory_still_compiles() {
        // a directory path that is a file: writes fail, the module is still returned
        let f = std::env::temp_dir().join(format!("hg-cache-file-{}", std::process::id()));
        std::fs::write(&f, b"x").unwrap();
        let cache = ProgramCache {
            dir: Some(f.clone()),
        };
        let (c, s) = cache.get_or_compile(&key("ro"), || Ok(vec![7])).unwrap();
        assert_eq!((s.source, (*c).clone()), (CacheSource::Compiled, vec![7]));
        let _ = std::fs::remove_file(&f);
    }
}
