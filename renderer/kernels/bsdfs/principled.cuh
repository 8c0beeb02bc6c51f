// `principled` (renderer/src/bsdfs/principled.rs): the Disney principled BSDF as
// Mitsuba 3 implements it; the pieces it shares with `principledthin` are in
// principledhelpers.cuh.
#pragma once
#include "microfacet.cuh"
#include "principledhelpers.cuh"

struct Principled {
    hg_u32 base_color;       // texture
    hg_u32 roughness;        // texture
    hg_u32 anisotropic;      // texture
    hg_u32 metallic;         // texture
    hg_u32 spec_trans;       // texture
    hg_u32 spec_tint;        // texture
    hg_u32 sheen;            // texture
    hg_u32 sheen_tint;       // texture
    hg_u32 flatness;         // texture
    hg_u32 clearcoat;        // texture
    hg_u32 clearcoat_gloss;  // texture
    float eta;               // inside / outside
    float diffuse_rate;
    float specular_rate;
    float clearcoat_rate;
};

__device__ inline float pr_gtr1_d(float alpha, V3 m) {
    float a2 = alpha * alpha;
    float c = m.z;
    float r = (a2 - 1.0f) / (HG_PI * logf(a2) * (1.0f + (a2 - 1.0f) * (c * c)));
    return r * c > 1e-20f ? r : 0.0f;
}

__device__ inline float pr_gtr1_pdf(float alpha, V3 m) { return m.z < 0.0f ? 0.0f : m.z * pr_gtr1_d(alpha, m); }

__device__ inline V3 pr_gtr1_sample(float alpha, V2 u) {
    float phi = 2.0f * HG_PI * u.x;
    float sin_p = sinf(phi), cos_p = cosf(phi);
    float a2 = alpha * alpha;
    float cos2 = (1.0f - powf(a2, 1.0f - u.y)) / (1.0f - a2);
    float sin_t = sqrtf(fmaxf(1.0f - cos2, 0.0f));
    float cos_t = sqrtf(fmaxf(cos2, 0.0f));
    return v3(cos_p * sin_t, sin_p * sin_t, cos_t);
}

__device__ inline float pr_smith_ggx1(V3 v, V3 m, float alpha) {
    if (dot(v, m) * v.z <= 0.0f) return 0.0f;
    if (v.z == 1.0f) return 1.0f;
    float c2 = v.z * v.z;
    float tan2 = (1.0f - c2) / c2;
    return 2.0f / (1.0f + sqrtf(1.0f + alpha * alpha * tan2));
}

__device__ inline float pr_clearcoat_alpha(float gloss) { return 0.1f * (1.0f - gloss) + 0.001f * gloss; }

// Principled::at
struct PrincipledAt {
    V3 base;
    float roughness, anisotropic, metallic, spec_trans, clearcoat;
};

__device__ inline PrincipledAt principled_at(const SceneData& s, const Principled& r, const SurfacePoint& sp) {
    PrincipledAt a;
    a.base = tex_eval(s, r.base_color, sp);
    a.roughness = tex_eval_1(s, r.roughness, sp);
    a.anisotropic = tex_eval_1(s, r.anisotropic, sp);
    a.metallic = tex_eval_1(s, r.metallic, sp);
    a.spec_trans = tex_eval_1(s, r.spec_trans, sp);
    a.clearcoat = tex_eval_1(s, r.clearcoat, sp);
    return a;
}

// Principled::probs: diffuse, clearcoat, refraction, reflection; false when none.
struct PrincipledProbs {
    float diffuse, clearcoat, trans, reflect;
};

__device__ inline bool principled_probs(const Principled& r, const PrincipledAt& a, bool front, float f,
                                        PrincipledProbs* out) {
    float brdf = (1.0f - a.metallic) * (1.0f - a.spec_trans);
    float bsdf = (1.0f - a.metallic) * a.spec_trans;
    float refl, trans, cc, diff;
    if (front) {
        refl = r.specular_rate * (1.0f - bsdf * (1.0f - f));
        trans = r.specular_rate * bsdf * (1.0f - f);
        cc = 0.25f * a.clearcoat * r.clearcoat_rate;
        diff = brdf * r.diffuse_rate;
    } else if (bsdf > 0.0f) {
        refl = f;
        trans = 1.0f - f;
        cc = 0.0f;
        diff = 0.0f;
    } else {
        return false;
    }
    float total = ((refl + trans) + cc) + diff;
    if (!(total > 0.0f && pr_finite(total))) return false;
    float rc = 1.0f / total;
    out->diffuse = diff * rc;
    out->clearcoat = cc * rc;
    out->trans = trans * rc;
    out->reflect = refl * rc;
    return true;
}

