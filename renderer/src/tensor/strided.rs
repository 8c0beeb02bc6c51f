//! Reading a DLPack tensor's elements into float32, honouring its shape, strides (in
//! elements; negative, zero for a broadcast, or absent for compact C order), byte
//! offset and element type. The layout is checked before any element is read: extents
//! must be non-negative, the element count must fit in memory, and every element
//! offset the strides reach must be addressable; anything else is an
//! [`Error::Array`], never an out-of-bounds read or an abort.
//!
//! Compact float32 is one `memcpy`; other compact types a conversion loop; strided
//! layouts walk the outer dimensions and run a tight loop over the innermost one.

use super::dlpack::{DLDataType, DLTensor, CODE_BOOL, CODE_FLOAT, CODE_INT, CODE_UINT};
use super::Buffer;
use crate::desc::dict::Texels;
use crate::error::{ArrayProblem, Error, Result};

/// Most dimensions a host array may have.
pub const MAX_NDIM: usize = 32;

/// Most elements an array may have: the kernels index textures with 32 bits, and
/// larger arrays (a broadcast of 2^40 elements, say) would not fit in memory anyway.
pub const MAX_ELEMENTS: usize = 1 << 32;

/// A host array converted to float32 (C order).
#[derive(Clone, Debug)]
pub struct HostArray {
    /// C-order shape.
    pub shape: Vec<usize>,
    /// The values, as float32.
    pub data: Vec<f32>,
    /// The producer's element type.
    pub dtype: DLDataType,
}

impl HostArray {
    /// The element type as NumPy names it, for messages.
    pub fn dtype_name(&self) -> String {
        self.dtype.name()
    }

    /// Whether the producer's elements were floating point.
    pub fn is_float(&self) -> bool {
        self.dtype.code == CODE_FLOAT
    }

    /// Whether the producer's elements were 8-bit unsigned.
    pub fn is_u8(&self) -> bool {
        self.dtype.code == CODE_UINT && self.dtype.bits == 8
    }

    /// How a scene dict reads the elements as texels: 8-bit unsigned as sRGB, floating
    /// point as linear values, any other type refused by name.
    pub fn texels(&self) -> Texels {
        if self.is_u8() {
            Texels::Srgb8
        } else if self.is_float() {
            Texels::Linear
        } else {
            Texels::Other(self.dtype_name())
        }
    }
}

/// A tensor's layout, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Extents.
    pub shape: Vec<i64>,
    /// Strides in elements.
    pub strides: Vec<i64>,
    /// Number of elements.
    pub count: usize,
    /// Smallest and largest element offset the strides reach (0, 0 when empty).
    pub span: (i64, i64),
}

impl Layout {
    /// The extents as sizes.
    pub fn extents(&self) -> Vec<usize> {
        self.shape.iter().map(|&n| n as usize).collect()
    }

    /// Whether the elements are contiguous in C order (extents of 1 excepted).
    pub fn is_compact(&self) -> bool {
        is_compact(&self.shape, &self.strides)
    }
}

/// Whether `shape` with element `strides` is contiguous in C order (extents of 1
/// excepted: their stride does not matter).
pub fn is_compact(shape: &[i64], strides: &[i64]) -> bool {
    let mut want = 1i64;
    for (&e, &s) in shape.iter().zip(strides).rev() {
        if e != 1 && s != want {
            return false;
        }
        want = want.saturating_mul(e);
    }
    true
}

fn layout_err(msg: impl Into<String>) -> Error {
    Error::array(ArrayProblem::Layout, msg)
}

