// The `direct` and `path` megakernels: one thread = one sample path end to end
// (DESIGN.md §3). A wave renders samples [s0, s0 + n_wave) of every crop pixel; thread
// i takes pixel i / n_wave, sample s0 + i % n_wave, draws from the CPU's stream for that
// (pixel, sample) (samplers/mod.rs SampleRng; jitter first, as backend/cpu.rs) and writes
// its record into the wave's sample buffer, which hg_gather (film.cuh) filters.
#include "integrators/direct.cuh"
#include "integrators/path.cuh"
#include "film.cuh"

extern "C" __global__ void hg_render(const FlatCamera* cam_p, const FlatFilm* film_p, const FlatIntegrator* integ_p,
                                     const BvhNode* nodes, hg_u32 node_count, const LeafPrim* leaf,
                                     const Prim* prims, const FlatShape* shapes, const float* positions,
                                     const float* normals, const float* uvs, const hg_u32* tris,
                                     const FlatBsdf* bsdfs, const float* tables, const FlatTexture* textures,
                                     const float* texels, const FlatEmitter* emitters, hg_u32 emitter_count,
                                     const hg_u32* env_emitters, hg_u32 env_count, const FlatDist1D* dist1d,
                                     const FlatDist2D* dist2d, const float* dist_data, const float* bsphere,
                                     hg_u64 seed, hg_u32 s0, hg_u32 n_wave, float* samples) {
    const FlatFilm film = *film_p;
    hg_u64 i = (hg_u64)blockIdx.x * blockDim.x + threadIdx.x;
    hg_u64 cw = film.crop_size[0];
    hg_u64 total = cw * film.crop_size[1] * n_wave;
    if (i >= total) return;
    hg_u64 pix = i / n_wave;
    hg_u32 sidx = s0 + (hg_u32)(i % n_wave);
    hg_u32 x = (hg_u32)(pix % cw), y = (hg_u32)(pix / cw);
    SceneData s;
    s.g.nodes = nodes;
    s.g.node_count = node_count;
    s.g.leaf = leaf;
    s.g.prims = prims;
    s.g.shapes = shapes;
    s.positions = positions;
    s.normals = normals;
    s.uvs = uvs;
    s.tris = tris;
    s.bsdfs = bsdfs;
    s.tables = tables;
    s.textures = textures;
    s.texels = texels;
    s.emitters = emitters;
    s.emitter_count = emitter_count;
    s.env_emitters = env_emitters;
    s.env_count = env_count;
    s.dist1d = dist1d;
    s.dist2d = dist2d;
    s.dist_data = dist_data;
    s.bsphere_center = v3a(bsphere);
    s.bsphere_radius = bsphere[3];
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
