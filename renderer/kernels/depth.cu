// The `depth` integrator (integrators/depth.rs): the closest hit distance along each
// primary ray, with the CPU backend's sample streams (backend/cpu/mod.rs: the sampler's
// state per (pixel, sample), jitter first) and a box filter of radius <= 0.5 (each sample lands
// in its own pixel). One thread per pixel; output: crop_w * crop_h * channels floats.
#include "geometry.cuh"
#include "camera.cuh"

extern "C" __global__ void hg_depth(const FlatCamera* cam_p, const FlatFilm* film_p,
                                    const FlatBvhNode* nodes, hg_u32 node_count,
                                    const LeafPrim* leaf, const Prim* prims,
                                    const FlatShape* shapes, hg_u64 seed, hg_u32 spp,
                                    float* out) {
    const FlatFilm film = *film_p;
    const FlatCamera cam = *cam_p;
    hg_u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    hg_u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= film.crop_size[0] || y >= film.crop_size[1]) return;
    SceneGeom g;
    g.nodes = nodes;
    g.node_count = node_count;
    g.leaf = leaf;
    g.prims = prims;
    g.shapes = shapes;
    hg_u32 fx = x + film.crop_offset[0], fy = y + film.crop_offset[1];
    hg_u64 pixel = (hg_u64)fy * (hg_u64)film.width + (hg_u64)fx;
    FlatSampler smp = film.sampler;
    smp.sample_count = spp;  // the render's effective count
    float sum = 0.0f, alpha = 0.0f, weight = 0.0f;
    for (hg_u32 s = 0; s < spp; ++s) {
        SampleRng rng = sample_rng(smp, seed, pixel, s);
        V2 j = next_2d(rng);
        V2 a = aperture_sample(cam, rng);
        Ray ray = camera_ray(cam, film, (float)fx + j.x, (float)fy + j.y, a.x, a.y);
        hg_u32 prim = 0;
        float t = intersect_scene(g, ray, &prim);
        if (t != HG_INF) {
            sum = sum + t;
            alpha = alpha + 1.0f;
        }
        weight = weight + 1.0f;
    }
    float inv = weight > 0.0f ? 1.0f / weight : 0.0f;
    hg_u32 ch = film.alpha ? 4u : 3u;
    float* px = out + ((hg_u64)y * film.crop_size[0] + x) * ch;
    px[0] = sum * inv;
    px[1] = sum * inv;
    px[2] = sum * inv;
    if (ch == 4u) px[3] = alpha * inv;
}