__device__ inline V3 principled_eval(const SceneData& s, const Principled& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    V3 zero = v3(0.0f, 0.0f, 0.0f);
    float cos_i = wi.z;
    if (cos_i == 0.0f) return zero;
    PrincipledAt a = principled_at(s, r, sp);
    float brdf = (1.0f - a.metallic) * (1.0f - a.spec_trans);
    float bsdf = (1.0f - a.metallic) * a.spec_trans;
    float cos_o = wo.z;
    bool refl = cos_i * cos_o > 0.0f;
    bool refr = cos_i * cos_o < 0.0f;
    bool front = cos_i > 0.0f;
    float eta_path = front ? r.eta : 1.0f / r.eta;
    float inv_eta_path = front ? 1.0f / r.eta : r.eta;
    Microfacet spec = pr_spec_distr(a.anisotropic, a.roughness);
    V3 wh = normalize(wi + wo * (refl ? 1.0f : eta_path));
    wh = pr_mulsign(wh, wh.z);
    float wi_h = dot(wi, wh), wo_h = dot(wo, wh);
    float f = fresnel_dielectric(wi_h, r.eta).r;
    bool refl_ok = pr_compatible(wh, wi, wo, cos_i, true);
    bool refr_ok = pr_compatible(wh, wi, wo, cos_i, false);
    float d = mf_d(spec, wh);
    float g = mf_g(spec, wi, wo, wh);
    V3 value = zero;
    if (refl && refl_ok && f > 0.0f) {
        V3 fp;
        if (front) {
            float spec_tint = tex_eval_1(s, r.spec_tint, sp);
            V3 schlick = a.metallic * pr_calc_schlick(a.base, wi_h, r.eta);
            float eta_it = wi_h >= 0.0f ? r.eta : 1.0f / r.eta;
            V3 f0 = pr_tint_color(a.base) * pr_schlick_r0(eta_it);
            schlick += (1.0f - a.metallic) * spec_tint * pr_calc_schlick(f0, wi_h, r.eta);
            float fd = (1.0f - a.metallic) * (1.0f - spec_tint) * f;
            fp = v3(fd, fd, fd) + schlick;
        } else {
            float fd = bsdf * f;
            fp = v3(fd, fd, fd);
        }
        value += fp * (d * g / (4.0f * fabsf(cos_i)));
    }
    if (bsdf > 0.0f && refr && refr_ok && f < 1.0f) {
        float scale = inv_eta_path * inv_eta_path;
        float denom = wi_h + eta_path * wo_h;
        float v = fabsf(scale * (1.0f - f) * d * g * eta_path * eta_path * wi_h * wo_h / (cos_i * (denom * denom)));
        V3 sqrt_base = v3(sqrtf(a.base.x), sqrtf(a.base.y), sqrtf(a.base.z));
        value += sqrt_base * (bsdf * v);
    }
    if (a.clearcoat > 0.0f && refl && refl_ok && front) {
        float gloss = tex_eval_1(s, r.clearcoat_gloss, sp);
        float fcc = pr_calc_schlick(v3(0.04f, 0.04f, 0.04f), wi_h, r.eta).x;
        float dcc = pr_gtr1_d(pr_clearcoat_alpha(gloss), wh);
        float gcc = pr_smith_ggx1(wi, wh, 0.25f) * pr_smith_ggx1(wo, wh, 0.25f);
        float c = a.clearcoat * 0.25f * fcc * dcc * gcc * fabsf(cos_o);
        value += v3(c, c, c);
    }
    if (refl && front) {
        float cos_d = dot(wh, wo);
        if (brdf > 0.0f) {
            float flatness = tex_eval_1(s, r.flatness, sp);
            float shape = pr_diffuse_shape(a.roughness, flatness, fabsf(cos_i), fabsf(cos_o), cos_d);
            value += a.base * (brdf * fabsf(cos_o) * HG_INV_PI * shape);
        }
        float sheen = tex_eval_1(s, r.sheen, sp);
        if (sheen > 0.0f && 1.0f - a.metallic > 0.0f) {
            V3 c = pr_sheen_color(a.base, tex_eval_1(s, r.sheen_tint, sp));
            float fd = pr_schlick_weight(fabsf(cos_d));
            value += c * (sheen * (1.0f - a.metallic) * fd * fabsf(cos_o));
        }
    }
    return finite3(value) ? value : zero;
}

