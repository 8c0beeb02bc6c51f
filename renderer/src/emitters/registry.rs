//! The machinery behind the emitter registry in [`super`]: what each entry of the
//! table holds ([`EmitterEntry`]); the flattening of the scene's
//! emitters into the records the kernels read; and the CUDA source generated from the
//! same table (`emitters/registry.cuh`: the tag `#define`s, every plugin's twin, the
//! record layout checks and the dispatch `switch`es), which NVRTC gets as one more
//! embedded file.

use std::fmt::Write as _;
use std::mem::size_of;
use std::sync::OnceLock;

use super::{AnyEmitter, EmitterPlugin, REGISTRY};
use crate::flat::materials::FlatDist2D;
use crate::plugin::patch::EditableKey;
use crate::plugin::record::{
    flatten_records, slot_words, unique_layout, write_layout_macro, DeviceRecord, LayoutEntry,
    RecordBlob, RecordRef,
};
use crate::plugin::registry::{cuda_tags, SetDefault};
use crate::plugin::PluginInfo;

/// A registered emitter: what listings, the flattening and the CUDA generator need.
#[derive(Clone, Copy, Debug)]
pub struct EmitterEntry {
    /// Its scene `type` and manual.
    pub info: PluginInfo,
    /// Its tag (position in the registry).
    pub tag: u32,
    /// Its tag's name (`DIRECTIONAL`: the Rust `tag::DIRECTIONAL`, the CUDA
    /// `HG_EMITTER_DIRECTIONAL`).
    pub tag_name: &'static str,
    /// The name of its device record (Rust and CUDA).
    pub record: &'static str,
    /// The words of its record's slot in the blob (size rounded up to 16 bytes).
    pub slot_words: usize,
    /// [`EmitterPlugin::DELTA`].
    pub delta: bool,
    /// [`EmitterPlugin::SURFACE`].
    pub surface: bool,
    /// [`EmitterPlugin::ENVIRONMENT`].
    pub environment: bool,
    /// [`EmitterPlugin::INFINITE`].
    pub infinite: bool,
    /// [`EmitterPlugin::EDITABLE`].
    pub editable: &'static [EditableKey],
    /// Its CUDA twin (`renderer/kernels/emitters/<name>.cuh`).
    pub cuda: &'static str,
}

impl EmitterEntry {
    /// The entry of plugin `T` (the registry macro fills in the rest).
    pub const fn of<T: EmitterPlugin>(
        name: &'static str,
        tag: u32,
        tag_name: &'static str,
        source: &'static str,
        cuda: &'static str,
    ) -> EmitterEntry {
        EmitterEntry {
            info: PluginInfo {
                category: "emitter",
                name,
                source,
            },
            tag,
            tag_name,
            record: <T::Record as DeviceRecord>::NAME,
            slot_words: slot_words(size_of::<T::Record>()),
            delta: T::DELTA,
            surface: T::SURFACE,
            environment: T::ENVIRONMENT,
            infinite: T::INFINITE,
            editable: T::EDITABLE,
            cuda,
        }
    }

    /// The name of its CUDA twin among the kernel files.
    pub fn cuda_file(&self) -> String {
        format!("emitters/{}.cuh", self.info.name)
    }
}

/// What a record may refer to outside the emitter: where the images and the sampling
/// distributions lie in the flat scene's arrays (resolved when the records are made).
#[derive(Clone, Copy, Debug)]
pub struct RecordCtx<'a> {
    /// Where each image of the texture store starts in the flat texel array.
    pub image_offsets: &'a [u32],
    /// The flat 2D distributions, in `Scene::dists2d` order.
    pub dist2d: &'a [FlatDist2D],
}

/// The names of the surface emitters, quoted (for "only ... can" messages).
pub fn surface_names() -> String {
    let names: Vec<String> = (REGISTRY.iter())
        .filter(|e| e.surface)
        .map(|e| format!("\"{}\"", e.info.name))
        .collect();
    names.join(", ")
}

