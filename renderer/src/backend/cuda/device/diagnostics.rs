//! What the render kernels are: the resources of the one a scene compiles to, and the
//! rays a render traces (a module variant that counts them).

use cudarc::driver::sys as dsys;

use super::{drv, guarded, CudaBackend};
use crate::backend::cuda::check_supported;
#[cfg(doc)]
use crate::backend::cuda::features::Features;
use crate::error::{CudaError, Error, Result};
use crate::flat::FlatScene;
use crate::integrators::tag::DEPTH as INTEGRATOR_DEPTH;
use crate::io::Image;
use crate::render::RenderOptions;
use crate::scene::RenderSetup;

/// Resources of the main render kernel compiled for one scene ([`CudaBackend::render_kernel_info`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderKernelInfo {
    /// The plugin set's tag ([`Features::tag`]).
    pub module: String,
    /// Whether the sample path is inlined ([`Features::inline_all`]).
    pub inlined: bool,
    /// Registers per thread.
    pub registers: u32,
    /// Local memory (stack) bytes per thread.
    pub local_bytes: u32,
    /// Resident blocks per SM at `block` threads each.
    pub blocks_per_sm: u32,
    /// Threads per block.
    pub block: u32,
}

impl CudaBackend {
    /// What the megakernel compiled for `scene` under the current tuning uses: for the
    /// benchmark tables and the profile notes.
    pub fn render_kernel_info(&self, setup: &RenderSetup) -> Result<RenderKernelInfo> {
        guarded("CUDA kernel info", || {
            let tuning = self.render_tuning();
            let features = tuning.features(&FlatScene::from_scene_with(setup, false)?);
            let k = self.render_kernels(&features, &tuning, false)?;
            // the kernel that does the work: the bounce kernel of a wavefront `path`, the
            // light tracing kernel of `ptracer`
            let f = match (&k.path, &k.ptracer) {
                (Some([_, bounce, _]), _) => bounce,
                (None, Some([trace, _])) => trace,
                (None, None) => &k.render,
            };
            let attr = |a, what: &'static str| f.get_attribute(a).map_err(drv(what));
            use dsys::CUfunction_attribute_enum as A;
            let block = tuning.block;
            Ok(RenderKernelInfo {
                module: features.tag(),
                inlined: features.inline_all(),
                registers: attr(A::CU_FUNC_ATTRIBUTE_NUM_REGS, "reading the register count")?
                    as u32,
                local_bytes: attr(
                    A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                    "reading the stack size",
                )? as u32,
                blocks_per_sm: f
                    .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
                    .map_err(drv("reading the occupancy"))?,
                block,
            })
        })
    }

    /// Rays traced (closest-hit and shadow rays) by the `direct`/`path` render of `scene`
    /// with `opts`, and the film: renders once with a variant of the render module
    /// compiled with `HG_COUNT_RAYS` (kernels/scene.cuh: an atomic counter per traced ray,
    /// one atomic per warp and call site), so the count is the kernel's own, not a model
    /// of it. For benchmarks (rays per second); the variant is compiled through the same
    /// program cache and is never used for ordinary renders, whose timing it would skew.
    pub fn count_rays(&self, setup: &RenderSetup, opts: &RenderOptions) -> Result<(u64, Image)> {
        let spp = opts.resolve_spp(&setup.sensor.sampler)?;
        check_supported(setup)?;
        let s = self.upload_scene(setup, 0)?;
        if s.integrator.kind == INTEGRATOR_DEPTH {
            return Err(Error::Cuda(CudaError::CountRaysDepth));
        }
        guarded("CUDA ray count", || {
            let tuning = self.render_tuning();
            let features = s.features(tuning.brute_force_max_records as usize);
            let k = self.render_kernels(&features, &tuning, true)?;
            let mut counter = k
                .module
                .get_global("hg_ray_count", &self.stream)
                .map_err(drv("finding hg_ray_count"))?;
            self.stream
                .memcpy_htod(&[0u8; 8], &mut counter)
                .map_err(drv("zeroing hg_ray_count"))?;
            let film = self.enqueue_render(&k, &features, &tuning, &s, opts.seed, spp)?;
            let image = film.to_image()?;
            let mut bytes = [0u8; 8];
            self.stream
                .memcpy_dtoh(&counter, &mut bytes)
                .map_err(drv("reading hg_ray_count"))?;
            self.stream
                .synchronize()
                .map_err(drv("waiting for the ray count"))?;
            Ok((u64::from_le_bytes(bytes), image))
        })
    }
}
