//! A render's [`Film`] as the Python package sees it: a `TensorXf` ([`tensor_of`]),
//! and for a CPU render a `RenderedFilm`.
//!
//! `RenderedFilm`: what a CPU render left on its sensor's film, for `Film.bitmap()`:
//! the film's channel names (Mitsuba's, with an `aov` integrator's) and the render's
//! inputs. A render whose tensor is dropped before it finishes is cancelled; the film
//! then develops the same render again (same scene snapshot, spp and seed: the same
//! image, bit for bit), as Mitsuba's film would hold it.

use std::sync::Arc;

use heliograph::interop::Storage;
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
    let (storage, replay) = Storage::of_film(film).map_err(to_py)?;
    let film = replay.map(|(scene, opts)| RenderedFilm::new(scene, opts));
    Ok((storage.into(), film))
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
        let storage = Storage::replay(&self.scene, self.opts).map_err(to_py)?;
        Ok(storage.into())
    }
}
