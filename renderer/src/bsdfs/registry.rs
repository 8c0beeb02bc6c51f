//! The machinery behind the BSDF registry in [`super`]: what each entry of the table
//! holds ([`BsdfEntry`]); the flattening of the scene's BSDFs
//! into the records the kernels read; and the CUDA source generated from the same table
//! (`bsdfs/registry.cuh`: the tag `#define`s, every plugin's twin, the record layout
//! checks and the dispatch `switch`es), which NVRTC gets as one more embedded file.

use std::fmt::Write as _;
use std::mem::size_of;
use std::sync::OnceLock;

use super::{AnyBsdf, BsdfPlugin, REGISTRY};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::{
    flatten_records, slot_words, unique_layout, write_layout_macro, DeviceRecord, LayoutEntry,
    RecordBlob, RecordRef,
};
use crate::plugin::registry::{cuda_tags, SetDefault};
use crate::plugin::PluginInfo;

/// A registered BSDF: what listings, the flattening and the CUDA generator need.
#[derive(Clone, Copy, Debug)]
pub struct BsdfEntry {
    /// Its scene `type` and manual.
    pub info: PluginInfo,
    /// Its tag (position in the registry).
    pub tag: u32,
    /// Its tag's name (`ROUGH_PLASTIC`: the Rust `tag::ROUGH_PLASTIC`, the CUDA
    /// `HG_BSDF_ROUGH_PLASTIC`).
    pub tag_name: &'static str,
    /// The name of its device record (Rust and CUDA).
    pub record: &'static str,
    /// The words of its record's slot in the blob (size rounded up to 16 bytes).
    pub slot_words: usize,
    /// [`BsdfPlugin::DELTA`].
    pub delta: bool,
    /// [`BsdfPlugin::TRANSMISSION`].
    pub transmission: bool,
    /// [`BsdfPlugin::READS_TEXTURE_MEANS`].
    pub reads_texture_means: bool,
    /// [`BsdfPlugin::MEANS_IN_HOOK`].
    pub means_in_hook: bool,
    /// [`BsdfPlugin::ADAPTER`].
    pub adapter: bool,
    /// [`BsdfPlugin::EDITABLE`].
    pub editable: &'static [EditableKey],
    /// Its CUDA twin (`renderer/kernels/bsdfs/<name>.cuh`).
    pub cuda: &'static str,
}

impl BsdfEntry {
    /// The entry of plugin `T` (the registry macro fills in the rest).
    pub const fn of<T: BsdfPlugin>(
        name: &'static str,
        tag: u32,
        tag_name: &'static str,
        source: &'static str,
        cuda: &'static str,
    ) -> BsdfEntry {
        BsdfEntry {
            info: PluginInfo {
                category: "bsdf",
                name,
                source,
            },
            tag,
            tag_name,
            record: <T::Record as DeviceRecord>::NAME,
            slot_words: slot_words(size_of::<T::Record>()),
            delta: T::DELTA,
            transmission: T::TRANSMISSION,
            reads_texture_means: T::READS_TEXTURE_MEANS,
            means_in_hook: T::MEANS_IN_HOOK,
            adapter: T::ADAPTER,
            editable: T::EDITABLE,
            cuda,
        }
    }

    /// The name of its CUDA twin among the kernel files.
    pub fn cuda_file(&self) -> String {
        format!("bsdfs/{}.cuh", self.info.name)
    }
}

/// The entry of plugin `name`, if registered.
pub fn entry(name: &str) -> Option<&'static BsdfEntry> {
    REGISTRY.iter().find(|e| e.info.name == name)
}

/// The bit set of the plugins whose entry satisfies `f`.
pub fn mask(f: impl Fn(&BsdfEntry) -> bool) -> u32 {
    REGISTRY
        .iter()
        .filter(|e| f(e))
        .fold(0, |m, e| m | (1 << e.tag))
}

