//! What the device's elementwise kernel (kernels/elementwise.cu) computes, checked
//! without a GPU: the operations by NumPy name and NumPy's broadcasting rules.

use crate::error::{Error, Result};

/// Most dimensions an elementwise operand may have (kernels/elementwise.cu `HG_EW_DIMS`).
pub const EW_DIMS: usize = 8;

/// The operations of two operands, then of one; an op's code is its position here
/// (the `case` of kernels/elementwise.cu `hg_apply`).
pub const OPS: [&str; 30] = [
    "add",
    "subtract",
    "multiply",
    "true_divide",
    "power",
    "minimum",
    "maximum",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
    "arctan2",
    "negative",
    "positive",
    "absolute",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "tanh",
    "floor",
    "ceil",
    "sign",
];

/// The first operation of one operand in [`OPS`].
pub const FIRST_UNARY: usize = 14;

/// An operand: a tensor of the given shape, or a constant.
pub enum Operand<'a, T> {
    /// A tensor and its shape.
    Tensor(&'a T, Vec<usize>),
    /// A number, the same for every element.
    Scalar(f32),
}

/// The code of `op` for `arity` operands; an error listing the operations otherwise.
pub fn op_code(op: &str, arity: usize) -> Result<u32> {
    let range = if arity == 2 {
        0..FIRST_UNARY
    } else {
        FIRST_UNARY..OPS.len()
    };
    OPS[range.clone()]
        .iter()
        .position(|o| *o == op)
        .map(|i| (i + range.start) as u32)
        .ok_or_else(|| {
            Error::Cuda(format!(
                "TensorXf {op}: not available on CUDA tensors for {arity} operand(s) (available: {})",
                OPS[range].join(", ")
            ))
        })
}

/// The broadcast output shape and, per operand, its strides in elements over that
/// shape (0 along broadcast dimensions; none for constants), by NumPy's rules.
pub fn broadcast<T>(op: &str, args: &[Operand<'_, T>]) -> Result<(Vec<usize>, Vec<Vec<i64>>)> {
    let shapes: Vec<&[usize]> = args
        .iter()
        .filter_map(|a| match a {
            Operand::Tensor(_, s) => Some(&s[..]),
            Operand::Scalar(_) => None,
        })
        .collect();
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let shown = || {
        shapes
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    if ndim > EW_DIMS {
        return Err(Error::Cuda(format!(
            "TensorXf {op}: at most {EW_DIMS} dimensions on CUDA, got shapes {}",
            shown()
        )));
    }
    let mut out = vec![1usize; ndim];
    for s in &shapes {
        for (d, &e) in s.iter().enumerate() {
            let o = &mut out[ndim - s.len() + d];
            if *o == 1 {
                *o = e;
            } else if e != 1 && e != *o {
                return Err(Error::Cuda(format!(
                    "TensorXf {op}: the operands' shapes {} do not broadcast",
                    shown()
                )));
            }
        }
    }
    let strides = args
        .iter()
        .map(|a| match a {
            Operand::Scalar(_) => Vec::new(),
            Operand::Tensor(_, s) => {
                let mut st = vec![0i64; ndim];
                let mut step = 1i64;
                for (d, &e) in s.iter().enumerate().rev() {
                    if e != 1 {
                        st[ndim - s.len() + d] = step;
                    }
                    step *= e as i64;
                }
                st
            }
        })
        .collect();
    Ok((out, strides))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize]) -> Operand<'static, ()> {
        Operand::Tensor(&(), shape.to_vec())
    }

    #[test]
    fn shapes_broadcast_as_numpy() {
        let (s, st) = broadcast("add", &[t(&[4, 1, 3]), t(&[5, 1])]).unwrap();
        assert_eq!(s, [4, 5, 3]);
        assert_eq!(st, [vec![3, 0, 1], vec![0, 1, 0]]);
        let (s, st) = broadcast("add", &[t(&[2, 3]), Operand::Scalar(1.0)]).unwrap();
        assert_eq!((s, st), (vec![2, 3], vec![vec![3, 1], vec![]]));
        let (s, _) = broadcast::<()>("negative", &[t(&[])]).unwrap();
        assert!(s.is_empty(), "0-d tensors stay 0-d");
        let e = broadcast("add", &[t(&[2, 3]), t(&[4])])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("[2, 3] and [4]") && e.contains("do not broadcast"),
            "{e}"
        );
        let e = broadcast("add", &[t(&[1; 9]), t(&[1])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 8"), "{e}");
    }

    #[test]
    fn op_codes_match_the_kernel_cases() {
        let src = crate::backend::cuda::kernels::file("elementwise.cu").unwrap();
        for (i, op) in OPS.iter().enumerate() {
            let case = format!("case {i}: ");
            let line = src
                .lines()
                .find(|l| l.trim_start().starts_with(&case))
                .unwrap_or_else(|| panic!("no case {i} in elementwise.cu"));
            assert!(
                line.contains(&format!("// {op}")),
                "case {i} is not {op}: {line}"
            );
        }
        assert_eq!(op_code("add", 2).unwrap(), 0);
        assert_eq!(op_code("sqrt", 1).unwrap(), 17);
        let e = op_code("sqrt", 2).unwrap_err().to_string();
        assert!(e.contains("not available") && e.contains("arctan2"), "{e}");
        assert!(op_code("cbrt", 1).is_err());
    }
}
