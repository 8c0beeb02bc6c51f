//! The CUDA backend.
//!
//! Built with the `cuda` cargo feature, [`CudaBackend`] binds the device's primary
//! context (the one PyTorch, JAX and CuPy use), owns ONE non-blocking render stream on
//! which every upload, clear and launch is enqueued, compiles the kernels of
//! `renderer/kernels/` with NVRTC to a CUBIN for the device's own architecture
//! (cached in memory and on disk, see [`cache`]), and reads results back by waiting on
//! an event recorded after the last write — never on the whole device.
//!
//! Without the feature the same API exists, and [`CudaBackend::new`] returns
//! [`Error::CudaUnavailable`]; this module (and [`nvrtc_lib`]'s loader, which needs
//! cudarc) is the only place that looks at the feature.
//!
//! What runs on the GPU: the `direct` and `path` integrators as megakernels (one thread
//! = one sample path; `renderer/kernels/render.cu`) over every shape, BSDF, texture and
//! emitter plugin (one `.cuh` twin per plugin under `renderer/kernels/`), the `ptracer`
//! integrator (one thread = one light path, splatted onto the film with float atomics:
//! `renderer/kernels/integrators/ptracer.cuh`; the same image as the CPU in expectation,
//! its last bits depending on the GPU's schedule), and the `depth` integrator with a
//! one-pixel box filter (not `aov`: [`check_supported`] refuses it). The render module is compiled per
//! scene plugin set ([`features`]: only the kinds present, small sets inlined whole,
//! tiny scenes without the BVH), and `path` can also run as wavefront kernels
//! (`kernels/wavefront.cuh`, [`RenderTuning`]), measured slower on the Cornell box and
//! so not the default. Both use the CPU's per-(pixel,
//! sample) random streams, so CPU and GPU consume identical random numbers (`ptracer`
//! the CPU's per-light-path streams). The `direct`/`path` film is
//! reconstructed without float atomics or a sample buffer: each sample is placed by
//! importance sampling the reconstruction filter (truncated to the crop window) and
//! weighted by filter / pdf, and a pixel's samples of a wave, which share one warp
//! segment, are summed by a fixed butterfly and added to the pixel by one lane, so the
//! same scene, spp and seed give the same bits (kernels/film.cuh).

pub mod cache;
pub mod elementwise;
pub mod features;
pub mod kernels;
pub mod nvrtc_lib;
pub mod renderer;

/// The register cap of a backward module (`kernels/backward.cuh`, differentiable
/// rendering): its two traces and probes spill under the render modules' cap
/// (`RenderTuning::max_registers`, 64); on the H200 the spills' loads were its leading
/// stall, and 128 registers took `hg_backward` from 2.00 to 1.70 ms on the benchmark task
/// (tests/bench_diff_results.md).
pub const BACKWARD_MAX_REGISTERS: u32 = 128;

#[cfg(feature = "cuda")]
mod device;
#[cfg(feature = "cuda")]
pub use device::{
    check_process, device_count, forked, libraries_present, live_device_tensors,
    nvrtc_compile_offline, CudaBackend, CudaFilm, DeviceScene, DeviceTensor, ForeignArray,
    RenderKernelInfo, RenderTuning, MAX_DIMS,
};

#[cfg(not(feature = "cuda"))]
mod stub;
#[cfg(not(feature = "cuda"))]
pub use stub::{
    check_process, device_count, forked, libraries_present, live_device_tensors,
    nvrtc_compile_offline, CudaBackend, CudaFilm, DeviceScene, DeviceTensor, ForeignArray,
    MAX_DIMS,
};

use crate::error::{Error, Result};
use crate::integrators::AnyIntegrator;
use crate::rfilters::AnyFilter;
use crate::scene::RenderSetup;

/// Bounce launches of the wavefront `path` integrator (kernels/wavefront.cuh) after its
/// start kernel, which takes the first step: each launch advances every live path by one
/// step and compacts the survivors; the last one runs the remaining paths to their end
/// (an unbounded `max_depth` ends by Russian roulette). Past ~12 steps few paths live on
/// and a launch would cost more than the lanes it keeps busy.
pub const WAVEFRONT_BOUNCES: u32 = 12;

/// The bounce launches for paths of at most `max_depth` steps (the start took one).
pub fn wavefront_bounce_launches(max_depth: u32) -> u32 {
    max_depth.saturating_sub(1).min(WAVEFRONT_BOUNCES)
}

/// The oldest architecture supported: Turing. The kernels need Volta's independent
/// thread scheduling (7.0), but NVRTC 13, the version the CUDA bindings are built for,
/// generates code for 7.5 and newer only (`nvrtcGetSupportedArchs`: sm_75 to sm_121 in
/// 13.0); [`check_nvrtc_targets`] catches a GPU newer than the NVRTC found.
pub const MIN_COMPUTE_CAPABILITY: (i32, i32) = (7, 5);

/// The oldest driver supported (`cuDriverGetVersion`): CUDA 13.0, the driver API the
/// bindings are built for (driver branch 580 and newer).
pub const MIN_DRIVER_VERSION: i32 = 13000;

