//! The progress line drawn while a read waits for a CPU render (`TensorXf::wait`), and
//! `set_progress` (the settings are [`heliograph::session::progress`]'s).
//!
//! Where it goes is decided when it first draws, as tqdm users expect:
//! - in a Jupyter kernel: one display (`IPython.display.display(..., display_id=True)`)
//!   updated in place, so a saved notebook holds one output, not one per redraw;
//! - on a terminal (`sys.stderr.isatty()`): one line redrawn with `\r` and erased at
//!   the end, as the CLI's bar;
//! - anywhere else (a pipe, a log file, a test harness): nothing, unless
//!   `set_progress(True)` forces it, which prints the `\r` line and ends it with `\n`.
//!
//! IPython is never imported here: a kernel is recognised from `sys.modules`.

use std::time::Duration;

use heliograph::session::progress::{self as settings, ProgressFrame, ProgressText};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::to_py;

/// Sets where the progress line shows while a read waits for a render: `None`
/// (the default) on a terminal or in a notebook only, `True` also when stderr is a
/// pipe or a file, `False` never; `delay`: seconds a wait lasts before it appears.
#[pyfunction]
#[pyo3(signature = (enabled, delay=0.5))]
pub fn set_progress(enabled: Option<bool>, delay: f64) -> PyResult<()> {
    settings::set(enabled, delay).map_err(to_py)
}

/// The progress setting: `None` automatic (terminal or notebook), `True` forced, `False` off.
#[pyfunction]
pub fn progress() -> Option<bool> {
    settings::setting()
}

/// Where the line goes, decided at its first draw.
enum Sink {
    /// Nobody watches: draw nothing.
    Silent,
    /// `sys.stderr` is a terminal: redraw with `\r`, erase at the end.
    Terminal,
    /// Forced onto a pipe or file: `\r` redraws, ended by a newline.
    Plain,
    /// A Jupyter kernel: one display, updated in place (the handle once shown).
    Notebook(Option<Py<PyAny>>),
}

/// A one-line progress bar for one wait; its text is [`ProgressText`]'s.
#[derive(Default)]
pub struct ProgressLine {
    sink: Option<Sink>,
    /// Characters of the last line written to a terminal (to erase it).
    width: usize,
    text: ProgressText,
}

impl ProgressLine {
    /// Draws `done / total` (at most every 100 ms; 100 % only once).
    pub fn draw(&mut self, py: Python<'_>, done: u64, total: u64, elapsed: Duration) {
        if let Some(frame) = self.text.next(done, total, elapsed) {
            self.show(py, &frame);
        }
    }

    /// Shows 100 % once, if the line is shown at all.
    pub fn complete(&mut self, py: Python<'_>, elapsed: Duration) {
        if self.sink.is_some() {
            if let Some(frame) = self.text.complete(elapsed) {
                self.show(py, &frame);
            }
        }
    }

    fn show(&mut self, py: Python<'_>, frame: &ProgressFrame) {
        let sink = self.sink.get_or_insert_with(|| choose_sink(py));
        match sink {
            Sink::Silent => {}
            Sink::Terminal | Sink::Plain => {
                write_stderr(py, &format!("\r{}", frame.line));
                self.width = frame.line.chars().count();
            }
            // a progress line must never fail the read it decorates
            Sink::Notebook(handle) => drop(show(py, handle, frame)),
        }
    }

    /// Ends the line: erased on a terminal, closed by a newline when forced onto a
    /// pipe, kept as it is in a notebook.
    pub fn finish(&mut self, py: Python<'_>) {
        match self.sink.take() {
            Some(Sink::Terminal) if self.width > 0 => {
                write_stderr(py, &format!("\r{}\r", " ".repeat(self.width)));
            }
            Some(Sink::Plain) => write_stderr(py, "\n"),
            _ => {}
        }
    }
}

/// A notebook when a Jupyter kernel runs us, else a terminal, else forced or silent.
fn choose_sink(py: Python<'_>) -> Sink {
    if in_kernel(py) {
        return Sink::Notebook(None);
    }
    let tty = py
        .import("sys")
        .and_then(|m| m.getattr("stderr"))
        .and_then(|e| e.call_method0("isatty"))
        .and_then(|t| t.extract::<bool>())
        .unwrap_or(false);
    match (tty, settings::forced()) {
        (true, _) => Sink::Terminal,
        (false, true) => Sink::Plain,
        (false, false) => Sink::Silent,
    }
}

/// Whether IPython is already loaded and its shell is a kernel's (a terminal
/// IPython has no `kernel`).
fn in_kernel(py: Python<'_>) -> bool {
    let ipython = py
        .import("sys")
        .and_then(|m| m.getattr("modules"))
        .and_then(|m| m.call_method1("get", ("IPython",)));
    match ipython {
        Ok(m) if !m.is_none() => m
            .call_method0("get_ipython")
            .and_then(|shell| shell.hasattr("kernel"))
            .unwrap_or(false),
        _ => false,
    }
}

/// Shows `line` in the notebook: a new display the first time, then updates of it.
fn show(py: Python<'_>, handle: &mut Option<Py<PyAny>>, frame: &ProgressFrame) -> PyResult<()> {
    let bundle = PyDict::new(py);
    bundle.set_item("text/plain", &frame.line)?;
    bundle.set_item(
        "text/html",
        format!(
            "<progress value=\"{:.4}\" max=\"1\" style=\"width: 20em\"></progress> \
             <code>{}</code>",
            frame.frac,
            frame.numbers()
        ),
    )?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("raw", true)?;
    match handle {
        Some(h) => {
            h.bind(py).call_method("update", (bundle,), Some(&kwargs))?;
        }
        None => {
            kwargs.set_item("display_id", true)?;
            let display = py.import("IPython.display")?.getattr("display")?;
            *handle = Some(display.call((bundle,), Some(&kwargs))?.unbind());
        }
    }
    Ok(())
}

fn write_stderr(py: Python<'_>, s: &str) {
    let Ok(err) = py.import("sys").and_then(|m| m.getattr("stderr")) else {
        return;
    };
    let _ = err.call_method1("write", (s,));
    let _ = err.call_method0("flush");
}
