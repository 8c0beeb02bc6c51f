//! A render's [`Film`] as the Python package sees it: a `TensorXf` ([`tensor_of`]),
//! and for a CPU render a `RenderedFilm`.
//!
//! `RenderedFilm`: what a CPU render left on its sensor's film, for `Film.bitmap()`:
//! the film's channel names (Mitsuba's, with an `aov` integrator's) and the render's
//! inputs. A render whose tensor is dropped before it finishes is cancelled; the film
//! then develops the same render again (same scene snapshot, spp and seed: the same
//! image, bit for bit), as Mitsuba's film would hold it.

use std::sync::Arc;

use heliograph::backend::cpu::render_async;
use heliograph::render::RenderOptions;
use heliograph::scene::RenderSetup;
use heliograph::session::film::Film;
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::tensor::TensorXf;

/// The film of one CPU render (see the module docs).
#[pyclass(module = "heliograph", frozen)]
pub struct RenderedFilm {
    scene: Arc<RenderSetup>,
    opts: RenderOptions,
}

impl RenderedFilm {
    /// The film of rendering `scene` (the snapshot the render used) with `opts`.
    pub fn new(scene: Arc<RenderSetup>, opts: RenderOptions) -> Self {
        RenderedFilm { scene, opts }
    }
}

/// The tensor of a render's film (a CPU render's still running: reading it waits),
/// and a CPU render's film for `Film.bitmap()`.
pub fn tensor_of(film: Film) -> PyResult<(TensorXf, Option<RenderedFilm>)> {
    match film {
        Film::Pending { job, setup, opts } => {
            let shape = film_shape(&setup);
            let channels = setup.output_channels();
            let tensor = if channels.len() == shape[2] {
                TensorXf::pending(shape, job)
            } else {
                // an aov film: the tensor holds the channels that Mitsuba's render returns
                TensorXf::pending_part(shape, channels, job)
            };
            Ok((tensor, Some(RenderedFilm::new(setup, opts))))
        }
        Film::Host(image) => {
            let shape = vec![image.height, image.width, image.channels];
            Ok((TensorXf::from_data(shape, &image.data)?, None))
        }
        Film::Device(film) => {
            let (w, h, c) = film.shape();
            Ok((TensorXf::device(vec![h, w, c], film.into_tensor()), None))
        }
    }
}

/// The developed film's shape: (height, width, all of its channels).
pub fn film_shape(scene: &RenderSetup) -> Vec<usize> {
    let [w, h] = scene.sensor.film.crop_size;
    vec![h as usize, w as usize, scene.film_channel_names().len()]
}

#[pymethods]
impl RenderedFilm {
    /// The film's channel names: `R, G, B` (`A`), then those of an `aov` integrator.
    fn channel_names(&self) -> Vec<String> {
        self.scene.film_channel_names()
    }

    /// Renders the same image again, in the background as `render` does, and returns
    /// the whole film (every channel).
    fn render(&self) -> PyResult<TensorXf> {
        let job = render_async(self.scene.clone(), self.opts).map_err(to_py)?;
        Ok(TensorXf::pending(film_shape(&self.scene), job))
    }
}