/// Checks the driver's CUDA version (`cuDriverGetVersion`, e.g. 12080 for 12.8) against
/// [`MIN_DRIVER_VERSION`]; an older driver lacks entry points the bindings call.
pub fn check_driver_version(version: i32) -> Result<()> {
    if version >= MIN_DRIVER_VERSION {
        return Ok(());
    }
    Err(Error::CudaUnavailable(format!(
        "the NVIDIA driver supports CUDA {}.{}, and heliograph needs CUDA {}.{} or newer \
         (driver 580 or newer); update the NVIDIA driver",
        version / 1000,
        (version % 1000) / 10,
        MIN_DRIVER_VERSION / 1000,
        (MIN_DRIVER_VERSION % 1000) / 10
    )))
}

/// What the backend found out about its device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// NVRTC target, e.g. `sm_90`.
    pub arch: String,
    /// Streaming multiprocessors.
    pub sm_count: i32,
    /// Device memory in bytes.
    pub total_mem: usize,
    /// `cuDriverGetVersion` (e.g. 13000 for CUDA 13.0).
    pub driver_version: i32,
    /// NVRTC version (major, minor).
    pub nvrtc_version: (i32, i32),
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (ma, mi) = self.compute_capability;
        write!(
            f,
            "CUDA device {}: {} (compute {ma}.{mi}, {}, {} SMs, {:.1} GiB), driver {}.{}, NVRTC {}.{}",
            self.ordinal,
            self.name,
            self.arch,
            self.sm_count,
            self.total_mem as f64 / (1u64 << 30) as f64,
            self.driver_version / 1000,
            (self.driver_version % 1000) / 10,
            self.nvrtc_version.0,
            self.nvrtc_version.1
        )
    }
}

/// The NVRTC target for compute capability `cc`, or an error for devices older than
/// [`MIN_COMPUTE_CAPABILITY`].
pub fn arch_for(cc: (i32, i32)) -> Result<String> {
    if cc < MIN_COMPUTE_CAPABILITY || cc.1 < 0 || cc.1 > 9 {
        return Err(Error::CudaUnavailable(format!(
            "unsupported GPU architecture: compute capability {}.{} (heliograph needs {}.{} or \
             newer: Turing, as NVRTC 13 targets no older GPU)",
            cc.0, cc.1, MIN_COMPUTE_CAPABILITY.0, MIN_COMPUTE_CAPABILITY.1
        )));
    }
    Ok(format!("sm_{}{}", cc.0, cc.1))
}

/// Checks that NVRTC can generate code for compute capability `cc`; `supported` is
/// NVRTC's list (`nvrtcGetSupportedArchs`, e.g. 75, 80, ..., 120 for CUDA 13).
pub fn check_nvrtc_targets(cc: (i32, i32), supported: &[i32], nvrtc: (i32, i32)) -> Result<()> {
    let want = cc.0 * 10 + cc.1;
    if supported.is_empty() || supported.contains(&want) {
        return Ok(());
    }
    let list: Vec<String> = supported.iter().map(|a| format!("sm_{a}")).collect();
    Err(Error::CudaUnavailable(format!(
        "unsupported GPU architecture: NVRTC {}.{} cannot generate code for sm_{want} \
         (it supports {})",
        nvrtc.0,
        nvrtc.1,
        list.join(", ")
    )))
}

/// NVRTC options for kernel module `module` on `arch`; part of the cache key.
///
/// The `depth` module is compiled with `--fmad=false` and IEEE division and square
/// root: its arithmetic rounds exactly as the CPU's, and depth images are bit-identical
/// to the CPU backend (a GPU test checks that). The `direct`/`path` modules (and the
/// plugin parity module, which checks their plugin code) are compared with the CPU
/// statistically, so they keep the GPU's fused multiply-add (one rounding instead of
/// two) and take the GPU's approximate division and square root (`--prec-div=false
/// --prec-sqrt=false`: within 2 ulp, a reciprocal and a multiply instead of a dozen
/// instructions with a slow path; a Cornell box path step divides about twenty times).
pub fn compile_options(arch: &str, module: &str) -> Vec<String> {
    let exact = module == kernels::DEPTH_MODULE;
    let mut o = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        "--generate-line-info".into(),
    ];
    if exact {
        o.push("--fmad=false".into());
    } else {
        o.extend(["--fmad=true", "--prec-div=false", "--prec-sqrt=false"].map(String::from));
    }
    o
}

