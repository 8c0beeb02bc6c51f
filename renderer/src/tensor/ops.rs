//! Elementwise arithmetic and comparisons of host tensors, with NumPy's rules: shapes
//! broadcast (each dimension matches, or is 1 in one operand), a number combines with
//! every element in float32 (NumPy's weak Python scalars), and a comparison gives 1.0
//! (true) or 0.0 (false). Only the operations whose float32 results are exact IEEE
//! operations are here, so they equal NumPy's bit for bit.

use crate::desc::params::shape_str;
use crate::error::{ArrayProblem, Error, Result};

/// An operand: a tensor's values with their shape, or one number.
#[derive(Clone, Copy, Debug)]
pub enum Operand<'a> {
    /// Values in C order, and their shape.
    Values(&'a [f32], &'a [usize]),
    /// A number.
    Scalar(f32),
}

impl Operand<'_> {
    fn shape(&self) -> &[usize] {
        match self {
            Operand::Values(_, s) => s,
            Operand::Scalar(_) => &[],
        }
    }
}

/// A binary operation, by its NumPy ufunc name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    /// `add`.
    Add,
    /// `subtract`.
    Subtract,
    /// `multiply`.
    Multiply,
    /// `true_divide`.
    Divide,
    /// `less`.
    Less,
    /// `less_equal`.
    LessEqual,
    /// `greater`.
    Greater,
    /// `greater_equal`.
    GreaterEqual,
    /// `equal`.
    Equal,
    /// `not_equal`.
    NotEqual,
}

impl Binary {
    /// The operation a NumPy ufunc name names, if it is one of these.
    pub fn from_name(name: &str) -> Option<Binary> {
        Some(match name {
            "add" => Binary::Add,
            "subtract" => Binary::Subtract,
            "multiply" => Binary::Multiply,
            "true_divide" | "divide" => Binary::Divide,
            "less" => Binary::Less,
            "less_equal" => Binary::LessEqual,
            "greater" => Binary::Greater,
            "greater_equal" => Binary::GreaterEqual,
            "equal" => Binary::Equal,
            "not_equal" => Binary::NotEqual,
            _ => return None,
        })
    }

    fn apply(self, x: f32, y: f32) -> f32 {
        let truth = |b: bool| if b { 1.0 } else { 0.0 };
        match self {
            Binary::Add => x + y,
            Binary::Subtract => x - y,
            Binary::Multiply => x * y,
            Binary::Divide => x / y,
            Binary::Less => truth(x < y),
            Binary::LessEqual => truth(x <= y),
            Binary::Greater => truth(x > y),
            Binary::GreaterEqual => truth(x >= y),
            Binary::Equal => truth(x == y),
            Binary::NotEqual => truth(x != y),
        }
    }
}

/// A unary operation, by its NumPy ufunc name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    /// `negative`.
    Negative,
    /// `absolute`.
    Absolute,
    /// `positive`.
    Positive,
}

impl Unary {
    /// The operation a NumPy ufunc name names, if it is one of these.
    pub fn from_name(name: &str) -> Option<Unary> {
        Some(match name {
            "negative" => Unary::Negative,
            "absolute" => Unary::Absolute,
            "positive" => Unary::Positive,
            _ => return None,
        })
    }

    /// `op` of every value.
    pub fn apply(self, values: &[f32]) -> Vec<f32> {
        match self {
            Unary::Negative => values.iter().map(|v| -v).collect(),
            Unary::Absolute => values.iter().map(|v| v.abs()).collect(),
            Unary::Positive => values.to_vec(),
        }
    }
}

/// The shape that `a` and `b` broadcast to, if they do.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let dim = |s: &[usize], k: usize| (k + s.len()).checked_sub(n).map_or(1, |i| s[i]);
    (0..n)
        .map(|k| match (dim(a, k), dim(b, k)) {
            (x, y) if x == y || y == 1 => Some(x),
            (1, y) => Some(y),
            _ => None,
        })
        .collect()
}

