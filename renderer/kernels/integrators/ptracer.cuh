// `ptracer` (renderer/src/integrators/ptracer.rs): light tracing. One thread traces one
// light path: the connection of a directly visible emitter, then a path from an emitter
// whose every non-delta surface vertex is connected to the pinhole and splatted onto the
// film. Light path k draws from the CPU's stream (crop pixel k mod P, sample k div P; P
// the crop's pixels), in the CPU's order, so that a host build of this file computes the
// CPU's paths.
//
// The splat adds the contribution times the reconstruction filter, normalised to sum to 1
// over the sample's whole footprint (films/block.rs Block::splat_normalized; the filter
// itself, not the CPU's table of it, which differs by ~1e-6), into the film accumulator
// with float atomics: the sum's order, and so the last bits of a pixel, depend on the
// thread schedule (the expectation does not). hg_ptracer_develop writes the sums (alpha
// 1), as Block::develop_sums.
//
// Compiled only into modules whose integrator set has HG_INTEGRATOR_PTRACER
// (backend/cuda/features.rs): the `direct`/`path` modules do not carry it.
#pragma once
#include "../bsdfs.cuh"
#include "../emitters.cuh"

#if HG_HAS(HG_INTEGRATOR_SET, HG_INTEGRATOR_PTRACER)

#define HG_PT_ACC 3  // r, g, b per pixel

// The pinhole's inverse: camera-space point of world point p (FlatCamera: origin and the
// linear part of to_world).
__device__ inline V3 camera_local(const FlatCamera& cam, V3 p) {
    float det;
    return mat3_inverse_mul(cam.lin, p - v3a(cam.origin), &det);
}

// Camera::importance: 1 / (A cos³), A the crop window's area on the plane at depth 1.
__device__ inline float camera_importance(const FlatCamera& cam, const FlatFilm& film, V3 local) {
    float w = (float)film.width, h = (float)film.height;
    float cos = local.z / sqrtf(dot(local, local));
    float area = (2.0f * cam.tan_half_x * (float)film.crop_size[0] / w) *
                 (2.0f * cam.tan_half_x / cam.aspect * (float)film.crop_size[1] / h);
    return 1.0f / (area * cos * cos * cos);
}

// Camera::film_position: the crop position of camera-space direction `local` (z > 0).
__device__ inline bool camera_film_position(const FlatCamera& cam, const FlatFilm& film, V3 local, V2* pos) {
    float w = (float)film.width, h = (float)film.height;
    float sx = local.x / (local.z * cam.tan_half_x);
    float sy = local.y * cam.aspect / (local.z * cam.tan_half_x);
    pos->x = (1.0f - sx) * 0.5f * w - (float)film.crop_offset[0];
    pos->y = (1.0f - sy) * 0.5f * h - (float)film.crop_offset[1];
    return pos->x >= 0.0f && pos->x <= (float)film.crop_size[0] && pos->y >= 0.0f &&
           pos->y <= (float)film.crop_size[1];
}

// Camera::sample_direction: world point p connected to the pinhole (its film position and
// importance over the squared distance); false outside the crop or the clip range.
__device__ inline bool camera_connect_point(const FlatCamera& cam, const FlatFilm& film, V3 p, V2* pos,
                                            float* weight) {
    V3 local = camera_local(cam, p);
    if (!(local.z >= cam.near_clip && local.z <= cam.far_clip)) return false;
    if (!camera_film_position(cam, film, local, pos)) return false;
    V3 v = v3a(cam.origin) - p;
    *weight = camera_importance(cam, film, local) / dot(v, v);
    return *weight > 0.0f && *weight <= 3.4028235e38f;
}

// Camera::connect_direction: what the pinhole sees along world direction d at infinity.
__device__ inline bool camera_connect_direction(const FlatCamera& cam, const FlatFilm& film, V3 d, V2* pos,
                                                float* importance) {
    float det;
    V3 local = mat3_inverse_mul(cam.lin, d, &det);
    if (!(local.z > 0.0f)) return false;
    if (!camera_film_position(cam, film, local, pos)) return false;
    *importance = camera_importance(cam, film, local);
    return *importance > 0.0f && *importance <= 3.4028235e38f;
}