/// The layout entries of every registered record, nested records first, each
/// (record, field) once: what the CUDA twins are checked against.
pub fn layout() -> Vec<LayoutEntry> {
    let mut all = Vec::new();
    super::record_layouts(&mut all);
    unique_layout(all)
}

/// The most adapters one BSDF may sit under, itself included (`mask` around `twosided`
/// around `diffuse` is 2): the kernels' dispatch has one level per adapter
/// ([`cuda_source`]), and a deeper stack is a mistake, not a material.
pub const MAX_ADAPTER_DEPTH: u32 = 4;

/// How many adapters deep `b` is: 0 for a BSDF that wraps none, else one more than
/// the deepest BSDF it wraps (`bsdfs` holds them: lower handles, already checked).
pub fn adapter_depth(b: &AnyBsdf, bsdfs: &[AnyBsdf]) -> u32 {
    b.nested()
        .iter()
        .map(|&h| 1 + adapter_depth(&bsdfs[h as usize], bsdfs))
        .max()
        .unwrap_or(0)
}

/// The deepest adapter stack among `bsdfs` (what the kernels' dispatch must reach).
pub fn max_adapter_depth(bsdfs: &[AnyBsdf]) -> u32 {
    bsdfs
        .iter()
        .map(|b| adapter_depth(b, bsdfs))
        .max()
        .unwrap_or(0)
}

/// The scene's BSDFs as the kernels read them: a [`RecordRef`] per BSDF (its tag and
/// where its record starts) and the records, in handle order, each in a 16-byte slot.
pub fn flatten(bsdfs: &[AnyBsdf]) -> (Vec<RecordRef>, RecordBlob) {
    flatten_records(bsdfs, |b, refs| (b.tag(), b.record_words(refs)))
}

/// The CUDA source of the registry (`bsdfs/registry.cuh`), generated once.
pub fn cuda_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| generate_cuda(REGISTRY, &layout()))
}

/// The dispatch signatures: (function, return type, parameters, arguments, default).
const DISPATCH: [(&str, &str, &str, &str, &str); 3] = [
    (
        "sample",
        "bool",
        "const SurfacePoint& sp, V3 wi, float u1, V2 u2, BsdfSample* out",
        "sp, wi, u1, u2, out",
        "false",
    ),
    (
        "eval",
        "V3",
        "const SurfacePoint& sp, V3 wi, V3 wo",
        "sp, wi, wo",
        "v3(0.0f, 0.0f, 0.0f)",
    ),
    (
        "pdf",
        "float",
        "const SurfacePoint& sp, V3 wi, V3 wo",
        "sp, wi, wo",
        "0.0f",
    ),
];

/// The text of `bsdfs/registry.cuh` for `entries` (with record layouts `layout`).
fn generate_cuda(entries: &[BsdfEntry], layout: &[LayoutEntry]) -> String {
    let mut s = String::new();
    let set = |f: &dyn Fn(&BsdfEntry) -> bool| {
        entries
            .iter()
            .filter(|e| f(e))
            .fold(0u32, |m, e| m | (1 << e.tag))
    };
    let _ = write!(
        s,
        "// Generated from the BSDF registry (renderer/src/bsdfs/mod.rs) by bsdfs/registry.rs:\n\
         // the tags, every plugin's twin, the record layout checks and the dispatch. Each\n\
         // plugin's record lies in bsdf_data at its RecordRef's offset (16-byte slots).\n\
         #pragma once\n#include \"bsdf.cuh\"\n\n"
    );
    let names: Vec<&str> = entries.iter().map(|e| e.tag_name).collect();
    s.push_str(&cuda_tags("BSDF", &names, SetDefault::All));
    let _ = write!(
        s,
        "// every lobe a delta (no _eval, _pdf); adapters (wrap the others, dispatched first)\n\
         #define HG_DELTA_BSDFS 0x{:x}u\n#define HG_ADAPTER_BSDFS 0x{:x}u\n\
         #define HG_BASE_BSDFS (HG_BSDF_SET & ~HG_ADAPTER_BSDFS)\n\n",
        set(&|e| e.delta),
        set(&|e| e.adapter)
    );
    write_declarations(&mut s);
    for e in entries {
        let _ = writeln!(s, "#include \"{}.cuh\"", e.info.name);
    }
    write_layout_macro(&mut s, "HG_BSDF_LAYOUT", layout);
    write_slots(&mut s, entries);
    write_base_dispatch(&mut s, entries);
    write_top_dispatch(&mut s, entries);
    s
}

