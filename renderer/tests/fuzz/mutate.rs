//! Structure-aware mutations of scene files, driven by a seeded generator.

/// SplitMix64: small, fast, and the same sequence on every platform.
pub struct Rng(u64);

impl Rng {
    /// The generator for case `index` of run `seed`.
    pub fn for_case(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Cases larger than this are cut (keeps the fuzzer's own memory bounded).
pub const MAX_CASE_BYTES: usize = 256 << 10;

#[rustfmt::skip]
const TAGS: &[&str] = &[
    "scene", "shape", "bsdf", "texture", "emitter", "integrator", "sensor", "film", "rfilter",
    "sampler", "ref", "float", "integer", "boolean", "string", "rgb", "spectrum", "point",
    "vector", "transform", "translate", "rotate", "scale", "matrix", "lookat", "default",
    "include", "lookAt", "alias", "bogus",
];

/// Plugin types: every registered plugin (from the catalog, so a new plugin is fuzzed
/// without editing this file) except roughplastic (see [`plugin_type`]), and a few that
/// do not exist.
fn types() -> &'static [&'static str] {
    static TYPES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    TYPES.get_or_init(|| {
        let registered = heliograph::catalog::registered();
        let known = registered.iter().map(|p| p.name);
        let mut v: Vec<&'static str> = known.filter(|n| *n != "roughplastic").collect();
        v.extend(["blackbody", "", "nope"]);
        v
    })
}

#[rustfmt::skip]
const ATTRS: &[&str] = &[
    "type", "id", "name", "value", "x", "y", "z", "angle", "origin", "target", "up", "filename",
    "version", "bogus",
];

#[rustfmt::skip]
const NAMES: &[&str] = &[
    "alpha", "alpha_u", "alpha_v", "angle", "beam_width", "bitmap", "bsdf_samples", "center",
    "color0", "color1", "cutoff_angle", "target", "texture", "crop_height", "crop_offset_x", "crop_offset_y", "crop_width", "data",
    "diffuse_reflectance", "direction", "distribution", "emitter_samples", "eta", "ext_ior",
    "face_normals", "far_clip", "filename", "filter_type", "flip_normals", "flip_tex_coords",
    "focal_length", "focus_distance", "fov", "fov_axis", "height", "hide_emitters", "int_ior",
    "intensity", "irradiance", "k", "material", "max_depth", "near_clip", "nonlinear",
    "pixel_format", "position", "radiance", "radius", "raw", "reflectance", "rr_depth",
    "sample_count", "sample_visible", "scale", "seed", "shading_samples",
    "specular_reflectance", "stddev", "to_uv", "to_world", "width", "wrap_mode",
    "component_format", "res", "spp", "base_color", "roughness", "metallic", "spec_trans",
    "diff_trans", "clearcoat", "specular",
];

#[rustfmt::skip]
const NUMBERS: &[&str] = &[
    "nan", "NaN", "inf", "-inf", "infinity", "1e38", "3.4e38", "3.5e38", "-3.4e38", "1e-45",
    "1e-38", "1e-30", "0", "-0", "-1", "1", "0.5", "2", "3", "4", "16", "255", "256", "1024",
    "4096", "16384", "32768", "32769", "65536", "2147483647", "2147483648", "4294967295",
    "4294967296", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e300",
    "1e-300", "", " ", "abc", "1,2", "1 2 3", "1, nan, 3", "0,0,0", "1e38,1e38,1e38",
    "-1e38,0,0", "1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1", "1 2 3 4 5 6 7 8 9", "$fuzz", "$nope", "$",
    "true", "false", "TRUE", "rgb", "rgba", "x", "y", "smooth", "beckmann", "ggx",
    "400:1.5, 700:1.4", "&amp;", "&lt;", "&#0;", "&#x110000;", "&lol;",
];

#[rustfmt::skip]
const FILES: &[&str] = &[
    "ok.xml", "object.xml", "bad.xml", "inc_a.xml", "case.xml", "missing.xml", "", "/dev/zero",
    "/", "../assets/textures/seed_texture.png", "../assets/envmaps/sky.exr",
    "../assets/meshes/torus.obj", "../assets/meshes/icosphere.ply",
    "../assets/meshes/torus.obj/x", "../scenes/case.xml",
];

/// One mutated case from `seeds` (non-empty).
pub fn generate(seeds: &[String], rng: &mut Rng) -> String {
    let mut text = rng.pick(seeds).clone();
    let n = match rng.below(4) {
        0 => 2 + rng.below(4),
        _ => 1,
    };
    for _ in 0..n {
        text = mutate(&text, seeds, rng);
        if text.len() > MAX_CASE_BYTES {
            let mut cut = MAX_CASE_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
    }
    text
}

/// Byte spans of the tags (`<...>`) in `text`.
fn tag_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match c {
            '<' => start = Some(i),
            '>' => {
                if let Some(s) = start.take() {
                    spans.push((s, i + 1));
                }
            }
            _ => {}
        }
    }
    spans
}

/// Byte spans of the attribute values (between quotes inside a tag), with the
/// attribute's name.
fn value_spans<'t>(text: &'t str, tags: &[(usize, usize)]) -> Vec<(usize, usize, &'t str)> {
    let mut out = Vec::new();
    for &(s, e) in tags {
        let tag = &text[s..e];
        let mut open = None;
        for (i, c) in tag.char_indices() {
            if c != '"' {
                continue;
            }
            match open.take() {
                None => open = Some(i + 1),
                Some(o) => {
                    let before = tag[..o - 1].trim_end_matches('=');
                    let start = before.rfind(char::is_whitespace).map_or(0, |k| k + 1);
                    out.push((s + o, s + i, &before[start..]));
                }
            }
        }
    }
    out
}