// AnyFilter::eval
__device__ inline float filter_eval(const FlatFilm& film, float x) {
    float r = film.filter_radius, ax = fabsf(x);
    if (film.filter == HG_FILTER_BOX) return ax <= r ? 1.0f : 0.0f;
    if (film.filter == HG_FILTER_TENT) return fmaxf(1.0f - ax / r, 0.0f);
    float a = -0.5f / (film.filter_stddev * film.filter_stddev);
    return fmaxf(expf(a * x * x) - expf(a * r * r), 0.0f);
}

#define HG_PT_MAX_FOOTPRINT 32  // films/block.rs MAX_FOOTPRINT

// Block::splat_normalized into the crop's accumulator: l times the filter weights, which
// sum to 1 over the whole footprint (pixels outside the crop included); a NaN/inf
// contribution is dropped.
__device__ inline void pt_splat(const FlatFilm& film, float* accum, V2 pos, V3 l) {
    if (!finite3(l)) return;
    int cw = (int)film.crop_size[0], ch = (int)film.crop_size[1];
    float r = film.filter_radius;
    if (film.filter == HG_FILTER_BOX && r <= 0.5f) {
        int x = (int)floorf(pos.x), y = (int)floorf(pos.y);
        if (x < 0 || y < 0 || x >= cw || y >= ch) return;
        float* a = accum + ((hg_u64)y * (hg_u64)cw + (hg_u64)x) * HG_PT_ACC;
        atomicAdd(a, l.x);
        atomicAdd(a + 1, l.y);
        atomicAdd(a + 2, l.z);
        return;
    }
    int lo_x = (int)ceilf(pos.x - 0.5f - r), lo_y = (int)ceilf(pos.y - 0.5f - r);
    int nx = (int)floorf(pos.x - 0.5f + r) - lo_x + 1, ny = (int)floorf(pos.y - 0.5f + r) - lo_y + 1;
    nx = nx < HG_PT_MAX_FOOTPRINT ? nx : HG_PT_MAX_FOOTPRINT;
    ny = ny < HG_PT_MAX_FOOTPRINT ? ny : HG_PT_MAX_FOOTPRINT;
    if (nx <= 0 || ny <= 0) return;
    float wx[HG_PT_MAX_FOOTPRINT];
    float sx = 0.0f, sy = 0.0f;
    for (int i = 0; i < nx; ++i) {
        wx[i] = filter_eval(film, (float)(lo_x + i) + 0.5f - pos.x);
        sx += wx[i];
    }
    for (int j = 0; j < ny; ++j) sy += filter_eval(film, (float)(lo_y + j) + 0.5f - pos.y);
    float sum = sx * sy;
    if (!(sum > 0.0f)) return;
    float inv = 1.0f / sum;
    for (int j = 0; j < ny; ++j) {
        int y = lo_y + j;
        if (y < 0 || y >= ch) continue;
        float wy = filter_eval(film, (float)y + 0.5f - pos.y) * inv;
        if (wy == 0.0f) continue;
        for (int i = 0; i < nx; ++i) {
            int x = lo_x + i;
            float w = wx[i] * wy;
            if (x < 0 || x >= cw || w == 0.0f) continue;
            float* a = accum + ((hg_u64)y * (hg_u64)cw + (hg_u64)x) * HG_PT_ACC;
            atomicAdd(a, w * l.x);
            atomicAdd(a + 1, w * l.y);
            atomicAdd(a + 2, w * l.z);
        }
    }
}

// ptracer.rs shadow_ray: from surface point p (normal n) to target.
__device__ inline Ray pt_shadow_ray(V3 p, V3 n, V3 target) {
    Ray r;
    r.o = offset_origin(p, n, target - p);
    V3 to = target - r.o;
    float len = sqrtf(dot(to, to));
    r.d = to / len;
    r.tmax = len * (1.0f - 1e-3f);
    return r;
}