/// What an adapter's twin calls, declared before any twin: a BSDF's kind and record,
/// the dispatch over the base kinds and the dispatch `L` adapter levels deep (both
/// defined after the twins).
fn write_declarations(s: &mut String) {
    s.push_str(
        "// A BSDF's kind and record.\nstruct BsdfRef {\n    hg_u32 kind;\n    const hg_u32* rec;\n};\n\n\
         // The words of the record at `rec`: a backward module's probe (backward.cuh) reads\n\
         // the record at probe_bsdf_at as probe_bsdf_rec.\n\
         __device__ inline const hg_u32* bsdf_record_at(const SceneData& s, const hg_u32* rec) {\n\
         #if HG_BACKWARD\n\
         \x20   if (rec == s.probe_bsdf_at) return s.probe_bsdf_rec;\n\
         #endif\n\
         \x20   return rec;\n}\n\n\
         // The record `r` points to (a RecordRef held by an adapter's record).\n\
         __device__ inline BsdfRef bsdf_ref_of(const SceneData& s, RecordRef r) {\n\
         \x20   BsdfRef b;\n    b.kind = r.kind;\n    b.rec = bsdf_record_at(s, s.bsdf_data + r.offset);\n    return b;\n}\n\n\
         // The dispatch over the kinds that are not adapters, and bsdf_nested_*<L>: over\n\
         // every kind with at most L adapters from here down (an adapter's twin is a\n\
         // template over the levels below it and calls bsdf_nested_*<L> for what it wraps).\n\
         __device__ inline bool bsdf_base_is_delta(hg_u32 kind);\n\
         template <int L> __device__ inline bool bsdf_nested_is_delta(const SceneData& s, BsdfRef b);\n",
    );
    for (f, ret, params, _, _) in DISPATCH {
        let _ = writeln!(
            s,
            "__device__ inline {ret} bsdf_base_{f}(const SceneData& s, BsdfRef b, {params});\n\
             template <int L> __device__ inline {ret} bsdf_nested_{f}(const SceneData& s, BsdfRef b, {params});"
        );
    }
    s.push('\n');
}

/// Each kind's slot size, and where BSDF `bi`'s record lies.
fn write_slots(s: &mut String, entries: &[BsdfEntry]) {
    s.push_str(
        "\n// The words of each kind's record slot.\n\
         __device__ inline hg_u32 bsdf_slot_words(hg_u32 kind) {\n    switch (kind) {\n",
    );
    for e in entries {
        let _ = writeln!(
            s,
            "        case HG_BSDF_{}: return HG_SLOT_WORDS({});",
            e.tag_name, e.record
        );
    }
    s.push_str(
        "        default: break;\n    }\n    return 0u;\n}\n\n\
         // BSDF `bi`'s record. A module whose scene has one kind knows where: the records\n\
         // lie in handle order, each in a slot of that kind's size (registry.rs `flatten`).\n\
         __device__ inline BsdfRef bsdf_ref(const SceneData& s, hg_u32 bi) {\n\
         \x20   if (HG_ONE_KIND(HG_BSDF_SET)) {\n\
         \x20       BsdfRef b;\n        b.kind = HG_KIND(HG_BSDF_SET, 0u);\n\
         \x20       b.rec = bsdf_record_at(s, s.bsdf_data + bi * bsdf_slot_words(b.kind));\n        return b;\n    }\n\
         \x20   return bsdf_ref_of(s, s.bsdfs[bi]);\n}\n",
    );
}

