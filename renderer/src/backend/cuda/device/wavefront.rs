//! The wavefront `path` integrator on CUDA (kernels/wavefront.cuh): per chunk of
//! samples, a start kernel takes every path's first step, bounce launches advance the
//! live paths one step each over a compacted queue, and a reduction adds the chunk's
//! samples to the film accumulator in the megakernel's order (same bits). A tuning
//! option ([`super::tuning::RenderTuning::wavefront`]); the megakernel is the default.

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use super::memory::DeviceBuffer;
use super::plan::{chunks, threads_cfg, wave_spp, Chunk, SampleArgs, SceneArgs};
use super::scene::DeviceScene;
use super::{drv, launching, CudaBackend};
use crate::backend::cuda::wavefront_bounce_launches;
use crate::error::Result;

/// Floats of path state per wavefront slot (kernels/wavefront.cuh `HG_PS_WORDS`).
const PATH_STATE_WORDS: u64 = 30;

/// Most samples in one wavefront chunk: their state takes 120 bytes each (480 MiB), and
/// a larger wave is rendered chunk after chunk through the same buffers.
const WAVEFRONT_CHUNK: u64 = 1 << 22;

/// The wavefront's device buffers for chunks of up to `cap` samples.
struct PathBuffers {
    /// `PATH_STATE_WORDS` floats per slot.
    state: DeviceBuffer,
    /// Two queues of `cap` slots.
    queues: DeviceBuffer,
    /// The length of queue k, for the start and every bounce launch.
    counts: DeviceBuffer,
    cap: u32,
    /// Bounce launches after the start ([`wavefront_bounce_launches`]).
    bounces: u32,
    /// Blocks of the grid-stride bounce kernel: a full GPU.
    bounce_blocks: u32,
}

impl CudaBackend {
    /// Enqueues a wavefront `path` render of `spp` samples over `pixels` pixels into
    /// `accum` with the kernels `k` (start, bounce, reduce).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn enqueue_wavefront(
        &self,
        k: &[CudaFunction; 3],
        s: &DeviceScene,
        args: &SceneArgs,
        seed: u64,
        spp: u32,
        pixels: u64,
        per_lane: u32,
        block: u32,
        accum: &DeviceBuffer,
    ) -> Result<()> {
        let cap = (pixels * wave_spp(spp, 0) as u64).min(WAVEFRONT_CHUNK);
        let p = self.path_buffers(&k[1], cap, s.integrator.max_depth, block)?;
        for c in chunks(spp, pixels, cap, per_lane) {
            self.launch_path_chunk(k, &p, s, args, (seed, spp), &c, block, accum)?;
        }
        // the buffers are freed in stream order after the chunks' kernels
        Ok(())
    }

    /// The wavefront buffers for chunks of `cap` samples of paths of at most `max_depth`
    /// steps; `block` threads per block.
    fn path_buffers(
        &self,
        bounce: &CudaFunction,
        cap: u64,
        max_depth: u32,
        block: u32,
    ) -> Result<PathBuffers> {
        let words = (cap * PATH_STATE_WORDS) as usize;
        // uninitialised: hg_path_start writes every field the later kernels of a chunk
        // read, of every slot they read, before they run
        let state = self
            .pool
            .alloc(words * 4, &self.stream, "the wavefront path state")?;
        let queues =
            self.pool
                .alloc_zeros(8 * cap as usize, &self.stream, "the wavefront queues")?;
        let bounces = wavefront_bounce_launches(max_depth);
        let counts = self.pool.alloc(
            4 * (bounces as usize + 1),
            &self.stream,
            "the wavefront queue counts",
        )?;
        let per_sm = bounce
            .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
            .map_err(drv("reading the bounce kernel's occupancy"))?
            .max(1);
        let full = per_sm * self.info.sm_count.max(1) as u32;
        Ok(PathBuffers {
            state,
            queues,
            counts,
            cap: cap as u32,
            bounces,
            bounce_blocks: full.min((cap as u32).div_ceil(block)),
        })
    }

    /// Enqueues chunk `c` of a wavefront `path` render: the start kernel (first step),
    /// `bounces` bounce launches (the last one finishes every path), the reduction into
    /// `accum` (kernels/wavefront.cuh).
    #[allow(clippy::too_many_arguments)]
    fn launch_path_chunk(
        &self,
        k: &[CudaFunction; 3],
        p: &PathBuffers,
        s: &DeviceScene,
        args: &SceneArgs,
        (seed, spp): (u64, u32),
        c: &Chunk,
        block: u32,
        accum: &DeviceBuffer,
    ) -> Result<()> {
        let (state, queues, counts, acc) =
            (p.state.ptr(), p.queues.ptr(), p.counts.ptr(), accum.ptr());
        // SAFETY: counts holds bounces + 1 u32, cleared in stream order.
        unsafe {
            cudarc::driver::result::memset_d8_async(
                counts,
                0,
                p.counts.bytes(),
                self.stream.cu_stream(),
            )
        }
        .map_err(drv("clearing the wavefront queue counts"))?;
        let mut l = self.stream.launch_builder(&k[0]);
        let sample = SampleArgs {
            scene: s,
            film: s.film_with_count(spp),
            seed,
            chunk: *c,
            log2_k: None,
            threads: c.samples(),
        };
        sample.push(&mut l, args);
        l.arg(&state).arg(&p.cap).arg(&queues).arg(&counts);
        // SAFETY: the arguments match hg_path_start in wavefront.cuh one for one; the
        // state has PATH_STATE_WORDS * cap floats and each queue cap slots, cap >= the
        // chunk's threads; counts has bounces + 1 zeroed entries; the chunk's pixels lie
        // in the crop and the block is a multiple of 32 (warp-wide queue pushes).
        unsafe { l.launch(threads_cfg(sample.threads, block)) }
            .map_err(launching("hg_path_start"))?;
        let cfg = LaunchConfig {
            grid_dim: (p.bounce_blocks, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        for launch in 1..=p.bounces {
            let finish = u32::from(launch == p.bounces);
            let mut l = self.stream.launch_builder(&k[1]);
            l.arg(&s.integrator);
            args.push(&mut l);
            l.arg(&state)
                .arg(&p.cap)
                .arg(&queues)
                .arg(&counts)
                .arg(&launch)
                .arg(&finish);
            // SAFETY: matches hg_path_bounce; launch k reads queue k - 1 and counts[k - 1]
            // (written by the launch before it on this stream) and writes queue k and
            // counts[k], k <= bounces.
            unsafe { l.launch(cfg) }.map_err(launching("hg_path_bounce"))?;
        }
        let mut l = self.stream.launch_builder(&k[2]);
        let lanes = c.lanes();
        l.arg(&state)
            .arg(&p.cap)
            .arg(&c.s0)
            .arg(&c.log2_n)
            .arg(&c.log2_k)
            .arg(&c.p0)
            .arg(&lanes)
            .arg(&acc);
        // SAFETY: matches hg_path_reduce; every slot of the chunk's samples has its
        // result, flags and weight written by the kernels above; `accum` has 5 floats per
        // pixel; k <= n, both powers of two.
        unsafe { l.launch(threads_cfg(lanes, block)) }.map_err(launching("hg_path_reduce"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_state_size_is_the_kernels() {
        let src = include_str!("../../../../kernels/wavefront.cuh");
        let line = format!("#define HG_PS_WORDS {}", super::PATH_STATE_WORDS);
        assert!(src.contains(&line), "wavefront.cuh lacks `{line}`");
    }
}
