//! One execution of a handler: the call's values written into the scene, the render
//! or backward pass run through the scene's session on the variant's renderer, and
//! the results written into XLA's buffers.

use std::sync::Arc;

use std::sync::{Mutex, MutexGuard};

use super::ffi::{buffers, cuda_stream, internal, invalid, Buf, CallFrame, Failure};
use super::targets::{target_of, Target};
use crate::backend::cuda::{CudaBackend, DeviceTensor, ForeignArray};
use crate::backend::renderer::Renderer;
use crate::desc::params::shape_str;
use crate::desc::{ParamValue, SceneParams};
use crate::diff::resolve;
use crate::session::film::Film;
use crate::session::gradients::{Adjoint, Gradients};
use crate::session::swap::Swap;
use crate::session::values::{from_device, from_host};
use crate::session::Session;
use crate::tensor::dlpack::DLDataType;
use crate::tensor::strided::HostArray;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Pass {
    Render,
    Backward,
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Platform {
    Cpu,
    Cuda,
}

/// Values on the host or on the device.
pub(super) enum Values {
    Host(Vec<f32>),
    Device(Arc<DeviceTensor>),
}

/// How one call reaches the GPU: the backend, and XLA's stream when JAX runs the call
/// there.
pub(super) struct Gpu {
    be: Arc<CudaBackend>,
    stream: Option<usize>,
}

/// Runs one call.
///
/// # Safety
/// `frame` is XLA's.
pub(super) unsafe fn execute(
    frame: &CallFrame,
    pass: Pass,
    platform: Platform,
) -> Result<(), Failure> {
    // SAFETY: XLA's frame.
    let target = unsafe { target_of(&frame.attrs) }?;
    // SAFETY: XLA's frame.
    let args = unsafe { buffers(&frame.args, "argument") }?;
    // SAFETY: XLA's frame.
    let rets = unsafe { buffers(&frame.rets, "result") }?;
    let renderer = (target.variant.renderer)().map_err(invalid)?;
    let on_gpu = renderer.device_backend().cloned();
    let gpu = if on_gpu.is_some() || platform == Platform::Cuda {
        let be = match on_gpu {
            Some(be) => be,
            None => (target.variant.cuda)().map_err(invalid)?,
        };
        let stream = match platform {
            // SAFETY: XLA's frame.
            Platform::Cuda => Some(unsafe { cuda_stream(frame, &be) }?),
            Platform::Cpu => None,
        };
        Some(Gpu { be, stream })
    } else {
        None
    };
    if let Some(Gpu {
        be,
        stream: Some(s),
    }) = &gpu
    {
        be.join_stream(*s).map_err(internal)?;
    }
    let call = Call {
        target: &target,
        platform,
        gpu: gpu.as_ref(),
        renderer: &*renderer,
    };
    let result = call.run(pass, &args, &rets);
    if let Some(Gpu {
        be,
        stream: Some(s),
    }) = &gpu
    {
        // even after an error: what was queued may still read XLA's buffers
        be.join_render_stream(*s).map_err(internal)?;
    }
    result
}

/// One execution's context.
struct Call<'a> {
    target: &'a Target,
    platform: Platform,
    gpu: Option<&'a Gpu>,
    /// The variant's renderer.
    renderer: &'a dyn Renderer,
}

