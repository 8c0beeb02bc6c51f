//! Mitsuba 3 XML scene files → [`SceneDesc`] (owned by the parser work; see issue 2).

use std::path::Path;

use super::desc::SceneDesc;
use crate::error::{Error, Loc, Result};

/// Parses the scene file at `path`; `defines` override `<default>` values (`-D name=value`).
pub fn load_file(path: &Path, _defines: &[(String, String)]) -> Result<SceneDesc> {
    Err(Error::parse(
        &Loc::unknown(&path.display().to_string()),
        "XML parser not implemented yet",
    ))
}

/// Parses a scene from a string (relative paths resolve against the working directory).
pub fn load_string(_xml: &str, _defines: &[(String, String)]) -> Result<SceneDesc> {
    Err(Error::parse(
        &Loc::unknown("<string>"),
        "XML parser not implemented yet",
    ))
}
