//! The one error type of the core. Every variant says what went wrong and where
//! (file:line for scene files, the parameter key, expected vs given).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// A position in a scene file, for error messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loc {
    /// The scene file (or a pseudo-name such as `<string>` or `<dict>`).
    pub file: Arc<str>,
    /// 1-based line; 0 when unknown.
    pub line: u32,
    /// 1-based column; 0 when unknown.
    pub col: u32,
}

impl Loc {
    /// A location in `file` at `line:col`.
    pub fn new(file: &str, line: u32, col: u32) -> Self {
        Loc {
            file: file.into(),
            line,
            col,
        }
    }

    /// A location that only names its source, e.g. `<dict>`.
    pub fn unknown(file: &str) -> Self {
        Loc {
            file: file.into(),
            line: 0,
            col: 0,
        }
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.col) {
            (0, _) => write!(f, "{}", self.file),
            (l, 0) => write!(f, "{}:{}", self.file, l),
            (l, c) => write!(f, "{}:{}:{}", self.file, l, c),
        }
    }
}

/// `"; did you mean \"x\"?"` for the known name closest to `name` (case ignored), when
/// it is close enough to be a likely typo: at most one edit per four characters
/// (three at most); otherwise empty.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let lower = name.to_lowercase();
    let limit = (name.chars().count() / 4).clamp(1, 3);
    known
        .into_iter()
        .map(|k| (edit_distance(&lower, &k.to_lowercase()), k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| format!("; did you mean \"{k}\"?"))
        .unwrap_or_default()
}

/// Edit distance counting insertions, deletions, substitutions and swaps of two
/// neighbouring characters (optimal string alignment), in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j - 1] + cost)
                .min(d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// Everything that can go wrong in heliograph's core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed scene syntax (XML or dict).
    #[error("{loc}: {msg}")]
    Parse { loc: Loc, msg: String },

    /// A `type` that names no plugin of its category.
    #[error(
        "{loc}: unknown {category} plugin \"{name}\"{} (known: {known})",
        did_you_mean(name, known.split(", "))
    )]
    UnknownPlugin {
        loc: Loc,
        category: &'static str,
        name: String,
        known: String,
    },

    /// A parameter that is missing, unread, of the wrong type or out of range.
    #[error("{loc}: parameter \"{key}\": {msg}")]
    Param { loc: Loc, key: String, msg: String },

    /// A file that could not be read or written.
    #[error("{}: {msg}", path.display())]
    Io { path: PathBuf, msg: String },

    /// A render request that cannot be served (zero spp, zero-size film, ...).
    #[error("{0}")]
    Render(String),

    /// The render was cancelled before it finished.
    #[error("render cancelled")]
    Cancelled,

    /// CUDA was asked for but is not usable on this machine or build.
    #[error("CUDA unavailable: {0}")]
    CudaUnavailable(String),

    /// A CUDA driver, NVRTC or kernel failure where CUDA itself is usable.
    #[error("CUDA error: {0}")]
    Cuda(String),

    /// An array that cannot be read as asked (an import): its element type, layout or
    /// device.
    #[error("{msg}")]
    Array {
        /// What is wrong with it.
        problem: ArrayProblem,
        /// The message.
        msg: String,
    },
}

/// What is wrong with an array (Python maps these to `TypeError`, `ValueError`,
/// `BufferError` and `IndexError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayProblem {
    /// An element type that cannot be converted.
    Dtype,
    /// A shape or strides that cannot be read (negative extents, too many elements or
    /// dimensions).
    Layout,
    /// Memory heliograph cannot read (another device, a non-host array where host
    /// memory is needed).
    Device,
    /// An index that names no element: out of range, or more indices than axes.
    Index,
}

/// The core's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A parse error at `loc`.
    pub fn parse(loc: &Loc, msg: impl Into<String>) -> Self {
        Error::Parse {
            loc: loc.clone(),
            msg: msg.into(),
        }
    }

    /// A parameter error for `key` at `loc`.
    pub fn param(loc: &Loc, key: &str, msg: impl Into<String>) -> Self {
        Error::Param {
            loc: loc.clone(),
            key: key.to_string(),
            msg: msg.into(),
        }
    }

    /// An I/O error for `path`.
    /// An [`Error::Array`].
    pub fn array(problem: ArrayProblem, msg: impl Into<String>) -> Self {
        Error::Array {
            problem,
            msg: msg.into(),
        }
    }

    pub fn io(path: impl Into<PathBuf>, msg: impl fmt::Display) -> Self {
        Error::Io {
            path: path.into(),
            msg: msg.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_character_edits() {
        for (a, b, d) in [
            ("", "", 0),
            ("abc", "", 3),
            ("kitten", "sitting", 3),
            ("roughdielectic", "roughdielectric", 1),
            ("diffsue", "diffuse", 1),
            ("bdsf", "bsdf", 1),
            ("é", "e", 1),
        ] {
            assert_eq!(edit_distance(a, b), d, "{a} / {b}");
            assert_eq!(edit_distance(b, a), d, "{b} / {a}");
        }
    }

    #[test]
    fn suggestions_only_for_likely_typos() {
        let known = [
            "diffuse",
            "dielectric",
            "roughdielectric",
            "plastic",
            "point",
        ];
        let s = |n: &str| did_you_mean(n, known);
        assert_eq!(s("difuse"), "; did you mean \"diffuse\"?");
        assert_eq!(s("Diffuse"), "; did you mean \"diffuse\"?");
        assert_eq!(s("roughdielectic"), "; did you mean \"roughdielectric\"?");
        assert_eq!(s("dielectirc"), "; did you mean \"dielectric\"?");
        // far from everything: no guess
        assert_eq!(s("spot"), "");
        assert_eq!(s("principled"), "");
        assert_eq!(s("x"), "");
    }
}
