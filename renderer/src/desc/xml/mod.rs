//! Mitsuba 3 XML scene files → [`SceneDesc`].
//!
//! Supported, with Mitsuba 3 semantics:
//!
//! | element | attributes | result |
//! |---|---|---|
//! | `<scene>` (root) | `version` (optional, `x.y.z`) | the root object |
//! | `shape bsdf texture emitter integrator sensor film rfilter sampler` | `type`, `id`?, `name`? | nested [`ObjectDesc`] (named, else `_arg_N`) |
//! | `<ref>` | `id`, `name`? | [`Value::Ref`], resolved by the builder |
//! | `float integer boolean string` | `name`, `value` | scalar values |
//! | `rgb` | `name`, `value` (1 or 3 numbers) | [`Value::Rgb`] |
//! | `spectrum` | `name`, `value` (`0.5` or `400:0.5, 700:0.8`) or `filename` (`.spd`) | [`Value::Spectrum`] |
//! | `point vector` | `name`, `value` or `x y z` (missing = 0) | [`Value::Point`] / [`Value::Vector`] |
//! | `transform` | `name`; children `translate rotate scale matrix lookat` | [`Value::Transform`] |
//! | `<default>` | `name`, `value` | declares `$name` (a `-D` define overrides it) |
//! | `<include>` | `filename` | splices the file's `<scene>` children |
//! | `<path>` | `value` (a folder; only directly under `<scene>`) | adds a search path |
//!
//! File names (`<include>`, meshes, images, spectrum files) are looked up next to the
//! file that names them, then in the `<path>` folders, the latest declared first (as
//! Mitsuba's file resolver does; a relative `<path>` is relative to its file's folder).
//!
//! `$name` is substituted in every attribute value (the longest defined name wins);
//! an undefined one is an error. Names and ids may not start with `_` (reserved for
//! the generated `_arg_N` keys). Unknown attributes are errors. `<spectrum type="...">`
//! is a texture object. Files with `version` < 2.0 are upgraded in memory as Mitsuba 3
//! does (camelCase names → snake_case, `<lookAt>`, `_id`s, `diffuseReflectance`).
//! Every error carries `file:line:col`.
//!
//! Hostile files get errors, not exhausted memory or stack: a `<!DOCTYPE>` is skipped
//! but entity declarations are refused (Mitsuba 3 expands no custom entity either),
//! elements nest at most 128 levels, a file has at most 256 MiB and 4 Mi XML nodes, and an
//! include cycle is an error naming the chain of files.
//!
//! ```xml
//! <scene version="3.0.0">
//!     <default name="spp" value="64"/>
//!     <sampler type="independent"><integer name="sample_count" value="$spp"/></sampler>
//! </scene>
//! ```

mod elem;
mod transform;
mod values;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use roxmltree::Node;

use self::elem::{check_identifier, Elem, Source};
use super::props::{Props, Value};
use super::{Category, ObjectDesc, SceneDesc};
use crate::error::{did_you_mean, Error, Loc, Result};
use crate::math::spectrum::Spectrum;

/// Elements nested deeper than this are rejected (keeps recursion bounded); Python
/// dicts share the limit.
pub const MAX_DEPTH: usize = 128;

/// Parses the scene file at `path`; `defines` override `<default>` values (`-D name=value`).
pub fn load_file(path: &Path, defines: &[(String, String)]) -> Result<SceneDesc> {
    let text = read_text(path).map_err(|e| Error::io(path, e))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut parser = Parser::new(defines);
    parser.includes.push(canonical(path));
    parser.load_root(&text, &path.display().to_string(), dir)
}

/// Parses a scene from a string (file name `<string>`; relative includes resolve
/// against the working directory).
pub fn load_string(xml: &str, defines: &[(String, String)]) -> Result<SceneDesc> {
    Parser::new(defines).load_root(xml, "<string>", PathBuf::new())
}

/// Parser state shared across included files.
struct Parser {
    /// `$name` parameters: defines first, then `<default>`s not already set.
    params: HashMap<String, String>,
    /// The names given as defines.
    defines: Vec<String>,
    /// The names declared by `<default>`s, in file order.
    defaults: Vec<String>,
    /// The text of every file parsed (to find `$name` references).
    texts: Vec<String>,
    /// Files being parsed (the include chain), for cycle detection.
    includes: Vec<PathBuf>,
    /// `<path>` folders, latest first (Mitsuba prepends each to its file resolver).
    search_paths: Vec<PathBuf>,
}

impl Parser {
    fn new(defines: &[(String, String)]) -> Self {
        Parser {
            params: defines.iter().cloned().collect(),
            defines: defines.iter().map(|d| d.0.clone()).collect(),
            defaults: Vec::new(),
            texts: Vec::new(),
            includes: Vec::new(),
            search_paths: Vec::new(),
        }
    }