// ptracer.rs adjoint_correction: |cos_s(wi) cos_g(wo)| / |cos_s(wo) cos_g(wi)|, or 0 for
// a direction on different sides of the geometric and the shading surface.
__device__ inline float adjoint_correction(V3 ng, V3 wi_world, V3 wi, V3 wo_world, V3 wo) {
    float gi = dot(ng, wi_world), go = dot(ng, wo_world);
    if (!(gi * wi.z > 0.0f && go * wo.z > 0.0f)) return 0.0f;
    float c = fabsf((wi.z * go) / (wo.z * gi));
    return c <= 3.4028235e38f ? c : 0.0f;
}

// ptracer.rs transmitted_importance_scale: η² for a `roughdielectric` (the only BSDF whose
// eval refracts, with the radiance scaling 1/η² that importance does not have), 1 otherwise.
__device__ inline float transmitted_importance_scale(const SceneData& s, hg_u32 bi, V3 wi) {
#if HG_HAS(HG_BSDF_SET, HG_BSDF_ROUGH_DIELECTRIC)
    BsdfRef b = bsdf_ref(s, bi);
    if (b.kind == HG_BSDF_ROUGH_DIELECTRIC) {
        float eta_rec = ((const RoughDielectric*)b.rec)->eta;
        float eta = wi.z > 0.0f ? eta_rec : 1.0f / eta_rec;
        return eta * eta;
    }
#endif
    (void)s, (void)bi, (void)wi;
    return 1.0f;
}

// Ptracer::sample: one light path (and one connection of a directly visible emitter),
// splatted times `scale`.
__device__ HG_OUTLINE void ptracer_sample(const SceneData& s, const FlatCamera& cam, const FlatFilm& film,
                                          const FlatIntegrator& it, SampleRng& rng, float scale, float* accum) {
    hg_u32 n = s.emitter_count;
    if (n == 0u) return;
    float nf = (float)n;
    auto pick = [&](float u) {
        hg_u32 k = (hg_u32)(u * nf);
        return k < n - 1u ? k : n - 1u;
    };

    // directly visible surface and environment emitters (delta emitters cannot be seen)
    if (!it.hide_emitters) {
        hg_u32 ei = pick(next_1d(rng));
        V2 u = next_2d(rng);
        EmitterRef em = emitter_ref(s, ei);
        hg_u32 kind = HG_KIND(HG_EMITTER_SET, em.kind);
        if ((HG_EMITTER_SET & HG_ENV_EMITTERS) != 0u && HG_HAS(HG_ENV_EMITTERS, kind)) {
            V3 o = v3a(cam.origin);
            EmitterSample es;
            V2 pos;
            float importance;
            if (emitter_sample_at(s, em, o, u, &es) && camera_connect_direction(cam, film, es.d, &pos, &importance) &&
                es.pdf > 0.0f && !scene_occluded(s, make_ray(o, es.d)))
                pt_splat(film, accum, pos, es.radiance * (nf * importance * scale / es.pdf));
        } else if ((HG_EMITTER_SET & HG_SURFACE_EMITTERS) != 0u && HG_HAS(HG_SURFACE_EMITTERS, kind)) {
            PositionSample ps;
            V3 w;
            V2 pos;
            float weight;
            if (emitter_sample_position(s, em, u, &ps, &w) && camera_connect_point(cam, film, ps.p, &pos, &weight)) {
                V3 c = v3a(cam.origin);
                V3 d = normalize_or_zero(c - ps.p);
                float cos = dot(ps.n, d);
                if (cos > 0.0f && !scene_occluded(s, pt_shadow_ray(ps.p, ps.n, c)))
                    pt_splat(film, accum, pos, w * (nf * weight * cos * scale));
            }
        }
    }

    hg_u32 ei = pick(next_1d(rng));
    V2 u_pos = next_2d(rng);
    V2 u_dir = next_2d(rng);
    EmitterRay er;
    if (!emitter_sample_ray(s, ei, u_pos, u_dir, &er)) return;
    V3 throughput = er.weight * nf;
    float tmax = max_comp(throughput);
    if (!(tmax > 0.0f) || !finite3(throughput)) return;
    Ray ray = is_zero(er.n) ? make_ray(er.p, er.d) : make_ray(offset_origin(er.p, er.n, er.d), er.d);
    hg_u32 depth = 1u;
    float eta = 1.0f;
    while (depth < it.max_depth) {
        Hit hit;
        if (!scene_intersect(s, ray, &hit)) break;
        Frame frame = shading_frame(hit);
        V3 wi_world = -ray.d;
        V3 wi = to_local(frame, wi_world);
        hg_u32 bi = s.g.shapes[hit.shape].bsdf;
        SurfacePoint sp = surface_point(hit, frame);

        // connect to the camera
        V2 pos;
        float cw;
        if (!bsdf_is_delta(s, bi, sp) && camera_connect_point(cam, film, hit.p, &pos, &cw)) {
            V3 c = v3a(cam.origin);
            V3 d = normalize_or_zero(c - hit.p);
            V3 wo = to_local(frame, d);
            float corr = adjoint_correction(hit.ng, wi_world, wi, d, wo);
            if (corr > 0.0f) {
                V3 f = bsdf_eval(s, bi, sp, wi, wo);
                if (wi.z * wo.z < 0.0f) f = f * transmitted_importance_scale(s, bi, wi);
                if (!is_zero(f) && !scene_occluded(s, pt_shadow_ray(hit.p, hit.ng, c)))
                    pt_splat(film, accum, pos, mul(throughput, f) * (corr * cw * scale));
            }
        }

        // continue the light path by BSDF sampling
        float u1 = next_1d(rng);
        V2 u2 = next_2d(rng);
        BsdfSample bs;
        if (!bsdf_sample(s, bi, sp, wi, u1, u2, &bs)) break;
        V3 wo_world = to_world(frame, bs.wo);
        float corr = adjoint_correction(hit.ng, wi_world, wi, wo_world, bs.wo);
        if (!(corr > 0.0f)) break;
        V3 weight = bs.weight * corr;
        // BSDFs scale refracted radiance by 1/η²; importance is not scaled
        if (bs.wo.z * wi.z < 0.0f && bs.eta != 1.0f) weight = weight * (bs.eta * bs.eta);
        throughput = mul(throughput, weight);
        eta *= bs.eta;
        tmax = max_comp(throughput);
        if (!(tmax > 0.0f) || !finite3(throughput)) break;
        depth += 1u;
        if (depth >= it.max_depth) break;
        if (depth > it.rr_depth) {
            float q = fminf(tmax * eta * eta, 0.95f);
            if (!(next_1d(rng) < q)) break;
            throughput = throughput / q;
        }
        ray = spawn_ray(hit, wo_world);
    }
}

