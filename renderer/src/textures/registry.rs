//! The machinery behind the texture registry in [`super`]: what each entry of the
//! table holds ([`TextureEntry`]); the flattening of the scene's
//! textures into the records the kernels read; and the CUDA source generated from the
//! same table (`textures/registry.cuh`: the tag `#define`s, every plugin's twin, the
//! record layout checks and the dispatch), which NVRTC gets as one more embedded file.

use std::fmt::Write as _;
use std::mem::size_of;
use std::sync::OnceLock;

use super::{TexturePlugin, TextureStore, REGISTRY};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::{
    flatten_records, slot_words, unique_layout, write_layout_macro, DeviceRecord, LayoutEntry,
    RecordBlob, RecordRef,
};
use crate::plugin::registry::{cuda_tags, SetDefault};
use crate::plugin::PluginInfo;

/// A registered texture: what listings, the flattening and the CUDA generator need.
#[derive(Clone, Copy, Debug)]
pub struct TextureEntry {
    /// Its scene `type` and manual.
    pub info: PluginInfo,
    /// Its tag (position in the registry).
    pub tag: u32,
    /// Its tag's name (`MESH_ATTRIBUTE`: the Rust `tag::MESH_ATTRIBUTE`, the CUDA
    /// `HG_TEX_MESH_ATTRIBUTE`).
    pub tag_name: &'static str,
    /// The name of its device record (Rust and CUDA).
    pub record: &'static str,
    /// The words of its record's slot in the blob (size rounded up to 16 bytes).
    pub slot_words: usize,
    /// [`TexturePlugin::PICKS`].
    pub picks: bool,
    /// [`TexturePlugin::GRADIENT`].
    pub gradient: bool,
    /// [`TexturePlugin::EDITABLE`].
    pub editable: &'static [EditableKey],
    /// Its CUDA twin (`renderer/kernels/textures/<name>.cuh`).
    pub cuda: &'static str,
}

impl TextureEntry {
    /// The entry of plugin `T` (the registry macro fills in the rest).
    pub const fn of<T: TexturePlugin>(
        name: &'static str,
        tag: u32,
        tag_name: &'static str,
        source: &'static str,
        cuda: &'static str,
    ) -> TextureEntry {
        TextureEntry {
            info: PluginInfo {
                category: "texture",
                name,
                source,
            },
            tag,
            tag_name,
            record: <T::Record as DeviceRecord>::NAME,
            slot_words: slot_words(size_of::<T::Record>()),
            picks: T::PICKS,
            gradient: T::GRADIENT,
            editable: T::EDITABLE,
            cuda,
        }
    }

    /// The name of its CUDA twin among the kernel files.
    pub fn cuda_file(&self) -> String {
        format!("textures/{}.cuh", self.info.name)
    }
}

/// What a texture's device record may depend on besides the texture itself: where the
/// flattened arrays put the data it points into.
#[derive(Clone, Copy, Debug)]
pub struct RecordCtx<'a> {
    /// Where each image of the texture store starts in the flat texel array.
    pub image_offsets: &'a [u32],
    /// The shapes per row of the mesh attribute table
    /// ([`AttributeTable::shapes`](super::AttributeTable::shapes)).
    pub attr_shapes: u32,
}

impl<'a> RecordCtx<'a> {
    /// The context of `st`'s textures with its images at `image_offsets`.
    pub fn of(st: &TextureStore, image_offsets: &'a [u32]) -> RecordCtx<'a> {
        RecordCtx {
            image_offsets,
            attr_shapes: st.attributes.shapes,
        }
    }
}

/// The entry of plugin `name`, if registered.
pub fn entry(name: &str) -> Option<&'static TextureEntry> {
    REGISTRY.iter().find(|e| e.info.name == name)
}

/// The layout entries of every registered record, nested records first, each
/// (record, field) once: what the CUDA twins are checked against.
pub fn layout() -> Vec<LayoutEntry> {
    let mut all = Vec::new();
    super::record_layouts(&mut all);
    unique_layout(all)
}

/// The scene's textures as the kernels read them: a [`RecordRef`] per texture (its tag
/// and where its record starts) and the records, in handle order, each in a 16-byte
/// slot; `image_offsets` says where each image starts in the flat texel array.
pub fn flatten(st: &TextureStore, image_offsets: &[u32]) -> (Vec<RecordRef>, RecordBlob) {
    let at = RecordCtx::of(st, image_offsets);
    flatten_records(&st.records, |t, _| (t.tag(), t.record_words(&at)))
}

/// The CUDA source of the registry (`textures/registry.cuh`), generated once.
pub fn cuda_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| generate_cuda(REGISTRY, &layout()))
}

/// The lookups: (function, return type, the picking kinds' function, default).
const DISPATCH: [(&str, &str, &str, &str, &str); 2] = [
    (
        "eval",
        "V3",
        "pick",
        "v3(0.0f, 0.0f, 0.0f)",
        "s.probe_value",
    ),
    (
        "eval_1",
        "float",
        "pick_1",
        "0.0f",
        "tex_scalar(s.probe_value)",
    ),
];

