//! The progress line drawn on `sys.stderr` while a read waits for a CPU render
//! (`TensorXf::wait`), and its settings (`set_progress`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// Whether waits draw a progress line (`set_progress`).
pub static PROGRESS: AtomicBool = AtomicBool::new(true);
/// Renders shorter than this many microseconds draw no progress line (`set_progress`).
pub static PROGRESS_DELAY_US: AtomicU64 = AtomicU64::new(500_000);

/// Turns the progress line shown while waiting for renders on or off; `delay`:
/// seconds a wait lasts before the line appears (short renders stay quiet).
#[pyfunction]
#[pyo3(signature = (enabled, delay=0.5))]
pub fn set_progress(enabled: bool, delay: f64) -> PyResult<()> {
    if !(delay >= 0.0 && delay.is_finite()) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "set_progress: delay must be a finite number of seconds >= 0, got {delay}"
        )));
    }
    PROGRESS.store(enabled, Ordering::Relaxed);
    PROGRESS_DELAY_US.store((delay * 1e6) as u64, Ordering::Relaxed);
    Ok(())
}

/// Whether the progress line is on.
#[pyfunction]
pub fn progress() -> bool {
    PROGRESS.load(Ordering::Relaxed)
}

/// A one-line progress bar on `sys.stderr` (terminals and notebooks both honour `\r`).
#[derive(Default)]
pub struct ProgressLine {
    drawn: bool,
    last: Option<Instant>,
}

impl ProgressLine {
    pub fn draw(&mut self, py: Python<'_>, done: u64, total: u64, elapsed: Duration) {
        if self
            .last
            .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(Instant::now());
        let frac = if total > 0 {
            done as f64 / total as f64
        } else {
            0.0
        };
        let n = (frac * 30.0) as usize;
        let line = format!(
            "\rRendering [{}{}] {:5.1}% ({:.1} s)",
            "#".repeat(n),
            " ".repeat(30 - n.min(30)),
            frac * 100.0,
            elapsed.as_secs_f64()
        );
        self.drawn |= write_stderr(py, &line);
    }

    /// Redraws a drawn bar at 100 %.
    pub fn complete(&mut self, py: Python<'_>, elapsed: Duration) {
        if self.drawn {
            self.last = None;
            self.draw(py, 1, 1, elapsed);
        }
    }

    pub fn finish(&mut self, py: Python<'_>) {
        if self.drawn {
            write_stderr(py, "\n");
            self.drawn = false;
        }
    }
}

fn write_stderr(py: Python<'_>, s: &str) -> bool {
    let Ok(err) = py.import("sys").and_then(|m| m.getattr("stderr")) else {
        return false;
    };
    let ok = err.call_method1("write", (s,)).is_ok();
    let _ = err.call_method0("flush");
    ok
}
