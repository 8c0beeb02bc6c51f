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

/// Everything that can go wrong in heliograph's core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed scene syntax (XML or dict).
    #[error("{loc}: {msg}")]
    Parse { loc: Loc, msg: String },

    /// A `type` that names no plugin of its category.
    #[error("{loc}: unknown {category} plugin \"{name}\"{} (known: {known})", did_you_mean(name, known.split(", ")))]
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

/// What is wrong with an array (Python maps these to `TypeError`, `ValueError` and
/// `BufferError`).
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

/// The candidate closest to `name` by edit distance, when it is close enough to be a
/// misspelling (at most a third of the name's letters, and at least one, differ).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// `; did you mean "x"?` for the closest candidate, or nothing.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(name, candidates)
        .map(|c| format!("; did you mean \"{c}\"?"))
        .unwrap_or_default()
}

/// Levenshtein distance (insertions, deletions, substitutions), over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod suggest_tests {
    use super::*;

    #[test]
    fn edit_distance_and_suggestions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("spp", "spp"), 0);
        assert_eq!(closest("sppp", ["spp", "res"]), Some("spp"));
        assert_eq!(closest("resolution", ["spp", "res"]), None);
        assert_eq!(
            did_you_mean("difuse", ["diffuse", "plastic"]),
            "; did you mean \"diffuse\"?"
        );
        assert_eq!(did_you_mean("xyz", ["diffuse"]), "");
    }
}
