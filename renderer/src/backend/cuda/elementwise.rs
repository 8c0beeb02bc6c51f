//! What the device's elementwise kernel (kernels/elementwise.cu) computes, checked
//! without a GPU: the operations by NumPy name, NumPy's broadcasting rules, and the
//! [`Plan`] of each launch: which element each result goes to (a new tensor, or the
//! view an index names for an assignment) and which element of each operand it reads.

use crate::desc::params::shape_str;
use crate::error::{ArrayProblem, CudaError, Error, Result};
use crate::tensor::index::{self, View};

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

/// The code of the masked store (kernels/elementwise.cu `HG_EW_STORE_WHERE`): the
/// destination takes the second operand where the first is non-zero, and keeps its
/// value elsewhere. Not an operation of [`OPS`]: it writes only some elements, so it
/// serves assignment into a copy of a tensor, never a new result.
pub const STORE_WHERE: u32 = OPS.len() as u32;

/// An operand: a whole tensor of the given shape, the elements of a tensor that a
/// view names, or a constant.
pub enum Operand<'a, T> {
    /// A tensor and its shape (C order).
    Tensor(&'a T, Vec<usize>),
    /// The elements of a tensor that `View` names (an index's result).
    View(&'a T, View),
    /// A number, the same for every element.
    Scalar(f32),
}

impl<T> Operand<'_, T> {
    /// The tensor, unless the operand is a constant.
    pub fn tensor(&self) -> Option<&T> {
        match self {
            Operand::Tensor(t, _) | Operand::View(t, _) => Some(t),
            Operand::Scalar(_) => None,
        }
    }

    /// The elements read, as a view of the tensor; `None` for a constant.
    fn view(&self) -> Option<View> {
        match self {
            Operand::Tensor(_, s) => Some(View::contiguous(s)),
            Operand::View(_, v) => Some(v.clone()),
            Operand::Scalar(_) => None,
        }
    }
}

/// One launch of the kernel: for every position of `shape` (C order), the element
/// that `dst` names there gets `op` of the elements the operands' views name there
/// (`None`: the operand is a constant).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The shape iterated over.
    pub shape: Vec<usize>,
    /// The operation's code (a position in [`OPS`], or [`STORE_WHERE`]).
    pub op: u32,
    /// Where each result goes.
    pub dst: View,
    /// Each operand's view over `shape` (strides 0 along broadcast axes).
    pub args: Vec<Option<View>>,
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
            Error::Cuda(CudaError::UnsupportedOp {
                op: op.into(),
                arity,
                available: OPS[range].join(", "),
            })
        })
}

