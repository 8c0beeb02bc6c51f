// The `direct` and `path` megakernels: one thread = one sample path end to end
// (DESIGN.md §3). A wave renders samples [s0, s0 + n_wave) of every crop pixel; thread
// i takes pixel i / n_wave, sample s0 + i % n_wave, draws from the CPU's stream for that
// (pixel, sample) (samplers/mod.rs SampleRng; jitter first, as backend/cpu.rs) and writes
// its record into the wave's sample buffer, which hg_gather (film.cuh) filters.
#include "integrators/direct.cuh"
#include "integrators/path.cuh"
#include "film.cuh"

extern "C" __global__ void hg_render(const FlatCamera* cam_p, const FlatFilm* film_p, const FlatIntegrator* integ_p,
                                     HG_SCENE_PARAMS,
                                     hg_u64 seed, hg_u32 s0, hg_u32 n_wave, float* samples) {
    const FlatFilm film = *film_p;
    hg_u64 i = (hg_u64)blockIdx.x * blockDim.x + threadIdx.x;
    hg_u64 cw = film.crop_size[0];
    hg_u64 total = cw * film.crop_size[1] * n_wave;
    if (i >= total) return;
    hg_u64 pix = i / n_wave;
    hg_u32 sidx = s0 + (hg_u32)(i % n_wave);
    hg_u32 x = (hg_u32)(pix % cw), y = (hg_u32)(pix / cw);
    SceneData s = HG_SCENE_DATA;
    const FlatIntegrator it = *integ_p;
    hg_u32 fx = x + film.crop_offset[0], fy = y + film.crop_offset[1];
    hg_u64 pixel = (hg_u64)fy * (hg_u64)film.width + (hg_u64)fx;
    Pcg32 rng = sample_rng(seed, pixel, sidx);
    float jx = pcg_next_f32(rng);
    float jy = pcg_next_f32(rng);
    Ray ray = camera_ray(*cam_p, film, (float)fx + jx, (float)fy + jy);
    float alpha = 0.0f;
    V3 l = it.kind == HG_INTEGRATOR_PATH ? path_sample(s, it, ray, rng, &alpha)
                                          : direct_sample(s, it, ray, rng, &alpha);
    if (!finite3(l)) l = v3(0.0f, 0.0f, 0.0f);  // as backend/cpu.rs: a NaN/inf sample is dropped
    float* out = samples + i * HG_SAMPLE_FLOATS;
    out[0] = (float)x + jx;
    out[1] = (float)y + jy;
    out[2] = l.x;
    out[3] = l.y;
    out[4] = l.z;
    out[5] = alpha;
}
