//! One XML source text with a line index (for `file:line:col`), and [`Elem`]: an
//! element whose attributes have had `$param` substitution applied and have been
//! checked against the attributes its tag accepts.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use roxmltree::Node;

use crate::error::{Error, Loc, Result};

/// A parsed XML document with its file name and a byte-offset → line index.
pub(super) struct Source<'input> {
    /// The document tree.
    pub doc: roxmltree::Document<'input>,
    /// The file name used in locations (`<string>` for in-memory scenes).
    pub file: Arc<str>,
    /// The directory relative `<include>` paths resolve against.
    pub dir: PathBuf,
    /// The file declares a version before 2.0 (Mitsuba 0.x): upgrade names as Mitsuba 3 does.
    pub legacy: bool,
    text: &'input str,
    line_starts: Vec<usize>,
}

impl<'input> Source<'input> {
    /// Parses `text`; malformed XML is an error at the position roxmltree reports.
    pub fn parse(text: &'input str, file: &str, dir: PathBuf) -> Result<Self> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let doc = parse_document(text, file)?;
        let legacy = doc
            .root_element()
            .attribute("version")
            .and_then(|v| v.trim().split('.').next()?.parse::<u32>().ok())
            .is_some_and(|major| major < 2);
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Ok(Source {
            doc,
            file: file.into(),
            dir,
            legacy,
            text,
            line_starts,
        })
    }

    /// The location of byte offset `pos` (1-based line and column, columns in characters).
    pub fn loc(&self, pos: usize) -> Loc {
        let line = self.line_starts.partition_point(|&s| s <= pos).max(1);
        let start = self.line_starts[line - 1];
        let col = self
            .text
            .get(start..pos)
            .map_or(1, |s| s.chars().count() + 1);
        Loc {
            file: self.file.clone(),
            line: line as u32,
            col: col as u32,
        }
    }

    /// The location where `node` starts.
    pub fn node_loc(&self, node: Node) -> Loc {
        self.loc(node.range().start)
    }
}

/// A document has at most this many XML nodes (elements, text, comments): a parse
/// tree of a few hundred MiB, far beyond any hand-written or exported scene.
pub(super) const MAX_NODES: u32 = 1 << 22;

/// Parses without expanding entities. Mitsuba 3 (pugixml's default options) skips a
/// `<!DOCTYPE>` and expands no custom entity; expanding them is how a small file
/// asks for unbounded memory ("billion laughs"). So a DOCTYPE is accepted only when
/// it declares no entity.
fn parse_document<'input>(text: &'input str, file: &str) -> Result<roxmltree::Document<'input>> {
    let opts = |allow_dtd| roxmltree::ParsingOptions {
        allow_dtd,
        nodes_limit: MAX_NODES,
        ..Default::default()
    };
    match roxmltree::Document::parse_with_options(text, opts(false)) {
        Err(roxmltree::Error::DtdDetected) => match text.find("<!ENTITY") {
            Some(pos) => Err(Error::parse(
                &text_loc(text, file, pos),
                "entity declarations (<!ENTITY ...>) are not supported: scene files \
                 may not define XML entities (Mitsuba 3 does not expand them either); \
                 use <default name=\"...\" value=\"...\"/> and $name instead",
            )),
            None => roxmltree::Document::parse_with_options(text, opts(true))
                .map_err(|e| xml_error(e, text, file)),
        },
        r => r.map_err(|e| xml_error(e, text, file)),
    }
}

/// roxmltree's error at its position, the position not repeated in the message.
fn xml_error(e: roxmltree::Error, text: &str, file: &str) -> Error {
    if let roxmltree::Error::NodesLimitReached = e {
        return Error::parse(
            &Loc::unknown(file),
            format!(
                "the document has more than {MAX_NODES} XML nodes (heliograph's limit); \
                 store large meshes in .ply/.obj files instead of inline XML"
            ),
        );
    }
    let pos = e.pos();
    let msg = e.to_string().replace(&format!(" at {pos}"), "");
    // roxmltree places a truncated document's error at 1:1; its end is where it is
    let loc = match e {
        roxmltree::Error::UnexpectedEndOfStream | roxmltree::Error::UnclosedRootNode => {
            text_loc(text, file, text.len())
        }
        _ => Loc::new(file, pos.row, pos.col),
    };
    Error::parse(&loc, format!("malformed XML: {msg}"))
}

