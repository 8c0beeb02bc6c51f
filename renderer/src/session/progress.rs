//! What the progress line of a render being waited on says, and when it redraws: a
//! 30-character bar, the percentage and the seconds so far, at most every 100 ms, and
//! 100 % only once. Where the line goes (a terminal, a notebook) is the caller's.

use std::time::{Duration, Instant};

/// Width of the bar in characters.
const BAR: usize = 30;
/// Redraws at most this often.
const REDRAW: Duration = Duration::from_millis(100);

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
}