/// The `switch`es over the kinds that are not adapters (`bsdf_base_*`).
fn write_base_dispatch(s: &mut String, entries: &[BsdfEntry]) {
    s.push_str(
        "\n__device__ inline bool bsdf_base_is_delta(hg_u32 kind) {\n\
         \x20   return (HG_BASE_BSDFS & HG_DELTA_BSDFS) != 0u && HG_HAS(HG_DELTA_BSDFS, HG_KIND(HG_BASE_BSDFS, kind));\n}\n",
    );
    for (f, ret, params, args, default) in DISPATCH {
        let _ = write!(
            s,
            "\n__device__ inline {ret} bsdf_base_{f}(const SceneData& s, BsdfRef b, {params}) {{\n\
             \x20   switch (HG_KIND(HG_BASE_BSDFS, b.kind)) {{\n"
        );
        for e in entries
            .iter()
            .filter(|e| !e.adapter && (f == "sample" || !e.delta))
        {
            let _ = writeln!(
                s,
                "        HG_CASE(HG_BASE_BSDFS, HG_BSDF_{}) return {}_{f}(s, *(const {}*)b.rec, {args});",
                e.tag_name, e.info.name, e.record
            );
        }
        let _ = write!(
            s,
            "        default: break;\n    }}\n    return {default};\n}}\n"
        );
    }
}

/// The `if`s that send an adapter kind to its twin with `below` levels under it.
fn adapter_cases(
    s: &mut String,
    entries: &[BsdfEntry],
    below: &str,
    call: &dyn Fn(&BsdfEntry) -> String,
) {
    for e in entries.iter().filter(|e| e.adapter) {
        let _ = writeln!(
            s,
            "    if (HG_HAS(HG_BSDF_SET, HG_BSDF_{t}) && b.kind == HG_BSDF_{t}) return {}_{}",
            e.info.name,
            call(e).replace("<L>", &format!("<{below}>")),
            t = e.tag_name
        );
    }
}

