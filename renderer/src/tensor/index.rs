//! Basic indexing of a C-order tensor, by NumPy's rules: the elements `t[index]` names,
//! as a [`View`] (an offset and strides into the tensor's elements), so that they can be
//! gathered into a new tensor or written in place of the rest without reading it.
//!
//! An index is a sequence of [`Item`]s: an integer (negative counts from the end) takes
//! one position of an axis and drops it, a slice takes every `step`-th position of an
//! axis (CPython's `slice.indices` rules: bounds clamp, a negative step walks
//! backwards), `...` stands for as many full slices as the other items leave axes, and
//! a new axis inserts an axis of extent 1. Axes the index does not reach are taken
//! whole. Boolean masks ([`mask_shape`]) select by value, so only their shape can be
//! checked here.

use crate::desc::params::shape_str;
use crate::error::{ArrayProblem, Error, Result};

/// One item of a basic index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// One position of an axis (negative counts from the end); the axis is dropped.
    Int(i64),
    /// `start:stop:step`, each possibly absent (Python's `None`).
    Slice {
        /// First position (absent: the start in the direction of `step`).
        start: Option<i64>,
        /// Position past the last (absent: the end in the direction of `step`).
        stop: Option<i64>,
        /// Distance between positions (absent: 1; never 0).
        step: Option<i64>,
    },
    /// `...`: full slices of the axes the other items leave.
    Ellipsis,
    /// `None` / `numpy.newaxis`: a new axis of extent 1.
    NewAxis,
}

/// The elements of a C-order tensor that an index names: the element at position
/// `p` of the view is element `offset + sum(p[d] * strides[d])` of the tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// Element offset of the view's first position.
    pub offset: usize,
    /// The view's extents.
    pub shape: Vec<usize>,
    /// Strides in elements (negative for reversed axes).
    pub strides: Vec<i64>,
}

impl View {
    /// The whole of a tensor of `shape`, in C order.
    pub fn contiguous(shape: &[usize]) -> View {
        let mut strides = vec![0i64; shape.len()];
        let mut step = 1i64;
        for (d, &e) in shape.iter().enumerate().rev() {
            strides[d] = step;
            step = step.saturating_mul(e as i64);
        }
        View {
            offset: 0,
            shape: shape.to_vec(),
            strides,
        }
    }

    /// The number of elements.
    pub fn count(&self) -> usize {
        self.shape.iter().product()
    }

    /// The smallest and largest element the view reaches; `None` when it is empty.
    pub fn span(&self) -> Option<(i64, i64)> {
        if self.count() == 0 {
            return None;
        }
        let (mut lo, mut hi) = (self.offset as i64, self.offset as i64);
        for (&e, &s) in self.shape.iter().zip(&self.strides) {
            let reach = (e as i64 - 1).saturating_mul(s);
            if reach < 0 {
                lo = lo.saturating_add(reach);
            } else {
                hi = hi.saturating_add(reach);
            }
        }
        Some((lo, hi))
    }

