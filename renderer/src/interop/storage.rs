//! `Storage`: where a float32 tensor's values are, and the state they are in: a CPU
//! render still running ([`RenderJob`]), a host [`Buffer`], a CUDA [`DeviceTensor`]
//! (valid once its ready event has fired), or a render that failed. A render whose
//! tensor holds some of its film's channels (an `aov` film) also keeps the whole
//! developed film.
//!
//! Reads never block here: [`Storage::try_finish`] takes a finished render's image
//! and [`Storage::completion`] is what a reader sleeps on, so a caller can wait its
//! own way (the Python binding releases the GIL and polls for Ctrl-C between sleeps).

use std::fmt::Display;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::backend::cpu::{render_async, Completion, RenderJob};
use crate::backend::cuda::DeviceTensor;
use crate::error::{Error, Result};
use crate::io::Image;
use crate::render::RenderOptions;
use crate::scene::RenderSetup;
use crate::session::film::Film;
use crate::tensor::buffer::Buffer;
use crate::tensor::dlpack::{DEVICE_CPU, DEVICE_CUDA};

/// A CPU render's scene snapshot and options: rendering them again develops the same
/// film, bit for bit.
pub type Replay = (Arc<RenderSetup>, RenderOptions);

/// The developed film's shape: (height, width, all of its channels).
fn developed_shape(setup: &RenderSetup) -> Vec<usize> {
    let [w, h] = setup.sensor.film.crop_size;
    vec![h as usize, w as usize, setup.film_channel_names().len()]
}

/// The state of a tensor's values.
enum State {
    Pending(RenderJob),
    Ready(Arc<Buffer>),
    Device(Arc<DeviceTensor>),
    Failed(String),
}

/// A float32 tensor's shape (C order) and values (see the module docs).
pub struct Storage {
    shape: Vec<usize>,
    state: Mutex<State>,
    /// For a render that returns some of its film's channels (an `aov` film), the film.
    film: Option<FilmPart>,
}

/// The film of a render whose tensor holds some of its channels.
struct FilmPart {
    /// The developed film's shape (H, W, all channels).
    shape: Vec<usize>,
    /// The film channels the tensor holds, in order.
    channels: Vec<usize>,
    /// The whole developed film, once the render has finished.
    developed: OnceLock<Arc<Buffer>>,
}

impl Storage {
    fn new(shape: Vec<usize>, state: State) -> Storage {
        Storage {
            shape,
            state: Mutex::new(state),
            film: None,
        }
    }

    /// Finished values sharing `buf`.
    pub fn from_buffer(shape: Vec<usize>, buf: Arc<Buffer>) -> Storage {
        Self::new(shape, State::Ready(buf))
    }

    /// Finished values holding a copy of `data`.
    pub fn from_values(shape: Vec<usize>, data: &[f32]) -> Result<Storage> {
        Ok(Self::from_buffer(shape, Buffer::from_slice(data)?))
    }

    /// Finished values holding a copy of `image`, of shape (height, width, channels).
    pub fn of_image(image: &Image) -> Result<Storage> {
        let shape = vec![image.height, image.width, image.channels];
        Self::from_values(shape, &image.data)
    }

    /// Values that a background render will fill.
    fn pending(shape: Vec<usize>, job: RenderJob) -> Storage {
        Self::new(shape, State::Pending(job))
    }

    /// `channels` of the film (of shape `film_shape`) that a background render will
    /// develop; [`Self::developed_film`] gives the whole film.
    fn pending_part(film_shape: Vec<usize>, channels: Vec<usize>, job: RenderJob) -> Storage {
        let shape = vec![film_shape[0], film_shape[1], channels.len()];
        Storage {
            film: Some(FilmPart {
                shape: film_shape,
                channels,
                developed: OnceLock::new(),
            }),
            ..Self::new(shape, State::Pending(job))
        }
    }

    /// The values of a render's film (a CPU render's still running), and for a CPU
    /// render the scene snapshot and options that develop the same film again
    /// ([`Self::replay`]).
    pub fn of_film(film: Film) -> Result<(Storage, Option<Replay>)> {
        match film {
            Film::Pending { job, setup, opts } => {
                let shape = developed_shape(&setup);
                let channels = setup.output_channels();
                let storage = if channels.len() == shape[2] {
                    Storage::pending(shape, job)
                } else {
                    // an aov film: the tensor holds the channels that Mitsuba's render returns
                    Storage::pending_part(shape, channels, job)
                };
                Ok((storage, Some((setup, opts))))
            }
            Film::Host(image) => Ok((Self::of_image(&image)?, None)),
            Film::Device(film) => {
                let (w, h, c) = film.shape();
                Ok((
                    Self::device(vec![h, w, c], Arc::new(film.into_tensor())),
                    None,
                ))
            }
        }
    }

    /// The whole film (every channel) of rendering `setup` with `opts` again, in the
    /// background as the first render ran.
    pub fn replay(setup: &Arc<RenderSetup>, opts: RenderOptions) -> Result<Storage> {
        let job = render_async(setup.clone(), opts)?;
        Ok(Storage::pending(developed_shape(setup), job))
    }

    /// Values in CUDA memory sharing `tensor`.
    pub fn device(shape: Vec<usize>, tensor: Arc<DeviceTensor>) -> Storage {
        Self::new(shape, State::Device(tensor))
    }

