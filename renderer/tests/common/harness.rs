//! What the GPU and host-kernel tests share: where the repository is, the skip/fail
//! policy for a missing GPU, and compiling the CUDA kernels as C++ for the host.

use std::path::{Path, PathBuf};
use std::process::Command;

use heliograph::backend::cuda::kernels;

/// The repository root: `$HELIOGRAPH_ROOT` (set by the GPU bundle), else the checkout
/// this was built in.
pub fn repo_root() -> PathBuf {
    if let Ok(r) = std::env::var("HELIOGRAPH_ROOT") {
        return PathBuf::from(r);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// The little-endian float32 values of a file a host kernel driver wrote.
pub fn read_f32s(path: &Path) -> Vec<f32> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The backend on device 0, or `None` (after printing why) when the tests must skip.
/// A GPU that is present but broken fails the test; `HELIOGRAPH_REQUIRE_GPU=1` (set by
/// `tests/gpu/run_gpu_checks.sh`) turns a missing GPU into a failure too.
#[cfg(feature = "cuda")]
pub fn backend_or_skip(test: &str) -> Option<heliograph::backend::cuda::CudaBackend> {
    use heliograph::backend::cuda::{device_count, CudaBackend};
    let require = std::env::var("HELIOGRAPH_REQUIRE_GPU").is_ok_and(|v| v == "1");
    let why = match device_count() {
        Ok(0) => "the driver reports no CUDA device".to_string(),
        Ok(_) => {
            return Some(CudaBackend::new(0).unwrap_or_else(|e| {
                panic!("{test}: a GPU is present but the CUDA backend failed: {e}")
            }))
        }
        Err(e) => e.to_string(),
    };
    assert!(
        !require,
        "{test}: HELIOGRAPH_REQUIRE_GPU=1 but no usable GPU: {why}"
    );
    println!("SKIP: {test}: no GPU ({why})");
    None
}

/// Compiles kernel module `module` with the host driver `tests/gpu/<driver>` into
/// `dir/<exe>`, or `None` (after printing why) when there is no C++ compiler.
pub fn build_host(dir: &Path, module: &str, driver: &str, exe: &str) -> Option<PathBuf> {
    build_host_with(dir, "", module, driver, exe)
}

/// [`build_host`] of `module` after the `#define`s of `prelude` (a specialised render
/// module: backend/cuda/features.rs), in its own folder `dir/<exe>.d` (the driver
/// includes the source by a fixed name).
pub fn build_host_with(
    dir: &Path,
    prelude: &str,
    module: &str,
    driver: &str,
    exe: &str,
) -> Option<PathBuf> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    if Command::new(&cxx).arg("--version").output().is_err() {
        println!("SKIP: no C++ compiler ({cxx}) to run the kernels on the host");
        return None;
    }
    let src = kernels::assemble(module).expect("kernel source");
    let dir = &dir.join(format!("{exe}.d"));
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("kernel_src.cu"), format!("{prelude}{src}")).unwrap();
    let exe = dir.join(exe);
    let shim = repo_root().join("tests/gpu");
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-O2", "-ffp-contract=off", "-Wall"])
        .args([
            "-Wno-unused-function",
            "-Wno-unused-variable",
            "-Wno-unknown-pragmas",
        ])
        .arg("-I")
        .arg(&shim)
        .arg("-I")
        .arg(dir)
        .arg(shim.join(driver))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the C++ compiler");
    assert!(
        out.status.success(),
        "the kernels do not compile as C++:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}
