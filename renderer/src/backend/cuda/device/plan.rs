//! How a render is cut into kernel launches (waves of samples, chunks of pixels) and
//! what every launch is passed (the scene and sample arguments).

use cudarc::driver::{DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg};

use super::scene::{DeviceScene, SCENE_ARRAYS};
use crate::backend::cuda::features::Features;
use crate::error::Result;
use crate::films::record::FlatFilm;
use crate::integrators::record::FlatIntegrator;
use crate::sensors::record::FlatCamera;

// SAFETY: #[repr(C)] records of u32/f32 fields without padding (flat::LAYOUT's asserts),
// passed by value as the kernels' leading parameters, whose CUDA twins they are.
unsafe impl DeviceRepr for FlatCamera {}
// SAFETY: as above.
unsafe impl DeviceRepr for FlatFilm {}
// SAFETY: as above.
unsafe impl DeviceRepr for FlatIntegrator {}

/// Most samples per pixel in one megakernel wave: a pixel's samples of a wave share one
/// warp segment (kernels/film.cuh `segment_sum`).
pub(crate) const MAX_WAVE_SPP: u32 = 32;

/// Most threads in one launch of the megakernel: a wave larger than this is split into
/// launches over consecutive pixel ranges (hg_render indexes its threads with 32 bits).
pub(crate) const MAX_LAUNCH_THREADS: u64 = 1 << 31;

/// Samples per pixel of the wave that starts with `done` of `spp` samples rendered: the
/// largest power of two <= min(spp - done, 32), so that a pixel's samples of the wave fill
/// one aligned warp segment. The wave split is part of the determinism contract (the
/// summation order follows it), so it depends on `spp` only.
pub(crate) fn wave_spp(spp: u32, done: u32) -> u32 {
    let left = spp.saturating_sub(done).clamp(1, MAX_WAVE_SPP);
    1 << (31 - left.leading_zeros())
}

/// One launch's share of a render: samples [s0, s0 + n) (n = 1 << log2_n) of crop pixels
/// [p0, p0 + pixels); megakernel threads take k = 1 << log2_k samples each (k <= n).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub(crate) s0: u32,
    pub(crate) log2_n: u32,
    pub(crate) log2_k: u32,
    pub(crate) p0: u32,
    pub(crate) pixels: u32,
}

impl Chunk {
    /// Threads of the megakernel (hg_render) and of the wavefront reduction: n / k per
    /// pixel.
    pub(crate) fn lanes(&self) -> u32 {
        self.pixels << (self.log2_n - self.log2_k)
    }

    /// Samples of the chunk: the wavefront start kernel's threads and state slots.
    pub(crate) fn samples(&self) -> u32 {
        self.pixels << self.log2_n
    }
}

/// The chunks of a render of `spp` samples over `pixels` (<= 2^32 - 1) pixels with at most
/// `max_samples` (a power of two >= 32, < 2^32) samples each, `per_lane` (a power of two)
/// samples per megakernel thread: wave by wave ([`wave_spp`]), consecutive pixel ranges
/// within a wave.
pub(crate) fn chunks(spp: u32, pixels: u64, max_samples: u64, per_lane: u32) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut s0 = 0u32;
    while s0 < spp {
        let n = wave_spp(spp, s0);
        let log2_n = n.trailing_zeros();
        let per = max_samples >> log2_n; // pixels per chunk
        let mut p0 = 0u64;
        while p0 < pixels {
            let count = per.min(pixels - p0);
            out.push(Chunk {
                s0,
                log2_n,
                log2_k: per_lane.min(n).trailing_zeros(),
                p0: p0 as u32,
                pixels: count as u32,
            });
            p0 += count;
        }
        // s0 + n <= spp <= u32::MAX: no overflow
        s0 += n;
    }
    out
}

