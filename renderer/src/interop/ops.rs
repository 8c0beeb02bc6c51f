//! Elementwise operations of tensors and numbers, where their operands live: on the
//! device when one operand is a CUDA tensor (the elementwise kernel, on the render
//! stream), in [`crate::tensor::ops`] when every operand is a host tensor or a number
//! NumPy takes as a float32 (NumPy's results bit for bit). [`apply`] says when neither
//! holds, so the caller computes the operation its own way (the Python package with
//! NumPy).
//!
//! The caller ([`Caller`]) reads tensors and waits for them (for their render or
//! their ready event, its own way), opens the CUDA backend, and says where host
//! results go.

use std::sync::Arc;

use crate::backend::cuda::elementwise::Operand as DeviceOperand;
use crate::backend::cuda::{CudaBackend, DeviceTensor};
use crate::error::{ArrayProblem, Error, Result};
use crate::interop::import::upload;
use crate::interop::Storage;
use crate::tensor::ops::{self, Binary, Unary};
use crate::tensor::Buffer;

/// An operand: a tensor, a number, or (for [`on_device`]) a value that is neither.
pub enum Operand<'a> {
    /// A tensor.
    Tensor(&'a Storage),
    /// A number.
    Number(Number),
    /// Neither a tensor nor a number: the name of its type.
    Other(String),
}

/// A number, by its Python type: NumPy's float32 rules depend on it.
#[derive(Clone, Copy, Debug)]
pub enum Number {
    /// A float.
    Float(f64),
    /// An int: its value where an i64 holds it, and its double where one holds it.
    Int {
        /// The value, when an i64 holds it.
        exact: Option<i64>,
        /// The nearest double, unless the int is beyond a double's range.
        double: Option<f64>,
    },
    /// A bool.
    Bool(bool),
}

impl Number {
    /// The value NumPy computes with in float32 (a float inside float32's range, or an
    /// int that a double holds exactly); `None` where NumPy's own rules apply.
    fn host(self) -> Option<f32> {
        match self {
            Number::Float(v) => {
                let f = v as f32;
                // a finite double that float32 cannot hold: NumPy's overflow rules apply
                (f.is_finite() || !v.is_finite()).then_some(f)
            }
            Number::Int { exact: Some(v), .. } => (v.unsigned_abs() <= 1 << 53).then_some(v as f32),
            Number::Int { exact: None, .. } | Number::Bool(_) => None,
        }
    }

    /// The value the device computes with; `None` for an int beyond a double's range.
    pub(crate) fn device(self) -> Option<f32> {
        match self {
            Number::Float(v) => Some(v as f32),
            Number::Int { double, .. } => double.map(|d| d as f32),
            Number::Bool(b) => Some(if b { 1.0 } else { 0.0 }),
        }
    }
}

/// What an operation needs from its caller.
pub trait Caller {
    /// The caller's error.
    type Error;
    /// A core error as the caller's.
    fn error(&self, e: Error) -> Self::Error;
    /// The host values of a tensor: a host tensor's once its render has finished, a
    /// host copy of a CUDA tensor's once its ready event has fired.
    fn read(&self, t: &Storage) -> Result<Arc<Buffer>, Self::Error>;
    /// Waits on the host for a CUDA tensor's ready event.
    fn wait(&self, d: &Arc<DeviceTensor>) -> Result<(), Self::Error>;
    /// The CUDA backend, opened on first use.
    fn cuda(&self) -> Result<Arc<CudaBackend>, Self::Error>;
    /// The device that host results go to (where the caller's tensors live), if any.
    fn result_device(&self) -> Result<Option<Arc<CudaBackend>>, Self::Error>;
    /// Runs `f`, which may take long, letting the caller's other threads run.
    fn detach<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T;
}