// Light paths [first, first + count) of a render of `pixels` crop pixels, each splatted
// times `scale` (1 / spp) into `accum` (HG_PT_ACC floats per crop pixel, zeroed).
extern "C" __global__ void hg_ptracer(const __grid_constant__ FlatCamera cam, const __grid_constant__ FlatFilm film,
                                      const __grid_constant__ FlatIntegrator it, HG_SCENE_PARAMS, hg_u64 seed,
                                      hg_u64 first, hg_u32 count, hg_u64 pixels, float scale,
                                      float* __restrict__ accum) {
    hg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    SceneData s = HG_SCENE_DATA;
    hg_u64 k = first + i;
    // light path k is sample k / pixels of stream k % pixels (Ptracer::render)
    SampleRng rng = sample_rng(film.sampler, seed, k % pixels, k / pixels);
    ptracer_sample(s, cam, film, it, rng, scale, accum);
}

// Block::develop_sums: one thread per crop pixel, rgb = the sums, alpha = 1.
extern "C" __global__ void hg_ptracer_develop(const __grid_constant__ FlatFilm film, const float* accum, float* out) {
    hg_u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    hg_u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= film.crop_size[0] || y >= film.crop_size[1]) return;
    hg_u64 i = (hg_u64)y * film.crop_size[0] + x;
    hg_u32 ch = film.alpha ? 4u : 3u;
    for (hg_u32 c = 0; c < 3u; ++c) out[i * ch + c] = accum[i * HG_PT_ACC + c];
    if (ch == 4u) out[i * ch + 3] = 1.0f;
}

#endif