/// A one-dimensional launch of `threads` threads in blocks of `block`.
pub(crate) fn threads_cfg(threads: u32, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (threads.div_ceil(block), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The scene arguments of the kernels (`HG_SCENE_PARAMS`, kernels/scene.cuh), looked
/// up once per render and pushed in kernel order.
pub(crate) struct SceneArgs {
    ptrs: [u64; SCENE_ARRAYS.len()],
    node_count: u32,
    emitter_count: u32,
    env_count: u32,
    /// A brute-force module's `UnitPrims` parameter as words (empty otherwise).
    units: Vec<u32>,
}

impl SceneArgs {
    pub(crate) fn new(s: &DeviceScene, features: &Features) -> Result<SceneArgs> {
        Ok(SceneArgs {
            ptrs: SCENE_ARRAYS.map(|n| s.ptr(n)),
            node_count: s.node_count,
            emitter_count: s.emitter_count,
            env_count: s.env_count,
            units: s.unit_words(features)?,
        })
    }

    /// Pushes `HG_SCENE_PARAMS` onto a launch.
    pub(crate) fn push<'l>(&'l self, l: &mut LaunchArgs<'l>) {
        // each count follows the array it counts
        for (name, p) in SCENE_ARRAYS.iter().zip(&self.ptrs) {
            l.arg(p);
            let count = match *name {
                "nodes" => Some(&self.node_count),
                "emitter_data" => Some(&self.emitter_count),
                "env" => Some(&self.env_count),
                _ => None,
            };
            if let Some(c) = count {
                l.arg(c);
            }
        }
        if let Some(u) = self.units.first() {
            // The kernel's by-value `UnitPrims` parameter (flat.cuh) is these words: the
            // driver copies the parameter's size from this address, the vector's start.
            l.arg(u);
        }
    }
}

/// The leading parameters of the kernels that start samples (hg_render, hg_path_start:
/// kernels/render.cu `sample_start`): camera, film and integrator by value, the scene
/// arrays, the seed and the chunk.
pub(crate) struct SampleArgs<'s> {
    pub(crate) scene: &'s DeviceScene,
    /// The scene's film record with the render's effective sample count in its sampler.
    pub(crate) film: FlatFilm,
    pub(crate) seed: u64,
    pub(crate) chunk: Chunk,
    /// `Some(log2_k)` for hg_render.
    pub(crate) log2_k: Option<u32>,
    pub(crate) threads: u32,
}

impl SampleArgs<'_> {
    /// Pushes them onto `l`, in the kernel's order.
    pub(crate) fn push<'l>(&'l self, l: &mut LaunchArgs<'l>, args: &'l SceneArgs) {
        let (s, c) = (self.scene, &self.chunk);
        l.arg(&s.camera).arg(&self.film).arg(&s.integrator);
        args.push(l);
        l.arg(&self.seed).arg(&c.s0).arg(&c.log2_n);
        if let Some(k) = &self.log2_k {
            l.arg(k);
        }
        l.arg(&c.p0).arg(&self.threads);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_sample_of_every_pixel_once_in_bounded_launches() {
        for (spp, pixels, max) in [
            (1, 7, 32),
            (3, 1000, 64),
            (32, 512 * 512, 1 << 22),
            (45, 333, 256),
        ] {
            let mut seen = vec![0u32; pixels as usize];
            for c in chunks(spp, pixels, max, 4) {
                assert!(c.samples() as u64 <= max && c.log2_k <= c.log2_n.min(2));
                assert_eq!(c.lanes() << c.log2_k, c.samples());
                for px in c.p0..c.p0 + c.pixels {
                    assert_eq!(seen[px as usize], c.s0, "{spp} {pixels} {max}: pixel {px}");
                    seen[px as usize] += 1 << c.log2_n;
                }
            }
            assert!(seen.iter().all(|&s| s == spp), "{spp} {pixels} {max}");
        }
    }

    #[test]
    fn waves_are_powers_of_two_up_to_32_and_cover_spp() {
        for spp in 1..=200u32 {
            let (mut done, mut waves) = (0u64, 0u64);
            while done < spp as u64 {
                let n = wave_spp(spp, done as u32);
                assert!(
                    n.is_power_of_two() && n <= 32 && n as u64 <= spp as u64 - done,
                    "{spp}: {n}"
                );
                waves += 1;
                done += n as u64;
            }
            assert_eq!(done, spp as u64);
            // greedy: full waves of 32, then the binary digits of the rest
            let rest = spp % 32;
            assert_eq!(waves, (spp / 32) as u64 + rest.count_ones() as u64, "{spp}");
        }
        // the last waves of the largest sample count end exactly at it (no overflow)
        let spp = u32::MAX;
        let done = spp - 31;
        assert_eq!(wave_spp(spp, done), 16);
        assert_eq!(wave_spp(spp, spp - 1), 1);
    }
}