/// The C-order element strides of `shape` seen as `out` (0 along broadcast axes).
fn strides_in(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; out.len()];
    let mut s = 1;
    for (k, &n) in shape.iter().enumerate().rev() {
        let o = k + out.len() - shape.len();
        strides[o] = if n == 1 { 0 } else { s };
        s *= n;
    }
    strides
}

/// `a <op> b` elementwise, with the broadcast shape; an error naming `name` (the
/// ufunc) when the shapes do not broadcast.
pub fn binary(
    op: Binary,
    name: &str,
    a: Operand<'_>,
    b: Operand<'_>,
) -> Result<(Vec<usize>, Vec<f32>)> {
    let shape = broadcast(a.shape(), b.shape()).ok_or_else(|| Error::Array {
        problem: ArrayProblem::Layout,
        msg: format!(
            "TensorXf {name}: the operands' shapes {} and {} do not broadcast \
             (each dimension must match, or be 1 in one of them)",
            shape_str(a.shape()),
            shape_str(b.shape())
        ),
    })?;
    let values = match (a, b) {
        (Operand::Values(x, sx), Operand::Values(y, sy)) if sx == sy => {
            x.iter().zip(y).map(|(&x, &y)| op.apply(x, y)).collect()
        }
        (Operand::Values(x, sx), Operand::Scalar(y)) if sx == shape => {
            x.iter().map(|&x| op.apply(x, y)).collect()
        }
        (Operand::Scalar(x), Operand::Values(y, sy)) if sy == shape => {
            y.iter().map(|&y| op.apply(x, y)).collect()
        }
        _ => broadcast_apply(op, a, b, &shape),
    };
    Ok((shape, values))
}

/// The general case of [`binary`]: walks the output in C order.
fn broadcast_apply(op: Binary, a: Operand<'_>, b: Operand<'_>, shape: &[usize]) -> Vec<f32> {
    let count: usize = shape.iter().product();
    let sa = strides_in(a.shape(), shape);
    let sb = strides_in(b.shape(), shape);
    let read = |o: &Operand<'_>, i: usize| match o {
        Operand::Values(v, _) => v[i],
        Operand::Scalar(x) => *x,
    };
    let mut index = vec![0usize; shape.len()];
    let (mut ia, mut ib) = (0usize, 0usize);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(op.apply(read(&a, ia), read(&b, ib)));
        // the next index in C order, carrying into the outer axes
        for k in (0..shape.len()).rev() {
            index[k] += 1;
            ia += sa[k];
            ib += sb[k];
            if index[k] < shape[k] {
                break;
            }
            ia -= sa[k] * shape[k];
            ib -= sb[k] * shape[k];
            index[k] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts_as_numpy() {
        assert_eq!(broadcast(&[2, 3], &[3]), Some(vec![2, 3]));
        assert_eq!(broadcast(&[2, 1], &[1, 4]), Some(vec![2, 4]));
        assert_eq!(broadcast(&[], &[5]), Some(vec![5]));
        assert_eq!(broadcast(&[2, 3], &[2]), None);
        assert_eq!(broadcast(&[0], &[1]), Some(vec![0]));
    }

    #[test]
    fn broadcast_values_follow_c_order() {
        let a = [1.0, 2.0];
        let b = [10.0, 20.0, 30.0];
        let (shape, v) = binary(
            Binary::Add,
            "add",
            Operand::Values(&a, &[2, 1]),
            Operand::Values(&b, &[3]),
        )
        .unwrap();
        assert_eq!(shape, vec![2, 3]);
        assert_eq!(v, vec![11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
    }

    #[test]
    fn shapes_that_do_not_broadcast_name_both() {
        let a = [0.0; 6];
        let b = [0.0; 2];
        let e = binary(
            Binary::Less,
            "less",
            Operand::Values(&a, &[2, 3]),
            Operand::Values(&b, &[2]),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "TensorXf less: the operands' shapes (2, 3) and (2,) do not broadcast \
             (each dimension must match, or be 1 in one of them)"
        );
    }
}