    fn load_root(&mut self, text: &str, file: &str, dir: PathBuf) -> Result<SceneDesc> {
        let src = Source::parse(text, file, dir)?;
        let root = Elem::new(&src, src.doc.root_element(), &self.params)?;
        if root.tag != "scene" {
            return Err(Error::parse(
                &root.loc,
                format!("the root element must be <scene>, got <{}>", root.tag),
            ));
        }
        root.allow(&["version"])?;
        check_version(&root)?;
        let mut props = Props::new(root.loc.clone());
        self.texts.push(text.to_string());
        self.children(&src, root.node, &mut props, 1)?;
        self.check_defines(&root.loc)?;
        let obj = ObjectDesc {
            category: Category::Scene,
            kind: "scene".to_string(),
            id: None,
            props,
            loc: root.loc,
        };
        Ok(SceneDesc {
            root: Arc::new(obj),
            search_paths: std::mem::take(&mut self.search_paths),
        })
    }

    /// Parses the element children of `node` into `props`.
    fn children(
        &mut self,
        src: &Source,
        node: Node,
        props: &mut Props,
        depth: usize,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(Error::parse(
                &src.node_loc(node),
                format!("elements are nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        for child in node.children() {
            if child.is_element() {
                self.element(src, child, props, depth)?;
            } else if child.is_text() {
                check_blank_text(src, child)?;
            }
        }
        Ok(())
    }

    /// Dispatches one element on its tag.
    fn element(&mut self, src: &Source, node: Node, props: &mut Props, depth: usize) -> Result<()> {
        let el = Elem::new(src, node, &self.params)?;
        match el.tag {
            "scene" => Err(Error::parse(
                &el.loc,
                "<scene> may only be the root element",
            )),
            "ref" => reference(&el, props),
            "default" => self.default(&el),
            "include" => self.include(src, &el, props, depth),
            "path" => self.search_path(src, &el),
            "transform" => {
                let (name, t) = transform::parse_transform(src, &el, &self.params)?;
                props.insert(&name, Value::Transform(t), el.loc)
            }
            // As in Mitsuba, a <spectrum> with a type is a texture plugin (e.g. "blackbody").
            "spectrum" if el.get("type").is_some() => {
                self.object(src, &el, Category::Texture, props, depth, false)
            }
            "spectrum" if el.get("filename").is_some() && el.get("value").is_none() => {
                self.spectrum_file(src, &el, props)
            }
            tag if values::PROPERTY_TAGS.contains(&tag) => {
                let (name, value) = values::parse_property(&el)?;
                props.insert(&name, value, el.loc)
            }
            tag if transform::OPS.contains(&tag) => Err(Error::parse(
                &el.loc,
                format!("<{tag}> is only allowed inside <transform>"),
            )),
            tag => match Category::from_tag(tag) {
                Some(cat) => self.object(src, &el, cat, props, depth, false),
                None => Err(unknown_tag(&el)),
            },
        }
    }

    /// An object tag: parses it and adds it to `parent` under its name or `_arg_N`.
    fn object(
        &mut self,
        src: &Source,
        el: &Elem,
        category: Category,
        parent: &mut Props,
        depth: usize,
        file_root: bool,
    ) -> Result<()> {
        let allowed: &[&str] = if file_root {
            &["type", "id", "name", "version"]
        } else {
            &["type", "id", "name"]
        };
        el.allow(allowed)?;
        let kind = el.req("type")?;
        if kind.value.trim().is_empty() {
            return Err(Error::parse(
                &kind.loc,
                format!("<{}>: empty \"type\"", el.tag),
            ));
        }
        let id = match el.get("id") {
            Some(a) => {
                check_identifier(a, "id")?;
                Some(a.value.clone())
            }
            None => None,
        };
        let name = match el.get("name") {
            Some(_) => Some(el.name_attr()?.to_string()),
            None => None,
        };
        let mut props = Props::new(el.loc.clone());
        self.children(src, el.node, &mut props, depth + 1)?;
        let obj = Arc::new(ObjectDesc {
            category,
            kind: kind.value.trim().to_string(),
            id,
            props,
            loc: el.loc.clone(),
        });
        match name {
            Some(n) => parent.insert(&n, Value::Object(obj), el.loc.clone()),
            None => {
                parent.push_object(obj, el.loc.clone());
                Ok(())
            }
        }
    }

    /// Every define names a `<default>` or a `$name` the files use: a misspelled
    /// `-D` name is an error listing the scene's defaults, not silently ignored.
    fn check_defines(&self, loc: &Loc) -> Result<()> {
        for name in &self.defines {
            let used = self.defaults.contains(name) || self.texts.iter().any(|t| mentions(t, name));
            if !used {
                let known = if self.defaults.is_empty() {
                    "the scene declares no <default> parameters".to_string()
                } else {
                    format!("the scene's parameters: {}", self.defaults.join(", "))
                };
                let hint = did_you_mean(name, self.defaults.iter().map(String::as_str));
                return Err(Error::parse(
                    loc,
                    format!("unknown parameter \"{name}\" ({known}){hint}"),
                ));
            }
        }
        Ok(())
    }

    /// `<default name value>`: sets `$name` unless a define or earlier default did.
    fn default(&mut self, el: &Elem) -> Result<()> {
        el.allow(&["name", "value"])?;
        let name = el.req("name")?;
        if name.value.is_empty() {
            return Err(Error::parse(&name.loc, "<default>: empty \"name\""));
        }
        let value = el.req("value")?;
        if !self.defaults.contains(&name.value) {
            self.defaults.push(name.value.clone());
        }
        self.params
            .entry(name.value.clone())
            .or_insert_with(|| value.value.clone());
        Ok(())
    }

    /// `<include filename>`: parses the file and splices its content into `props`.
    fn include(&mut self, src: &Source, el: &Elem, props: &mut Props, depth: usize) -> Result<()> {
        el.allow(&["filename"])?;
        let fname = el.req("filename")?;
        let path = self.find(src, &fname.value, Path::is_file).ok_or_else(|| {
            Error::parse(
                &fname.loc,
                format!(
                    "included file \"{}\" not found (looked for {})",
                    fname.value,
                    self.candidates(src, &fname.value).join(", ")
                ),
            )
        })?;
        let key = canonical(&path);
        if let Some(i) = self.includes.iter().position(|p| *p == key) {
            let chain: Vec<String> = self.includes[i..]
                .iter()
                .chain(std::iter::once(&key))
                .map(|p| p.display().to_string())
                .collect();
            return Err(Error::parse(
                &el.loc,
                format!("include cycle: {}", chain.join(" -> ")),
            ));
        }
        let text = read_text(&path).map_err(|e| {
            Error::parse(
                &fname.loc,
                format!("cannot read \"{}\": {e}", path.display()),
            )
        })?;
        self.includes.push(key);
        let r = self.include_text(&text, &path, props, depth);
        self.includes.pop();
        r
    }

    /// `<path value="dir"/>`: a folder searched for the files the scene names (meshes,
    /// images, includes, spectra) when they are not next to the file naming them.
    /// As in Mitsuba, only a direct child of `<scene>`; a relative folder is taken
    /// relative to this file's folder, else looked up in the earlier search paths; the
    /// latest `<path>` is searched first.
    fn search_path(&mut self, src: &Source, el: &Elem) -> Result<()> {
        el.allow(&["value"])?;
        let value = el.req("value")?;
        if el.node.parent_element() != Some(src.doc.root_element()) {
            return Err(Error::parse(
                &el.loc,
                "<path> is only allowed as a direct child of <scene>",
            ));
        }
        let dir = self.find(src, &value.value, Path::is_dir).ok_or_else(|| {
            Error::parse(
                &value.loc,
                format!(
                    "<path>: folder \"{}\" not found (looked for {})",
                    value.value,
                    self.candidates(src, &value.value).join(", ")
                ),
            )
        })?;
        self.search_paths.insert(0, dir);
        Ok(())
    }

    /// `<spectrum name filename="x.spd"/>`: reads the file (found as other files are).
    fn spectrum_file(&mut self, src: &Source, el: &Elem, props: &mut Props) -> Result<()> {
        el.allow(&["name", "filename"])?;
        let name = el.name_attr()?.to_string();
        let f = el.req("filename")?;
        let err = |m: String| Error::param(&f.loc, &name, format!("<spectrum>: {m}"));
        let path = self.find(src, &f.value, Path::is_file).ok_or_else(|| {
            err(format!(
                "spectrum file \"{}\" not found (looked for {})",
                f.value,
                self.candidates(src, &f.value).join(", ")
            ))
        })?;
        let text =
            read_text(&path).map_err(|m| err(format!("cannot read {}: {m}", path.display())))?;
        let s = Spectrum::parse_spd(&text).map_err(|m| err(format!("{}: {m}", path.display())))?;
        props.insert(&name, Value::Spectrum(s), el.loc.clone())
    }

    /// Where `name` is looked for: next to the current file, then in the search paths.
    fn candidates(&self, src: &Source, name: &str) -> Vec<String> {
        let first = src.dir.join(name);
        let rest = self.search_paths.iter().map(|d| d.join(name));
        match Path::new(name).is_absolute() {
            true => vec![first.display().to_string()],
            false => std::iter::once(first)
                .chain(rest)
                .map(|p| p.display().to_string())
                .collect(),
        }
    }

    /// The first of [`Self::candidates`] that `exists` accepts.
    fn find(&self, src: &Source, name: &str, exists: fn(&Path) -> bool) -> Option<PathBuf> {
        let first = src.dir.join(name);
        if exists(&first) || Path::new(name).is_absolute() {
            return exists(&first).then_some(first);
        }
        self.search_paths
            .iter()
            .map(|d| d.join(name))
            .find(|p| exists(p))
    }

    /// The included file's `<scene>` children, or its single root object.
    fn include_text(
        &mut self,
        text: &str,
        path: &Path,
        props: &mut Props,
        depth: usize,
    ) -> Result<()> {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let src = Source::parse(text, &path.display().to_string(), dir)?;
        self.texts.push(text.to_string());
        let root = Elem::new(&src, src.doc.root_element(), &self.params)?;
        if root.tag == "scene" {
            root.allow(&["version"])?;
            check_version(&root)?;
            return self.children(&src, root.node, props, depth + 1);
        }
        match Category::from_tag(root.tag) {
            Some(cat) => {
                check_version(&root)?;
                self.object(&src, &root, cat, props, depth, true)
            }
            None => Err(Error::parse(
                &root.loc,
                format!(
                    "the root element of an included file must be <scene> or an object, got <{}>",
                    root.tag
                ),
            )),
        }
    }
}

/// `<ref id="x"/>` or `<ref id="x" name="reflectance"/>`.
fn reference(el: &Elem, props: &mut Props) -> Result<()> {
    el.allow(&["id", "name"])?;
    let id = el.req("id")?;
    check_identifier(id, "id")?;
    match el.get("name") {
        Some(_) => props.insert(
            el.name_attr()?,
            Value::Ref(id.value.clone()),
            el.loc.clone(),
        ),
        None => {
            props.push_ref(&id.value, el.loc.clone());
            Ok(())
        }
    }
}

/// A `version` attribute, if present, must read `major.minor.patch`.
fn check_version(el: &Elem) -> Result<()> {
    let Some(v) = el.get("version") else {
        return Ok(());
    };
    let parts: Vec<&str> = v.value.trim().split('.').collect();
    if parts.len() != 3 || parts.iter().any(|p| p.parse::<u32>().is_err()) {
        return Err(Error::parse(
            &v.loc,
            format!(
                "could not parse version \"{}\" (expected major.minor.patch, e.g. 3.0.0)",
                v.value
            ),
        ));
    }
    Ok(())
}

/// Text between elements must be whitespace (Mitsuba rejects stray content too).
fn check_blank_text(src: &Source, node: Node) -> Result<()> {
    let text = node.text().unwrap_or("");
    if text.trim().is_empty() {
        return Ok(());
    }
    let offset = text.len() - text.trim_start().len();
    let snippet: String = text.trim().chars().take(30).collect();
    Err(Error::parse(
        &src.loc(node.range().start + offset),
        format!("unexpected text \"{snippet}\" (only elements may appear here)"),
    ))
}

fn unknown_tag(el: &Elem) -> Error {
    let objects: Vec<&str> = Category::ALL
        .iter()
        .filter(|c| **c != Category::Scene)
        .map(|c| c.tag())
        .collect();
    Error::parse(
        &el.loc,
        format!(
            "unknown tag <{}>{} (allowed: objects {}; properties {}, transform; ref, default, include, path)",
            el.tag,
            crate::error::did_you_mean(
                el.tag,
                objects
                    .iter()
                    .copied()
                    .chain(values::PROPERTY_TAGS)
                    .chain(["transform", "ref", "default", "include", "path"])
            ),
            objects.join(", "),
            values::PROPERTY_TAGS.join(", ")
        ),
    )
}

/// Scene files larger than this are refused (a device such as /dev/zero never ends).
const MAX_FILE_BYTES: u64 = 256 << 20;

/// Reads a scene file as UTF-8, at most [`MAX_FILE_BYTES`].
fn read_text(path: &Path) -> std::result::Result<String, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    f.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "larger than {} MiB (heliograph's limit for scene files; keep meshes in .ply/.obj files)",
            MAX_FILE_BYTES >> 20
        ));
    }
    Ok(text)
}

/// A path's identity for cycle detection (its canonical form when it exists).
fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod cycle_tests;
#[cfg(test)]
mod error_tests;
#[cfg(test)]
mod tests;

/// Whether `text` references `$name` (not as the prefix of a longer name).
fn mentions(text: &str, name: &str) -> bool {
    let pat = format!("${name}");
    text.match_indices(&pat).any(|(i, _)| {
        let next = text[i + pat.len()..].chars().next();
        !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}
