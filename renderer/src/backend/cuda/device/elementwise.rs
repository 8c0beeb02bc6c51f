//! TensorXf arithmetic and indexing on the device: one elementwise kernel
//! (kernels/elementwise.cu) applies a NumPy-named operation to up to two operands with
//! broadcasting, on the render stream after the work that writes them. Indexing reads
//! (gathers) or writes the view an index names with the same kernel. Nothing goes
//! through the host.

use cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};

use super::event::Event;
use super::tensor::DeviceTensor;
use super::{guarded, launching, CudaBackend};
use crate::backend::cuda::elementwise::{plan, Operand, Plan, EW_DIMS};
use crate::error::{CudaError, Error, Result};

/// The layout parameter of `hg_elementwise` (kernels/elementwise.cu `EwLayout`).
#[derive(Clone, Copy)]
#[repr(C)]
struct EwLayout {
    shape: [i64; EW_DIMS],
    strides_a: [i64; EW_DIMS],
    strides_b: [i64; EW_DIMS],
    strides_dst: [i64; EW_DIMS],
    ndim: u32,
    op: u32,
    const_a: f32,
    const_b: f32,
}

// SAFETY: #[repr(C)] integers and floats only, the twin of `EwLayout` in
// elementwise.cu (size 272, asserted there and below), passed by value.
unsafe impl DeviceRepr for EwLayout {}
const _: () = assert!(std::mem::size_of::<EwLayout>() == 272);

impl CudaBackend {
    /// `op` (a NumPy ufunc name) of one or two operands, broadcast to a common shape,
    /// into a new device tensor: enqueued on the render stream, returning at once.
    /// Returns the tensor and its shape. A [`Operand::View`] reads the elements an
    /// index names (`op` "positive" gathers them: `t[index]`).
    pub fn elementwise(
        &self,
        op: &str,
        args: &[Operand<'_, DeviceTensor>],
    ) -> Result<(DeviceTensor, Vec<usize>)> {
        let plan = plan(op, args)?;
        let n = plan.dst.count();
        guarded("TensorXf arithmetic", || {
            let out = self
                .pool
                .alloc(n.max(1) * 4, &self.stream, "a TensorXf result")?;
            self.enqueue(op, &plan, args, out.ptr(), n)?;
            let ready = Event::recorded(&self.ctx, self.stream.cu_stream())?;
            Ok((self.tensor(out, n, ready), plan.shape.clone()))
        })
    }

    /// `target` with an assignment applied ([`plan_write`] or [`plan_mask_write`]), as
    /// a new device tensor: a copy of `target` on the render stream, then the kernel
    /// writing the selected elements of the copy. Enqueued, returning at once.
    ///
    /// A copy rather than a write into `target` itself, as host tensors do: whoever
    /// shares `target` (a DLPack consumer, a scene parameter set from it, a result
    /// still being computed from it) keeps the old values.
    ///
    /// [`plan_write`]: crate::backend::cuda::elementwise::plan_write
    /// [`plan_mask_write`]: crate::backend::cuda::elementwise::plan_mask_write
    pub fn assign(
        &self,
        target: &DeviceTensor,
        plan: &Plan,
        args: &[Operand<'_, DeviceTensor>],
    ) -> Result<DeviceTensor> {
        let what = "TensorXf assignment";
        self.check_device(what, target)?;
        let n = target.len();
        guarded(what, || {
            let out = self
                .pool
                .alloc(n.max(1) * 4, &self.stream, "a TensorXf copy")?;
            target.order_stream(self.stream.cu_stream() as usize)?;
            // SAFETY: both hold n floats; the target lives until the copy ran (its free
            // is stream ordered after it).
            unsafe { out.copy_from_device(0, target.device_ptr(), n * 4) }?;
            self.enqueue(what, plan, args, out.ptr(), n)?;
            let ready = Event::recorded(&self.ctx, self.stream.cu_stream())?;
            Ok(self.tensor(out, n, ready))
        })
    }

    fn check_device(&self, op: &str, t: &DeviceTensor) -> Result<()> {
        if t.ordinal() != self.info.ordinal {
            return Err(Error::Cuda(CudaError::OperandDevice {
                op: op.into(),
                operand: t.ordinal(),
                renderer: self.info.ordinal,
            }));
        }
        Ok(())
    }

    /// Enqueues `plan` on the render stream after the writes of its operands, writing
    /// into the `dst_len` floats at `dst`, with every view checked against the tensor or
    /// buffer it reaches into.
    fn enqueue(
        &self,
        op: &str,
        plan: &Plan,
        args: &[Operand<'_, DeviceTensor>],
        dst: u64,
        dst_len: usize,
    ) -> Result<()> {
        let n = plan.dst.count();
        plan.dst.check_within(dst_len)?;
        let mut l = EwLayout {
            shape: [1; EW_DIMS],
            strides_a: [0; EW_DIMS],
            strides_b: [0; EW_DIMS],
            strides_dst: [0; EW_DIMS],
            ndim: plan.shape.len() as u32,
            op: plan.op,
            const_a: 0.0,
            const_b: 0.0,
        };
        for (d, &e) in plan.shape.iter().enumerate() {
            l.shape[d] = e as i64;
        }
        l.strides_dst[..plan.shape.len()].copy_from_slice(&plan.dst.strides);
        let mut ptrs = [0u64; 2];
        for (k, (a, view)) in args.iter().zip(&plan.args).enumerate() {
            let (consts, st) = if k == 0 {
                (&mut l.const_a, &mut l.strides_a)
            } else {
                (&mut l.const_b, &mut l.strides_b)
            };
            match (a, view) {
                (Operand::Scalar(x), _) => *consts = *x,
                (Operand::Tensor(t, _) | Operand::View(t, _), Some(v)) => {
                    self.check_device(op, t)?;
                    v.check_within(t.len())?;
                    t.order_stream(self.stream.cu_stream() as usize)?;
                    ptrs[k] = t.device_ptr() + v.offset as u64 * 4;
                    st[..plan.shape.len()].copy_from_slice(&v.strides);
                }
                (_, None) => {
                    return Err(Error::Cuda(CudaError::Internal(format!(
                        "TensorXf {op}: operand {k} has no view"
                    ))))
                }
            }
        }
        if n == 0 {
            return Ok(());
        }
        let out = dst + plan.dst.offset as u64 * 4;
        self.launch_elementwise(&l, ptrs, n as u64, out)
    }

    fn launch_elementwise(&self, l: &EwLayout, ptrs: [u64; 2], n: u64, dst: u64) -> Result<()> {
        let module = self.elementwise_module()?;
        let f = self.function(&module, "hg_elementwise")?;
        let block = 256u32;
        let blocks = n.div_ceil(block as u64);
        if blocks > i32::MAX as u64 {
            return Err(Error::Cuda(CudaError::TooManyElements { elements: n }));
        }
        let mut b = self.stream.launch_builder(&f);
        b.arg(&ptrs[0]).arg(&ptrs[1]).arg(l).arg(&n).arg(&dst);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: matches hg_elementwise in elementwise.cu; each operand's view and the
        // destination's reach only elements of their buffers (checked by `enqueue`), a
        // null pointer marks a constant. The destination is a buffer of its own, which
        // no operand aliases: a new result, or the copy an assignment writes.
        unsafe { b.launch(cfg) }.map_err(launching("hg_elementwise"))?;
        Ok(())
    }
}