/// The ids written in `text` (for references that hit something).
fn ids(text: &str) -> Vec<String> {
    text.match_indices("id=\"")
        .filter_map(|(i, m)| {
            let rest = &text[i + m.len()..];
            rest.find('"').map(|e| rest[..e].to_string())
        })
        .take(64)
        .collect()
}

/// A random value for an attribute.
fn value(rng: &mut Rng, text: &str) -> String {
    match rng.below(8) {
        0..=2 => rng.pick(NUMBERS).to_string(),
        3 => format!("{}", (rng.next() as i64) >> rng.below(64)),
        4 => format!("{:e}", f64::from_bits(rng.next())),
        5 => {
            let v: Vec<String> = (0..1 + rng.below(4))
                .map(|_| rng.pick(NUMBERS).to_string())
                .collect();
            v.join(", ")
        }
        6 => rng.pick(FILES).to_string(),
        _ => some_id(rng, text),
    }
}

/// A value that suits attribute `attr` most of the time, so that the case gets past
/// the parser into the plugins; any value otherwise.
fn value_for(attr: &str, rng: &mut Rng, text: &str) -> String {
    if rng.chance(0.25) {
        return value(rng, text);
    }
    match attr {
        "name" => rng.pick(NAMES).to_string(),
        "type" => plugin_type(rng).to_string(),
        "id" => some_id(rng, text),
        "filename" => rng.pick(FILES).to_string(),
        "version" => rng
            .pick(&["3.0.0", "2.1.0", "0.6.0", "0.5", "99.0.0", "-1.0.0"])
            .to_string(),
        _ => value(rng, text),
    }
}

/// A plugin type. roughplastic tabulates its albedo when built (about 0.4 s), so it
/// is drawn rarely, or it would take most of the fuzzer's time.
fn plugin_type(rng: &mut Rng) -> &'static str {
    match rng.chance(0.01) {
        true => "roughplastic",
        false => rng.pick::<&str>(types()),
    }
}

/// An id written in `text`, or a name when there is none.
fn some_id(rng: &mut Rng, text: &str) -> String {
    match ids(text) {
        v if v.is_empty() => rng.pick(NAMES).to_string(),
        v => rng.pick(&v).clone(),
    }
}