/// The location of byte offset `pos` in `text`, before a [`Source`] exists.
fn text_loc(text: &str, file: &str, pos: usize) -> Loc {
    let before = &text[..pos];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let col = before[line_start..].chars().count() + 1;
    Loc::new(file, line as u32, col as u32)
}

/// One attribute after `$param` substitution.
pub(super) struct Attr {
    /// The attribute name.
    pub name: String,
    /// The value with parameters substituted.
    pub value: String,
    /// Where the attribute is written.
    pub loc: Loc,
}

/// An element with substituted attributes.
pub(super) struct Elem<'a, 'input> {
    /// The underlying node (for its children).
    pub node: Node<'a, 'input>,
    /// The tag name (namespace prefix dropped).
    pub tag: &'a str,
    /// Where the element starts.
    pub loc: Loc,
    attrs: Vec<Attr>,
}

impl<'a, 'input> Elem<'a, 'input> {
    /// Reads `node`'s attributes, substituting `$name` parameters.
    pub fn new(
        src: &Source,
        node: Node<'a, 'input>,
        params: &HashMap<String, String>,
    ) -> Result<Self> {
        let mut tag = node.tag_name().name();
        if src.legacy && tag == "lookAt" {
            tag = "lookat";
        }
        let mut attrs = Vec::new();
        for a in node.attributes() {
            let loc = src.loc(a.range().start);
            let raw = match src.legacy {
                true => upgrade_legacy(node, tag, a.name(), a.value()),
                false => a.value().to_string(),
            };
            let value = substitute(&raw, params).map_err(|name| {
                Error::parse(
                    &loc,
                    format!(
                        "undefined parameter \"${name}\" in {}=\"{}\" (declare it with \
                         <default name=\"{name}\" value=\"...\"/> or pass -D {name}=...)",
                        a.name(),
                        a.value()
                    ),
                )
            })?;
            attrs.push(Attr {
                name: a.name().to_string(),
                value,
                loc,
            });
        }
        Ok(Elem {
            node,
            tag,
            loc: src.node_loc(node),
            attrs,
        })
    }

    /// The attribute `name`, if present.
    pub fn get(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// The attribute `name`, which must be present.
    pub fn req(&self, name: &str) -> Result<&Attr> {
        self.get(name).ok_or_else(|| {
            Error::parse(
                &self.loc,
                format!("<{}> is missing the \"{name}\" attribute", self.tag),
            )
        })
    }

    /// The `name` attribute of a property or named object: present, non-empty, not reserved.
    pub fn name_attr(&self) -> Result<&str> {
        let a = self.req("name")?;
        check_identifier(a, "name")?;
        Ok(&a.value)
    }

    /// Errors on any attribute not in `allowed` (typo protection, as Mitsuba's check).
    pub fn allow(&self, allowed: &[&str]) -> Result<()> {
        match self
            .attrs
            .iter()
            .find(|a| !allowed.contains(&a.name.as_str()))
        {
            None => Ok(()),
            Some(a) => Err(Error::parse(
                &a.loc,
                format!(
                    "unexpected attribute \"{}\" in <{}> (allowed: {})",
                    a.name,
                    self.tag,
                    allowed.join(", ")
                ),
            )),
        }
    }
}

/// Names and ids must be non-empty; a leading `_` is reserved for generated `_arg_N` keys.
pub(super) fn check_identifier(a: &Attr, what: &str) -> Result<()> {
    if a.value.is_empty() {
        return Err(Error::parse(&a.loc, format!("empty \"{what}\" attribute")));
    }
    if a.value.starts_with('_') {
        return Err(Error::parse(
            &a.loc,
            format!(
                "invalid {what} \"{}\": a leading underscore is reserved for internal names",
                a.value
            ),
        ));
    }
    Ok(())
}

/// Mitsuba 3's in-memory upgrade of pre-2.0 files: camelCase names become
/// snake_case (`toWorld` → `to_world`), reserved `_id`s are renamed, and the
/// diffuse BSDF's `diffuseReflectance` becomes `reflectance`.
fn upgrade_legacy(node: Node, tag: &str, attr: &str, value: &str) -> String {
    match attr {
        "name" if tag != "default" => {
            let name = snake_case(value);
            let parent_is_diffuse = node
                .parent_element()
                .is_some_and(|p| p.has_tag_name("bsdf") && p.attribute("type") == Some("diffuse"));
            if parent_is_diffuse && name == "diffuse_reflectance" {
                "reflectance".to_string()
            } else {
                name
            }
        }
        "id" if value.starts_with('_') => format!("ID{value}__UPGR"),
        _ => value.to_string(),
    }
}

/// `maxDepth` → `max_depth`, `intIOR` → `int_ior` (a run of capitals after a
/// lower-case letter becomes one lower-case word).
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    let mut in_caps = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && (prev_lower || in_caps) {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            in_caps = true;
        } else {
            out.push(c);
            in_caps = false;
        }
        prev_lower = c.is_ascii_lowercase();
    }
    out
}

