//! The registry macro of the categories whose plugins are a module with a `build`
//! function (`sensor`, `film`, `rfilter`, `integrator`):
//! [`register_plugins!`](crate::plugin::registry::register_plugins).
//!
//! A category's registry is one list of `"name" => module` lines; the macro derives
//! the `pub mod` of each plugin (the file `<name>.rs` of the category's folder, whose
//! module doc is the plugin's manual), `KNOWN` (the scene `type` strings, in list
//! order), `REGISTRY` (a [`PluginInfo`](super::PluginInfo) per plugin) and the build
//! match, a function that calls `<module>::build(obj, args...)` for the object's `type`
//! and answers an unknown one with [`Error::UnknownPlugin`](crate::error::Error::UnknownPlugin)
//! (which suggests the nearest known name).

/// Generates a category's registry (see the module docs):
///
/// ```ignore
/// register_plugins! {
///     category "rfilter" in "rfilters";
///     fn build_kind(obj) -> AnyFilter;
///     "box" => r#box,
///     "tent" => tent,
/// }
/// ```
///
/// `fn NAME(obj, arg: Type, ...) -> Output;` names the generated build match and the
/// arguments it passes on after the object: every plugin module of the list has
/// `pub fn build(obj: &ObjectDesc, arg: Type, ...) -> Result<Output>`.
macro_rules! register_plugins {
    (
        category $category:literal in $dir:literal;
        fn $build:ident(obj $(, $arg:ident : $ty:ty)* $(,)?) -> $out:ty;
        $($name:literal => $module:ident),+ $(,)?
    ) => {
        $(pub mod $module;)+

        #[doc = concat!("Names of the ", $category, " plugins (the scene `type` strings).")]
        pub const KNOWN: &[&str] = &[$($name),+];

        #[doc = concat!("Every registered ", $category, " plugin, in registry order.")]
        pub static REGISTRY: &[$crate::plugin::PluginInfo] = &[$(
            $crate::plugin::PluginInfo {
                category: $category,
                name: $name,
                source: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"), "/src/", $dir, "/", $name, ".rs"
                )),
            },
        )+];

        #[doc = concat!("Builds `", $category, "` object `obj` with its plugin's `build`; an ")]
        /// unknown `type` is an error that names the known ones.
        fn $build(
            obj: &$crate::desc::ObjectDesc
            $(, $arg: $ty)*
        ) -> $crate::error::Result<$out> {
            let build: fn(&$crate::desc::ObjectDesc $(, $ty)*) -> $crate::error::Result<$out> =
                match obj.kind.as_str() {
                    $($name => $module::build,)+
                    _ => return Err(unknown_plugin(obj)),
                };
            build(obj $(, $arg)*)
        }

        /// The error for an object whose `type` is not in [`KNOWN`] (with the nearest
        /// known name as a suggestion).
        #[allow(dead_code)]
        fn unknown_plugin(obj: &$crate::desc::ObjectDesc) -> $crate::error::Error {
            $crate::error::Error::UnknownPlugin {
                loc: obj.loc.clone(),
                category: $category,
                name: obj.kind.clone(),
                known: KNOWN.join(", "),
            }
        }
    };
}
pub(crate) use register_plugins;

/// What the registry tests of every category check.
#[cfg(test)]
pub(crate) mod testing {
    use crate::plugin::PluginInfo;

    /// Every plugin of `registry` is of `category`, in the order of `known`, and has a
    /// manual: a first sentence `` `name`: ... ``, a parameter table and an XML example
    /// that uses it.
    pub fn check_registry(category: &str, registry: &[PluginInfo], known: &[&str]) {
        let names: Vec<&str> = registry.iter().map(|p| p.name).collect();
        assert_eq!(names, known, "{category}: KNOWN and the registry differ");
        for info in registry {
            let name = info.name;
            assert_eq!(info.category, category, "{name}");
            let manual = info.manual();
            assert!(
                manual.starts_with(&format!("`{name}`: ")),
                "{name}: {manual}"
            );
            assert!(!info.summary().is_empty(), "{name}: no summary");
            let rows = info.parameters();
            assert!(!rows.is_empty(), "{name}: no parameter table");
            assert!(
                rows.iter()
                    .all(|r| !r.name.is_empty() && !r.kind.is_empty()),
                "{name}: {rows:?}"
            );
            assert!(manual.contains("```xml"), "{name}: no XML example");
            assert!(
                manual.contains(&format!("<{category} type=\"{name}\"")),
                "{name}: the XML example does not use it"
            );
        }
    }

    /// The error of loading scene `body` (in a `<scene>`), which must fail.
    pub fn scene_error(body: &str) -> String {
        let xml = format!("<scene version=\"3.0.0\">\n{body}\n</scene>");
        match crate::desc::xml::load_string(&xml, &[]).and_then(|d| crate::scene::build_scene(&d)) {
            Ok(_) => panic!("expected an error for {body}"),
            Err(e) => e.to_string(),
        }
    }
}