/// A random element to insert.
fn element(rng: &mut Rng, text: &str) -> String {
    match rng.below(9) {
        0 => format!("<ref id=\"{}\"/>", some_id(rng, text)),
        1 => format!(
            "<ref name=\"{}\" id=\"{}\"/>",
            rng.pick(NAMES),
            some_id(rng, text)
        ),
        2 => format!("<include filename=\"{}\"/>", rng.pick(FILES)),
        3 => format!(
            "<default name=\"{}\" value=\"{}\"/>",
            rng.pick(NAMES),
            value(rng, text)
        ),
        4 => format!(
            "<{} name=\"{}\" value=\"{}\"/>",
            rng.pick(&[
                "float", "integer", "boolean", "string", "rgb", "spectrum", "point", "vector"
            ]),
            rng.pick(NAMES),
            value(rng, text)
        ),
        5 => format!(
            "<transform name=\"{}\"><{} value=\"{}\" x=\"{}\" angle=\"{}\"/></transform>",
            rng.pick(NAMES),
            rng.pick(&["translate", "rotate", "scale", "matrix", "lookat"]),
            value(rng, text),
            value(rng, text),
            value(rng, text)
        ),
        6 => format!(
            "<{} type=\"{}\" id=\"{}\"/>",
            rng.pick(TAGS),
            plugin_type(rng),
            rng.pick(NAMES)
        ),
        7 => format!(
            "<{} type=\"{}\">{}</{0}>",
            rng.pick(&["shape", "bsdf", "texture", "emitter", "film", "sampler", "rfilter"]),
            plugin_type(rng),
            element(rng, text)
        ),
        _ => format!(
            "<{} type=\"{}\" name=\"{}\"/>",
            rng.pick(&["texture", "bsdf", "rfilter", "film", "sampler", "emitter"]),
            plugin_type(rng),
            rng.pick(NAMES)
        ),
    }
}

/// Replaces `text[s..e]` by `with`.
fn splice(text: &str, s: usize, e: usize, with: &str) -> String {
    format!("{}{}{}", &text[..s], with, &text[e..])
}

/// Spans of whole elements (start tag to matching end tag, or an empty-element tag),
/// so that moving them keeps the document well formed.
fn element_spans(text: &str, tags: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open = Vec::new();
    for &(s, e) in tags {
        let tag = &text[s..e];
        if tag.starts_with("<?") || tag.starts_with("<!") {
            continue;
        }
        if tag.starts_with("</") {
            if let Some(o) = open.pop() {
                out.push((o, e));
            }
        } else if tag.ends_with("/>") {
            out.push((s, e));
        } else {
            open.push(s);
        }
    }
    out
}

/// A place where an element may go: just after a start tag or after an element.
fn insertion_point(text: &str, tags: &[(usize, usize)], rng: &mut Rng) -> usize {
    let (s, e) = *rng.pick(tags);
    match text[s..e].starts_with("</") {
        true => s,
        false => e,
    }
}

/// One mutation of `text`: mostly well-formed edits (whole elements, attribute
/// values), sometimes raw ones.
fn mutate(text: &str, seeds: &[String], rng: &mut Rng) -> String {
    let tags = tag_spans(text);
    let elements = element_spans(text, &tags);
    if tags.is_empty() || elements.is_empty() {
        return element(rng, text);
    }
    let (s, e) = *rng.pick(&elements);
    match rng.below(40) {
        0..=5 => splice(text, s, e, ""),
        6..=10 => {
            let at = insertion_point(text, &tags, rng);
            splice(text, at, at, &text[s..e])
        }
        11..=20 => match value_spans(text, &tags) {
            v if v.is_empty() => text.to_string(),
            v => {
                let (vs, ve, attr) = *rng.pick(&v);
                splice(text, vs, ve, &value_for(attr, rng, text))
            }
        },
        21..=26 => {
            let at = insertion_point(text, &tags, rng);
            splice(text, at, at, &element(rng, text))
        }
        27 | 28 => rename(text, s, e, rng),
        29 | 30 => add_attribute(text, s, e, rng),
        31 => nest(text, s, e, rng),
        32 | 33 => {
            let other = rng.pick(seeds);
            let oe = element_spans(other, &tag_spans(other));
            let at = insertion_point(text, &tags, rng);
            match oe.is_empty() {
                true => text.to_string(),
                false => {
                    let (os, oend) = *rng.pick(&oe);
                    splice(text, at, at, &other[os..oend])
                }
            }
        }
        34 => bytes(text, rng),
        35 => {
            let (ts, te) = *rng.pick(&tags);
            splice(text, ts, te, "")
        }
        36 => {
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text[..cut].to_string()
        }
        _ => match value_spans(text, &tags) {
            v if v.is_empty() => text.to_string(),
            v => {
                let (vs, ve, _) = *rng.pick(&v);
                let huge = rng.pick(NUMBERS).repeat(1 + rng.below(2000));
                splice(text, vs, ve, &huge)
            }
        },
    }
}

