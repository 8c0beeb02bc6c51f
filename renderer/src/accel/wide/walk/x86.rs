//! The SSE4.2, AVX2 and AVX-512 box tests and the 4-wide triangle test.

use std::arch::x86_64::*;

use super::{Boxes, TriPack, WideNode, WideRay, ROBUST, WIDTH};
use crate::math::triangle::TriRay;
use crate::math::RAY_TMIN;

pub struct SseBoxes;
pub struct Avx2Boxes;
pub struct Avx512Boxes;

impl Boxes for SseBoxes {
    #[inline(always)]
    unsafe fn test(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
        // SAFETY: the caller checked SSE4.2
        unsafe { boxes_sse(n, r, tmax, dist) }
    }
}

impl Boxes for Avx2Boxes {
    #[inline(always)]
    unsafe fn test(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
        // SAFETY: the caller checked AVX2
        unsafe { boxes_avx2(n, r, tmax, dist) }
    }
}

impl Boxes for Avx512Boxes {
    #[inline(always)]
    unsafe fn test(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
        // SAFETY: the caller checked AVX-512F and VL
        unsafe { boxes_avx512(n, r, tmax, dist) }
    }
}

#[target_feature(enable = "sse4.2")]
#[inline]
unsafe fn boxes_sse(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
    let mut mask = 0;
    for half in 0..2 {
        let off = 4 * half;
        let mut near = _mm_setzero_ps();
        let mut far = _mm_set1_ps(f32::INFINITY);
        for a in 0..3 {
            let (o, inv) = (_mm_set1_ps(r.o[a]), _mm_set1_ps(r.inv[a]));
            // SAFETY: off + 4 <= WIDTH
            let (bn, bf) = unsafe {
                (
                    _mm_loadu_ps(n.b[r.near[a]][a].as_ptr().add(off)),
                    _mm_loadu_ps(n.b[1 - r.near[a]][a].as_ptr().add(off)),
                )
            };
            near = _mm_max_ps(near, _mm_mul_ps(_mm_sub_ps(bn, o), inv));
            far = _mm_min_ps(far, _mm_mul_ps(_mm_sub_ps(bf, o), inv));
        }
        let far = _mm_min_ps(_mm_mul_ps(far, _mm_set1_ps(ROBUST)), _mm_set1_ps(tmax));
        // SAFETY: off + 4 <= WIDTH
        unsafe { _mm_storeu_ps(dist.as_mut_ptr().add(off), near) };
        mask |= (_mm_movemask_ps(_mm_cmple_ps(near, far)) as u32) << off;
    }
    mask
}

/// The AVX2 test's distances: `(near, far)` for the eight lanes.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn near_far_avx(n: &WideNode, r: &WideRay, tmax: f32) -> (__m256, __m256) {
    let mut near = _mm256_setzero_ps();
    let mut far = _mm256_set1_ps(f32::INFINITY);
    for a in 0..3 {
        let (o, inv) = (_mm256_set1_ps(r.o[a]), _mm256_set1_ps(r.inv[a]));
        // SAFETY: each row holds WIDTH = 8 floats
        let (bn, bf) = unsafe {
            (
                _mm256_loadu_ps(n.b[r.near[a]][a].as_ptr()),
                _mm256_loadu_ps(n.b[1 - r.near[a]][a].as_ptr()),
            )
        };
        near = _mm256_max_ps(near, _mm256_mul_ps(_mm256_sub_ps(bn, o), inv));
        far = _mm256_min_ps(far, _mm256_mul_ps(_mm256_sub_ps(bf, o), inv));
    }
    let far = _mm256_min_ps(
        _mm256_mul_ps(far, _mm256_set1_ps(ROBUST)),
        _mm256_set1_ps(tmax),
    );
    (near, far)
}

#[target_feature(enable = "avx2")]
#[inline]
unsafe fn boxes_avx2(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
    // SAFETY: AVX2 is enabled here; dist holds 8 floats
    unsafe {
        let (near, far) = near_far_avx(n, r, tmax);
        _mm256_storeu_ps(dist.as_mut_ptr(), near);
        _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(near, far)) as u32
    }
}

