//! The catalog: every registered plugin of every category, for listings
//! (`heliograph plugins`, the README's plugin table, the fuzzers' type lists).
//!
//! It sits at the top of the core, above every category, so that the categories'
//! registries and the small `plugin` module below them need not know one another.

use crate::desc::Category;
use crate::error::{did_you_mean, Error, Loc, Result};
use crate::plugin::PluginInfo;

/// Every registered plugin of every category, in a fixed category order (shapes,
/// BSDFs, sensors, films, reconstruction filters, samplers, integrators), each
/// category in its registry's order.
pub fn registered() -> Vec<PluginInfo> {
    let mut out = crate::shapes::REGISTRY.to_vec();
    out.extend(crate::bsdfs::REGISTRY.iter().map(|e| e.info));
    out.extend(crate::textures::REGISTRY.iter().map(|e| e.info));
    out.extend(crate::emitters::REGISTRY.iter().map(|e| e.info));
    for category in [
        crate::sensors::REGISTRY,
        crate::films::REGISTRY,
        crate::rfilters::REGISTRY,
        crate::samplers::REGISTRY,
        crate::integrators::REGISTRY,
    ] {
        out.extend_from_slice(category);
    }
    out
}

/// The plugin names of each category, categories in [`registered`]'s order: what the
/// Python loaders look a lone plugin's category up in, and the fuzzers draw types from.
/// Mitsuba's other names of integrators (`prb` for `path`, ...) are listed with them.
pub fn names_by_category() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for p in registered() {
        match out.last_mut() {
            Some((cat, names)) if *cat == p.category => names.push(p.name),
            _ => out.push((p.category, vec![p.name])),
        }
    }
    for (cat, names) in &mut out {
        if *cat == "integrator" {
            names.extend(crate::integrators::ALIASES.iter().map(|(alias, _)| *alias));
        }
    }
    out
}

/// The category of the plugin named `kind` (Mitsuba's other names of integrators
/// included), as a dict scene's `'type'` is read; an unknown name is an error at `loc`
/// listing every plugin, with a "did you mean".
pub fn category_of(kind: &str, loc: &Loc) -> Result<Category> {
    let all = registered();
    let found = all.iter().find(|p| p.name == kind).map(|p| p.category);
    let alias = crate::integrators::ALIASES.iter().any(|(a, _)| *a == kind);
    if let Some(category) = found.or(alias.then_some("integrator")) {
        if let Some(c) = Category::from_tag(category) {
            return Ok(c);
        }
    }
    let mut known: Vec<&str> = all.iter().map(|p| p.name).collect();
    known.sort();
    Err(Error::parse(
        loc,
        format!(
            "unknown plugin type \"{kind}\" (known: {}){}",
            known.join(", "),
            did_you_mean(kind, known.iter().copied())
        ),
    ))
}

/// The README's plugin table (Markdown): a row per plugin with its category, its name
/// and the first sentence of its manual (`heliograph plugins --markdown`).
pub fn markdown_table() -> String {
    let mut out = String::from("| category | plugin | what it is |\n|---|---|---|\n");
    for p in registered() {
        let summary = without_doc_links(&p.summary()).replace('|', "\\|");
        out += &format!("| {} | `{}` | {} |\n", p.category, p.name, summary);
    }
    out
}

/// `text` with rustdoc's intra-doc links (``[`super::shapegroup`]``) as plain code
/// (`` `shapegroup` ``): they link nothing outside the API docs.
fn without_doc_links(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("[`") {
        let Some(len) = rest[start + 2..].find("`]") else {
            break;
        };
        let path = &rest[start + 2..start + 2 + len];
        let name = path.rsplit("::").next().unwrap_or(path);
        out += &rest[..start];
        out += &format!("`{name}`");
        rest = &rest[start + 2 + len + 2..];
    }
    out + rest
}

#[cfg(test)]
mod tests {
    #[test]
    fn registered_lists_every_category_once_in_order_with_unique_names() {
        let all = super::registered();
        let mut categories: Vec<&str> = all.iter().map(|p| p.category).collect();
        categories.dedup();
        assert_eq!(
            categories,
            [
                "shape",
                "bsdf",
                "texture",
                "emitter",
                "sensor",
                "film",
                "rfilter",
                "sampler",
                "integrator"
            ]
        );
        let mut names: Vec<&str> = all.iter().map(|p| p.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a plugin name is in two categories");
    }

    #[test]
    fn names_by_category_lists_every_plugin_once_under_its_category() {
        let all = super::registered();
        let by = super::names_by_category();
        let n: usize = by.iter().map(|(_, v)| v.len()).sum();
        let aliases = crate::integrators::ALIASES.len();
        assert_eq!(n, all.len() + aliases);
        for p in &all {
            let (_, names) = by.iter().find(|(c, _)| *c == p.category).unwrap();
            assert!(names.contains(&p.name), "{}", p.name);
        }
        let (_, integrators) = by.iter().find(|(c, _)| *c == "integrator").unwrap();
        assert!(integrators.contains(&"prb"));
    }

    #[test]
    fn the_markdown_table_has_a_row_per_plugin() {
        let table = super::markdown_table();
        let all = super::registered();
        assert_eq!(table.lines().count(), all.len() + 2);
        for p in &all {
            let row = format!("| {} | `{}` | ", p.category, p.name);
            assert!(table.contains(&row), "{row}");
        }
    }

    #[test]
    fn doc_links_become_plain_code() {
        let s = super::without_doc_links("a group (see [`super::shapegroup`]) and [`Bvh`].");
        assert_eq!(s, "a group (see `shapegroup`) and `Bvh`.");
        assert_eq!(super::without_doc_links("no [`end"), "no [`end");
    }
}