/// The text of `textures/registry.cuh` for `entries` (with record layouts `layout`).
fn generate_cuda(entries: &[TextureEntry], layout: &[LayoutEntry]) -> String {
    let mut s = String::new();
    let set = |f: &dyn Fn(&TextureEntry) -> bool| {
        entries
            .iter()
            .filter(|e| f(e))
            .fold(0u32, |m, e| m | (1 << e.tag))
    };
    s.push_str(
        "// Generated from the texture registry (renderer/src/textures/mod.rs) by\n\
         // textures/registry.rs: the tags, every plugin's twin, the record layout checks and\n\
         // the dispatch. Each texture's record lies in tex_data at its RecordRef's offset\n\
         // (16-byte slots).\n#pragma once\n#include \"texture.cuh\"\n\n",
    );
    let names: Vec<&str> = entries.iter().map(|e| e.tag_name).collect();
    s.push_str(&cuda_tags("TEX", &names, SetDefault::All));
    let _ = write!(
        s,
        "// kinds that pick another texture per point (_pick, _pick_1), kinds with a uv\n\
         // gradient (_eval_1_grad), and the kinds that produce values\n\
         #define HG_PICK_TEXTURES 0x{:x}u\n#define HG_GRADIENT_TEXTURES 0x{:x}u\n\
         #define HG_LEAF_TEXTURES (HG_TEX_SET & ~HG_PICK_TEXTURES)\n\n",
        set(&|e| e.picks),
        set(&|e| e.gradient)
    );
    for e in entries {
        let _ = writeln!(s, "#include \"{}.cuh\"", e.info.name);
    }
    write_layout_macro(&mut s, "HG_TEXTURE_LAYOUT", layout);
    write_refs(&mut s, entries);
    write_dispatch(&mut s, entries);
    s
}

/// A texture's kind and record: each kind's slot size, and where texture `ti`'s record
/// lies.
fn write_refs(s: &mut String, entries: &[TextureEntry]) {
    s.push_str(
        "\n// A texture's kind and record.\nstruct TexRec {\n    hg_u32 kind;\n    const hg_u32* rec;\n};\n\n\
         // The words of each kind's record slot.\n\
         __device__ inline hg_u32 tex_slot_words(hg_u32 kind) {\n    switch (kind) {\n",
    );
    for e in entries {
        let _ = writeln!(
            s,
            "        case HG_TEX_{}: return HG_SLOT_WORDS({});",
            e.tag_name, e.record
        );
    }
    s.push_str(
        "        default: break;\n    }\n    return 0u;\n}\n\n\
         // Texture `ti`'s record. A module whose scene has one kind knows where (one read:\n\
         // the records lie in handle order, each in a slot of that kind's size, registry.rs\n\
         // `flatten`); otherwise its RecordRef says.\n\
         __device__ inline TexRec tex_rec(const SceneData& s, hg_u32 ti) {\n\
         \x20   TexRec t;\n\
         \x20   if (HG_ONE_KIND(HG_TEX_SET)) {\n\
         \x20       t.kind = HG_KIND(HG_TEX_SET, 0u);\n        t.rec = s.tex_data + ti * tex_slot_words(t.kind);\n        return t;\n    }\n\
         \x20   RecordRef r = s.textures[ti];\n    t.kind = r.kind;\n    t.rec = s.tex_data + r.offset;\n    return t;\n}\n",
    );
}