/// The checked layout of `t` (`elem`: bytes per element).
///
/// # Safety
/// `t.shape` (and `t.strides`, when not null) must point at `t.ndim` values, as the
/// DLPack spec requires of a producer.
pub unsafe fn layout(t: &DLTensor, elem: usize) -> Result<Layout> {
    if t.ndim < 0 || t.ndim as usize > MAX_NDIM {
        return Err(layout_err(format!(
            "the array has {} dimensions; heliograph reads 0 to {MAX_NDIM}",
            t.ndim
        )));
    }
    let nd = t.ndim as usize;
    if nd > 0 && t.shape.is_null() {
        return Err(layout_err("the array's shape pointer is null"));
    }
    // SAFETY: shape has ndim entries (caller's contract).
    let shape: Vec<i64> = (0..nd).map(|i| unsafe { *t.shape.add(i) }).collect();
    if let Some(e) = shape.iter().find(|&&n| n < 0) {
        return Err(layout_err(format!(
            "the array has a negative extent ({e}) in shape {shape:?}"
        )));
    }
    let strides: Vec<i64> = if t.strides.is_null() {
        let mut s = vec![1i64; nd];
        for i in (0..nd.saturating_sub(1)).rev() {
            s[i] = s[i + 1].saturating_mul(shape[i + 1]);
        }
        s
    } else {
        // SAFETY: strides has ndim entries when non-null (caller's contract).
        (0..nd).map(|i| unsafe { *t.strides.add(i) }).collect()
    };
    let too_large = || {
        layout_err(format!(
            "the array of shape {shape:?} has more than the {MAX_ELEMENTS} elements heliograph \
             reads"
        ))
    };
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n as usize))
        .filter(|&c| c <= MAX_ELEMENTS)
        .ok_or_else(too_large)?;
    let mut span = (0i128, 0i128);
    if count > 0 {
        for (&n, &s) in shape.iter().zip(&strides) {
            let reach = (n as i128 - 1) * s as i128;
            span.0 += reach.min(0);
            span.1 += reach.max(0);
        }
    }
    // every byte offset must be addressable: a pointer plus it must not wrap
    let limit = (isize::MAX / elem.max(1) as isize) as i128;
    if span.0 < -limit || span.1 > limit {
        return Err(layout_err(format!(
            "the array's strides {strides:?} reach beyond addressable memory"
        )));
    }
    Ok(Layout {
        shape,
        strides,
        count,
        span: (span.0 as i64, span.1 as i64),
    })
}

/// Refuses element types heliograph cannot convert to float32.
pub fn check_dtype(dt: DLDataType) -> Result<()> {
    let supported = dt.lanes == 1
        && match dt.code {
            CODE_FLOAT => matches!(dt.bits, 16 | 32 | 64),
            CODE_INT | CODE_UINT => matches!(dt.bits, 8 | 16 | 32 | 64),
            CODE_BOOL => dt.bits == 8,
            _ => false,
        };
    if supported {
        Ok(())
    } else {
        Err(Error::array(
            ArrayProblem::Dtype,
            format!(
                "unsupported element type {} (DLPack code {}, {} bits, {} lanes); heliograph \
                 converts bool, int, uint and float arrays to float32",
                dt.name(),
                dt.code,
                dt.bits,
                dt.lanes
            ),
        ))
    }
}

/// The checked layout of a host DLPack tensor heliograph can read: a supported element
/// type, a valid layout, and a data pointer when there are elements.
///
/// # Safety
/// As [`layout`].
pub unsafe fn host_layout(t: &DLTensor) -> Result<Layout> {
    check_dtype(t.dtype)?;
    let elem = (t.dtype.bits / 8) as usize;
    // SAFETY: caller's contract.
    let l = unsafe { layout(t, elem)? };
    if l.count > 0 && t.data.is_null() {
        return Err(layout_err("the array's data pointer is null"));
    }
    Ok(l)
}

/// Copies a host DLPack tensor into float32.
///
/// # Safety
/// `t` must describe live host memory as the DLPack spec requires: every element the
/// shape and strides reach, from `data + byte_offset`, is readable.
pub unsafe fn read_host(t: &DLTensor) -> Result<HostArray> {
    // SAFETY: caller's contract.
    let l = unsafe { host_layout(t)? };
    let mut data: Vec<f32> = Vec::new();
    data.try_reserve_exact(l.count)
        .map_err(|_| out_of_memory(&l))?;
    // SAFETY: caller's contract; the vector has room for count values, all of which
    // read_raw writes.
    unsafe {
        read_raw(t, &l, data.as_mut_ptr());
        data.set_len(l.count);
    }
    Ok(HostArray {
        shape: l.extents(),
        data,
        dtype: t.dtype,
    })
}

/// As [`read_host`], into `out` (`l.count` values; the caller's buffer, such as
/// page-locked staging memory for an upload). `l` is `t`'s [`host_layout`].
///
/// # Safety
/// As [`read_host`].
pub unsafe fn read_host_into(t: &DLTensor, l: &Layout, out: &mut [f32]) -> Result<()> {
    if out.len() != l.count {
        return Err(layout_err(format!(
            "internal error: reading {} values into room for {}",
            l.count,
            out.len()
        )));
    }
    // SAFETY: caller's contract; out has room for count values.
    unsafe { read_raw(t, l, out.as_mut_ptr()) };
    Ok(())
}

/// As [`read_host`], into a new [`Buffer`] (one copy, no zero-filling first); returns
/// the buffer and the shape.
///
/// # Safety
/// As [`read_host`].
pub unsafe fn read_host_buffer(t: &DLTensor) -> Result<(Buffer, Vec<usize>)> {
    // SAFETY: caller's contract.
    let l = unsafe { host_layout(t)? };
    // the same error as read_host's: the array is too large, not a render failure
    let buf = Buffer::uninit(l.count).map_err(|_| out_of_memory(&l))?;
    // SAFETY: caller's contract; the buffer has room for count values, all written.
    unsafe { read_raw(t, &l, buf.as_ptr()) };
    Ok((buf, l.extents()))
}