impl Call<'_> {
    fn gpu(&self) -> Result<&CudaBackend, Failure> {
        self.gpu
            .map(|g| &*g.be)
            .ok_or_else(|| internal("the CUDA backend is not open"))
    }

    /// Whether the renderer reads its inputs from the GPU.
    fn renders_on_gpu(&self) -> bool {
        self.renderer.device_backend().is_some()
    }

    fn run(&self, pass: Pass, args: &[Buf], rets: &[Buf]) -> Result<(), Failure> {
        let keys = &self.target.keys;
        let skip = usize::from(pass == Pass::Backward);
        if args.len() != keys.len() + skip {
            return Err(invalid(format!(
                "expected {} arguments ({}{} parameter values), got {}",
                keys.len() + skip,
                if skip == 1 {
                    "the image's gradient and "
                } else {
                    ""
                },
                keys.len(),
                args.len()
            )));
        }
        let want_rets = if pass == Pass::Render { 1 } else { keys.len() };
        if rets.len() != want_rets {
            return Err(invalid(format!(
                "expected {want_rets} results, got {}",
                rets.len()
            )));
        }
        let session = &*self.target.session;
        match pass {
            Pass::Render => self.render(session, args, &rets[0]),
            Pass::Backward => self.backward(session, &args[0], &args[1..], rets),
        }
    }

    /// The values of `b` where the render needs them (`texture`: a texture parameter,
    /// which the GPU takes from device memory).
    ///
    /// # Safety
    /// `b` is an input of the call of `b.len()` float32 values (checked).
    unsafe fn read(&self, b: &Buf, on_device: bool) -> Result<Values, Failure> {
        if self.platform == Platform::Cpu {
            // SAFETY: per the contract; a host buffer on the CPU platform.
            let data = unsafe { b.host() };
            return Ok(match on_device {
                true => Values::Device(Arc::new(
                    self.gpu()?.upload_tensor(&data).map_err(internal)?,
                )),
                false => Values::Host(data),
            });
        }
        let be = self.gpu()?;
        let a = ForeignArray {
            ptr: b.data,
            shape: b.dims.iter().map(|&d| d as i64).collect(),
            strides: c_strides(&b.dims),
            dtype: DLDataType::F32,
        };
        // ordered after XLA's stream (joined before the call ran)
        let t = be.import_device(&a).map_err(internal)?;
        Ok(match on_device {
            true => Values::Device(Arc::new(t)),
            // the host needs the values: a wait for this copy
            false => Values::Host(t.to_host().map_err(internal)?),
        })
    }

    /// Writes `v` into the result buffer `b` (of `v`'s length, checked).
    fn write(&self, b: &Buf, v: Values) -> Result<(), Failure> {
        match (self.platform, v) {
            (Platform::Cpu, Values::Host(data)) => {
                write_host(b, &data);
                Ok(())
            }
            (Platform::Cpu, Values::Device(t)) => {
                write_host(b, &t.to_host().map_err(internal)?);
                Ok(())
            }
            (Platform::Cuda, v) => {
                let be = self.gpu()?;
                let t = match v {
                    Values::Device(t) => t,
                    Values::Host(data) => Arc::new(be.upload_tensor(&data).map_err(internal)?),
                };
                // SAFETY: XLA's result buffer holds len floats (checked by the caller)
                // and stays valid until its stream (which waits for ours) has run.
                unsafe { be.copy_to_foreign(&t, b.data) }.map_err(internal)
            }
        }
    }

    /// Stages the values of the keys from `args` into `st`'s parameters.
    fn stage(&self, st: &Session, args: &[Buf]) -> Result<Vec<(usize, ParamValue)>, Failure> {
        let mut p = SceneParams::new(st.loaded().params());
        for (key, b) in self.target.keys.iter().zip(args) {
            let current = p.get(key).map_err(internal)?.clone();
            b.check(&format!("parameter \"{key}\""), &current.shape())?;
            let texture = matches!(current, ParamValue::Tensor(_));
            // SAFETY: a checked input buffer.
            let values = unsafe { self.read(b, texture && self.renders_on_gpu()) }?;
            let value = match values {
                Values::Host(data) => {
                    let a = HostArray {
                        shape: b.dims.clone(),
                        data,
                        dtype: DLDataType::F32,
                    };
                    from_host(key, &current, a)
                }
                Values::Device(t) => from_device(key, &current, t, &b.dims, DLDataType::F32, None),
            }
            // the text that the binding's exception gave this error
            .map_err(|e| invalid(format!("SceneError: {e}")))?;
            p.set(key, value).map_err(|e| invalid(e.to_string()))?;
        }
        Ok(p.staged())
    }

    /// Writes the values into the scene (the device copy patched).
    fn update(&self, st: &mut Session, args: &[Buf]) -> Result<(), Failure> {
        let staged = self.stage(st, args)?;
        st.update(&staged)
            .map(drop)
            .map_err(|e| invalid(e.to_string()))
    }

    fn render(&self, session: &Mutex<Session>, args: &[Buf], ret: &Buf) -> Result<(), Failure> {
        let film = {
            let mut st = lock(session);
            ret.check("the image", &st.film_shape())?;
            self.update(&mut st, args)?;
            st.render(self.renderer, self.target.render, &Swap::default())
                .map_err(internal)?
        };
        let image = match film {
            Film::Device(film) => Values::Device(Arc::new(film.into_tensor())),
            // a CPU render waits without the lock (it renders a snapshot)
            film => Values::Host(film.into_image().map_err(internal)?.data),
        };
        check_len("the image", ret, &image)?;
        self.write(ret, image)
    }

    fn backward(
        &self,
        session: &Mutex<Session>,
        grad: &Buf,
        args: &[Buf],
        rets: &[Buf],
    ) -> Result<(), Failure> {
        let grads = {
            let mut st = lock(session);
            grad.check("the image's gradient", &st.film_shape())?;
            self.update(&mut st, args)?;
            let params =
                resolve(st.loaded(), &self.target.keys).map_err(|e| invalid(e.to_string()))?;
            for (p, (r, key)) in params.iter().zip(rets.iter().zip(&self.target.keys)) {
                r.check(&format!("the gradient of \"{key}\""), &p.shape())?;
            }
            // SAFETY: a checked input buffer.
            let adjoint = unsafe { self.read(grad, self.renders_on_gpu()) }?;
            st.prepare(self.renderer).map_err(internal)?;
            let on_device;
            let adjoint = match adjoint {
                Values::Host(data) => Adjoint::Host(data),
                Values::Device(t) => {
                    on_device = t;
                    Adjoint::Device(&on_device)
                }
            };
            st.backward(self.renderer, &params, adjoint, self.target.grad)
                .map_err(|e| invalid(e.to_string()))?
        };
        let grads: Vec<Values> = match grads {
            Gradients::Device(g) => g.into_iter().map(|t| Values::Device(Arc::new(t))).collect(),
            // the CPU's backward pass runs without the lock (the scene is a snapshot)
            Gradients::Host(pass) => pass
                .run()
                .map_err(|e| invalid(e.to_string()))?
                .into_iter()
                .map(Values::Host)
                .collect(),
        };
        for ((r, g), key) in rets.iter().zip(grads).zip(&self.target.keys) {
            check_len(&format!("the gradient of \"{key}\""), r, &g)?;
            self.write(r, g)?;
        }
        Ok(())
    }
}

/// The session, locked by this thread (as its owner locks it).
fn lock(session: &Mutex<Session>) -> MutexGuard<'_, Session> {
    session.lock().unwrap_or_else(|p| p.into_inner())
}

/// C-order strides (in elements) of `dims`.
fn c_strides(dims: &[usize]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1] as i64;
    }
    s
}

/// Checks that `v` fills the result buffer `b`.
fn check_len(what: &str, b: &Buf, v: &Values) -> Result<(), Failure> {
    let n = match v {
        Values::Host(d) => d.len(),
        Values::Device(t) => t.len(),
    };
    if n != b.len() {
        return Err(internal(format!(
            "{what} has {n} values, its buffer {} ({})",
            b.len(),
            shape_str(&b.dims)
        )));
    }
    Ok(())
}

/// Copies `data` into the host result buffer `b` (of `data.len()` floats, checked).
fn write_host(b: &Buf, data: &[f32]) {
    if data.is_empty() {
        return;
    }
    // SAFETY: a host result buffer of XLA's holding data.len() float32 values.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), b.data as *mut f32, data.len()) };
}
