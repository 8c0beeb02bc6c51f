// `principledthin` (renderer/src/bsdfs/principledthin.rs): the thin-sheet Disney
// principled BSDF as Mitsuba 3 implements it; shares its pieces with principled.cuh
// (principledhelpers.cuh).
#pragma once
#include "principledhelpers.cuh"

struct PrincipledThin {
    hg_u32 base_color;   // texture
    hg_u32 roughness;    // texture
    hg_u32 anisotropic;  // texture
    hg_u32 spec_trans;   // texture
    hg_u32 eta;          // texture
    hg_u32 spec_tint;    // texture
    hg_u32 sheen;        // texture
    hg_u32 sheen_tint;   // texture
    hg_u32 flatness;     // texture
    hg_u32 diff_trans;   // texture (0 to 2)
    float spec_refl_rate;
    float spec_trans_rate;
    float diff_refl_rate;
    float diff_trans_rate;
};

// PrincipledThin::at
struct PrincipledThinAt {
    float roughness, anisotropic, spec_trans, eta, diff_trans;  // diff_trans / 2
};

__device__ inline PrincipledThinAt principledthin_at(const SceneData& s, const PrincipledThin& r, const SurfacePoint& sp) {
    PrincipledThinAt a;
    a.roughness = tex_eval_1(s, r.roughness, sp);
    a.anisotropic = tex_eval_1(s, r.anisotropic, sp);
    a.spec_trans = tex_eval_1(s, r.spec_trans, sp);
    a.eta = tex_eval_1(s, r.eta, sp);
    a.diff_trans = tex_eval_1(s, r.diff_trans, sp) / 2.0f;
    return a;
}

// PrincipledThin::probs: specular reflection, specular transmission, diffuse
// reflection, diffuse transmission; false when none.
struct PrincipledThinProbs {
    float spec_refl, spec_trans, diff_refl, diff_trans;
};

__device__ inline bool principledthin_probs(const PrincipledThin& r, const PrincipledThinAt& a,
                                            PrincipledThinProbs* out) {
    float sr = a.spec_trans * r.spec_refl_rate / 2.0f;
    float st = a.spec_trans * r.spec_trans_rate / 2.0f;
    float dr = r.diff_refl_rate * (1.0f - a.spec_trans) * (1.0f - a.diff_trans);
    float dt = r.diff_trans_rate * (1.0f - a.spec_trans) * a.diff_trans;
    float total = ((sr + st) + dr) + dt;
    if (!(total > 0.0f && pr_finite(total))) return false;
    float rc = 1.0f / total;
    out->spec_refl = sr * rc;
    out->spec_trans = st * rc;
    out->diff_refl = dr * rc;
    out->diff_trans = dt * rc;
    return true;
}

// PrincipledThin::trans_distr
__device__ inline Microfacet principledthin_trans_distr(const PrincipledThinAt& a) {
    return pr_spec_distr(a.anisotropic, (0.65f * a.eta - 0.35f) * a.roughness);
}

__device__ inline V3 principledthin_eval(const SceneData& s, const PrincipledThin& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    V3 zero = v3(0.0f, 0.0f, 0.0f);
    if (wi.z == 0.0f) return zero;
    PrincipledThinAt a = principledthin_at(s, r, sp);
    V3 base = tex_eval(s, r.base_color, sp);
    V3 wf = pr_mulsign(wi, wi.z);
    V3 wo_t = pr_mulsign(wo, wi.z);
    float cos_i = wf.z;
    float cos_o = wo_t.z;
    bool refl = cos_o > 0.0f;
    bool refr = cos_o < 0.0f;
    V3 wo_r = v3(wo_t.x, wo_t.y, fabsf(wo_t.z));
    V3 wh = normalize(wf + wo_r);
    float st = a.spec_trans;
    V3 value = zero;
    if (st > 0.0f && (refl || refr)) {
        float f = fresnel_dielectric(dot(wf, wh), a.eta).r;
        if (refl && pr_compatible(wh, wf, wo_t, cos_i, true)) {
            Microfacet spec = pr_spec_distr(a.anisotropic, a.roughness);
            float spec_tint = tex_eval_1(s, r.spec_tint, sp);
            V3 f0 = pr_tint_color(base) * pr_schlick_r0(a.eta);
            V3 schlick = pr_calc_schlick(f0, dot(wf, wh), a.eta);
            float fd = f * (1.0f - spec_tint);
            V3 f_thin = v3(fd, fd, fd) + schlick * spec_tint;
            float dg = mf_d(spec, wh) * mf_g(spec, wf, wo_t, wh);
            value += f_thin * (st * dg / (4.0f * cos_i));
        }
        if (refr && pr_compatible(wh, wf, wo_t, cos_i, false)) {
            Microfacet spec = principledthin_trans_distr(a);
            float dg = mf_d(spec, wh) * mf_g(spec, wf, wo_t, wh);
            value += base * (st * (1.0f - f) * dg / (4.0f * cos_i));
        }
    }
    if (refl && st < 1.0f && a.diff_trans < 1.0f) {
        float cos_d = dot(wh, wo_t);
        float shape = pr_diffuse_shape(a.roughness, tex_eval_1(s, r.flatness, sp), cos_i, cos_o, cos_d);
        float k = (1.0f - st) * (1.0f - a.diff_trans);
        value += base * (k * cos_o * HG_INV_PI * shape);
        float sheen = tex_eval_1(s, r.sheen, sp);
        if (sheen > 0.0f) {
            V3 c = pr_sheen_color(base, tex_eval_1(s, r.sheen_tint, sp));
            float fd = pr_schlick_weight(fabsf(cos_d));
            value += c * (sheen * k * fd * cos_o);
        }
    }
    if (refr && st < 1.0f && a.diff_trans > 0.0f) {
        value += base * ((1.0f - st) * a.diff_trans * HG_INV_PI * fabsf(cos_o));
    }
    return finite3(value) ? value : zero;
}

