//! Every error path of the XML parser, each with the line it must report.

use super::tests::{err_at, fixture, scene};
use super::{load_file, load_string};

#[test]
fn include_errors_name_the_right_file_and_line() {
    let e = load_file(&fixture("include_bad_value.xml"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("parts/bad_value.xml:4:") && e.contains("\"abc\""),
        "{e}"
    );
    let e = load_file(&fixture("include_bad_xml.xml"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("parts/malformed.xml:3:") && e.contains("malformed XML"),
        "{e}"
    );
    let e = load_file(&fixture("include_missing.xml"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("include_missing.xml:3:") && e.contains("\"does_not_exist.xml\" not found"),
        "{e}"
    );
    let e = load_file(&fixture("cycle_a.xml"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("include cycle") && e.contains("cycle_b.xml:3:"),
        "{e}"
    );
    let e = load_file(&fixture("self_include.xml"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("include cycle") && e.contains("self_include.xml:2:"),
        "{e}"
    );
    let e = load_file(&fixture("no_such_scene.xml"), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no_such_scene.xml"), "{e}");
}

#[test]
fn malformed_xml_reports_its_position() {
    let e = err_at(
        "<scene version=\"3.0.0\">\n  <bsdf type=\"diffuse\">\n  </bdsf>\n</scene>",
        3,
    );
    assert!(e.contains("malformed XML"), "{e}");
    let e = err_at(
        "<scene>\n<float name=\"a\" value=\"1\" value=\"2\"/>\n</scene>",
        2,
    );
    assert!(e.contains("malformed XML"), "{e}");
    err_at("", 1);
    // a truncated file: the error is where the text stops, not at 1:1
    let e = err_at(
        "<scene version=\"3.0.0\">\n  <bsdf type=\"diffuse\"/>\n  <shape",
        3,
    );
    assert!(e.starts_with("<string>:3:9: malformed XML"), "{e}");
}

#[test]
fn structural_errors() {
    let e = err_at(&scene("\n  <shap type=\"sphere\"/>"), 3);
    assert!(
        e.contains("unknown tag <shap>") && e.contains("shape, bsdf") && e.contains("rgb"),
        "{e}"
    );
    let e = err_at("<bsdf type=\"diffuse\"/>", 1);
    assert!(e.contains("root element must be <scene>"), "{e}");
    let e = err_at(&scene("<shape type=\"cube\"><scene/></shape>"), 2);
    assert!(e.contains("only be the root"), "{e}");
    let e = err_at(
        &scene("<shape type=\"cube\">\n<translate x=\"1\"/></shape>"),
        3,
    );
    assert!(e.contains("only allowed inside <transform>"), "{e}");
    let e = err_at(
        &scene("<transform name=\"t\">\n\n<float name=\"a\" value=\"1\"/></transform>"),
        4,
    );
    assert!(
        e.contains("not allowed inside <transform>") && e.contains("lookat"),
        "{e}"
    );
    let e = err_at(&scene("<shape type=\"cube\">\n  stray words\n</shape>"), 3);
    assert!(e.contains("unexpected text \"stray words\""), "{e}");
    let e = err_at(&scene("<float name=\"a\" value=\"1\" vlaue=\"2\"/>"), 2);
    assert!(
        e.contains("unexpected attribute \"vlaue\"") && e.contains("allowed: name, value"),
        "{e}"
    );
    let e = err_at(&scene("\n<shape id=\"x\"/>"), 3);
    assert!(
        e.contains("<shape> is missing the \"type\" attribute"),
        "{e}"
    );
    let e = err_at(&scene("<ref name=\"bsdf\"/>"), 2);
    assert!(e.contains("<ref> is missing the \"id\""), "{e}");
    let e = err_at(&scene("<bsdf type=\"diffuse\" id=\"_x\"/>"), 2);
    assert!(e.contains("leading underscore"), "{e}");
    let e = err_at(&scene("<include/>"), 2);
    assert!(e.contains("missing the \"filename\""), "{e}");
    let e = err_at(&scene("<default name=\"spp\"/>"), 2);
    assert!(e.contains("<default> is missing the \"value\""), "{e}");
}

#[test]
fn missing_attributes_and_duplicates() {
    let e = err_at(
        &scene("<shape type=\"cube\">\n  <float value=\"1\"/>\n</shape>"),
        3,
    );
    assert!(
        e.contains("<float> is missing the \"name\" attribute"),
        "{e}"
    );
    let e = err_at(&scene("\n\n<integer name=\"n\"/>"), 4);
    assert!(
        e.contains("<integer> is missing the \"value\" attribute"),
        "{e}"
    );
    let e = err_at(&scene("<float name=\"_arg_0\" value=\"1\"/>"), 2);
    assert!(e.contains("leading underscore"), "{e}");
    let e = err_at(
        &scene("<shape type=\"cube\">\n<float name=\"r\" value=\"1\"/>\n<rgb name=\"r\" value=\"1\"/></shape>"),
        4,
    );
    assert!(
        e.contains("\"r\"") && e.contains("twice") && e.contains("<string>:3:"),
        "{e}"
    );
}

#[test]
fn unparsable_values_say_what_is_accepted() {
    let cases = [
        (
            "<float name=\"a\" value=\"abc\"/>",
            "could not parse \"abc\" as a number",
        ),
        (
            "<integer name=\"a\" value=\"1.5\"/>",
            "\"1.5\" as an integer (expected a whole number",
        ),
        (
            "<boolean name=\"a\" value=\"yes\"/>",
            "accepted: \"true\" or \"false\"",
        ),
        (
            "<rgb name=\"a\" value=\"0.1, x, 0.3\"/>",
            "\"x\" as a number",
        ),
        (
            "<point name=\"a\" x=\"1\" y=\"two\"/>",
            "\"two\" as a number",
        ),
    ];
    for (body, msg) in cases {
        let e = err_at(&scene(&format!("\n{body}")), 3);
        assert!(
            e.contains(msg) && e.contains("parameter \"a\""),
            "{body}: {e}"
        );
    }
}

#[test]
fn wrong_component_counts() {
    let cases = [
        (
            "<rgb name=\"a\" value=\"1, 2\"/>",
            "expected 1 or 3 numbers, got 2",
        ),
        (
            "<point name=\"a\" value=\"1 2 3 4\"/>",
            "expected 1 or 3 numbers, got 4",
        ),
        ("<vector name=\"a\" value=\"1\" x=\"2\"/>", "cannot combine"),
        (
            "<spectrum name=\"a\" value=\"1 2\"/>",
            "\"1\" is not a wavelength:value pair",
        ),
        (
            "<transform name=\"a\"><matrix value=\"1 2 3\"/></transform>",
            "expected 16 or 9 numbers, got 3",
        ),
        (
            "<transform name=\"a\"><lookat origin=\"1 2\" target=\"0 0 0\"/></transform>",
            "\"origin\": expected 3 numbers",
        ),
        (
            "<transform name=\"a\"><rotate x=\"1\"/></transform>",
            "missing the \"angle\"",
        ),
    ];
    for (body, msg) in cases {
        let e = err_at(&scene(&format!("\n{body}")), 3);
        assert!(e.contains(msg), "{body}: {e}");
    }
}

#[test]
fn non_finite_numbers_are_rejected() {
    for body in [
        "<float name=\"a\" value=\"nan\"/>",
        "<float name=\"a\" value=\"inf\"/>",
        "<float name=\"a\" value=\"1e300\"/>",
        "<rgb name=\"a\" value=\"0.5, NaN, 0.5\"/>",
        "<point name=\"a\" value=\"-inf, 0, 0\"/>",
        "<vector name=\"a\" z=\"infinity\"/>",
        "<spectrum name=\"a\" value=\"nan\"/>",
        "<transform name=\"a\"><translate x=\"nan\"/></transform>",
        "<transform name=\"a\"><rotate z=\"1\" angle=\"inf\"/></transform>",
    ] {
        let e = err_at(&scene(&format!("\n{body}")), 3);
        assert!(
            e.contains("not a finite number") && e.contains("\"a\""),
            "{body}: {e}"
        );
    }
}

#[test]
fn degenerate_transforms_are_rejected() {
    let cases = [
        (
            "<matrix value=\"1 0 0 0  0 1 0 0  0 0 0 0  0 0 0 1\"/>",
            "singular",
        ),
        ("<matrix value=\"1 2 3  2 4 6  0 0 1\"/>", "singular"),
        ("<scale y=\"0\"/>", "must be non-zero"),
        ("<rotate angle=\"30\"/>", "axis must be non-zero"),
        ("<lookat origin=\"1,1,1\" target=\"1,1,1\"/>", "same point"),
        (
            "<lookat origin=\"0,0,0\" target=\"0,0,1\" up=\"0,0,2\"/>",
            "parallel",
        ),
        (
            "<translate x=\"1e30\"/><scale value=\"1e10\"/>",
            "overflows",
        ),
        ("<translate w=\"1\"/>", "unexpected attribute \"w\""),
    ];
    for (ops, msg) in cases {
        let e = err_at(
            &scene(&format!("<transform name=\"to_world\">\n{ops}</transform>")),
            3,
        );
        assert!(e.contains(msg), "{ops}: {e}");
    }
}

#[test]
fn bad_spectra_name_the_parameter_and_place() {
    let e = err_at(
        &scene("<spectrum name=\"eta\" value=\"700:1.5, 400:1.4\"/>"),
        2,
    );
    assert!(e.contains("\"eta\"") && e.contains("must increase"), "{e}");
    let e = err_at(&scene("<spectrum name=\"eta\" filename=\"au.spd\"/>"), 2);
    assert!(e.contains("spectrum file \"au.spd\" not found"), "{e}");
    let e = err_at(
        &scene("<spectrum name=\"eta\" value=\"1\" filename=\"au.spd\"/>"),
        2,
    );
    assert!(e.contains("either a \"value\" or a \"filename\""), "{e}");
    // a malformed file: the message names the file and its line
    let dir = crate::textures::image_file::tests::scratch("bad_spd");
    std::fs::write(dir.join("bad.spd"), "400 0.5\n500 x\n").unwrap();
    std::fs::write(
        dir.join("s.xml"),
        "<scene version=\"3.0.0\">\n<spectrum name=\"k\" filename=\"bad.spd\"/>\n</scene>",
    )
    .unwrap();
    let e = load_file(&dir.join("s.xml"), &[]).unwrap_err().to_string();
    assert!(
        e.contains("s.xml:2:") && e.contains("bad.spd: line 2"),
        "{e}"
    );
}

#[test]
fn undefined_parameter_names_it_and_its_line() {
    let e = err_at(
        &scene("<default name=\"spp\" value=\"4\"/>\n<integer name=\"n\" value=\"$sp\"/>"),
        3,
    );
    assert!(
        e.contains("undefined parameter \"$sp\"") && e.contains("-D sp="),
        "{e}"
    );
    // A default is only visible after its declaration, as in Mitsuba.
    let e = err_at(
        &scene("<integer name=\"n\" value=\"$late\"/>\n<default name=\"late\" value=\"1\"/>"),
        2,
    );
    assert!(e.contains("\"$late\""), "{e}");
    // Parameters are substituted in any attribute, before the value is parsed.
    let defs = vec![("v".to_string(), "abc".to_string())];
    let e = load_string(&scene("<float name=\"x\" value=\"$v\"/>"), &defs)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("<string>:2:") && e.contains("\"abc\""), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let n = 5000;
    let xml = format!(
        "<scene>{}{}</scene>",
        "<bsdf type=\"blend\">".repeat(n),
        "</bsdf>".repeat(n)
    );
    let e = load_string(&xml, &[]).unwrap_err().to_string();
    assert!(e.contains("nested more than"), "{e}");
}

/// A "billion laughs" document that roxmltree's own loop detector lets through: each
/// top-level `&b;` expands to 255 × 4 KiB, so the 20 000 of them would need 20 GiB.
fn entity_bomb() -> String {
    let a = "x".repeat(4096);
    let b = "&a;".repeat(255);
    let refs = "&b;".repeat(20_000);
    format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE scene [\n<!ENTITY a \"{a}\">\n\
         <!ENTITY b \"{b}\">\n]>\n<scene version=\"3.0.0\">\n\
         <string name=\"s\" value=\"{refs}\"/>\n</scene>"
    )
}

#[test]
fn entity_expansion_is_refused_with_the_file_and_line() {
    let t0 = std::time::Instant::now();
    let e = load_string(&entity_bomb(), &[]).unwrap_err().to_string();
    assert!(
        e.starts_with("<string>:3:") && e.contains("entity declarations"),
        "{e}"
    );
    assert!(t0.elapsed().as_secs() < 5, "took {:?}", t0.elapsed());
    let dir = std::env::temp_dir().join(format!("hg_bomb_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bomb.xml");
    std::fs::write(&path, entity_bomb()).unwrap();
    let e = load_file(&path, &[]).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(e.contains("bomb.xml:3:") && e.contains("<!ENTITY"), "{e}");
}

#[test]
fn a_doctype_without_entities_is_skipped_as_mitsuba_does() {
    let xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE scene SYSTEM \"scene.dtd\">\n\
               <scene version=\"3.0.0\"><float name=\"a\" value=\"1\"/></scene>";
    load_string(xml, &[]).unwrap();
    // An entity that is not declared is an error, not left as text.
    let e = err_at(&scene("<string name=\"s\" value=\"&lol;\"/>"), 2);
    assert!(e.contains("malformed XML"), "{e}");
}

#[test]
fn nesting_a_hundred_thousand_deep_is_an_error_not_a_crash() {
    let n = 100_000;
    let xml = format!(
        "<scene>{}{}</scene>",
        "<bsdf type=\"blend\">".repeat(n),
        "</bsdf>".repeat(n)
    );
    let t0 = std::time::Instant::now();
    let e = load_string(&xml, &[]).unwrap_err().to_string();
    assert!(e.contains("nested more than 128 levels"), "{e}");
    assert!(t0.elapsed().as_secs() < 5, "took {:?}", t0.elapsed());
}

#[test]
fn too_many_nodes_is_a_clear_error() {
    let n = super::elem::MAX_NODES as usize + 1;
    let xml = format!("<scene>{}</scene>", "<!---->".repeat(n));
    let e = load_string(&xml, &[]).unwrap_err().to_string();
    assert!(
        e.starts_with("<string>: the document has more than 4194304 XML nodes"),
        "{e}"
    );
}

#[cfg(unix)]
#[test]
fn an_endless_file_is_refused_at_the_size_limit() {
    let e = load_file(std::path::Path::new("/dev/zero"), &[])
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/dev/zero: larger than 256 MiB"), "{e}");
}

#[test]
fn a_file_missing_everywhere_lists_each_place_looked() {
    let path = fixture("search/scenes/set/main.xml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("meshes/m.obj", "meshes/absent.obj");
    let dir = crate::textures::image_file::tests::scratch("search_missing");
    let copy = dir.join("main.xml");
    std::fs::write(&copy, text).unwrap();
    // the relative <path>s now point nowhere: copy the folders' absolute paths in
    let root = path.parent().unwrap();
    let text = std::fs::read_to_string(&copy)
        .unwrap()
        .replace("../../", &format!("{}/../../", root.display()))
        .replace("fragments/", &format!("{}/fragments/", root.display()));
    std::fs::write(&copy, text).unwrap();
    let d = load_file(&copy, &[]).unwrap();
    let e = crate::scene::build_scene(&d).unwrap_err().to_string();
    assert!(e.contains("main.xml:6:"), "{e}");
    assert!(
        e.contains("\"meshes/absent.obj\" not found")
            && e.contains("search_missing/meshes/absent.obj")
            && e.contains("common/meshes/absent.obj")
            && e.contains("other/meshes/absent.obj"),
        "{e}"
    );
}

#[test]
fn unknown_names_suggest_the_nearest_known_one_with_their_place() {
    let e = err_at(&scene("<bdsf type=\"diffuse\"/>"), 2);
    assert!(
        e.contains("unknown tag <bdsf>; did you mean \"bsdf\"?"),
        "{e}"
    );
    let d = load_string(
        &scene("<shape type=\"sphere\">\n  <bsdf type=\"difuse\"/>\n</shape>"),
        &[],
    )
    .unwrap();
    let e = crate::scene::build_scene(&d).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "<string>:3:3: unknown bsdf plugin \"difuse\"; did you mean \"diffuse\"? (known: "
        ),
        "{e}"
    );
    let d = load_string(&scene("<shape type=\"spherre\"/>"), &[]).unwrap();
    let e = crate::scene::build_scene(&d).unwrap_err().to_string();
    assert!(e.contains("\"spherre\"; did you mean \"sphere\"?"), "{e}");
}

#[test]
fn an_unknown_define_is_an_error_listing_the_defaults_with_a_suggestion() {
    let xml = r#"<scene version="3.0.0">
        <default name="spp" value="4"/>
        <default name="res" value="8"/>
        <integrator type="path"><integer name="max_depth" value="$depth"/></integrator>
    </scene>"#;
    // $depth has no default: every load defines it
    let defs = |k: &str| {
        vec![
            (k.to_string(), "2".to_string()),
            ("depth".into(), "3".into()),
        ]
    };
    // declared defaults and names the file uses are accepted
    for ok in ["spp", "res", "depth"] {
        load_string(xml, &defs(ok)).unwrap();
    }
    let e = load_string(xml, &defs("sppp")).unwrap_err().to_string();
    assert!(
        e.contains("unknown parameter \"sppp\"")
            && e.contains("the scene's parameters: spp, res")
            && e.contains("did you mean \"spp\"?"),
        "{e}"
    );
    let e = load_string(xml, &defs("dep")).unwrap_err().to_string();
    assert!(
        e.contains("unknown parameter \"dep\""),
        "a prefix of $depth is not it: {e}"
    );
    let bare = r#"<scene version="3.0.0"/>"#;
    let e = load_string(bare, &[("spp".into(), "2".into())])
        .unwrap_err()
        .to_string();
    assert!(e.contains("declares no <default>"), "{e}");
}