/// Renames the element at `s..e` (start and end tag alike) or one of its attributes.
fn rename(text: &str, s: usize, e: usize, rng: &mut Rng) -> String {
    let tag_end = text[s..e].find('>').map_or(e, |i| s + i + 1);
    let tag = &text[s..tag_end];
    let name_len = tag[1..]
        .find(|c: char| c.is_whitespace() || c == '/' || c == '>')
        .unwrap_or(tag.len() - 1);
    if rng.chance(0.5) || !tag.contains('=') {
        let new = *rng.pick(TAGS);
        let old = &tag[1..1 + name_len];
        let body = &text[tag_end..e];
        let body = match body.strip_suffix(&format!("</{old}>")) {
            Some(inner) => format!("{inner}</{new}>"),
            None => body.to_string(),
        };
        return format!(
            "{}<{new}{}{body}{}",
            &text[..s],
            &tag[1 + name_len..],
            &text[e..]
        );
    }
    let eq = tag.find('=').unwrap_or(0);
    let attr_start = tag[..eq].rfind(char::is_whitespace).map_or(eq, |i| i + 1);
    splice(text, s + attr_start, s + eq, rng.pick::<&str>(ATTRS))
}

/// Adds an attribute (maybe a duplicate or an unknown one) to the tag at `s..e`.
fn add_attribute(text: &str, s: usize, e: usize, rng: &mut Rng) -> String {
    let tag = &text[s..e];
    if tag.starts_with("</") || tag.starts_with("<?") || tag.starts_with("<!") {
        return text.to_string();
    }
    let at = s + tag.find(char::is_whitespace).unwrap_or(tag.len() - 1);
    let attr = format!(" {}=\"{}\"", rng.pick(ATTRS), value(rng, text));
    splice(text, at, at, &attr)
}

/// Wraps the element at `s..e` in up to 300 nested objects.
fn nest(text: &str, s: usize, e: usize, rng: &mut Rng) -> String {
    let depth = match rng.below(3) {
        0 => 1 + rng.below(4),
        1 => 120 + rng.below(16),
        _ => 1 + rng.below(300),
    };
    let kind = rng.pick(&["bsdf", "texture", "shape"]);
    let ty = plugin_type(rng);
    let open = format!("<{kind} type=\"{ty}\">").repeat(depth);
    let close = format!("</{kind}>").repeat(depth);
    format!("{}{open}{}{close}{}", &text[..s], &text[s..e], &text[e..])
}

/// Raw edits: a random byte, a control character or a multi-byte character.
fn bytes(text: &str, rng: &mut Rng) -> String {
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let ins = match rng.below(6) {
        0 => "\u{0}".to_string(),
        1 => "\u{feff}".to_string(),
        2 => "é".to_string(),
        3 => "\r\n".to_string(),
        4 => "]]>".to_string(),
        _ => char::from_u32(0x20 + rng.below(0x5f) as u32).map_or(String::new(), String::from),
    };
    splice(text, at, at, &ins)
}