    /// A copy on the device of values in CUDA memory (the copy is queued on the render
    /// stream: the host does not wait); `None` for host values.
    pub fn device_copy(&self) -> Option<Result<Storage>> {
        let d = self.device_tensor()?;
        Some(
            d.duplicate()
                .map(|c| Storage::device(self.shape.clone(), Arc::new(c))),
        )
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device tensor, for values in CUDA memory.
    pub fn device_tensor(&self) -> Option<Arc<DeviceTensor>> {
        match &*self.lock() {
            State::Device(d) => Some(d.clone()),
            _ => None,
        }
    }

    /// The DLPack device of the values: `(2, ordinal)` in CUDA memory, `(1, 0)` on
    /// the host.
    pub fn dlpack_device(&self) -> (i32, i32) {
        match self.device_tensor() {
            Some(d) => (DEVICE_CUDA, d.ordinal() as i32),
            None => (DEVICE_CPU, 0),
        }
    }

    /// `"cuda:N"` for values in CUDA memory, `"cpu"` otherwise.
    pub fn device_name(&self) -> String {
        match self.device_tensor() {
            Some(d) => format!("cuda:{}", d.ordinal()),
            None => "cpu".into(),
        }
    }

    /// Whether the values are available without waiting.
    pub fn is_ready(&self) -> bool {
        match &*self.lock() {
            State::Pending(j) => j.is_finished(),
            State::Device(d) => d.is_ready(),
            _ => true,
        }
    }

    /// The pending render's completion, if it is still pending.
    pub fn completion(&self) -> Option<Arc<Completion>> {
        match &*self.lock() {
            State::Pending(j) => Some(j.completion().clone()),
            _ => None,
        }
    }

    /// The pending render's samples (done, total), if it is still pending.
    pub fn samples(&self) -> Option<(u64, u64)> {
        match &*self.lock() {
            State::Pending(j) => Some(j.progress().samples()),
            _ => None,
        }
    }

    /// The host values once the render has finished, `None` while it runs. A failure
    /// becomes `convert`'s error, whose text the storage keeps: later reads get
    /// `failed(text)`. Not for values in CUDA memory (their reader copies them).
    pub fn try_finish<E: Display>(
        &self,
        convert: impl FnOnce(Error) -> E,
        failed: impl FnOnce(String) -> E,
    ) -> Option<Result<Arc<Buffer>, E>> {
        let mut st = self.lock();
        let job = match &*st {
            State::Ready(b) => return Some(Ok(b.clone())),
            State::Device(_) => unreachable!("device values are read by their reader"),
            State::Failed(m) => return Some(Err(failed(m.clone()))),
            State::Pending(j) if !j.is_finished() => return None,
            State::Pending(_) => match std::mem::replace(&mut *st, State::Failed(String::new())) {
                State::Pending(j) => j,
                _ => unreachable!("checked above"),
            },
        };
        let res = job.wait().and_then(|img| self.check_image(img));
        Some(match res {
            Ok(buf) => {
                *st = State::Ready(buf.clone());
                Ok(buf)
            }
            Err(e) => {
                let err = convert(e);
                *st = State::Failed(err.to_string());
                Err(err)
            }
        })
    }

    fn check_image(&self, img: Image) -> Result<Arc<Buffer>> {
        let expected = self.film.as_ref().map_or(&self.shape, |f| &f.shape);
        if [img.height, img.width, img.channels] != expected[..] {
            return Err(Error::Render(format!(
                "the film developed a {}x{}x{} image, expected {:?}",
                img.height, img.width, img.channels, expected
            )));
        }
        let Some(film) = &self.film else {
            return Buffer::from_slice(&img.data);
        };
        let part: Vec<f32> = img
            .data
            .chunks_exact(img.channels)
            .flat_map(|px| film.channels.iter().map(|&c| px[c]))
            .collect();
        let _ = film.developed.set(Buffer::from_slice(&img.data)?);
        Buffer::from_slice(&part)
    }

    /// Cancels a running render with `reason` (the error later reads get) and waits
    /// for its threads to stop; nothing for other values.
    pub fn cancel(&self, reason: &str) {
        let job = {
            let mut st = self.lock();
            match std::mem::replace(&mut *st, State::Failed(reason.into())) {
                State::Pending(j) => Some(j),
                other => {
                    *st = other;
                    None
                }
            }
        };
        if let Some(j) = job {
            j.progress().cancel();
            drop(j.wait());
        }
    }

    /// Whether these values are some of a film's channels (`Storage::pending_part`).
    pub fn is_film_part(&self) -> bool {
        self.film.is_some()
    }

    /// For a film part whose render has finished ([`Self::try_finish`]), the whole
    /// developed film; `None` for other values.
    pub fn developed_film(&self) -> Option<Result<Storage>> {
        let film = self.film.as_ref()?;
        Some(match film.developed.get() {
            Some(buf) => Ok(Storage::from_buffer(film.shape.clone(), buf.clone())),
            None => Err(Error::Render(
                "the render finished without developing its film".into(),
            )),
        })
    }

    /// Replaces the values with `buf` (an assignment's result; exports of the old
    /// values keep them).
    pub fn set_buffer(&self, buf: Arc<Buffer>) {
        *self.lock() = State::Ready(buf);
    }

    /// Replaces the values with `tensor` (a CUDA assignment's result).
    pub fn set_device(&self, tensor: Arc<DeviceTensor>) {
        *self.lock() = State::Device(tensor);
    }
}
