// Camera rays (sensors/camera.rs): the pinhole, thin-lens and orthographic cameras.
#pragma once
#include "samplers.cuh"

// Camera::sample_ray (sensors/camera.rs) at full-film position (px, py); a thin lens
// reads the aperture sample (ax, ay), which the caller draws for it only.
__device__ inline Ray camera_ray(const FlatCamera& cam, const FlatFilm& film, float px, float py,
                                 float ax, float ay) {
    float sx = 1.0f - 2.0f * px / (float)film.width;
    float sy = 1.0f - 2.0f * py / (float)film.height;
    Ray r;
    if (cam.kind == HG_CAMERA_ORTHOGRAPHIC) {
        V3 v = affine_vector(cam.lin, v3(0.0f, 0.0f, 1.0f));
        r.d = v * (1.0f / sqrtf(dot(v, v)));
        r.o = v3a(cam.origin) + affine_vector(cam.lin, v3(sx, sy / cam.aspect, cam.near_clip));
        r.tmax = cam.far_clip - cam.near_clip;
        return r;
    }
    V3 dl = v3(sx * cam.tan_half_x, sy * cam.tan_half_x / cam.aspect, 1.0f);
    if (cam.kind == HG_CAMERA_THINLENS) {
        V2 a = square_to_uniform_disk_concentric(v2(ax, ay));
        V3 lens = v3(a.x * cam.aperture_radius, a.y * cam.aperture_radius, 0.0f);
        V3 f = dl * cam.focus_distance - lens;
        V3 dir = f * (1.0f / sqrtf(dot(f, f)));
        V3 v = affine_vector(cam.lin, dir);
        r.d = v * (1.0f / sqrtf(dot(v, v)));
        float t_near = cam.near_clip / dir.z, t_far = cam.far_clip / dir.z;
        r.o = (v3a(cam.origin) + affine_vector(cam.lin, lens)) + r.d * t_near;
        r.tmax = t_far - t_near;
        return r;
    }
    float inv_z = 1.0f / sqrtf(dot(dl, dl));
    V3 v = affine_vector(cam.lin, dl);
    V3 d = v * (1.0f / sqrtf(dot(v, v)));
    float t_near = cam.near_clip / inv_z;
    float t_far = cam.far_clip / inv_z;
    r.o = v3a(cam.origin) + d * t_near;
    r.d = d;
    r.tmax = t_far - t_near;
    return r;
}

// The aperture sample of a camera ray: two draws for a thin lens, none otherwise (the
// CPU backend draws in the same order: film jitter, aperture, then the integrator's).
__device__ inline V2 aperture_sample(const FlatCamera& cam, SampleRng& rng) {
    if (cam.kind != HG_CAMERA_THINLENS)
        return v2(0.0f, 0.0f);
    return next_2d(rng);
}