/// The error for an array whose float32 copy cannot be allocated.
fn out_of_memory(l: &Layout) -> Error {
    Error::array(
        ArrayProblem::Layout,
        format!(
            "out of memory: {:.2} GiB for an array of shape {:?}",
            l.count as f64 * 4.0 / (1u64 << 30) as f64,
            l.shape
        ),
    )
}

/// Writes the `l.count` elements of `t` as float32 to `out`, in C order.
///
/// # Safety
/// As [`read_host`]; `l` is `t`'s [`host_layout`] and `out` has room for `l.count`
/// values.
unsafe fn read_raw(t: &DLTensor, l: &Layout, out: *mut f32) {
    if l.count == 0 {
        return;
    }
    let base = (t.data as *const u8).wrapping_add(t.byte_offset as usize);
    let dt = t.dtype;
    let elem = (dt.bits / 8) as usize;
    if l.is_compact() {
        if dt == DLDataType::F32 && base as usize % 4 == 0 {
            // SAFETY: count compact, aligned floats from base (caller's contract), into
            // the caller's non-overlapping room.
            unsafe {
                let src = std::slice::from_raw_parts(base as *const f32, l.count);
                super::copy_parallel(src, out);
            }
        } else if dt == DLDataType::F32 {
            // SAFETY: as above, copied bytewise (any alignment).
            unsafe { std::ptr::copy_nonoverlapping(base, out as *mut u8, l.count * 4) };
        } else {
            for i in 0..l.count {
                // SAFETY: as above, elements of `elem` bytes.
                unsafe { out.add(i).write(load(base.add(i * elem), dt)) };
            }
        }
    } else {
        // SAFETY: every offset lies within the span checked by layout().
        unsafe { gather(base, elem, dt, l, out) };
    }
}

/// Writes the elements of a strided layout in C order.
///
/// # Safety
/// As [`read_raw`], with `count > 0`.
unsafe fn gather(base: *const u8, elem: usize, dt: DLDataType, l: &Layout, out: *mut f32) {
    let nd = l.shape.len();
    let (inner_n, inner_s) = match nd {
        0 => (1, 0),
        _ => (
            l.shape[nd - 1] as usize,
            l.strides[nd - 1] as isize * elem as isize,
        ),
    };
    let outer = nd.saturating_sub(1);
    let mut idx = vec![0i64; outer];
    let mut at = 0usize;
    loop {
        let off: i64 = idx.iter().zip(&l.strides).map(|(i, s)| i * s).sum();
        let row = base.wrapping_offset(off as isize * elem as isize);
        for k in 0..inner_n {
            // SAFETY: inside the checked span (caller's contract); at < count.
            unsafe {
                out.add(at)
                    .write(load(row.wrapping_offset(k as isize * inner_s), dt))
            };
            at += 1;
        }
        let mut d = outer;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < l.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Reads one element as f32.
///
/// # Safety
/// `p` must point at a readable element of type `dt`.
unsafe fn load(p: *const u8, dt: DLDataType) -> f32 {
    // SAFETY: caller's contract; unaligned reads tolerate any producer alignment.
    unsafe {
        match (dt.code, dt.bits) {
            (CODE_FLOAT, 16) => half_to_f32((p as *const u16).read_unaligned()),
            (CODE_FLOAT, 32) => (p as *const f32).read_unaligned(),
            (CODE_FLOAT, 64) => (p as *const f64).read_unaligned() as f32,
            (CODE_INT, 8) => (p as *const i8).read_unaligned() as f32,
            (CODE_INT, 16) => (p as *const i16).read_unaligned() as f32,
            (CODE_INT, 32) => (p as *const i32).read_unaligned() as f32,
            (CODE_INT, 64) => (p as *const i64).read_unaligned() as f32,
            (CODE_UINT, 8) | (CODE_BOOL, 8) => p.read_unaligned() as f32,
            (CODE_UINT, 16) => (p as *const u16).read_unaligned() as f32,
            (CODE_UINT, 32) => (p as *const u32).read_unaligned() as f32,
            (CODE_UINT, 64) => (p as *const u64).read_unaligned() as f32,
            _ => f32::NAN,
        }
    }
}

/// IEEE binary16 → f32.
pub fn half_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if frac == 0 => sign,
        0 => {
            // subnormal: value = frac * 2^-24
            let v = frac as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        0x1f => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests;