/// `op` of `args` into a new C-order tensor of their broadcast shape.
pub fn plan<T>(op: &str, args: &[Operand<'_, T>]) -> Result<Plan> {
    let code = op_code(op, args.len())?;
    let (shape, args) = broadcast(op, args)?;
    Ok(Plan {
        dst: View::contiguous(&shape),
        shape,
        op: code,
        args,
    })
}

/// `t[index] = value` for a tensor `t` (C order) and the view `index` names in it:
/// the value broadcast to the view's shape, written through the view.
pub fn plan_write<T>(index: View, value: &Operand<'_, T>) -> Result<Plan> {
    check_dims("assignment", &index.shape)?;
    let arg = value
        .view()
        .map(|v| broadcast_into("assignment", &v, &index.shape, "the selected shape"))
        .transpose()?;
    Ok(Plan {
        shape: index.shape.clone(),
        op: op_code("positive", 1)?,
        dst: index,
        args: vec![arg],
    })
}

/// `t[mask] = value` for a tensor `t` of `shape` and a mask covering its leading axes
/// (non-zero: selected): one masked store over `t`. The value is the same for every
/// selected element (a constant, or a tensor broadcasting to the axes the mask leaves):
/// a value per selected element would need the count of the mask on the host.
pub fn plan_mask_write<T>(shape: &[usize], mask: &[usize], value: &Operand<'_, T>) -> Result<Plan> {
    check_dims("assignment", shape)?;
    let rest = index::mask_shape(shape, mask)?;
    let lead = mask.len();
    let mut m = View::contiguous(mask);
    m.shape.extend_from_slice(rest);
    m.strides.resize(shape.len(), 0);
    let v = match value.view() {
        None => None,
        Some(v) => {
            let mut b = broadcast_into("assignment", &v, rest, "each selected element's shape")
                .map_err(|e| {
                    Error::array(
                        ArrayProblem::Layout,
                        format!(
                        "{e}; on CUDA, t[mask] = value takes one value for every selected element \
                         (a number, or a tensor broadcasting to {}): a value per element \
                         needs the count of the mask on the host",
                        shape_str(rest)
                    ),
                    )
                })?;
            b.shape.splice(0..0, mask.iter().copied());
            b.strides.splice(0..0, std::iter::repeat_n(0, lead));
            Some(b)
        }
    };
    Ok(Plan {
        shape: shape.to_vec(),
        op: STORE_WHERE,
        dst: View::contiguous(shape),
        args: vec![Some(m), v],
    })
}

fn check_dims(op: &str, shape: &[usize]) -> Result<()> {
    if shape.len() > EW_DIMS {
        return Err(Error::array(
            ArrayProblem::Layout,
            format!(
                "TensorXf {op}: at most {EW_DIMS} dimensions on CUDA, got shape {}",
                shape_str(shape)
            ),
        ));
    }
    Ok(())
}

/// `v` broadcast to `shape` as NumPy's assignment does (leading extents of 1 beyond
/// `shape`'s dimensions are dropped): strides 0 along broadcast axes.
fn broadcast_into(op: &str, v: &View, shape: &[usize], what: &str) -> Result<View> {
    let extra = v.shape.len().saturating_sub(shape.len());
    let fits = v.shape[..extra].iter().all(|&e| e == 1)
        && v.shape[extra..]
            .iter()
            .rev()
            .zip(shape.iter().rev())
            .all(|(&e, &t)| e == t || e == 1);
    if !fits {
        return Err(Error::array(
            ArrayProblem::Layout,
            format!(
                "TensorXf {op}: a value of shape {} cannot be broadcast to {what} {}",
                shape_str(&v.shape),
                shape_str(shape)
            ),
        ));
    }
    let (vs, vst) = (&v.shape[extra..], &v.strides[extra..]);
    let lead = shape.len() - vs.len();
    let mut strides = vec![0i64; shape.len()];
    for (d, (&e, &st)) in vs.iter().zip(vst).enumerate() {
        if e != 1 {
            strides[lead + d] = st;
        }
    }
    Ok(View {
        offset: v.offset,
        shape: shape.to_vec(),
        strides,
    })
}

/// The broadcast output shape and, per operand, its view over that shape (strides 0
/// along broadcast dimensions; none for constants), by NumPy's rules.
pub fn broadcast<T>(op: &str, args: &[Operand<'_, T>]) -> Result<(Vec<usize>, Vec<Option<View>>)> {
    let views: Vec<Option<View>> = args.iter().map(Operand::view).collect();
    let shapes: Vec<&[usize]> = views.iter().flatten().map(|v| &v.shape[..]).collect();
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let shown = || {
        shapes
            .iter()
            .map(|s| shape_str(s))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    if ndim > EW_DIMS {
        return Err(Error::array(
            ArrayProblem::Layout,
            format!(
                "TensorXf {op}: at most {EW_DIMS} dimensions on CUDA, got shapes {}",
                shown()
            ),
        ));
    }
    let mut out = vec![1usize; ndim];
    for s in &shapes {
        for (d, &e) in s.iter().enumerate() {
            let o = &mut out[ndim - s.len() + d];
            if *o == 1 {
                *o = e;
            } else if e != 1 && e != *o {
                return Err(Error::array(
                    ArrayProblem::Layout,
                    format!(
                        "TensorXf {op}: the operands' shapes {} do not broadcast",
                        shown()
                    ),
                ));
            }
        }
    }
    let views = views
        .iter()
        .map(|v| {
            v.as_ref()
                .map(|v| broadcast_into(op, v, &out, "the result shape"))
                .transpose()
        })
        .collect::<Result<_>>()?;
    Ok((out, views))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize]) -> Operand<'static, ()> {
        Operand::Tensor(&(), shape.to_vec())
    }

    fn strides(views: &[Option<View>]) -> Vec<Vec<i64>> {
        views
            .iter()
            .map(|v| v.as_ref().map_or(Vec::new(), |v| v.strides.clone()))
            .collect()
    }

    #[test]
    fn shapes_broadcast_as_numpy() {
        let (s, v) = broadcast("add", &[t(&[4, 1, 3]), t(&[5, 1])]).unwrap();
        assert_eq!(s, [4, 5, 3]);
        assert_eq!(strides(&v), [vec![3, 0, 1], vec![0, 1, 0]]);
        let (s, v) = broadcast("add", &[t(&[2, 3]), Operand::Scalar(1.0)]).unwrap();
        assert_eq!((s, strides(&v)), (vec![2, 3], vec![vec![3, 1], vec![]]));
        let (s, _) = broadcast::<()>("negative", &[t(&[])]).unwrap();
        assert!(s.is_empty(), "0-d tensors stay 0-d");
        let e = broadcast("add", &[t(&[2, 3]), t(&[4])])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(2, 3) and (4,)") && e.contains("do not broadcast"),
            "{e}"
        );
        let e = broadcast("add", &[t(&[1; 9]), t(&[1])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 8"), "{e}");
    }

    #[test]
    fn a_view_operand_keeps_its_offset_and_strides() {
        // a[1, ::-1] of a (3, 4) tensor, plus a (4,) tensor
        let v = View {
            offset: 7,
            shape: vec![4],
            strides: vec![-1],
        };
        let p = plan("add", &[Operand::View(&(), v), t(&[2, 4])]).unwrap();
        assert_eq!(p.shape, [2, 4]);
        assert_eq!(
            p.args[0],
            Some(View {
                offset: 7,
                shape: vec![2, 4],
                strides: vec![0, -1]
            })
        );
        assert_eq!(p.dst, View::contiguous(&[2, 4]));
        assert_eq!(p.op, 0);
    }

    #[test]
    fn an_assignment_writes_through_the_view() {
        let dst = View {
            offset: 3,
            shape: vec![2, 5],
            strides: vec![10, -2],
        };
        // (1, 1, 5) drops its leading unit extents as NumPy's assignment does
        let p = plan_write(dst.clone(), &t(&[1, 1, 5])).unwrap();
        assert_eq!((p.op, &p.dst), (op_code("positive", 1).unwrap(), &dst));
        assert_eq!(p.args[0].as_ref().unwrap().strides, [0, 1]);
        let p = plan_write::<()>(dst.clone(), &Operand::Scalar(2.0)).unwrap();
        assert_eq!(p.args, [None]);
        let e = plan_write(dst, &t(&[3, 5])).unwrap_err();
        assert!(matches!(
            e,
            Error::Array {
                problem: ArrayProblem::Layout,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            "TensorXf assignment: a value of shape (3, 5) cannot be broadcast to the selected shape (2, 5)"
        );
    }

    #[test]
    fn a_mask_selects_whole_trailing_blocks() {
        // an (H, W) mask over an (H, W, 3) image, one colour for every selected pixel
        let p = plan_mask_write(&[4, 5, 3], &[4, 5], &t(&[1, 3])).unwrap();
        assert_eq!((p.op, &p.shape[..]), (STORE_WHERE, &[4, 5, 3][..]));
        assert_eq!(p.dst, View::contiguous(&[4, 5, 3]));
        assert_eq!(strides(&p.args), [vec![5, 1, 0], vec![0, 0, 1]]);
        let p = plan_mask_write::<()>(&[4, 5], &[4, 5], &Operand::Scalar(1.0)).unwrap();
        assert_eq!(strides(&p.args), [vec![5, 1], vec![]]);
        // a value per selected element depends on the count
        let e = plan_mask_write(&[4, 5, 3], &[4, 5], &t(&[2, 3]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(2, 3)") && e.contains("count of the mask on the host"),
            "{e}"
        );
        let e = plan_mask_write(&[4, 5], &[4, 5], &t(&[4, 5]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot be broadcast"), "{e}");
        assert!(plan_mask_write(&[4, 5], &[5], &t(&[1])).is_err());
    }

    /// The element a view names at flat position `i` of the iterated shape, as
    /// hg_elementwise computes it.
    fn at(v: &View, i: usize) -> usize {
        let (mut rem, mut o) = (i, v.offset as i64);
        for d in (0..v.shape.len()).rev() {
            o += (rem % v.shape[d]) as i64 * v.strides[d];
            rem /= v.shape[d];
        }
        o as usize
    }

    /// hg_elementwise on the host, for the plans of assignments (gather/copy and masked
    /// store), reading the operands from `a` and `b`.
    fn run(p: &Plan, a: &[f32], b: &[f32], consts: [f32; 2], dst: &mut [f32]) {
        for i in 0..p.shape.iter().product() {
            let x = p.args[0].as_ref().map_or(consts[0], |v| a[at(v, i)]);
            let y = p
                .args
                .get(1)
                .and_then(|v| v.as_ref())
                .map_or(consts[1], |v| b[at(v, i)]);
            match p.op {
                STORE_WHERE if x != 0.0 => dst[at(&p.dst, i)] = y,
                STORE_WHERE => {}
                op => {
                    assert_eq!(op, op_code("positive", 1).unwrap());
                    dst[at(&p.dst, i)] = x;
                }
            }
        }
    }

    #[test]
    fn planned_writes_land_where_numpy_puts_them() {
        use crate::tensor::index::{view, Item};
        // x = arange(20).reshape(4, 5); x[1:4:2, ::-1] = [100, 101, 102, 103, 104]
        let mut x: Vec<f32> = (0..20).map(|i| i as f32).collect();
        let slice = |start, step| Item::Slice {
            start,
            stop: None,
            step,
        };
        let idx = view(&[4, 5], &[slice(Some(1), Some(2)), slice(None, Some(-1))]).unwrap();
        let value = [100.0, 101.0, 102.0, 103.0, 104.0];
        let p = plan_write(idx.clone(), &t(&[5])).unwrap();
        run(&p, &value, &[], [0.0; 2], &mut x);
        let rev = [104.0, 103.0, 102.0, 101.0, 100.0];
        assert_eq!(x[5..10], rev);
        assert_eq!(x[15..20], rev);
        assert_eq!(x[..5], [0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(x[10..15], [10.0, 11.0, 12.0, 13.0, 14.0]);
        // and reading x[1:4:2, ::-1] back gathers the value twice
        let g = plan("positive", &[Operand::View(&(), idx)]).unwrap();
        let mut back = vec![0.0f32; g.dst.count()];
        run(&g, &x, &[], [0.0; 2], &mut back);
        assert_eq!(back[..5], value);
        assert_eq!(back[5..], value);
        // t[..., 0, None] = 7 on a (2, 3) tensor: the first column
        let mut u = vec![1.0f32; 6];
        let idx = view(&[2, 3], &[Item::Ellipsis, Item::Int(0), Item::NewAxis]).unwrap();
        run(
            &plan_write::<()>(idx, &Operand::Scalar(7.0)).unwrap(),
            &[],
            &[],
            [7.0, 0.0],
            &mut u,
        );
        assert_eq!(u, [7.0, 1.0, 1.0, 7.0, 1.0, 1.0]);
        // t[mask] = [8, 9] for a (2, 2, 2) tensor and a (2, 2) mask
        let mut w = vec![0.0f32; 8];
        let mask = [1.0, 0.0, f32::NAN, 0.0];
        run(
            &plan_mask_write(&[2, 2, 2], &[2, 2], &t(&[2])).unwrap(),
            &mask,
            &[8.0, 9.0],
            [0.0; 2],
            &mut w,
        );
        assert_eq!(w, [8.0, 9.0, 0.0, 0.0, 8.0, 9.0, 0.0, 0.0]);
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
        let define = format!("#define HG_EW_STORE_WHERE {STORE_WHERE}");
        assert!(src.contains(&define), "elementwise.cu lacks {define}");
    }
}
