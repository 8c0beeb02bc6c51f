//! Where a scene's files are found: a file name is looked up next to the file that
//! names it, then in the scene's `<path>` folders, as Mitsuba's file resolver does.

use std::path::{Path, PathBuf};

use crate::error::Loc;

/// Finds `name` next to the file of `loc`, else in `search_paths` (in order); the
/// error lists every place it looked.
pub fn find_file(
    loc: &Loc,
    name: &str,
    search_paths: &[PathBuf],
) -> std::result::Result<PathBuf, String> {
    let first = resolve_relative(loc, name);
    if first.is_file() {
        return Ok(first);
    }
    if Path::new(name).is_absolute() {
        return Err(format!("file not found: {}", first.display()));
    }
    let mut tried = vec![first];
    for dir in search_paths {
        let path = dir.join(name);
        if path.is_file() {
            return Ok(path);
        }
        tried.push(path);
    }
    let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    Err(match tried.len() {
        1 => format!("file not found: {}", tried[0]),
        _ => format!(
            "file \"{name}\" not found (looked for {})",
            tried.join(", ")
        ),
    })
}

/// `name` relative to the directory of the file `loc` points into.
pub fn resolve_relative(loc: &Loc, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    let file = Path::new(&*loc.file);
    match file.parent() {
        Some(dir) if !loc.file.starts_with('<') => dir.join(p),
        _ => p.to_path_buf(),
    }
}
