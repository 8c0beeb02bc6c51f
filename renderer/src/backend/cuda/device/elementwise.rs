//! TensorXf arithmetic on the device: one elementwise kernel (kernels/elementwise.cu)
//! applies a NumPy-named operation to up to two operands with broadcasting, on the
//! render stream after the work that writes them. Nothing goes through the host.

use cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};

use super::event::Event;
use super::tensor::DeviceTensor;
use super::{drv, guarded, CudaBackend};
use crate::backend::cuda::elementwise::{broadcast, op_code, Operand, EW_DIMS};
use crate::error::{Error, Result};

/// The layout parameter of `hg_elementwise` (kernels/elementwise.cu `EwLayout`).
#[derive(Clone, Copy)]
#[repr(C)]
struct EwLayout {
    shape: [i64; EW_DIMS],
    strides_a: [i64; EW_DIMS],
    strides_b: [i64; EW_DIMS],
    ndim: u32,
    op: u32,
    const_a: f32,
    const_b: f32,
}

// SAFETY: #[repr(C)] integers and floats only, the twin of `EwLayout` in
// elementwise.cu (size 208, asserted there and below), passed by value.
unsafe impl DeviceRepr for EwLayout {}
const _: () = assert!(std::mem::size_of::<EwLayout>() == 208);

impl CudaBackend {
    /// `op` (a NumPy ufunc name) of one or two operands, broadcast to a common shape,
    /// into a new device tensor: enqueued on the render stream, returning at once.
    /// Returns the tensor and its shape.
    pub fn elementwise(
        &self,
        op: &str,
        args: &[Operand<'_, DeviceTensor>],
    ) -> Result<(DeviceTensor, Vec<usize>)> {
        let code = op_code(op, args.len())?;
        let (shape, strides) = broadcast(op, args)?;
        let n: usize = shape.iter().product();
        let mut l = EwLayout {
            shape: [1; EW_DIMS],
            strides_a: [0; EW_DIMS],
            strides_b: [0; EW_DIMS],
            ndim: shape.len() as u32,
            op: code,
            const_a: 0.0,
            const_b: 0.0,
        };
        for (d, &e) in shape.iter().enumerate() {
            l.shape[d] = e as i64;
        }
        let mut ptrs = [0u64; 2];
        for (k, a) in args.iter().enumerate() {
            let (consts, st) = if k == 0 {
                (&mut l.const_a, &mut l.strides_a)
            } else {
                (&mut l.const_b, &mut l.strides_b)
            };
            match a {
                Operand::Scalar(x) => *consts = *x,
                Operand::Tensor(t, _) => {
                    if t.ordinal() != self.info.ordinal {
                        return Err(Error::Cuda(format!(
                            "TensorXf {op}: an operand is on cuda:{}, the renderer on cuda:{}",
                            t.ordinal(),
                            self.info.ordinal
                        )));
                    }
                    ptrs[k] = t.device_ptr();
                    st[..shape.len()].copy_from_slice(&strides[k]);
                }
            }
        }
        guarded("TensorXf arithmetic", || {
            let out = self
                .pool
                .alloc(n.max(1) * 4, &self.stream, "a TensorXf result")?;
            for a in args {
                if let Operand::Tensor(t, _) = a {
                    t.order_stream(self.stream.cu_stream() as usize)?;
                }
            }
            if n > 0 {
                self.launch_elementwise(&l, ptrs, n as u64, out.ptr())?;
            }
            let ready = Event::recorded(&self.ctx, self.stream.cu_stream())?;
            Ok((self.tensor(out, n, ready), shape.clone()))
        })
    }

    fn launch_elementwise(&self, l: &EwLayout, ptrs: [u64; 2], n: u64, dst: u64) -> Result<()> {
        let module = self.elementwise_module()?;
        let f = self.function(&module, "hg_elementwise")?;
        let block = 256u32;
        let blocks = n.div_ceil(block as u64);
        if blocks > i32::MAX as u64 {
            return Err(Error::Cuda(format!(
                "{n} elements are too many for one launch"
            )));
        }
        let mut b = self.stream.launch_builder(&f);
        b.arg(&ptrs[0]).arg(&ptrs[1]).arg(l).arg(&n).arg(&dst);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: matches hg_elementwise in elementwise.cu; each operand's strides reach
        // only elements of its tensor (broadcast checked them against its shape), a null
        // pointer marks a constant, `dst` holds n floats.
        unsafe { b.launch(cfg) }.map_err(drv("launching hg_elementwise"))?;
        Ok(())
    }
}