/// The dispatch through adapters: `bsdf_nested_*<L>` (what a twin calls; out of line
/// from level 1, so the code grows with the levels, not with their product), and the
/// entry points by handle, which dispatch `HG_ADAPTER_DEPTH` levels deep (the deepest
/// adapter stack of the scene, from the module's prelude; every level when unset).
fn write_top_dispatch(s: &mut String, entries: &[BsdfEntry]) {
    let is_delta = |e: &BsdfEntry| format!("is_delta<L>(s, *(const {}*)b.rec);", e.record);
    let _ = write!(
        s,
        "\n#ifndef HG_ADAPTER_DEPTH\n#define HG_ADAPTER_DEPTH {MAX_ADAPTER_DEPTH}\n#endif\n\n\
         template <int L> __device__ inline bool bsdf_level_is_delta(const SceneData& s, BsdfRef b) {{\n"
    );
    adapter_cases(s, entries, "L - 1", &is_delta);
    s.push_str(
        "    return bsdf_base_is_delta(b.kind);\n}\n\n\
         template <int L> __device__ inline bool bsdf_nested_is_delta(const SceneData& s, BsdfRef b) {\n\
         \x20   if constexpr (L == 0) return bsdf_base_is_delta(b.kind);\n\
         \x20   else return bsdf_level_is_delta<L>(s, b);\n}\n\n\
         // AnyBsdf::is_delta\n__device__ inline bool bsdf_is_delta(const SceneData& s, hg_u32 bi, const SurfacePoint& sp) {\n\
         \x20   (void)sp;\n    if ((HG_BASE_BSDFS & HG_DELTA_BSDFS) == 0u) return false;\n\
         \x20   return bsdf_nested_is_delta<HG_ADAPTER_DEPTH>(s, bsdf_ref(s, bi));\n}\n",
    );
    for (f, ret, params, args, _) in DISPATCH {
        let call = |e: &BsdfEntry| format!("{f}<L>(s, *(const {}*)b.rec, {args});", e.record);
        let _ = write!(
            s,
            "\ntemplate <int L> __device__ HG_OUTLINE {ret} bsdf_level_{f}(const SceneData& s, BsdfRef b, {params}) {{\n"
        );
        adapter_cases(s, entries, "L - 1", &call);
        let _ = write!(
            s,
            "    return bsdf_base_{f}(s, b, {args});\n}}\n\n\
             template <int L> __device__ inline {ret} bsdf_nested_{f}(const SceneData& s, BsdfRef b, {params}) {{\n\
             \x20   if constexpr (L == 0) return bsdf_base_{f}(s, b, {args});\n\
             \x20   else return bsdf_level_{f}<L>(s, b, {args});\n}}\n\n\
             __device__ HG_OUTLINE {ret} bsdf_{f}(const SceneData& s, hg_u32 bi, {params}) {{\n\
             \x20   BsdfRef b = bsdf_ref(s, bi);\n#if HG_ADAPTER_DEPTH > 0\n"
        );
        adapter_cases(s, entries, "HG_ADAPTER_DEPTH - 1", &call);
        let _ = writeln!(s, "#endif\n    return bsdf_base_{f}(s, b, {args});\n}}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plugin_has_a_manual_a_twin_and_its_tag() {
        let infos: Vec<PluginInfo> = REGISTRY.iter().map(|e| e.info).collect();
        crate::plugin::registry::testing::check_registry("bsdf", &infos, super::super::KNOWN);
        for (i, e) in REGISTRY.iter().enumerate() {
            let name = e.info.name;
            assert_eq!(e.tag as usize, i);
            // the twin defines the record and the entry points the dispatch calls
            assert!(
                e.cuda.contains(&format!("struct {} {{", e.record)),
                "{name}"
            );
            let mut fns = vec!["sample"];
            if !e.delta {
                fns.extend(["eval", "pdf"]);
            }
            if e.adapter {
                fns.push("is_delta");
            }
            for f in fns {
                assert!(e.cuda.contains(&format!(" {name}_{f}(")), "{name}_{f}");
            }
            assert!(e.slot_words % 4 == 0 && e.slot_words > 0);
        }
    }

    #[test]
    fn the_cuda_source_names_every_kind_once() {
        let src = cuda_source();
        for e in REGISTRY {
            let def = format!("#define HG_BSDF_{} {}u\n", e.tag_name, e.tag);
            assert_eq!(src.matches(&def).count(), 1, "{def}");
            assert_eq!(
                src.matches(&format!("#include \"{}.cuh\"", e.info.name))
                    .count(),
                1
            );
            assert!(src.contains(&format!("S({}, ", e.record)), "{}", e.record);
        }
        let all = (1u32 << REGISTRY.len()) - 1;
        assert!(src.contains(&format!("#define HG_BSDF_ALL 0x{all:x}u")));
        assert!(!src.contains(";;"), "a generated statement ends twice");
    }

    #[test]
    fn records_lie_in_handle_order_in_16_byte_slots() {
        use crate::desc::xml;
        use crate::scene::build_scene;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
        let desc = xml::load_file(&root.join("cbox.xml"), &[("res".into(), "8".into())]).unwrap();
        let setup = build_scene(&desc).unwrap();
        let (refs, blob) = flatten(&setup.scene.bsdfs);
        assert_eq!(refs.len(), setup.scene.bsdfs.len());
        let mut at = 0;
        for (r, b) in refs.iter().zip(setup.scene.bsdfs.iter()) {
            assert_eq!((r.kind, r.offset as usize), (b.tag(), at));
            let words = b.record_words(&refs);
            assert_eq!(blob.words[at..at + words.len()], words[..]);
            assert_eq!(words.len(), REGISTRY[r.kind as usize].slot_words);
            at += words.len();
        }
        assert_eq!(at, blob.words.len());
    }
}