    /// An error unless every element the view reaches is one of `len` elements (a
    /// guard before a kernel dereferences the view).
    pub fn check_within(&self, len: usize) -> Result<()> {
        match self.span() {
            Some((lo, hi)) if lo < 0 || hi >= len as i64 => Err(Error::array(
                ArrayProblem::Layout,
                format!(
                    "internal error: a view of shape {} reaches elements {lo}..={hi} of a tensor of {len}",
                    shape_str(&self.shape)
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// A parsed index: basic items, or a mask `M` (non-zero: selected) of the tensor's
/// leading axes, with the mask's shape.
pub enum Index<M> {
    /// Basic indexing.
    Basic(Vec<Item>),
    /// A mask and its shape.
    Mask(M, Vec<usize>),
}

/// What an index of a CUDA tensor may be, for the errors.
const SUPPORTED: &str = "ints, slices, '...', None (newaxis) and tuples of these, \
     and t[mask] = value with a CUDA mask";

/// The error for a mask that is one item of several.
pub fn mask_in_tuple() -> Error {
    index_err(format!(
        "TensorXf index on CUDA: a mask must be the whole index (t[mask]), not part of a tuple; supported: {SUPPORTED}"
    ))
}

/// The error for a host mask (`kind`: what it is) of a CUDA tensor.
pub fn host_mask(kind: &str) -> Error {
    Error::array(
        ArrayProblem::Layout,
        format!(
            "TensorXf index on CUDA: a host mask ({kind}) cannot index a CUDA tensor without a copy; \
             make the mask on the device (a comparison of CUDA tensors such as t > 1, or TensorXf(mask) under cuda_rgb)"
        ),
    )
}

/// The error for a boolean scalar index of a CUDA tensor.
pub fn bool_scalar() -> Error {
    index_err(format!(
        "TensorXf index on CUDA: a boolean scalar index is not supported; supported: {SUPPORTED}"
    ))
}

/// The error for an index by an array of positions (`kind`: what it is) of a CUDA tensor.
pub fn advanced(kind: &str) -> Error {
    index_err(format!(
        "TensorXf index on CUDA: integer-array (advanced) indexing by a {kind} is not supported; \
         supported: {SUPPORTED}; read the tensor on the host for others: t.numpy()[index]"
    ))
}

/// The error for an index item (`kind`: what it is) that is no index.
pub fn not_an_index(kind: &str) -> Error {
    index_err(format!(
        "TensorXf index: only ints, slices (':'), ellipsis ('...'), None and masks are valid indices, got {kind}"
    ))
}

/// The error for `t[mask]` of a CUDA tensor, whose shape only the host can know.
pub fn mask_read() -> Error {
    index_err(
        "TensorXf index on CUDA: t[mask] has as many elements as the mask has non-zero \
         values, a count only the host can wait for; read it on the host explicitly: \
         t.numpy()[mask.numpy() != 0] (t[mask] = value runs on the device)"
            .into(),
    )
}

fn index_err(msg: String) -> Error {
    Error::array(ArrayProblem::Index, msg)
}

/// The view `t[index]` of a C-order tensor of `shape` (NumPy's basic indexing; see the
/// module docs). Errors as NumPy's: an integer out of range (`IndexError` naming the
/// axis and its size), more indices than axes, two ellipses, a slice step of 0.
pub fn view(shape: &[usize], index: &[Item]) -> Result<View> {
    let taken = index
        .iter()
        .filter(|i| matches!(i, Item::Int(_) | Item::Slice { .. }))
        .count();
    if index.iter().filter(|i| **i == Item::Ellipsis).count() > 1 {
        return Err(index_err(
            "TensorXf index: an index can only have a single ellipsis ('...')".into(),
        ));
    }
    if taken > shape.len() {
        return Err(index_err(format!(
            "TensorXf index: too many indices: the tensor is {}-dimensional, but {taken} were indexed",
            shape.len()
        )));
    }
    let whole = View::contiguous(shape);
    let mut out = View {
        offset: 0,
        shape: Vec::new(),
        strides: Vec::new(),
    };
    let mut axis = 0usize;
    for item in index {
        match *item {
            Item::NewAxis => {
                out.shape.push(1);
                out.strides.push(0);
            }
            Item::Ellipsis => {
                let n = shape.len() - taken;
                out.shape.extend_from_slice(&shape[axis..axis + n]);
                out.strides
                    .extend_from_slice(&whole.strides[axis..axis + n]);
                axis += n;
            }
            Item::Int(i) => {
                let p = position(i, axis, shape[axis])?;
                out.offset += p * whole.strides[axis] as usize;
                axis += 1;
            }
            Item::Slice { start, stop, step } => {
                let (first, step, count) = slice(start, stop, step, shape[axis])?;
                if count > 0 {
                    out.offset += first as usize * whole.strides[axis] as usize;
                }
                out.shape.push(count);
                // with one position or none the stride reaches nothing: 0 rather than a
                // huge step times the axis stride
                let stride = if count > 1 {
                    step * whole.strides[axis]
                } else {
                    0
                };
                out.strides.push(stride);
                axis += 1;
            }
        }
    }
    out.shape.extend_from_slice(&shape[axis..]);
    out.strides.extend_from_slice(&whole.strides[axis..]);
    Ok(out)
}

/// The position integer `i` names on `axis` of extent `size`.
fn position(i: i64, axis: usize, size: usize) -> Result<usize> {
    let p = if i < 0 { i + size as i64 } else { i };
    if p < 0 || p >= size as i64 {
        return Err(index_err(format!(
            "TensorXf index {i} is out of bounds for axis {axis} with size {size}"
        )));
    }
    Ok(p as usize)
}

/// `(first, step, count)` of a slice over an axis of extent `len`, as CPython's
/// `PySlice_Unpack` + `PySlice_AdjustIndices` compute them.
pub fn slice(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    len: usize,
) -> Result<(i64, i64, usize)> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(Error::array(
            ArrayProblem::Layout,
            "TensorXf index: slice step cannot be zero",
        ));
    }
    let len = len as i64;
    let clamp = |x: Option<i64>, absent_fwd: i64, absent_back: i64| -> i64 {
        let Some(x) = x else {
            return if step > 0 { absent_fwd } else { absent_back };
        };
        let x = if x < 0 { x.saturating_add(len) } else { x };
        match (x < 0, x >= len, step < 0) {
            (true, _, true) => -1,
            (true, _, false) => 0,
            (_, true, true) => len - 1,
            (_, true, false) => len,
            _ => x,
        }
    };
    let first = clamp(start, 0, len - 1);
    let end = clamp(stop, len, -1);
    let count = if step > 0 && first < end {
        (end - first - 1) / step + 1
    } else if step < 0 && end < first {
        (first - end - 1) / (-step) + 1
    } else {
        0
    };
    Ok((first, step, count as usize))
}

/// Checks that a boolean mask of `mask` shape can select from a tensor of `shape`:
/// NumPy's rule, the mask's extents are the tensor's leading extents. Returns the
/// extents each selected element spans (the tensor's trailing ones).
pub fn mask_shape<'s>(shape: &'s [usize], mask: &[usize]) -> Result<&'s [usize]> {
    if mask.is_empty() || mask.len() > shape.len() {
        return Err(index_err(format!(
            "TensorXf index: a mask of shape {} cannot select from a tensor of shape {} \
             (its shape must be the tensor's, or the tensor's leading extents)",
            shape_str(mask),
            shape_str(shape)
        )));
    }
    if let Some(d) = (0..mask.len()).find(|&d| mask[d] != shape[d]) {
        return Err(index_err(format!(
            "TensorXf index: the mask does not match the tensor along axis {d}: the axis has size {} \
             but the mask {} (mask shape {}, tensor shape {})",
            shape[d],
            mask[d],
            shape_str(mask),
            shape_str(shape)
        )));
    }
    Ok(&shape[mask.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Item {
        Item::Slice { start, stop, step }
    }

    /// The elements of a view of a tensor of `shape`, in C order of the view.
    fn elements(v: &View) -> Vec<i64> {
        let mut out = Vec::new();
        for i in 0..v.count() {
            let (mut rem, mut at) = (i, v.offset as i64);
            for d in (0..v.shape.len()).rev() {
                at += (rem % v.shape[d]) as i64 * v.strides[d];
                rem /= v.shape[d];
            }
            out.push(at);
        }
        out
    }

    #[test]
    fn slices_follow_cpythons_indices() {
        // slice(*args).indices(7) and len(range(*...)) computed by CPython
        type Bounds = (Option<i64>, Option<i64>, Option<i64>);
        let cases: [(Bounds, (i64, i64, usize)); 9] = [
            ((None, None, None), (0, 1, 7)),
            ((None, None, Some(-1)), (6, -1, 7)),
            ((Some(-3), None, None), (4, 1, 3)),
            ((Some(2), Some(100), Some(2)), (2, 2, 3)),
            ((Some(-100), Some(3), None), (0, 1, 3)),
            ((Some(5), Some(1), Some(-2)), (5, -2, 2)),
            ((Some(100), None, Some(-3)), (6, -3, 3)),
            ((Some(3), Some(3), None), (3, 1, 0)),
            (
                (Some(i64::MIN), Some(i64::MAX), Some(i64::MAX)),
                (0, i64::MAX, 1),
            ),
        ];
        for ((a, b, c), want) in cases {
            assert_eq!(slice(a, b, c, 7).unwrap(), want, "{a:?}:{b:?}:{c:?}");
        }
        assert_eq!(slice(None, None, Some(-1), 0).unwrap(), (-1, -1, 0));
        let e = slice(None, None, Some(0), 3).unwrap_err().to_string();
        assert!(e.contains("step cannot be zero"), "{e}");
    }

    #[test]
    fn views_name_the_elements_numpy_names() {
        // a = np.arange(60).reshape(3, 4, 5)
        let shape = [3, 4, 5];
        let v = view(&shape, &[Item::Int(1)]).unwrap();
        assert_eq!(
            (v.offset, &v.shape[..], &v.strides[..]),
            (20, &[4, 5][..], &[5, 1][..])
        );
        // a[-1, ::-2, 3] -> [58, 48]
        let v = view(
            &shape,
            &[Item::Int(-1), s(None, None, Some(-2)), Item::Int(3)],
        )
        .unwrap();
        assert_eq!(elements(&v), [58, 48]);
        // a[..., None, 1:3] -> shape (3, 4, 1, 2)
        let v = view(
            &shape,
            &[Item::Ellipsis, Item::NewAxis, s(Some(1), Some(3), None)],
        )
        .unwrap();
        assert_eq!(v.shape, [3, 4, 1, 2]);
        assert_eq!(elements(&v)[..4], [1, 2, 6, 7]);
        // a[1, ...] == a[1]; a[...] == a; a[()] == a
        assert_eq!(
            view(&shape, &[Item::Int(1), Item::Ellipsis]).unwrap(),
            view(&shape, &[Item::Int(1)]).unwrap()
        );
        assert_eq!(view(&shape, &[]).unwrap(), View::contiguous(&shape));
        // all ints: one element, 0-d
        let v = view(&shape, &[Item::Int(2), Item::Int(3), Item::Int(4)]).unwrap();
        assert_eq!((v.offset, v.shape.len()), (59, 0));
        // an empty slice reaches nothing, whatever its offset
        let v = view(&shape, &[s(Some(3), None, None)]).unwrap();
        assert_eq!((v.count(), v.span()), (0, None));
        v.check_within(60).unwrap();
    }

    #[test]
    fn bad_indices_are_numpys_errors() {
        let shape = [3, 4];
        let e = view(&shape, &[Item::Int(0), Item::Int(4)]).unwrap_err();
        assert!(matches!(
            e,
            Error::Array {
                problem: ArrayProblem::Index,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            "TensorXf index 4 is out of bounds for axis 1 with size 4"
        );
        let e = view(&shape, &[Item::Int(-4)]).unwrap_err().to_string();
        assert!(
            e.contains("-4 is out of bounds for axis 0 with size 3"),
            "{e}"
        );
        let e = view(&shape, &[Item::Int(0), Item::Int(0), Item::Int(0)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("2-dimensional, but 3 were indexed"), "{e}");
        let e = view(&shape, &[Item::Ellipsis, Item::Ellipsis])
            .unwrap_err()
            .to_string();
        assert!(e.contains("single ellipsis"), "{e}");
        let e = view(&shape, &[s(None, None, Some(0))]).unwrap_err();
        assert!(matches!(
            e,
            Error::Array {
                problem: ArrayProblem::Layout,
                ..
            }
        ));
        // new axes do not count as indexed axes
        assert_eq!(
            view(
                &shape,
                &[Item::NewAxis, Item::Int(0), Item::NewAxis, Item::Int(0)]
            )
            .unwrap()
            .shape,
            [1, 1]
        );
    }

    #[test]
    fn spans_guard_the_tensor() {
        let v = View {
            offset: 5,
            shape: vec![2, 3],
            strides: vec![-5, 2],
        };
        assert_eq!(v.span(), Some((0, 9)));
        v.check_within(10).unwrap();
        let e = v.check_within(9).unwrap_err().to_string();
        assert!(e.contains("reaches elements 0..=9 of a tensor of 9"), "{e}");
    }

    #[test]
    fn masks_cover_leading_axes() {
        assert_eq!(mask_shape(&[4, 5, 3], &[4, 5, 3]).unwrap(), &[] as &[usize]);
        assert_eq!(mask_shape(&[4, 5, 3], &[4, 5]).unwrap(), &[3]);
        let e = mask_shape(&[4, 5, 3], &[4, 6]).unwrap_err().to_string();
        assert!(
            e.contains("along axis 1: the axis has size 5 but the mask 6"),
            "{e}"
        );
        assert!(mask_shape(&[4], &[4, 1]).is_err());
        assert!(mask_shape(&[4], &[]).is_err());
    }
}