#[target_feature(enable = "avx2,avx512f,avx512vl")]
#[inline]
unsafe fn boxes_avx512(n: &WideNode, r: &WideRay, tmax: f32, dist: &mut [f32; WIDTH]) -> u32 {
    // SAFETY: AVX2 and AVX-512VL are enabled here; dist holds 8 floats
    unsafe {
        let (near, far) = near_far_avx(n, r, tmax);
        _mm256_storeu_ps(dist.as_mut_ptr(), near);
        _mm256_cmp_ps_mask::<_CMP_LE_OQ>(near, far) as u32
    }
}

/// The four lanes of `p` that the watertight test hits before `tmax` (bit mask),
/// their distances and barycentrics `(b1, b2)`, and the lanes whose edge functions
/// have an exact zero (which the scalar test must redo in `f64`). Each lane computes
/// exactly the operations of `intersect_tri_watertight`, so hits, distances and
/// barycentrics are bitwise the same.
#[inline(always)]
pub fn tris4(p: &TriPack, r: &TriRay, tmax: f32) -> (u32, [f32; 4], [[f32; 4]; 2], u32) {
    // SAFETY: SSE and SSE2 are part of x86_64
    unsafe {
        let [kx, ky, kz] = r.k;
        let o = r.o.to_array();
        let (sx, sy) = (_mm_set1_ps(r.s.x), _mm_set1_ps(r.s.y));
        let local = |v: &[[f32; 4]; 3]| {
            let x = _mm_sub_ps(_mm_loadu_ps(v[kx].as_ptr()), _mm_set1_ps(o[kx]));
            let y = _mm_sub_ps(_mm_loadu_ps(v[ky].as_ptr()), _mm_set1_ps(o[ky]));
            let z = _mm_sub_ps(_mm_loadu_ps(v[kz].as_ptr()), _mm_set1_ps(o[kz]));
            (
                _mm_add_ps(x, _mm_mul_ps(sx, z)),
                _mm_add_ps(y, _mm_mul_ps(sy, z)),
                z,
            )
        };
        let (a, b, c) = (local(&p.v[0]), local(&p.v[1]), local(&p.v[2]));
        let edge = |u: (__m128, __m128, __m128), v: (__m128, __m128, __m128)| {
            _mm_sub_ps(_mm_mul_ps(u.0, v.1), _mm_mul_ps(u.1, v.0))
        };
        let (e0, e1, e2) = (edge(b, c), edge(c, a), edge(a, b));
        let zero = _mm_setzero_ps();
        let exact_zero = _mm_or_ps(
            _mm_or_ps(_mm_cmpeq_ps(e0, zero), _mm_cmpeq_ps(e1, zero)),
            _mm_cmpeq_ps(e2, zero),
        );
        let neg = _mm_or_ps(
            _mm_or_ps(_mm_cmplt_ps(e0, zero), _mm_cmplt_ps(e1, zero)),
            _mm_cmplt_ps(e2, zero),
        );
        let pos = _mm_or_ps(
            _mm_or_ps(_mm_cmpgt_ps(e0, zero), _mm_cmpgt_ps(e1, zero)),
            _mm_cmpgt_ps(e2, zero),
        );
        let det = _mm_add_ps(_mm_add_ps(e0, e1), e2);
        let reject = _mm_or_ps(
            _mm_or_ps(_mm_and_ps(neg, pos), _mm_cmpeq_ps(det, zero)),
            _mm_cmpunord_ps(det, det),
        );
        let inv_det = _mm_div_ps(_mm_set1_ps(1.0), det);
        let sum = _mm_add_ps(
            _mm_add_ps(_mm_mul_ps(e0, a.2), _mm_mul_ps(e1, b.2)),
            _mm_mul_ps(e2, c.2),
        );
        let t = _mm_mul_ps(_mm_mul_ps(sum, _mm_set1_ps(r.s.z)), inv_det);
        let in_range = _mm_and_ps(
            _mm_cmpgt_ps(t, _mm_set1_ps(RAY_TMIN)),
            _mm_cmplt_ps(t, _mm_set1_ps(tmax)),
        );
        let hit = _mm_andnot_ps(reject, in_range);
        let (mut ts, mut b1, mut b2) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
        _mm_storeu_ps(ts.as_mut_ptr(), t);
        _mm_storeu_ps(b1.as_mut_ptr(), _mm_mul_ps(e1, inv_det));
        _mm_storeu_ps(b2.as_mut_ptr(), _mm_mul_ps(e2, inv_det));
        let redo = _mm_movemask_ps(exact_zero) as u32;
        (_mm_movemask_ps(hit) as u32 & !redo, ts, [b1, b2], redo)
    }
}