/// Replaces every `$name` in `value` by its parameter. Where several names match
/// (`$res` and `$res_x`), the longest wins, as in Mitsuba. Substituted text is not
/// scanned again. Returns the undefined name on failure.
pub(super) fn substitute(
    value: &str,
    params: &HashMap<String, String>,
) -> std::result::Result<String, String> {
    if !value.contains('$') {
        return Ok(value.to_string());
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let best = params
            .iter()
            .filter(|(k, _)| !k.is_empty() && after.starts_with(k.as_str()))
            .max_by_key(|(k, _)| k.len());
        match best {
            Some((k, v)) => {
                out.push_str(v);
                rest = &after[k.len()..];
            }
            None => {
                let end = after
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                return Err(after[..end].to_string());
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kv: &[(&str, &str)]) -> HashMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn substitution_prefers_the_longest_name_and_keeps_plain_text() {
        let p = params(&[("res", "A"), ("res_x", "640"), ("spp", "16")]);
        assert_eq!(substitute("$res_x", &p).unwrap(), "640");
        assert_eq!(substitute("$res", &p).unwrap(), "A");
        assert_eq!(substitute("$res_xpx", &p).unwrap(), "640px");
        assert_eq!(substitute("a$spp,b $res", &p).unwrap(), "a16,b A");
        assert_eq!(substitute("no params", &p).unwrap(), "no params");
        // A substituted value is not scanned again (no recursion, no loops).
        let q = params(&[("a", "$a")]);
        assert_eq!(substitute("$a", &q).unwrap(), "$a");
    }

    #[test]
    fn legacy_names_become_snake_case() {
        for (a, b) in [
            ("maxDepth", "max_depth"),
            ("toWorld", "to_world"),
            ("intIOR", "int_ior"),
            ("fovAxis", "fov_axis"),
            ("sRGB", "s_rgb"),
            ("already_snake", "already_snake"),
            ("HDRFilm", "HDRFilm"),
        ] {
            assert_eq!(snake_case(a), b);
        }
    }

    #[test]
    fn substitution_names_the_undefined_parameter() {
        let p = params(&[("spp", "16")]);
        assert_eq!(substitute("x $width y", &p).unwrap_err(), "width");
        assert_eq!(substitute("$", &p).unwrap_err(), "");
    }

    #[test]
    fn locations_count_lines_and_characters() {
        let text = "<a>\n  <b/>\n\t<é/><c/>\n</a>";
        let src = Source::parse(text, "f.xml", PathBuf::new()).unwrap();
        let c = src.doc.descendants().find(|n| n.has_tag_name("c")).unwrap();
        let l = src.node_loc(c);
        assert_eq!((l.line, l.col), (3, 6)); // tab, "<é/>" is 4 characters
        assert_eq!(src.loc(0), Loc::new("f.xml", 1, 1));
        let b = src.doc.descendants().find(|n| n.has_tag_name("b")).unwrap();
        assert_eq!(src.node_loc(b), Loc::new("f.xml", 2, 3));
    }
}
