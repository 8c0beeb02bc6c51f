//! Kernel modules: NVRTC compiles the embedded CUDA C (`renderer/kernels/`) to a
//! CUBIN for the device's architecture, through the program cache (memory and disk,
//! [`crate::backend::cuda::cache`]); a module is loaded once per process and its
//! kernels are looked up once ([`RenderKernels`]).

use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::{result as nres, sys as nsys, Ptx};

use super::tuning::RenderTuning;
use super::{code, guarded, CudaBackend};
use crate::backend::cuda::cache::{CacheKey, ModuleStats, ProgramCache};
use crate::backend::cuda::features::{depth_prelude, Features};
use crate::backend::cuda::{compile_options, kernels, BACKWARD_MAX_REGISTERS};
use crate::error::{CudaError, Error, Result};

/// What a loaded render module is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RenderModuleKey {
    pub(crate) features: Features,
    pub(crate) max_registers: u32,
    pub(crate) path_wavefront: bool,
    pub(crate) count_rays: bool,
    /// With the backward pass of differentiable rendering (`HG_BACKWARD`).
    pub(crate) backward: bool,
}

/// The kernels of one render module, looked up once.
pub(crate) struct RenderKernels {
    pub(crate) module: Arc<CudaModule>,
    pub(crate) render: CudaFunction,
    pub(crate) develop: CudaFunction,
    /// The wavefront `path` kernels (start, bounce, reduce) of a wavefront module.
    pub(crate) path: Option<[CudaFunction; 3]>,
    /// The light tracing kernels (trace and splat, develop) of a `ptracer` module.
    pub(crate) ptracer: Option<[CudaFunction; 2]>,
    /// The backward pass (film weights, backward) of a backward module.
    pub(crate) backward: Option<[CudaFunction; 2]>,
}

/// The modules a backend has loaded.
pub(crate) struct Modules {
    pub(crate) cache: ProgramCache,
    depth: Mutex<Option<Arc<CudaModule>>>,
    depth_instanced: Mutex<Option<Arc<CudaModule>>>,
    parity: Mutex<Option<Arc<CudaModule>>>,
    convert: Mutex<Option<Arc<CudaModule>>>,
    elementwise: Mutex<Option<Arc<CudaModule>>>,
    render: Mutex<HashMap<RenderModuleKey, Arc<RenderKernels>>>,
    stats: Mutex<Vec<ModuleStats>>,
}

impl Modules {
    pub(crate) fn new() -> Modules {
        Modules {
            cache: ProgramCache::new(),
            depth: Mutex::new(None),
            depth_instanced: Mutex::new(None),
            parity: Mutex::new(None),
            convert: Mutex::new(None),
            elementwise: Mutex::new(None),
            render: Mutex::new(HashMap::new()),
            stats: Mutex::new(Vec::new()),
        }
    }
}

