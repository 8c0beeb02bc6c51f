//! What the progress line of a render being waited on says, and when it redraws: a
//! 30-character bar, the percentage and the seconds so far, at most every 100 ms, and
//! 100 % only once; and the settings of whether and when it shows (`set_progress`).
//! Where the line goes (a terminal, a notebook) is the caller's.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::{ArrayProblem, Error, Result};

/// Width of the bar in characters.
const BAR: usize = 30;
/// Redraws at most this often.
const REDRAW: Duration = Duration::from_millis(100);

/// Whether waits may draw a progress line (`set(Some(false), ..)` clears it).
static ENABLED: AtomicBool = AtomicBool::new(true);
/// Whether to draw even where nobody watches (`set(Some(true), ..)`).
static FORCED: AtomicBool = AtomicBool::new(false);
/// Renders shorter than this many microseconds draw no progress line.
static DELAY_US: AtomicU64 = AtomicU64::new(500_000);

/// Sets where the progress line shows while a read waits for a render: `None` (the
/// default) where somebody watches (a terminal, a notebook), `Some(true)` also on a pipe
/// or a file, `Some(false)` never; `delay`: seconds a wait lasts before it appears.
pub fn set(enabled: Option<bool>, delay: f64) -> Result<()> {
    if !(delay >= 0.0 && delay.is_finite()) {
        return Err(Error::array(
            ArrayProblem::Argument,
            format!("set_progress: delay must be a finite number of seconds >= 0, got {delay}"),
        ));
    }
    ENABLED.store(enabled != Some(false), Ordering::Relaxed);
    FORCED.store(enabled == Some(true), Ordering::Relaxed);
    DELAY_US.store((delay * 1e6) as u64, Ordering::Relaxed);
    Ok(())
}

/// The setting [`set`] made: `None` automatic, `Some(true)` forced, `Some(false)` off.
pub fn setting() -> Option<bool> {
    match (enabled(), forced()) {
        (false, _) => Some(false),
        (true, true) => Some(true),
        (true, false) => None,
    }
}

/// Whether waits may draw a progress line at all.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Whether the line draws even where nobody watches (a pipe, a file).
pub fn forced() -> bool {
    FORCED.load(Ordering::Relaxed)
}

/// How long a wait lasts before its line appears.
pub fn delay() -> Duration {
    Duration::from_micros(DELAY_US.load(Ordering::Relaxed))
}

/// The text of one progress line, redrawn as the render advances.
#[derive(Debug, Default)]
pub struct ProgressText {
    /// When the line last redrew.
    last: Option<Instant>,
    /// 100 % has been shown: later redraws would only repeat it.
    full: bool,
}

/// One redraw of the line.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressFrame {
    /// `Rendering [###   ]  42.0% (1.3 s)`.
    pub line: String,
    /// The fraction done, in [0, 1].
    pub frac: f64,
}

impl ProgressFrame {
    /// The line after its bar (`42.0% (1.3 s)`), for a display that draws its own bar.
    pub fn numbers(&self) -> &str {
        self.line.split("] ").nth(1).unwrap_or(&self.line)
    }
}

impl ProgressText {
    /// The line for `done / total` after `elapsed`, or `None` when it is not time to
    /// redraw (within 100 ms of the last redraw, or 100 % already shown).
    pub fn next(&mut self, done: u64, total: u64, elapsed: Duration) -> Option<ProgressFrame> {
        if self.full || self.last.is_some_and(|t| t.elapsed() < REDRAW) {
            return None;
        }
        self.last = Some(Instant::now());
        let frac = if total > 0 {
            (done as f64 / total as f64).min(1.0)
        } else {
            0.0
        };
        let pct = format!("{:5.1}", frac * 100.0);
        self.full = pct == "100.0";
        let n = ((frac * BAR as f64) as usize).min(BAR);
        let bar = format!("{}{}", "#".repeat(n), " ".repeat(BAR - n));
        let line = format!("Rendering [{bar}] {pct}% ({:.1} s)", elapsed.as_secs_f64());
        Some(ProgressFrame { line, frac })
    }

    /// The line at 100 %, now (whatever the time since the last redraw), unless it
    /// has been shown.
    pub fn complete(&mut self, elapsed: Duration) -> Option<ProgressFrame> {
        self.last = None;
        self.next(1, 1, elapsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_draws_the_bar_and_shows_100_percent_once() {
        let mut t = ProgressText::default();
        let f = t.next(1, 4, Duration::from_millis(1300)).unwrap();
        assert_eq!(
            f.line,
            format!(
                "Rendering [{}{}]  25.0% (1.3 s)",
                "#".repeat(7),
                " ".repeat(23)
            )
        );
        assert_eq!(f.numbers(), " 25.0% (1.3 s)");
        assert!(
            t.next(2, 4, Duration::ZERO).is_none(),
            "redrew within 100 ms"
        );
        assert!(t.complete(Duration::ZERO).unwrap().line.contains("100.0%"));
        assert!(t.complete(Duration::ZERO).is_none());
    }

    #[test]
    fn a_negative_or_infinite_delay_is_refused_and_changes_nothing() {
        let before = (setting(), delay());
        for bad in [-1.0, f64::INFINITY, f64::NAN] {
            let e = set(None, bad).unwrap_err().to_string();
            assert!(e.starts_with("set_progress: delay must be"), "{e}");
        }
        assert_eq!((setting(), delay()), before);
    }
}
