//! Parameter key prefixes: the name every object of a description has in
//! `traverse(scene)`, as Mitsuba 3 names them.
//!
//! - a top-level object is named by its `id` (dict keys are ids), else by its category
//!   (`shape`, `emitter`, ...);
//! - a nested object by the property name it was nested under (`bsdf`,
//!   `reflectance`), else (XML objects nested without a `name`) by its category;
//! - repeated names get `_1`, `_2`, ... in file order;
//! - an object is named where it is defined, never where it is referenced.
//!
//! Objects are identified by address (`Arc<ObjectDesc>` pointers, which references
//! resolve to), together with their path: the property names from the root, which
//! finds the object again in an edited copy of the description.

use std::collections::HashMap;
use std::sync::Arc;

use super::props::Value;
use super::ObjectDesc;

/// Where one object sits in a description.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectName {
    /// The key prefix, e.g. `shape.bsdf.reflectance`.
    pub key: String,
    /// Property names from the root to the object.
    pub path: Vec<String>,
}

/// The names of every object of a description.
#[derive(Clone, Debug, Default)]
pub struct ObjectKeys {
    names: HashMap<usize, ObjectName>,
}

impl ObjectKeys {
    /// Names every object below `root`.
    pub fn new(root: &ObjectDesc) -> ObjectKeys {
        let mut keys = ObjectKeys::default();
        // an explicit stack, so that deep descriptions cannot overflow the call stack
        let mut todo: Vec<(&ObjectDesc, String, Vec<String>, bool)> =
            vec![(root, String::new(), Vec::new(), true)];
        while let Some((obj, prefix, path, top)) = todo.pop() {
            let mut used: HashMap<String, usize> = HashMap::new();
            let mut children = Vec::new();
            for e in obj.props.entries() {
                let Value::Object(child) = &e.value else {
                    continue;
                };
                let generated = e.name.starts_with("_arg_");
                let base = match (&child.id, generated) {
                    (Some(id), _) if top => id.clone(),
                    (_, false) => e.name.clone(),
                    _ => child.category.tag().to_string(),
                };
                let n = used.entry(base.clone()).or_insert(0);
                let name = if *n == 0 { base } else { format!("{base}_{n}") };
                *n += 1;
                let mut child_path = path.clone();
                child_path.push(e.name.clone());
                let key = format!("{prefix}{name}");
                keys.names.insert(
                    addr(child),
                    ObjectName {
                        key: key.clone(),
                        path: child_path.clone(),
                    },
                );
                children.push((&**child, format!("{key}."), child_path, false));
            }
            // reversed: the stack then visits children in file order (not needed for
            // the names, which depend only on siblings, but keeps traversal intuitive)
            todo.extend(children.into_iter().rev());
        }
        keys
    }

    /// The name of `obj`, if it is part of the named description.
    pub fn get(&self, obj: &ObjectDesc) -> Option<&ObjectName> {
        self.names.get(&addr(obj))
    }
}

fn addr(obj: &ObjectDesc) -> usize {
    obj as *const ObjectDesc as usize
}

/// The object at `path` below `root`, if the description still has it.
pub fn find<'a>(root: &'a Arc<ObjectDesc>, path: &[String]) -> Option<&'a Arc<ObjectDesc>> {
    let mut node = root;
    for name in path {
        node = match &node.props.get(name)?.value {
            Value::Object(child) => child,
            _ => return None,
        };
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desc::xml::load_string;

    #[test]
    fn ids_at_the_top_property_names_below_categories_otherwise() {
        let xml = r#"<scene version="3.0.0">
            <bsdf type="diffuse" id="mat"><rgb name="reflectance" value="0.1"/></bsdf>
            <shape type="sphere"><bsdf type="diffuse"/></shape>
            <shape type="sphere" id="ball"><ref id="mat"/><emitter type="area"/></shape>
            <shape type="sphere"/></scene>"#;
        let desc = load_string(xml, &[]).unwrap();
        let keys = ObjectKeys::new(&desc.root);
        let mut names: Vec<(String, usize)> = keys
            .names
            .values()
            .map(|n| (n.key.clone(), n.path.len()))
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                ("ball".to_string(), 1),
                ("ball.emitter".into(), 2),
                ("mat".into(), 1),
                ("shape".into(), 1),
                ("shape.bsdf".into(), 2),
                ("shape_1".into(), 1),
            ]
        );
        for n in keys.names.values() {
            let obj = find(&desc.root, &n.path).expect("the path finds the object");
            assert_eq!(keys.get(obj), Some(n));
        }
        assert!(find(&desc.root, &["nope".to_string()]).is_none());
    }
}
