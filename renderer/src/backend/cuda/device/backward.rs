//! The backward pass of differentiable rendering on the GPU (`kernels/backward.cuh`;
//! the method is [`crate::diff`]'s): everything on the render stream, the image's
//! gradient read where it lies on the device and the parameters' gradients returned
//! there, fenced by their ready events. Nothing waits on the host.

use cudarc::driver::PushKernelArg;

use super::event::Event;
use super::plan::{chunks, threads_cfg, SampleArgs, SceneArgs, MAX_LAUNCH_THREADS};
use super::scene::DeviceScene;
use super::tensor::DeviceTensor;
use super::{guarded, launching, CudaBackend};
use crate::diff::{flat, DiffParam};
use crate::error::{CudaError, Error, Result};
use crate::integrators::tag::{DIRECT as INTEGRATOR_DIRECT, PATH as INTEGRATOR_PATH};
use crate::render::RenderOptions;
use crate::samplers::Sampler;

impl CudaBackend {
    /// The gradients of `Σ adjoint · image` with respect to `params` (one tensor per
    /// parameter, in the shape of its value, flattened), where the image is device scene
    /// `s` rendered with `opts` (`scene_spp` when `opts.spp` is `None`): the samples are
    /// traced again and replayed (path replay backpropagation). `adjoint` holds the
    /// image's gradient, crop pixels × channels (an alpha channel's is ignored).
    /// Texel gradients are summed with float atomics, so their last bits follow the
    /// GPU's schedule.
    pub fn backward(
        &self,
        s: &DeviceScene,
        params: &[DiffParam],
        adjoint: &DeviceTensor,
        opts: &RenderOptions,
        scene_spp: u32,
    ) -> Result<Vec<DeviceTensor>> {
        if s.integrator.kind != INTEGRATOR_PATH && s.integrator.kind != INTEGRATOR_DIRECT {
            return Err(Error::Render(
                "differentiable rendering needs the path (prb) or direct integrator".into(),
            ));
        }
        let fp = flat::flatten(params)?;
        let spp = match opts.spp {
            None => scene_spp,
            Some(n) => crate::render::resolve_spp(Some(n), &Sampler::from_flat(&s.film.sampler))?,
        };
        let [w, h] = s.film.crop_size;
        let ch: u32 = if s.film.alpha != 0 { 4 } else { 3 };
        let pixels = u64::from(w) * u64::from(h);
        if pixels > u64::from(u32::MAX) {
            return Err(Error::Cuda(CudaError::FilmTooLarge {
                width: w,
                height: h,
                crops_hint: false,
            }));
        }
        if adjoint.len() as u64 != pixels * u64::from(ch) {
            return Err(Error::Render(format!(
                "the image's gradient has {} values, the {w}x{h} image {}",
                adjoint.len(),
                pixels * u64::from(ch)
            )));
        }
        guarded("CUDA backward pass", || {
            let tuning = self.render_tuning();
            let features = s.features(tuning.brute_force_max_records as usize);
            let k = self.backward_kernels(&features, &tuning)?;
            let Some([weights_fn, backward_fn]) = &k.backward else {
                return Err(Error::Cuda(CudaError::MissingKernels {
                    module: "backward module".into(),
                    kernels: "backward",
                }));
            };
            adjoint.order_stream(self.stream_handle())?;
            let grads = params
                .iter()
                .map(|p| {
                    let what = format!("the gradient of \"{}\"", p.key);
                    self.pool.alloc_zeros(p.len() * 4, &self.stream, &what)
                })
                .collect::<Result<Vec<_>>>()?;
            // one upload: the table (the parameters, 12 words each with the addresses of
            // their gradients and of their records, then the BSDFs' masks and linear
            // masks, which backward.cuh reads both), then the plain floats' rebuilt
            // records, which the table points to
            let head = fp.params.len() * 12 + 2 * fp.bsdf_masks.len() + 1;
            let table = self.upload_staged(head + fp.records.len(), |base, dst| {
                let at = |offset: u64| base + 4 * (head as u64 + offset);
                let params = fp.params.iter().zip(&grads).flat_map(|(f, g)| {
                    let step = f.step.to_bits();
                    let word = [f.kind, f.source, f.channels, f.reads, f.small, step];
                    let halves = |a: u64| [a as u32, (a >> 32) as u32];
                    let [g, p, m] = [g.ptr(), at(f.plus), at(f.minus)].map(halves);
                    word.into_iter().chain(g).chain(p).chain(m)
                });
                let all = params
                    .chain(fp.bsdf_masks.iter().copied())
                    .chain(fp.bsdf_linear.iter().copied())
                    .chain([0]) // a table is never empty
                    .chain(fp.records.iter().copied());
                // written straight into the staging lease
                for (d, w) in dst.iter_mut().zip(all) {
                    *d = f32::from_bits(w);
                }
                Ok(())
            })?;
            let weights = self.pool.alloc(
                pixels as usize * 4,
                &self.stream,
                "the film weights of the backward pass",
            )?;
            let film = s.film_with_count(spp);
            let (weights_ptr, pixels32) = (weights.ptr(), pixels as u32);
            let mut l = self.stream.launch_builder(weights_fn);
            l.arg(&film)
                .arg(&opts.seed)
                .arg(&pixels32)
                .arg(&weights_ptr);
            // SAFETY: matches hg_film_weights in backward.cuh; `weights` holds a float per
            // crop pixel.
            unsafe { l.launch(threads_cfg(pixels32, 256)) }
                .map_err(launching("hg_film_weights"))?;
            let args = SceneArgs::new(s, &features)?;
            // one sample per thread: a thread's work (a trace and a probed replay) is
            // long and uneven, and more threads hide its latency better
            let per_lane = 1;
            let (adjoint_ptr, table_ptr) = (adjoint.device_ptr(), table.device_ptr());
            let masks_ptr = table_ptr + 48 * fp.params.len() as u64;
            let (count, envmap) = (fp.params.len() as u32, u32::from(fp.envmap));
            let mask_count = fp.bsdf_masks.len() as u32;
            for c in chunks(spp, pixels, MAX_LAUNCH_THREADS, per_lane) {
                let mut l = self.stream.launch_builder(backward_fn);
                let sample = SampleArgs {
                    scene: s,
                    film,
                    seed: opts.seed,
                    chunk: c,
                    log2_k: Some(c.log2_k),
                    threads: c.lanes(),
                };
                sample.push(&mut l, &args);
                l.arg(&adjoint_ptr)
                    .arg(&ch)
                    .arg(&weights_ptr)
                    .arg(&table_ptr)
                    .arg(&count)
                    .arg(&masks_ptr)
                    .arg(&mask_count)
                    .arg(&envmap);
                // SAFETY: the arguments match hg_backward in backward.cuh one for one
                // (as hg_render's, then the adjoint of crop pixels x ch floats, the
                // weights, the parameter table of `count` records whose gradient
                // buffers hold their values, the BSDFs' masks); the block is a multiple of 32
                // (RenderTuning::check), as the kernel's warp sums require.
                unsafe { l.launch(threads_cfg(sample.threads, tuning.block)) }
                    .map_err(launching("hg_backward"))?;
            }
            // the weights and the table are freed in stream order after the kernels
            drop(weights);
            drop(table);
            grads
                .into_iter()
                .zip(params)
                .map(|(g, p)| {
                    let ready = Event::recorded(&self.ctx, self.stream.cu_stream())?;
                    Ok(self.tensor(g, p.len(), ready))
                })
                .collect()
        })
    }
}