__device__ inline float principledthin_pdf(const SceneData& s, const PrincipledThin& r, const SurfacePoint& sp, V3 wi, V3 wo) {
    if (wi.z == 0.0f) return 0.0f;
    PrincipledThinAt a = principledthin_at(s, r, sp);
    PrincipledThinProbs pr;
    if (!principledthin_probs(r, a, &pr)) return 0.0f;
    V3 wf = pr_mulsign(wi, wi.z);
    V3 wo_t = pr_mulsign(wo, wi.z);
    bool refl = wo_t.z > 0.0f;
    bool refr = wo_t.z < 0.0f;
    float pdf = 0.0f;
    if (pr.spec_refl > 0.0f || pr.spec_trans > 0.0f) {
        V3 wo_r = v3(wo_t.x, wo_t.y, fabsf(wo_t.z));
        V3 wh = normalize(wf + wo_r);
        float jac = fabsf(1.0f / (4.0f * dot(wo_r, wh)));
        if (refl && pr_compatible(wh, wf, wo_t, wf.z, true)) {
            pdf += pr.spec_refl * mf_pdf(pr_spec_distr(a.anisotropic, a.roughness), wf, wh) * jac;
        }
        if (refr && pr_compatible(wh, wf, wo_t, wf.z, false)) {
            pdf += pr.spec_trans * mf_pdf(principledthin_trans_distr(a), wf, wh) * jac;
        }
    }
    if (refl) pdf += pr.diff_refl * cosine_hemisphere_pdf(wo_t);
    if (refr) pdf += pr.diff_trans * cosine_hemisphere_pdf(-wo_t);
    return pr_finite(pdf) ? pdf : 0.0f;
}

__device__ inline bool principledthin_sample(const SceneData& s, const PrincipledThin& r, const SurfacePoint& sp, V3 wi, float u1,
                                             V2 u2, BsdfSample* out) {
    float cos_i = wi.z;
    if (cos_i == 0.0f) return false;
    PrincipledThinAt a = principledthin_at(s, r, sp);
    PrincipledThinProbs pr;
    if (!principledthin_probs(r, a, &pr)) return false;
    V3 wf = pr_mulsign(wi, cos_i);
    V3 wo;
    if (u1 < pr.spec_refl) {
        V3 m = mf_sample(pr_spec_distr(a.anisotropic, a.roughness), wf, u2);
        wo = reflect(wf, m);
        if (!(wo.z > 0.0f && pr_compatible(m, wf, wo, wf.z, true))) return false;
    } else if (u1 < pr.spec_refl + pr.spec_trans) {
        V3 m = mf_sample(principledthin_trans_distr(a), wf, u2);
        V3 rr = reflect(wf, m);
        wo = v3(rr.x, rr.y, -rr.z);
        if (!(wo.z < 0.0f && pr_compatible(m, wf, wo, wf.z, false))) return false;
    } else if (u1 < (pr.spec_refl + pr.spec_trans) + pr.diff_refl) {
        wo = square_to_cosine_hemisphere(u2);
    } else {
        wo = -square_to_cosine_hemisphere(u2);
    }
    wo = pr_mulsign(wo, cos_i);
    float pdf = principledthin_pdf(s, r, sp, wi, wo);
    if (!(pdf > 0.0f && pr_finite(pdf))) return false;
    V3 weight = principledthin_eval(s, r, sp, wi, wo) / pdf;
    if (!finite3(weight)) return false;
    out->wo = wo;
    out->pdf = pdf;
    out->weight = weight;
    out->eta = 1.0f;
    out->delta = false;
    return true;
}