/// The `switch`es: over the kinds that produce values (`tex_leaf_*`), and the lookups by
/// handle, which follow the picking kinds iteratively (a checkerboard's colours are
/// textures themselves).
fn write_dispatch(s: &mut String, entries: &[TextureEntry]) {
    for (f, ret, pick, default, probed) in DISPATCH {
        let _ = write!(
            s,
            "\n__device__ inline {ret} tex_leaf_{f}(const SceneData& s, TexRec t, const SurfacePoint& sp) {{\n\
             \x20   switch (HG_KIND(HG_LEAF_TEXTURES, t.kind)) {{\n"
        );
        for e in entries.iter().filter(|e| !e.picks) {
            let _ = writeln!(
                s,
                "        HG_CASE(HG_LEAF_TEXTURES, HG_TEX_{}) return {}_{f}(s, *(const {}*)t.rec, sp);",
                e.tag_name, e.info.name, e.record
            );
        }
        let _ = write!(
            s,
            "        default: break;\n    }}\n    return {default};\n}}\n\n\
             // AnyTexture::{f}\n\
             // (a backward module's probe, backward.cuh, reads as a constant)\n\
             __device__ HG_OUTLINE {ret} tex_{f}(const SceneData& s, hg_u32 ti, const SurfacePoint& sp) {{\n\
             #if HG_BACKWARD\n\
             \x20   if (ti == s.probe_tex) return {probed};\n\
             #endif\n\
             \x20   if ((HG_TEX_SET & HG_PICK_TEXTURES) == 0u) return tex_leaf_{f}(s, tex_rec(s, ti), sp);\n\
             #pragma unroll 1\n\
             \x20   for (int guard = 0; guard < 16; ++guard) {{\n\
             #if HG_BACKWARD\n\
             \x20       if (ti == s.probe_tex) return {probed};\n\
             #endif\n\
             \x20       TexRec t = tex_rec(s, ti);\n"
        );
        for e in entries.iter().filter(|e| e.picks) {
            let _ = writeln!(
                s,
                "        if (HG_HAS(HG_TEX_SET, HG_TEX_{t}) && t.kind == HG_TEX_{t}) {{\n\
                 \x20           ti = {}_{pick}(s, *(const {}*)t.rec, sp);\n            continue;\n        }}",
                e.info.name,
                e.record,
                t = e.tag_name
            );
        }
        let _ = write!(
            s,
            "        return tex_leaf_{f}(s, t, sp);\n    }}\n    return {default};\n}}\n"
        );
    }
    s.push_str(
        "\n// AnyTexture::eval_1_grad: zero for the kinds without a gradient.\n\
         __device__ inline V2 tex_eval_1_grad(const SceneData& s, hg_u32 ti, const SurfacePoint& sp) {\n\
         \x20   if ((HG_TEX_SET & HG_GRADIENT_TEXTURES) == 0u) return v2(0.0f, 0.0f);\n\
         \x20   TexRec t = tex_rec(s, ti);\n    switch (HG_KIND(HG_TEX_SET, t.kind)) {\n",
    );
    for e in entries.iter().filter(|e| e.gradient) {
        let _ = writeln!(
            s,
            "        HG_CASE(HG_TEX_SET, HG_TEX_{}) return {}_eval_1_grad(s, *(const {}*)t.rec, sp);",
            e.tag_name, e.info.name, e.record
        );
    }
    s.push_str("        default: break;\n    }\n    return v2(0.0f, 0.0f);\n}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plugin_has_a_manual_a_twin_and_its_tag() {
        let infos: Vec<PluginInfo> = REGISTRY.iter().map(|e| e.info).collect();
        crate::plugin::registry::testing::check_registry("texture", &infos, super::super::KNOWN);
        for (i, e) in REGISTRY.iter().enumerate() {
            let name = e.info.name;
            assert_eq!(e.tag as usize, i);
            // the twin defines the record and the entry points the dispatch calls
            assert!(
                e.cuda.contains(&format!("struct {} {{", e.record)),
                "{name}"
            );
            let mut fns = if e.picks {
                vec!["pick", "pick_1"]
            } else {
                vec!["eval", "eval_1"]
            };
            if e.gradient {
                fns.push("eval_1_grad");
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
            let def = format!("#define HG_TEX_{} {}u\n", e.tag_name, e.tag);
            assert_eq!(src.matches(&def).count(), 1, "{def}");
            assert_eq!(
                src.matches(&format!("#include \"{}.cuh\"", e.info.name))
                    .count(),
                1
            );
            assert!(src.contains(&format!("S({}, ", e.record)), "{}", e.record);
            // each kind is dispatched: by the value lookups or as a pick, not both
            let leaf = format!("HG_CASE(HG_LEAF_TEXTURES, HG_TEX_{})", e.tag_name);
            let pick = format!("t.kind == HG_TEX_{}", e.tag_name);
            let (l, p) = (src.matches(&leaf).count(), src.matches(&pick).count());
            assert_eq!(
                (l, p),
                if e.picks { (0, 2) } else { (2, 0) },
                "{}",
                e.tag_name
            );
        }
        let all = (1u32 << REGISTRY.len()) - 1;
        assert!(src.contains(&format!("#define HG_TEX_ALL 0x{all:x}u")));
        assert!(!src.contains(";;"), "a generated statement ends twice");
    }

    #[test]
    fn records_lie_in_handle_order_in_16_byte_slots() {
        use crate::desc::xml;
        use crate::scene::build_scene;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
        let desc = xml::load_file(&root.join("seed.xml"), &[("res".into(), "8".into())]).unwrap();
        let setup = build_scene(&desc).unwrap();
        let st = &setup.scene.textures;
        let offsets = crate::flat::image_offsets(&st.images).unwrap();
        let (refs, blob) = flatten(st, &offsets);
        assert_eq!(refs.len(), st.records.len());
        let kinds: Vec<u32> = refs.iter().map(|r| r.kind).collect();
        assert!(kinds.contains(&super::super::tag::BITMAP) && kinds.contains(&0));
        let at = RecordCtx::of(st, &offsets);
        let mut pos = 0;
        for (r, t) in refs.iter().zip(&st.records) {
            assert_eq!((r.kind, r.offset as usize), (t.tag(), pos));
            let words = t.record_words(&at);
            assert_eq!(blob.words[pos..pos + words.len()], words[..]);
            assert_eq!(words.len(), REGISTRY[r.kind as usize].slot_words);
            pos += words.len();
        }
        assert_eq!(pos, blob.words.len());
    }
}