impl CudaBackend {
    /// How each kernel module was obtained so far (compiled, disk or memory cache, time).
    pub fn module_stats(&self) -> Vec<ModuleStats> {
        self.modules
            .stats
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// The depth module (the `depth` integrator and the layout table), for scenes with
    /// `instances` (shapegroups: the two-level traversal) or without (no instance code
    /// compiled: [`depth_prelude`]).
    pub(crate) fn depth_module(&self, instances: bool) -> Result<Arc<CudaModule>> {
        let slot = if instances {
            &self.modules.depth_instanced
        } else {
            &self.modules.depth
        };
        self.fixed_module_with(slot, kernels::DEPTH_MODULE, depth_prelude(instances))
    }

    /// The plugin parity module (tests).
    pub(crate) fn parity_module(&self) -> Result<Arc<CudaModule>> {
        self.fixed_module(&self.modules.parity, kernels::PARITY_MODULE)
    }

    /// The array conversion module (imports of other frameworks' arrays).
    pub(crate) fn convert_module(&self) -> Result<Arc<CudaModule>> {
        self.fixed_module(&self.modules.convert, kernels::CONVERT_MODULE)
    }

    /// The TensorXf arithmetic module.
    pub(crate) fn elementwise_module(&self) -> Result<Arc<CudaModule>> {
        self.fixed_module(&self.modules.elementwise, kernels::ELEMENTWISE_MODULE)
    }

    fn fixed_module(
        &self,
        slot: &Mutex<Option<Arc<CudaModule>>>,
        name: &str,
    ) -> Result<Arc<CudaModule>> {
        self.fixed_module_with(slot, name, "")
    }

    /// [`Self::fixed_module`] compiled after the `#define`s of `prelude`.
    fn fixed_module_with(
        &self,
        slot: &Mutex<Option<Arc<CudaModule>>>,
        name: &str,
        prelude: &str,
    ) -> Result<Arc<CudaModule>> {
        let mut slot = slot
            .lock()
            .map_err(|_| Error::Cuda(CudaError::Lock { what: "module" }))?;
        if let Some(m) = slot.as_ref() {
            return Ok(m.clone());
        }
        let source = format!("{prelude}{}", kernels::assemble(name)?);
        let module = self.load_source(name, source, &[])?;
        *slot = Some(module.clone());
        Ok(module)
    }

    fn record_stats(&self, stats: ModuleStats) {
        if let Ok(mut s) = self.modules.stats.lock() {
            s.push(stats);
        }
    }

    /// Compiles (through the cache) and loads CUDA C `source` as module `name`, with
    /// `extra` NVRTC options after the backend's own.
    fn load_source(&self, name: &str, source: String, extra: &[String]) -> Result<Arc<CudaModule>> {
        let mut options = compile_options(&self.info.arch, name);
        options.extend_from_slice(extra);
        let key = CacheKey {
            module: name.into(),
            source,
            arch: self.info.arch.clone(),
            driver_version: self.info.driver_version,
            nvrtc_version: self.info.nvrtc_version,
            options,
        };
        let (cubin, stats) = self.modules.cache.get_or_compile(&key, || {
            guarded("NVRTC", || compile_cubin(name, &key.source, &key.options))
        })?;
        self.record_stats(stats);
        guarded("loading a CUBIN", || {
            self.ctx
                .load_module(Ptx::from_binary(cubin.to_vec()))
                .map_err(|e| {
                    Error::Cuda(CudaError::Load {
                        module: name.into(),
                        error: code(e),
                    })
                })
        })
    }

    /// Compiles and loads a standalone CUDA C module (tests and tools: e.g. that a
    /// compile error comes back with NVRTC's log and the file name).
    pub fn compile_module(&self, name: &str, source: &str) -> Result<ModuleStats> {
        guarded("NVRTC", || {
            self.load_source(name, source.to_string(), &[])?;
            Ok(self
                .module_stats()
                .pop()
                .expect("load_source records its stats"))
        })
    }

    /// Kernel `name` of `module`.
    pub(crate) fn function(&self, module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction> {
        module.load_function(name).map_err(|e| {
            Error::Cuda(CudaError::MissingKernel {
                kernel: name.into(),
                error: code(e),
            })
        })
    }

    /// The render module for `features` under `tuning` (with the ray counter when
    /// `count_rays`), compiled through the program cache and loaded on first use.
    pub(crate) fn render_kernels(
        &self,
        features: &Features,
        tuning: &RenderTuning,
        count_rays: bool,
    ) -> Result<Arc<RenderKernels>> {
        self.render_module(features, tuning, count_rays, false)
    }

    /// The backward module for `features` under `tuning`: the render module (always the
    /// megakernel) with the backward pass (`kernels/backward.cuh`) and its texture probe.
    pub(crate) fn backward_kernels(
        &self,
        features: &Features,
        tuning: &RenderTuning,
    ) -> Result<Arc<RenderKernels>> {
        self.render_module(features, tuning, false, true)
    }

    fn render_module(
        &self,
        features: &Features,
        tuning: &RenderTuning,
        count_rays: bool,
        backward: bool,
    ) -> Result<Arc<RenderKernels>> {
        let path_wavefront = tuning.wavefront && features.has_path() && !backward;
        let tuning = if backward {
            RenderTuning {
                max_registers: BACKWARD_MAX_REGISTERS,
                ..*tuning
            }
        } else {
            *tuning
        };
        let key = RenderModuleKey {
            features: *features,
            max_registers: tuning.max_registers,
            path_wavefront,
            count_rays,
            backward,
        };
        let mut modules = self
            .modules
            .render
            .lock()
            .map_err(|_| Error::Cuda(CudaError::Lock { what: "module" }))?;
        if let Some(m) = modules.get(&key) {
            return Ok(m.clone());
        }
        let mut source = features.prelude(path_wavefront);
        if count_rays {
            source.push_str("#define HG_COUNT_RAYS 1\n");
        }
        if backward {
            source.push_str("#define HG_BACKWARD 1\n");
        }
        source.push_str(&kernels::assemble(kernels::RENDER_MODULE)?);
        let name = format!(
            "{}[{}]{}{}",
            kernels::RENDER_MODULE,
            features.tag(),
            if path_wavefront { "+wavefront" } else { "" },
            if count_rays { "+HG_COUNT_RAYS" } else { "" },
        );
        let name = if backward {
            format!("{name}+HG_BACKWARD")
        } else {
            name
        };
        let module = self.load_source(&name, source, &tuning.options())?;
        let f = |n: &str| self.function(&module, n);
        let path = if path_wavefront {
            Some([
                f("hg_path_start")?,
                f("hg_path_bounce")?,
                f("hg_path_reduce")?,
            ])
        } else {
            None
        };
        let ptracer = if features.has_ptracer() {
            Some([f("hg_ptracer")?, f("hg_ptracer_develop")?])
        } else {
            None
        };
        let backward = if backward {
            Some([f("hg_film_weights")?, f("hg_backward")?])
        } else {
            None
        };
        let kernels = Arc::new(RenderKernels {
            render: f("hg_render")?,
            develop: f("hg_develop")?,
            path,
            ptracer,
            backward,
            module: module.clone(),
        });
        modules.insert(key, kernels.clone());
        Ok(kernels)
    }
}

/// Compiles embedded kernel module `module` after `prelude` (a render module's
/// [`Features::prelude`], or "") with NVRTC for `arch` (e.g. `sm_90`) with the backend's
/// options and then `extra` (a render module's register cap), without a GPU or driver
/// (NVRTC only): returns the CUBIN size and the compile time in seconds. For
/// build-machine checks of the NVRTC dialect.
pub fn nvrtc_compile_offline(
    module: &str,
    prelude: &str,
    arch: &str,
    extra: &[String],
) -> Result<(usize, f64)> {
    crate::backend::cuda::nvrtc_lib::load()?;
    let source = format!("{prelude}{}", kernels::assemble(module)?);
    let mut options = compile_options(arch, module);
    options.extend_from_slice(extra);
    let t = std::time::Instant::now();
    let cubin = guarded("NVRTC", || compile_cubin(module, &source, &options))?;
    Ok((cubin.len(), t.elapsed().as_secs_f64()))
}

/// Compiles `source` with NVRTC to a CUBIN; a failure carries NVRTC's log, which
/// names the kernel file and line (the assembled source has `#line` directives).
pub(crate) fn compile_cubin(module: &str, source: &str, options: &[String]) -> Result<Vec<u8>> {
    let nul = |what: &'static str| {
        Error::Cuda(CudaError::NulByte {
            what,
            module: module.into(),
        })
    };
    let src = CString::new(source).map_err(|_| nul("the source"))?;
    let name = CString::new(module).map_err(|_| nul("the name"))?;
    let prog = nres::create_program(&src, Some(&name)).map_err(|e| {
        Error::Cuda(CudaError::Nvrtc {
            call: "nvrtcCreateProgram",
            module: module.into(),
            error: code(e),
        })
    })?;
    // SAFETY: `prog` is live until destroy_program below; the buffers are sized by NVRTC.
    let result = unsafe {
        let compiled = nres::compile_program(prog, options);
        let log = nres::get_program_log(prog)
            .map(|l| {
                let bytes: Vec<u8> = l
                    .iter()
                    .take_while(|&&c| c != 0)
                    .map(|&c| c as u8)
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .unwrap_or_default();
        match compiled {
            Err(e) => Err(Error::Cuda(CudaError::Compile {
                module: module.into(),
                error: code(e),
                options: options.to_vec(),
                log,
            })),
            Ok(()) => {
                let mut size = 0usize;
                nsys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .and_then(|()| {
                        let mut cubin = vec![0u8; size];
                        nsys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut c_char)
                            .result()
                            .map(|()| cubin)
                    })
                    .map_err(|e| {
                        Error::Cuda(CudaError::Cubin {
                            module: module.into(),
                            error: code(e),
                            log,
                        })
                    })
            }
        }
    };
    // SAFETY: created above and not yet destroyed.
    let _ = unsafe { nres::destroy_program(prog) };
    result
}