/// The entry of plugin `name`, if registered.
pub fn entry(name: &str) -> Option<&'static EmitterEntry> {
    REGISTRY.iter().find(|e| e.info.name == name)
}

/// The bit set of the plugins whose entry satisfies `f`.
pub fn mask(f: impl Fn(&EmitterEntry) -> bool) -> u32 {
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

/// The scene's emitters as the kernels read them: a [`RecordRef`] per emitter (its tag
/// and where its record starts) and the records, in handle order, each in a 16-byte
/// slot.
pub fn flatten(emitters: &[AnyEmitter], at: &RecordCtx) -> (Vec<RecordRef>, RecordBlob) {
    flatten_records(emitters, |e, _| (e.tag(), e.record_words(at)))
}

/// The CUDA source of the registry (`emitters/registry.cuh`), generated once.
pub fn cuda_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| generate_cuda(REGISTRY, &layout()))
}

/// A generated dispatch function over the emitter kinds.
struct Dispatch {
    /// Its CUDA name.
    name: &'static str,
    /// Its return type.
    ret: &'static str,
    /// Its parameters after the scene and the emitter.
    params: &'static str,
    /// The twins' arguments after the scene and the record.
    args: &'static str,
    /// What it returns for a kind it does not cover.
    default: &'static str,
    /// The kinds it is compiled for (a CUDA expression of the sets).
    set: &'static str,
    /// The twins' function: `<name>_<suffix>`.
    suffix: &'static str,
    /// Which plugins have that function.
    covers: fn(&EmitterEntry) -> bool,
}

/// The dispatch over the emitter kinds; each takes the scene and the emitter as an
/// `EmitterRef` (its kind and record, `emitter_ref` in the generated file).
const DISPATCH: [Dispatch; 6] = [
    Dispatch {
        name: "emitter_sample_at",
        ret: "bool",
        params: "V3 p, V2 u, EmitterSample* out",
        args: "p, u, out",
        default: "false",
        set: "HG_EMITTER_SET",
        suffix: "sample",
        covers: |_| true,
    },
    Dispatch {
        name: "emitter_sample_ray_at",
        ret: "bool",
        params: "V2 u_pos, V2 u_dir, EmitterRay* out",
        args: "u_pos, u_dir, out",
        default: "false",
        set: "(HG_EMITTER_SET & ~HG_INFINITE_EMITTERS)",
        suffix: "sample_ray",
        covers: |e| !e.infinite,
    },
    Dispatch {
        name: "emitter_sample_position",
        ret: "bool",
        params: "V2 u, PositionSample* ps, V3* w",
        args: "u, ps, w",
        default: "false",
        set: "(HG_EMITTER_SET & HG_SURFACE_EMITTERS)",
        suffix: "sample_position",
        covers: |e| e.surface,
    },
    Dispatch {
        name: "emitter_pdf_hit",
        ret: "float",
        params: "V3 p, const Hit& h",
        args: "p, h",
        default: "0.0f",
        set: "(HG_EMITTER_SET & HG_SURFACE_EMITTERS)",
        suffix: "pdf_hit",
        covers: |e| e.surface,
    },
    Dispatch {
        name: "emitter_eval_hit",
        ret: "V3",
        params: "const Hit& h, V3 d",
        args: "h, d",
        default: "v3(0.0f, 0.0f, 0.0f)",
        set: "(HG_EMITTER_SET & HG_SURFACE_EMITTERS)",
        suffix: "eval_hit",
        covers: |e| e.surface,
    },
    Dispatch {
        name: "emitter_eval_env",
        ret: "V3",
        params: "V3 d, float* pdf",
        args: "d, pdf",
        default: "v3(0.0f, 0.0f, 0.0f)",
        set: "(HG_EMITTER_SET & HG_ENV_EMITTERS)",
        suffix: "eval_env",
        covers: |e| e.environment,
    },
];