__device__ inline float principled_pdf(const SceneData& s, const Principled& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    float cos_i = wi.z;
    if (cos_i == 0.0f) return 0.0f;
    PrincipledAt a = principled_at(s, r, sp);
    bool front = cos_i > 0.0f;
    float eta_path = front ? r.eta : 1.0f / r.eta;
    float cos_o = wo.z;
    bool refl = cos_i * cos_o > 0.0f;
    bool refr = cos_i * cos_o < 0.0f;
    V3 wh = normalize(wi + wo * (refl ? 1.0f : eta_path));
    wh = pr_mulsign(wh, wh.z);
    float f = fresnel_dielectric(dot(wi, wh), r.eta).r;
    PrincipledProbs pr;
    if (!principled_probs(r, a, front, f, &pr)) return 0.0f;
    float wi_h = dot(wi, wh), wo_h = dot(wo, wh);
    float jac;
    if (refl) {
        jac = 1.0f / (4.0f * wo_h);
    } else {
        float denom = wi_h + eta_path * wo_h;
        jac = eta_path * eta_path * wo_h / (denom * denom);
    }
    jac = fabsf(jac);
    Microfacet spec = pr_spec_distr(a.anisotropic, a.roughness);
    V3 wi_up = pr_mulsign(wi, cos_i);
    float pdf = 0.0f;
    if (refl && pr_compatible(wh, wi, wo, cos_i, true)) {
        pdf += pr.reflect * mf_pdf(spec, wi_up, wh) * jac;
        if (pr.clearcoat > 0.0f) {
            float gloss = tex_eval_1(s, r.clearcoat_gloss, sp);
            pdf += pr.clearcoat * pr_gtr1_pdf(pr_clearcoat_alpha(gloss), wh) * jac;
        }
    }
    if (refl) pdf += pr.diffuse * cosine_hemisphere_pdf(wo);
    if (refr && pr_compatible(wh, wi, wo, cos_i, false)) pdf += pr.trans * mf_pdf(spec, wi_up, wh) * jac;
    return pr_finite(pdf) ? pdf : 0.0f;
}

__device__ inline bool principled_sample(const SceneData& s, const Principled& r, const SurfacePoint& sp, V3 wi, float u1, V2 u2,
                                         BsdfSample* out) {
    float cos_i = wi.z;
    if (cos_i == 0.0f) return false;
    PrincipledAt a = principled_at(s, r, sp);
    bool front = cos_i > 0.0f;
    V3 m = mf_sample(pr_spec_distr(a.anisotropic, a.roughness), pr_mulsign(wi, cos_i), u2);
    DielectricFresnel f = fresnel_dielectric(dot(wi, m), r.eta);
    PrincipledProbs pr;
    if (!principled_probs(r, a, front, f.r, &pr)) return false;
    V3 wo;
    float eta = 1.0f;
    if (u1 < pr.diffuse) {
        wo = square_to_cosine_hemisphere(u2);
    } else if (u1 < pr.diffuse + pr.clearcoat) {
        float gloss = tex_eval_1(s, r.clearcoat_gloss, sp);
        V3 mc = pr_gtr1_sample(pr_clearcoat_alpha(gloss), u2);
        wo = reflect(wi, mc);
        if (!(cos_i * wo.z > 0.0f && pr_compatible(mc, wi, wo, cos_i, true))) return false;
    } else if (u1 < (pr.diffuse + pr.clearcoat) + pr.trans) {
        wo = m * (dot(wi, m) * f.eta_ti + f.cos_theta_t) - wi * f.eta_ti;
        if (!(cos_i * wo.z < 0.0f && pr_compatible(m, wi, wo, cos_i, false))) return false;
        eta = f.eta_it;
    } else {
        wo = reflect(wi, m);
        if (!(cos_i * wo.z > 0.0f && pr_compatible(m, wi, wo, cos_i, true))) return false;
    }
    if (cos_i * wo.z == 0.0f) return false;
    float pdf = principled_pdf(s, r, sp, wi, wo);
    if (!(pdf > 0.0f && pr_finite(pdf))) return false;
    V3 weight = principled_eval(s, r, sp, wi, wo) / pdf;
    if (!finite3(weight)) return false;
    out->wo = wo;
    out->pdf = pdf;
    out->weight = weight;
    out->eta = eta;
    out->delta = false;
    return true;
}