/// Checks that the GPU kernels support `scene` as configured, with a message naming
/// what is not supported yet.
///
/// Supported: the `direct`, `path` and `ptracer` integrators with every reconstruction
/// filter, and every shape (`shapegroup`/`instance` included), BSDF, texture and emitter
/// plugin (`ptracer` with the `perspective` sensor only, as on the CPU); `depth` with a
/// box filter of radius <= 0.5 only. Not supported: `aov` (its extra film channels
/// render on the CPU).
pub fn check_supported(setup: &RenderSetup) -> Result<()> {
    if let AnyIntegrator::Ptracer(_) = setup.integrator {
        // what the CPU refuses too: another sensor than `perspective`, nesting in `aov`
        crate::integrators::Ptracer::check_setup(&setup.sensor, setup.aov.is_some(), None)?;
    }
    if setup.aov.is_some() {
        return Err(Error::Render(
            "the CUDA backend does not render the \"aov\" integrator; render this scene on \
             the CPU backend: variant \"cpu_rgb\" (or Mitsuba's \"scalar_rgb\" / \
             \"llvm_ad_rgb\"), or --backend cpu on the command line"
                .into(),
        ));
    }
    match (&setup.integrator, setup.sensor.film.rfilter) {
        (AnyIntegrator::Depth(_), AnyFilter::Box { radius }) if radius <= 0.5 => return Ok(()),
        (AnyIntegrator::Depth(_), _) => {}
        _ => return Ok(()),
    }
    Err(Error::Render(format!(
        "the CUDA backend does not support the \"depth\" integrator with the filter {:?} \
         yet (only a box of radius <= 0.5); use the CPU backend for this scene",
        setup.sensor.film.rfilter
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_below_turing_are_refused() {
        assert_eq!(arch_for((9, 0)).unwrap(), "sm_90");
        assert_eq!(arch_for((7, 5)).unwrap(), "sm_75");
        assert_eq!(arch_for((12, 0)).unwrap(), "sm_120");
        let e = arch_for((7, 0)).unwrap_err().to_string();
        assert!(
            e.contains("7.0") && e.contains("7.5") && e.contains("unavailable"),
            "{e}"
        );
        assert!(arch_for((6, 1)).is_err() && arch_for((5, 2)).is_err());
        let cuda13 = [75, 80, 86, 87, 89, 90, 100, 120];
        assert!(check_nvrtc_targets((9, 0), &cuda13, (13, 0)).is_ok());
        let e = check_nvrtc_targets((7, 0), &cuda13, (13, 0))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sm_70") && e.contains("NVRTC 13.0") && e.contains("sm_75"),
            "{e}"
        );
        assert!(
            check_nvrtc_targets((7, 0), &[], (13, 0)).is_ok(),
            "unknown list: let NVRTC decide"
        );
        let opts = compile_options("sm_90", kernels::RENDER_MODULE);
        assert!(opts.contains(&"--gpu-architecture=sm_90".to_string()));
        assert!(opts.contains(&"--fmad=true".to_string()));
        assert!(opts.contains(&"--prec-div=false".to_string()));
        let depth = compile_options("sm_90", kernels::DEPTH_MODULE);
        assert!(depth.contains(&"--fmad=false".to_string()));
        assert!(!depth.iter().any(|o| o.starts_with("--prec-")));
    }

    #[test]
    fn ptracer_is_supported_with_the_sensors_the_cpu_supports() {
        use crate::desc::xml;
        use crate::integrators::Ptracer;
        use crate::scene::build_scene;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
        let desc = xml::load_file(&root.join("cbox.xml"), &[("res".into(), "16".into())]);
        let mut scene = build_scene(&desc.unwrap()).unwrap();
        scene.integrator = AnyIntegrator::Ptracer(Ptracer::default());
        check_supported(&scene).unwrap();
        // swapped onto an orthographic sensor (a render with another sensor): refused
        // with the CPU's reason
        scene.sensor.camera.kind = crate::sensors::camera::CAMERA_ORTHOGRAPHIC;
        let e = check_supported(&scene).unwrap_err().to_string();
        assert!(
            e.contains("\"ptracer\" integrator needs a \"perspective\" sensor"),
            "{e}"
        );
    }

    #[test]
    fn drivers_older_than_cuda_13_are_refused_with_both_versions() {
        assert!(check_driver_version(13000).is_ok());
        assert!(check_driver_version(13020).is_ok());
        let e = check_driver_version(12080).unwrap_err().to_string();
        assert!(
            e.starts_with("CUDA unavailable:") && e.contains("CUDA 12.8") && e.contains("13.0"),
            "{e}"
        );
    }

    #[test]
    fn device_info_prints_name_arch_and_versions() {
        let d = DeviceInfo {
            ordinal: 0,
            name: "NVIDIA H200".into(),
            compute_capability: (9, 0),
            arch: "sm_90".into(),
            sm_count: 132,
            total_mem: 141 << 30,
            driver_version: 13000,
            nvrtc_version: (13, 0),
        };
        let s = d.to_string();
        assert!(
            s.contains("H200") && s.contains("sm_90") && s.contains("132 SMs"),
            "{s}"
        );
        assert!(s.contains("driver 13.0") && s.contains("NVRTC 13.0"), "{s}");
    }

    #[test]
    fn without_the_feature_or_a_gpu_new_is_a_clear_error() {
        // On the build machine (no driver) both builds must return an error, not panic.
        if libraries_present().is_ok() {
            return; // a machine with a driver: covered by tests/gpu_depth.rs
        }
        let e = match CudaBackend::new(0) {
            Ok(_) => panic!("a backend without a driver"),
            Err(e) => e.to_string(),
        };
        assert!(e.starts_with("CUDA unavailable:"), "{e}");
        assert!(device_count().is_err());
    }
}