/// The text of `emitters/registry.cuh` for `entries` (with record layouts `layout`).
fn generate_cuda(entries: &[EmitterEntry], layout: &[LayoutEntry]) -> String {
    let mut s = String::new();
    let set = |f: &dyn Fn(&EmitterEntry) -> bool| {
        entries
            .iter()
            .filter(|e| f(e))
            .fold(0u32, |m, e| m | (1 << e.tag))
    };
    s.push_str(
        "// Generated from the emitter registry (renderer/src/emitters/mod.rs) by\n\
         // emitters/registry.rs: the tags, every plugin's twin, the record layout checks and\n\
         // the dispatch. Each plugin's record lies in emitter_data at its RecordRef's offset\n\
         // (16-byte slots).\n#pragma once\n#include \"emitter.cuh\"\n\n",
    );
    let names: Vec<&str> = entries.iter().map(|e| e.tag_name).collect();
    s.push_str(&cuda_tags("EMITTER", &names, SetDefault::All));
    let _ = write!(
        s,
        "// delta lights; surface emitters (nested in shapes: _sample_position, _pdf_hit,\n\
         // _eval_hit); environments (seen by escaping rays: _eval_env); infinitely distant\n\
         // ones (light tracing starts on the bounding sphere's disk: no _sample_ray)\n\
         #define HG_DELTA_EMITTERS 0x{:x}u\n#define HG_SURFACE_EMITTERS 0x{:x}u\n\
         #define HG_ENV_EMITTERS 0x{:x}u\n#define HG_INFINITE_EMITTERS 0x{:x}u\n\n",
        set(&|e| e.delta),
        set(&|e| e.surface),
        set(&|e| e.environment),
        set(&|e| e.infinite),
    );
    for e in entries {
        let _ = writeln!(s, "#include \"{}.cuh\"", e.info.name);
    }
    write_layout_macro(&mut s, "HG_EMITTER_LAYOUT", layout);
    s.push_str(
        "\n// The words of each kind's record slot.\n\
         __device__ inline hg_u32 emitter_slot_words(hg_u32 kind) {\n    switch (kind) {\n",
    );
    for e in entries {
        let _ = writeln!(
            s,
            "        case HG_EMITTER_{}: return HG_SLOT_WORDS({});",
            e.tag_name, e.record
        );
    }
    s.push_str(
        "        default: break;\n    }\n    return 0u;\n}\n\n\
         // An emitter's kind and record.\nstruct EmitterRef {\n    hg_u32 kind;\n    const hg_u32* rec;\n};\n\n\
         // Emitter `ei`'s record. A module whose scene has one kind knows where: the records\n\
         // lie in handle order, each in a slot of that kind's size (registry.rs `flatten`).\n\
         __device__ inline EmitterRef emitter_ref(const SceneData& s, hg_u32 ei) {\n\
         \x20   EmitterRef e;\n\
         \x20   if (HG_ONE_KIND(HG_EMITTER_SET)) {\n\
         \x20       e.kind = HG_KIND(HG_EMITTER_SET, 0u);\n\
         \x20       e.rec = s.emitter_data + ei * emitter_slot_words(e.kind);\n        return e;\n    }\n\
         \x20   RecordRef r = s.emitters[ei];\n    e.kind = r.kind;\n    e.rec = s.emitter_data + r.offset;\n    return e;\n}\n",
    );
    for d in &DISPATCH {
        let _ = write!(
            s,
            "\n__device__ inline {} {}(const SceneData& s, EmitterRef e, {}) {{\n\
             \x20   switch (HG_KIND({set}, e.kind)) {{\n",
            d.ret,
            d.name,
            d.params,
            set = d.set
        );
        for e in entries.iter().filter(|e| (d.covers)(e)) {
            let _ = writeln!(
                s,
                "        HG_CASE({}, HG_EMITTER_{}) return {}_{}(s, *(const {}*)e.rec, {});",
                d.set, e.tag_name, e.info.name, d.suffix, e.record, d.args
            );
        }
        let _ = write!(
            s,
            "        default: break;\n    }}\n    return {};\n}}\n",
            d.default
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plugin_has_a_manual_a_twin_and_its_tag() {
        let infos: Vec<PluginInfo> = REGISTRY.iter().map(|e| e.info).collect();
        crate::plugin::registry::testing::check_registry("emitter", &infos, super::super::KNOWN);
        for (i, e) in REGISTRY.iter().enumerate() {
            let name = e.info.name;
            assert_eq!(e.tag as usize, i);
            // the twin defines the record and the entry points the dispatch calls
            assert!(
                e.cuda.contains(&format!("struct {} {{", e.record)),
                "{name}"
            );
            for d in DISPATCH.iter().filter(|d| (d.covers)(e)) {
                let f = format!(" {name}_{}(", d.suffix);
                assert!(e.cuda.contains(&f), "{name}: no{f}");
            }
            // and only those: a kind outside a dispatch's set has no function for it
            for d in DISPATCH.iter().filter(|d| !(d.covers)(e)) {
                let f = format!(" {name}_{}(", d.suffix);
                assert!(!e.cuda.contains(&f), "{name}: {f} is never called");
            }
            assert!(e.slot_words % 4 == 0 && e.slot_words > 0);
            assert!(!(e.infinite && e.surface), "{name}");
        }
        assert_eq!(surface_names(), "\"area\"");
    }

    #[test]
    fn the_cuda_source_names_every_kind_once() {
        let src = cuda_source();
        for e in REGISTRY {
            let def = format!("#define HG_EMITTER_{} {}u\n", e.tag_name, e.tag);
            assert_eq!(src.matches(&def).count(), 1, "{def}");
            assert_eq!(
                src.matches(&format!("#include \"{}.cuh\"", e.info.name))
                    .count(),
                1
            );
            assert!(src.contains(&format!("S({}, ", e.record)), "{}", e.record);
            let case = format!("HG_EMITTER_{}) return {}_sample(", e.tag_name, e.info.name);
            assert_eq!(src.matches(&case).count(), 1, "{case}");
        }
        let all = (1u32 << REGISTRY.len()) - 1;
        assert!(src.contains(&format!("#define HG_EMITTER_ALL 0x{all:x}u")));
        assert!(src.contains(&format!(
            "#define HG_ENV_EMITTERS 0x{:x}u",
            mask(|e| e.environment)
        )));
        assert!(!src.contains(";;"), "a generated statement ends twice");
    }

    #[test]
    fn records_lie_in_handle_order_in_16_byte_slots() {
        use crate::desc::xml;
        use crate::scene::build_scene;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
        let desc = xml::load_file(&root.join("cbox.xml"), &[("res".into(), "8".into())]).unwrap();
        let mut setup = build_scene(&desc).unwrap();
        // one of each kind that needs no image: the slots of several sizes
        let more = [
            ("point", super::super::tag::POINT),
            ("spot", super::super::tag::SPOT),
            ("constant", super::super::tag::CONSTANT),
        ];
        let mut emitters = setup.scene.emitters.to_vec();
        for (name, tag) in more {
            let (e, _) = super::super::test_util::build_one(name, &[]).unwrap();
            assert_eq!(e.tag(), tag);
            emitters.push(e);
        }
        setup.scene.emitters = std::sync::Arc::new(emitters);
        let at = RecordCtx {
            image_offsets: &[],
            dist2d: &[],
        };
        let (refs, blob) = flatten(&setup.scene.emitters, &at);
        assert_eq!(refs.len(), setup.scene.emitters.len());
        let mut off = 0;
        for (r, e) in refs.iter().zip(setup.scene.emitters.iter()) {
            assert_eq!((r.kind, r.offset as usize), (e.tag(), off));
            let words = e.record_words(&at);
            assert_eq!(blob.words[off..off + words.len()], words[..]);
            assert_eq!(words.len(), REGISTRY[r.kind as usize].slot_words);
            off += words.len();
        }
        assert_eq!(off, blob.words.len());
    }
}
