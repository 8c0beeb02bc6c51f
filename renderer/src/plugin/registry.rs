//! The registry macro of every plugin category:
//! `register_plugins!`.
//!
//! A category's registry is one list of plugin lines; the macro derives the `pub mod`
//! of each plugin (the file `<name>.rs` of the category's folder, whose module doc is
//! the plugin's manual), `KNOWN` (the scene `type` strings, in list order), `REGISTRY`
//! (what listings and the device side read of each plugin) and the build match, a
//! function that builds the object's `type` with its plugin and answers an unknown one
//! with [`unknown_plugin`] (which suggests the nearest known name).
//!
//! Categories whose plugins are device records (BSDFs, textures, emitters) list
//! `TAG = module::Plugin` lines: the macro also derives the tags, the enum over the
//! plugins and a dispatch macro over it (pbrt's tagged pointer); what a plugin does is
//! its category's trait, and what the category does with the enum (its methods, its
//! registry entry) is plain code in the category, written with the dispatch macro.
//! Categories of plugin modules without a device record (samplers) list `TAG = module`
//! lines: the tags, and a dispatch macro over the modules.

use crate::desc::ObjectDesc;
use crate::error::Error;

/// Generates a category's registry (see the module docs). A category of build
/// functions:
///
/// ```ignore
/// register_plugins! {
///     category "rfilter" in "rfilters";
///     fn build_kind(&ObjectDesc) -> AnyFilter;
///     "box" => r#box,
///     "tent" => tent,
/// }
/// ```
///
/// `fn NAME(&Input, arg: Type, ...) -> Output;` names the generated build match
/// `NAME(obj: &ObjectDesc, arg: Type, ...)` and what it passes on: every plugin module
/// of the list has `pub fn build(input: &Input, arg: Type, ...) -> Result<Output>`,
/// where the input is the object or its properties ([`PluginInput`]). A plugin with a
/// CUDA twin `kernels/<folder>/<name>.cuh` is listed `"<name>" => module (cuda)`: the
/// macro embeds the twin in `CUDA_TWINS` (its path under `kernels/`, its text), which
/// the kernel sources read.
///
/// A category of device records:
///
/// ```ignore
/// register_plugins! {
///     category "bsdf" in "bsdfs";
///     /// Every BSDF plugin, one variant per registry line.
///     #[derive(Clone, Copy, Debug, PartialEq)]
///     pub enum AnyBsdf: BsdfPlugin, entry BsdfEntry, dispatch any_bsdf;
///     fn build_kind(props, ctx: &mut dyn BuildContext);
///     DIFFUSE = diffuse::Diffuse,
///     CONDUCTOR = conductor::Conductor,
/// }
/// ```
///
/// A line's position is its tag (`tag::DIFFUSE`, CUDA `HG_<CATEGORY>_DIFFUSE`): append
/// new plugins at the end. Every plugin implements the category's trait (`BsdfPlugin`:
/// `build(props, args...)` and a `Record`) and has a CUDA twin
/// `kernels/<folder>/<name>.cuh`; `ENTRY::of::<Plugin>(name, tag, tag name, source,
/// cuda)` makes its registry entry. `any_bsdf!(self, b => b.eval(..))`, inside an
/// `impl AnyBsdf`, is the `match` over every variant.
///
/// A category of plugin modules without a device record (samplers: each module
/// provides the functions its category calls), with their tags:
///
/// ```ignore
/// register_plugins! {
///     category "sampler" in "samplers";
///     tags, dispatch sampler_module;
///     INDEPENDENT = independent,
///     STRATIFIED = stratified,
/// }
/// ```
///
/// A line's position is its tag (`tag::INDEPENDENT`): append new plugins at the end.
/// `sampler_module!(kind, m => m::next_1d(r), _ => default)` is the `match` over the
/// tags, with `m` the module of `kind`.
///
/// A closed set of records that are not plugins of their own (the shape records,
/// which several shape plugins build), with their tags but no entries:
///
/// ```ignore
/// register_plugins! {
///     #[derive(Clone, Copy, Debug)]
///     pub enum AnyShape in "shapes", dispatch any_shape;
///     MESH = mesh::Mesh,
///     SPHERE = sphere::Sphere (cuda),
/// }
/// ```
///
/// With `in "<folder>"`, a record kind with a CUDA twin `kernels/<folder>/<module>.cuh`
/// is listed `(cuda)`: the macro embeds the twin in `CUDA_TWINS` (as a plugin list does)
/// and names the kind in `CUDA_KINDS` (its tag name and the twin's file stem), from which
/// the category generates the kernels' dispatch over the twins.
macro_rules! register_plugins {
    (
        category $category:literal in $dir:literal;
        fn $build:ident(&$input:ident $(, $arg:ident : $ty:ty)* $(,)?) -> $out:ty;
        $($name:literal => $module:ident $(($cuda:ident))?),+ $(,)?
    ) => {
        $(pub mod $module;)+

        $crate::plugin::registry::register_plugins!(
            @plugin_twins $category in $dir; $($name $(($cuda))?),+
        );

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
            use $crate::plugin::registry::PluginInput;
            let build: fn(&$input $(, $ty)*) -> $crate::error::Result<$out> =
                match obj.kind.as_str() {
                    $($name => $module::build,)+
                    _ => return Err($crate::plugin::registry::unknown_plugin(obj, $category, KNOWN)),
                };
            build($input::of(obj) $(, $arg)*)
        }
    };
    (
        category $category:literal in $dir:literal;
        $(#[$attr:meta])*
        pub enum $any:ident: $trait:ident, entry $entry:ident, dispatch $dispatch:ident;
        fn $build:ident(props $(, $arg:ident : $ty:ty)* $(,)?);
        $($tag:ident = $module:ident :: $plugin:ident),+ $(,)?
    ) => {
        // The dispatch macro's own metavariables need a `$` of their own.
        $crate::plugin::registry::register_plugins! {
            @records ($) category $category in $dir;
            $(#[$attr])* pub enum $any: $trait, entry $entry, dispatch $dispatch;
            fn $build(props $(, $arg: $ty)*);
            $($tag = $module::$plugin),+
        }
    };
    (@tags $($tag:ident: $doc:expr,)+) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms, dead_code)]
        #[repr(u32)]
        enum Order { $($tag),+ }
        $(
            #[doc = $doc]
            pub const $tag: u32 = Order::$tag as u32;
        )+
        /// The tag names, in tag order.
        pub const NAMES: &[&str] = &[$(stringify!($tag)),+];
        /// How many there are.
        pub const COUNT: u32 = NAMES.len() as u32;
    };
    (
        category $category:literal in $dir:literal;
        tags, dispatch $dispatch:ident;
        $($tag:ident = $module:ident),+ $(,)?
    ) => {
        $crate::plugin::registry::register_plugins! {
            @modules ($) category $category in $dir; dispatch $dispatch;
            $($tag = $module),+
        }
    };
    (
        @modules ($d:tt) category $category:literal in $dir:literal; dispatch $dispatch:ident;
        $($tag:ident = $module:ident),+
    ) => {
        $(pub mod $module;)+

        #[doc = concat!("The tag of each ", $category, " plugin: its position in the list (the")]
        /// `kind` of its record, a bit of the kernels' sets).
        pub mod tag {
            $crate::plugin::registry::register_plugins!(
                @tags $($tag: concat!("`", stringify!($module), "`."),)+
            );
        }

        #[doc = concat!("Names of the ", $category, " plugins (the scene `type` strings), in tag order.")]
        pub const KNOWN: &[&str] = &[$(stringify!($module)),+];

        #[doc = concat!("Every registered ", $category, " plugin, in tag order.")]
        pub static REGISTRY: &[$crate::plugin::PluginInfo] = &[$(
            $crate::plugin::PluginInfo {
                category: $category,
                name: stringify!($module),
                source: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"), "/src/", $dir, "/", stringify!($module), ".rs"
                )),
            },
        )+];

        #[doc = concat!("`", stringify!($dispatch), "!(kind, m => expr, _ => other)`: `expr` with `m` the")]
        #[doc = concat!("module of ", $category, " plugin `kind` (a [`tag`]), `other` for an unknown kind.")]
        macro_rules! $dispatch {
            ($d kind:expr, $d m:ident => $d body:expr, _ => $d other:expr) => {
                match $d kind {
                    $(tag::$tag => {
                        use self::$module as $d m;
                        $d body
                    })+
                    _ => $d other,
                }
            };
        }
        #[allow(unused_imports)]
        pub(crate) use $dispatch;

        // Tags are bits of the kernels' 32-bit plugin sets.
        const _: () = assert!(
            KNOWN.len() <= 32,
            concat!("at most 32 ", $category, " plugins (features.cuh sets)")
        );
    };
    // A list without CUDA twins has no `CUDA_TWINS`.
    (@plugin_twins $category:literal in $dir:literal; $($name:literal),+) => {};
    (@plugin_twins $category:literal in $dir:literal; $($name:literal $(($cuda:ident))?),+) => {
        #[doc = concat!("The CUDA twins of the ", $category, " plugins that have one: the path")]
        /// under `kernels/` and the text.
        pub static CUDA_TWINS: &[(&str, &str)] = &[$($(
            $crate::plugin::registry::register_plugins!(@twin $cuda $dir, $name),
        )?)+];
    };
    (@twin cuda $dir:literal, $name:literal) => {
        (
            concat!($dir, "/", $name, ".cuh"),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $dir, "/", $name, ".cuh")),
        )
    };
    (@record_kind cuda $tag:ident, $module:ident) => {
        (stringify!($tag), stringify!($module))
    };
    (@record_twin cuda $dir:literal, $module:ident) => {
        (
            concat!($dir, "/", stringify!($module), ".cuh"),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"), "/kernels/", $dir, "/", stringify!($module), ".cuh"
            )),
        )
    };
    (
        $(#[$attr:meta])*
        pub enum $any:ident, dispatch $dispatch:ident;
        $($tag:ident = $module:ident :: $record:ident),+ $(,)?
    ) => {
        $crate::plugin::registry::register_plugins! {
            @union ($) $(#[$attr])* pub enum $any, dispatch $dispatch;
            $($tag = $module::$record),+
        }
    };
    (
        $(#[$attr:meta])*
        pub enum $any:ident in $dir:literal, dispatch $dispatch:ident;
        $($tag:ident = $module:ident :: $record:ident $(($cuda:ident))?),+ $(,)?
    ) => {
        $crate::plugin::registry::register_plugins! {
            @union ($) $(#[$attr])* pub enum $any, dispatch $dispatch;
            $($tag = $module::$record),+
        }

        /// The record kinds with a CUDA twin (listed `(cuda)`), in tag order: the tag name
        /// and the twin's file stem, which prefixes its functions.
        pub const CUDA_KINDS: &[(&str, &str)] = &[$($(
            $crate::plugin::registry::register_plugins!(@record_kind $cuda $tag, $module),
        )?)+];

        /// The CUDA twins of the record kinds that have one: the path under `kernels/` and
        /// the text.
        pub static CUDA_TWINS: &[(&str, &str)] = &[$($(
            $crate::plugin::registry::register_plugins!(@record_twin $cuda $dir, $module),
        )?)+];
    };
    (
        @union ($d:tt) $(#[$attr:meta])* pub enum $any:ident, dispatch $dispatch:ident;
        $($tag:ident = $module:ident :: $record:ident),+
    ) => {
        #[doc = concat!("The tag of each variant of [`", stringify!($any), "`]: its position in")]
        /// the list (the `kind` the kernels read, a bit of their sets).
        pub mod tag {
            $crate::plugin::registry::register_plugins!(
                @tags $($tag: concat!("[`", stringify!($record), "`](super::", stringify!($module), "::", stringify!($record), ")."),)+
            );
        }

        $(#[$attr])*
        pub enum $any {
            $(
                #[doc = concat!("[`", stringify!($module), "::", stringify!($record), "`].")]
                $record($module::$record),
            )+
        }

        impl $any {
            /// The variant's tag ([`tag`]).
            pub fn tag(&self) -> u32 {
                match self { $(Self::$record(_) => tag::$tag,)+ }
            }
        }

        #[doc = concat!("`", stringify!($dispatch), "!(self, p => expr)` inside an `impl ")]
        #[doc = concat!(stringify!($any), "`: `expr` for the value `p` that `self` holds.")]
        macro_rules! $dispatch {
            ($d value:expr, $d p:ident => $d body:expr) => {
                match $d value { $(Self::$record($d p) => $d body,)+ }
            };
        }
        #[allow(unused_imports)]
        pub(crate) use $dispatch;
    };
    (
        @records ($d:tt) category $category:literal in $dir:literal;
        $(#[$attr:meta])*
        pub enum $any:ident: $trait:ident, entry $entry:ident, dispatch $dispatch:ident;
        fn $build:ident(props $(, $arg:ident : $ty:ty)*);
        $($tag:ident = $module:ident :: $plugin:ident),+
    ) => {
        $(pub mod $module;)+
        $(pub use $module::$plugin;)+

        $crate::plugin::registry::register_plugins! {
            @union ($d) $(#[$attr])* pub enum $any, dispatch $dispatch;
            $($tag = $module::$plugin),+
        }

        #[doc = concat!("Names of the ", $category, " plugins (the scene `type` strings), in tag order.")]
        pub const KNOWN: &[&str] = &[$(stringify!($module)),+];

        #[doc = concat!("Every registered ", $category, " plugin, in tag order.")]
        pub static REGISTRY: &[$entry] = &[$(
            $entry::of::<$plugin>(
                stringify!($module),
                tag::$tag,
                stringify!($tag),
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"), "/src/", $dir, "/", stringify!($module), ".rs"
                )),
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"), "/kernels/", $dir, "/", stringify!($module), ".cuh"
                )),
            ),
        )+];

        #[doc = concat!("Builds `", $category, "` object `obj` with its plugin's `build`; an ")]
        /// unknown `type` is an error that names the known ones.
        fn $build(
            obj: &$crate::desc::ObjectDesc
            $(, $arg: $ty)*
        ) -> $crate::error::Result<$any> {
            type Build = fn(
                &$crate::desc::props::Props $(, $ty)*
            ) -> $crate::error::Result<$any>;
            let build: Build = match obj.kind.as_str() {
                $(stringify!($module) => build_one::<$plugin>,)+
                _ => return Err($crate::plugin::registry::unknown_plugin(obj, $category, KNOWN)),
            };
            build(&obj.props $(, $arg)*)
        }

        /// Builds plugin `T` into its variant.
        fn build_one<T: $trait>(
            p: &$crate::desc::props::Props
            $(, $arg: $ty)*
        ) -> $crate::error::Result<$any>
        where
            $any: From<T>,
        {
            Ok(T::build(p $(, $arg)*)?.into())
        }

        $(
            impl From<$plugin> for $any {
                fn from(p: $plugin) -> Self {
                    Self::$plugin(p)
                }
            }
        )+

        /// Appends the layout entries of every plugin's device record.
        fn record_layouts(out: &mut Vec<$crate::plugin::record::LayoutEntry>) {
            use $crate::plugin::record::DeviceRecord;
            $(<<$plugin as $trait>::Record as DeviceRecord>::layout(out);)+
        }

        // Tags are bits of the kernels' 32-bit plugin sets.
        const _: () = assert!(
            KNOWN.len() <= 32,
            concat!("at most 32 ", $category, " plugins (features.cuh sets)")
        );
    };
}
pub(crate) use register_plugins;

/// What a build-function plugin reads of its object: the object itself, or only its
/// properties.
pub trait PluginInput {
    /// The input of `obj`.
    fn of(obj: &ObjectDesc) -> &Self;
}

impl PluginInput for ObjectDesc {
    fn of(obj: &ObjectDesc) -> &Self {
        obj
    }
}

impl PluginInput for crate::desc::props::Props {
    fn of(obj: &ObjectDesc) -> &Self {
        &obj.props
    }
}

/// The error for object `obj` of `category` whose `type` is none of `known` (with the
/// nearest known name as a suggestion).
pub fn unknown_plugin(obj: &ObjectDesc, category: &'static str, known: &[&str]) -> Error {
    Error::UnknownPlugin {
        loc: obj.loc.clone(),
        category,
        name: obj.kind.clone(),
        known: known.join(", "),
    }
}

/// The default of a category's kernel set `HG_<prefix>_SET` (bit `HG_<prefix>_<name>`: the
/// kinds a module compiles), for a module whose prelude names none.
#[derive(Clone, Copy, Debug)]
pub enum SetDefault {
    /// `HG_<prefix>_ALL`, defined beside the tags: every kind (the plugin registries).
    All,
    /// These kinds.
    Kinds(u32),
}

/// The kernels' `#define`s of a category's tags, as generated `registry.cuh` files hold
/// them: `HG_<prefix>_<name> <tag>u` for each of `names` (in tag order), then the
/// default of the set `HG_<prefix>_SET`, `set`.
pub fn cuda_tags(prefix: &str, names: &[&str], set: SetDefault) -> String {
    let mut s = String::new();
    for (tag, name) in names.iter().enumerate() {
        s.push_str(&format!("#define HG_{prefix}_{name} {tag}u\n"));
    }
    let set = match set {
        SetDefault::All => {
            let every = (1u64 << names.len()) - 1;
            s.push_str(&format!("#define HG_{prefix}_ALL 0x{every:x}u\n"));
            format!("HG_{prefix}_ALL")
        }
        SetDefault::Kinds(kinds) => format!("0x{kinds:x}u"),
    };
    s.push_str(&format!(
        "#ifndef HG_{prefix}_SET\n#define HG_{prefix}_SET {set}\n#endif\n"
    ));
    s
}

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