/// `op` (a NumPy ufunc name) of `args` (tensors and numbers, as the module docs say)
/// on the device or in the core; `None` when neither computes it.
pub fn apply<C: Caller>(
    c: &C,
    op: &str,
    args: &[Operand<'_>],
) -> Option<Result<Storage, C::Error>> {
    let cuda = |a: &Operand<'_>| matches!(a, Operand::Tensor(t) if t.device_tensor().is_some());
    if args.iter().any(cuda) {
        return Some(
            same_device(op, args)
                .map_err(|e| c.error(e))
                .and_then(|()| {
                    // NumPy's alias (the CUDA kernel names each operation once)
                    let op = if op == "divide" { "true_divide" } else { op };
                    on_device(c, op, args)
                }),
        );
    }
    match args {
        [a, b] => {
            let bin = Binary::from_name(op)?;
            let (x, y) = (host_operand(a)?, host_operand(b)?);
            Some(host_binary(c, bin, op, x, y))
        }
        [Operand::Tensor(t)] => {
            let u = Unary::from_name(op)?;
            Some(c.read(t).and_then(|buf| {
                let values = u.apply(buf.as_slice());
                host_result(c, t.shape().to_vec(), &values)
            }))
        }
        _ => None,
    }
}

/// An error unless every tensor of `args` lives on the same device.
fn same_device(op: &str, args: &[Operand<'_>]) -> Result<()> {
    let mut devices: Vec<String> = args
        .iter()
        .filter_map(|a| match a {
            Operand::Tensor(t) => Some(t.device_name()),
            _ => None,
        })
        .collect();
    devices.sort();
    devices.dedup();
    if devices.len() > 1 {
        return Err(Error::array(
            ArrayProblem::Argument,
            format!(
                "TensorXf {op}: the operands live on different devices ({}); move one first \
                 (TensorXf(x) under the same variant), heliograph does not copy silently",
                devices.join(", ")
            ),
        ));
    }
    Ok(())
}

/// `op` (a NumPy ufunc name, as the kernel names it) of CUDA tensors and numbers, as a
/// new CUDA tensor computed on the render stream.
pub fn on_device<C: Caller>(c: &C, op: &str, args: &[Operand<'_>]) -> Result<Storage, C::Error> {
    let held = device_operands(op, args).map_err(|e| c.error(e))?;
    let operands: Vec<DeviceOperand<'_, DeviceTensor>> = held
        .iter()
        .map(|h| match h {
            Held::Tensor(d, shape) => DeviceOperand::Tensor(d.as_ref(), shape.clone()),
            Held::Scalar(x) => DeviceOperand::Scalar(*x),
        })
        .collect();
    let be = c.cuda()?;
    let (t, shape) = c
        .detach(|| be.elementwise(op, &operands))
        .map_err(|e| c.error(Error::array(ArrayProblem::Argument, e.to_string())))?;
    Ok(Storage::device(shape, Arc::new(t)))
}

/// A device operand's tensor (held while the kernel is enqueued) or number.
enum Held {
    Tensor(Arc<DeviceTensor>, Vec<usize>),
    Scalar(f32),
}

/// The device operands of `args`, in order; an error naming the first operand that is
/// a host tensor or no number.
fn device_operands(op: &str, args: &[Operand<'_>]) -> Result<Vec<Held>> {
    let not_a_number = |k: usize, ty: &str| {
        Error::array(
            ArrayProblem::Dtype,
            format!("TensorXf {op}: operand {k} must be a CUDA TensorXf or a number, got {ty}"),
        )
    };
    let host_tensor = |k: usize| {
        Error::array(
            ArrayProblem::Argument,
            format!(
                "TensorXf {op}: operand {k} is a host tensor; CUDA arithmetic takes CUDA tensors and numbers"
            ),
        )
    };
    let mut held = Vec::with_capacity(args.len());
    for (k, a) in args.iter().enumerate() {
        held.push(match a {
            Operand::Tensor(t) => {
                let d = t.device_tensor().ok_or_else(|| host_tensor(k))?;
                Held::Tensor(d, t.shape().to_vec())
            }
            Operand::Number(n) => Held::Scalar(n.device().ok_or_else(|| not_a_number(k, "int"))?),
            Operand::Other(ty) => return Err(not_a_number(k, ty)),
        });
    }
    Ok(held)
}

/// An operand the core computes with on the host: a host tensor (not read yet) or a
/// number NumPy takes as a float32.
enum HostOperand<'a> {
    Tensor(&'a Storage),
    Scalar(f32),
}

fn host_operand<'a>(a: &Operand<'a>) -> Option<HostOperand<'a>> {
    match a {
        Operand::Tensor(t) => Some(HostOperand::Tensor(t)),
        Operand::Number(n) => n.host().map(HostOperand::Scalar),
        Operand::Other(_) => None,
    }
}

/// The values of a host operand, read.
enum HostValues<'a> {
    Tensor(Arc<Buffer>, &'a [usize]),
    Scalar(f32),
}

impl<'a> HostValues<'a> {
    fn read<C: Caller>(c: &C, o: HostOperand<'a>) -> Result<HostValues<'a>, C::Error> {
        Ok(match o {
            HostOperand::Tensor(t) => HostValues::Tensor(c.read(t)?, t.shape()),
            HostOperand::Scalar(x) => HostValues::Scalar(x),
        })
    }

    fn operand(&self) -> ops::Operand<'_> {
        match self {
            HostValues::Tensor(b, s) => ops::Operand::Values(b.as_slice(), s),
            HostValues::Scalar(x) => ops::Operand::Scalar(*x),
        }
    }
}

/// `x <op> y` in the core; the operands are read in order, as NumPy reads them.
fn host_binary<C: Caller>(
    c: &C,
    bin: Binary,
    op: &str,
    x: HostOperand<'_>,
    y: HostOperand<'_>,
) -> Result<Storage, C::Error> {
    let x = HostValues::read(c, x)?;
    let y = HostValues::read(c, y)?;
    let (shape, values) = ops::binary(bin, op, x.operand(), y.operand()).map_err(|e| c.error(e))?;
    host_result(c, shape, &values)
}

/// The storage of an operation's host result, where the caller's tensors live. A 0-d
/// result has shape (1,), as NumPy's `ascontiguousarray` has always made it.
fn host_result<C: Caller>(
    c: &C,
    mut shape: Vec<usize>,
    values: &[f32],
) -> Result<Storage, C::Error> {
    if shape.is_empty() {
        shape.push(1);
    }
    let storage = match c.result_device()? {
        Some(be) => c
            .detach(|| upload(&be, values))
            .map(|t| Storage::device(shape, Arc::new(t))),
        None => Buffer::from_slice(values).map(|buf| Storage::from_buffer(shape, buf)),
    };
    storage.map_err(|e| c.error(e))
}
