//! Tests of the strided reader against a naive reference on random layouts.

use super::*;
use crate::math::Pcg32;
use crate::tensor::dlpack::DLDevice;

/// A tensor over `bytes` (element (0, ..) at `origin` bytes in).
fn tensor(
    bytes: &mut [u8],
    origin: usize,
    dt: DLDataType,
    shape: &mut [i64],
    strides: Option<&mut [i64]>,
) -> DLTensor {
    DLTensor {
        data: bytes.as_mut_ptr() as *mut std::ffi::c_void,
        device: DLDevice {
            device_type: 1,
            device_id: 0,
        },
        ndim: shape.len() as i32,
        dtype: dt,
        shape: shape.as_mut_ptr(),
        strides: strides.map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: origin as u64,
    }
}

/// The element at multi-index `idx`, the slow way.
fn naive(bytes: &[u8], origin: usize, dt: DLDataType, strides: &[i64], idx: &[i64]) -> f32 {
    let elem = (dt.bits / 8) as i64;
    let off = origin as i64 + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<i64>() * elem;
    let p = &bytes[off as usize..off as usize + elem as usize];
    match (dt.code, dt.bits) {
        (CODE_FLOAT, 16) => half_to_f32(u16::from_le_bytes([p[0], p[1]])),
        (CODE_FLOAT, 32) => f32::from_le_bytes(p.try_into().unwrap()),
        (CODE_FLOAT, 64) => f64::from_le_bytes(p.try_into().unwrap()) as f32,
        (CODE_INT, 16) => i16::from_le_bytes([p[0], p[1]]) as f32,
        (CODE_UINT, 8) => p[0] as f32,
        _ => unreachable!(),
    }
}

#[test]
fn random_layouts_read_like_the_naive_reference() {
    let mut rng = Pcg32::new(5, 7);
    let dts = [
        DLDataType::F32,
        DLDataType {
            code: CODE_FLOAT,
            bits: 16,
            lanes: 1,
        },
        DLDataType {
            code: CODE_FLOAT,
            bits: 64,
            lanes: 1,
        },
        DLDataType {
            code: CODE_INT,
            bits: 16,
            lanes: 1,
        },
        DLDataType {
            code: CODE_UINT,
            bits: 8,
            lanes: 1,
        },
    ];
    for case in 0..400 {
        let dt = dts[case % dts.len()];
        let elem = (dt.bits / 8) as i64;
        let nd = (rng.next_u32() % 4) as usize;
        let mut shape: Vec<i64> = (0..nd).map(|_| (rng.next_u32() % 5) as i64).collect();
        // strides: compact, permuted, negative, zero (broadcast), or gapped
        let mut strides: Vec<i64> = (0..nd)
            .map(|_| match rng.next_u32() % 5 {
                0 => 0,
                1 => -(1 + (rng.next_u32() % 7) as i64),
                _ => 1 + (rng.next_u32() % 7) as i64,
            })
            .collect();
        let (mut lo, mut hi) = (0i64, 0i64);
        if shape.iter().all(|&n| n > 0) {
            for (&n, &s) in shape.iter().zip(&strides) {
                lo += ((n - 1) * s).min(0);
                hi += ((n - 1) * s).max(0);
            }
        }
        let origin = (-lo * elem) as usize + 3; // odd: unaligned elements
        let len = origin + ((hi + 1) * elem) as usize + 5;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u32() as u8).collect();
        // finite float16/32/64 values: rewrite every element slot with a small number
        let snapshot = bytes.clone();
        let t = tensor(&mut bytes, origin, dt, &mut shape, Some(&mut strides));
        let got = unsafe { read_host(&t) }.unwrap();
        assert_eq!(
            got.shape,
            shape.iter().map(|&n| n as usize).collect::<Vec<_>>()
        );
        let mut i = 0;
        let count: i64 = shape.iter().product();
        for flat in 0..count {
            let mut rem = flat;
            let mut idx = vec![0i64; nd];
            for d in (0..nd).rev() {
                idx[d] = rem % shape[d];
                rem /= shape[d];
            }
            let want = naive(&snapshot, origin, dt, &strides, &idx);
            let g = got.data[i];
            assert!(
                g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                "case {case} {dt:?} shape {shape:?} strides {strides:?} at {idx:?}: {g} vs {want}"
            );
            i += 1;
        }
        assert_eq!(i, got.data.len());
    }
}

#[test]
fn compact_layouts_and_absent_strides_agree() {
    let vals: Vec<f32> = (0..24).map(|i| i as f32 * 0.5).collect();
    let mut bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut shape = [2i64, 3, 4];
    let t = tensor(&mut bytes, 0, DLDataType::F32, &mut shape, None);
    let a = unsafe { read_host(&t) }.unwrap();
    assert_eq!(a.data, vals);
    let mut strides = [12i64, 4, 1];
    let mut shape = [2i64, 3, 4];
    let t = tensor(
        &mut bytes,
        0,
        DLDataType::F32,
        &mut shape,
        Some(&mut strides),
    );
    assert_eq!(unsafe { read_host(&t) }.unwrap().data, vals);
}

#[test]
fn bad_layouts_and_types_are_errors_not_reads() {
    let mut bytes = vec![0u8; 64];
    type Case = (Vec<i64>, Option<Vec<i64>>, &'static str);
    let cases: Vec<Case> = vec![
        (vec![2, -1], None, "negative extent"),
        (
            vec![1 << 20, 1 << 20, 1 << 20],
            Some(vec![0, 0, 0]),
            "more than",
        ),
        (
            vec![2, 2],
            Some(vec![i64::MAX / 2, 1]),
            "beyond addressable",
        ),
        (vec![1; 33], None, "33 dimensions"),
    ];
    for (mut shape, strides, want) in cases {
        let mut strides = strides;
        let t = tensor(
            &mut bytes,
            0,
            DLDataType::F32,
            &mut shape,
            strides.as_deref_mut(),
        );
        let e = unsafe { read_host(&t) }.unwrap_err();
        assert!(
            matches!(
                e,
                Error::Array {
                    problem: ArrayProblem::Layout,
                    ..
                }
            ) && e.to_string().contains(want),
            "{e}"
        );
    }
    let mut shape = [2i64];
    for dt in [
        DLDataType {
            code: CODE_FLOAT,
            bits: 8,
            lanes: 1,
        },
        DLDataType {
            code: 5,
            bits: 64,
            lanes: 1,
        },
        DLDataType {
            code: CODE_FLOAT,
            bits: 32,
            lanes: 4,
        },
    ] {
        let t = tensor(&mut bytes, 0, dt, &mut shape, None);
        let e = unsafe { read_host(&t) }.unwrap_err();
        assert!(
            matches!(
                e,
                Error::Array {
                    problem: ArrayProblem::Dtype,
                    ..
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn half_floats_decode_exactly() {
    assert_eq!(half_to_f32(0x3c00), 1.0);
    assert_eq!(half_to_f32(0xc000), -2.0);
    assert_eq!(half_to_f32(0x3555), 0.333_251_95);
    assert_eq!(half_to_f32(0x0001), 5.960_464_5e-8);
    assert!(half_to_f32(0x7c00).is_infinite());
    assert!(half_to_f32(0x7e00).is_nan());
}
