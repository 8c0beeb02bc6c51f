//! Reference cycles between scene objects (`<ref>` back to an object that is being
//! built) must be an error naming every location in the cycle, not a builder that
//! recurses until the stack overflows.

use super::load_string;
use crate::scene::build_scene;

/// The error building `xml` gives, asserting it names a cycle.
fn cycle_error(xml: &str) -> String {
    let desc = match load_string(xml, &[]) {
        Ok(d) => d,
        Err(e) => panic!("the file itself is valid, got: {e}"),
    };
    let e = match build_scene(&desc) {
        Ok(_) => panic!("a scene with a reference cycle was built"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("cycle"), "{e}");
    e
}

#[test]
fn a_texture_referencing_itself_names_both_locations() {
    let e = cycle_error(
        r#"<scene version="3.0.0">
    <texture type="checkerboard" id="t">
        <ref name="color0" id="t"/>
    </texture>
    <shape type="sphere">
        <bsdf type="diffuse"><ref name="reflectance" id="t"/></bsdf>
    </shape>
</scene>"#,
    );
    assert!(
        e.contains("<string>:2:") && e.contains("<string>:3:"),
        "{e}"
    );
}

#[test]
fn a_twosided_bsdf_referencing_itself_names_both_locations() {
    let e = cycle_error(
        r#"<scene version="3.0.0">
    <bsdf type="twosided" id="b">
        <ref id="b"/>
    </bsdf>
    <shape type="sphere"><ref id="b"/></shape>
</scene>"#,
    );
    assert!(
        e.contains("<string>:2:") && e.contains("<string>:3:"),
        "{e}"
    );
}

#[test]
fn two_textures_referencing_each_other_name_both_objects_and_refs() {
    let e = cycle_error(
        r#"<scene version="3.0.0">
    <texture type="checkerboard" id="a">
        <ref name="color0" id="b"/>
    </texture>
    <texture type="checkerboard" id="b">
        <ref name="color1" id="a"/>
    </texture>
    <shape type="sphere">
        <bsdf type="diffuse"><ref name="reflectance" id="a"/></bsdf>
    </shape>
</scene>"#,
    );
    for line in [2, 3, 5, 6] {
        assert!(e.contains(&format!("<string>:{line}:")), "line {line}: {e}");
    }
}

#[test]
fn two_twosided_bsdfs_referencing_each_other_name_both_objects_and_refs() {
    let e = cycle_error(
        r#"<scene version="3.0.0">
    <bsdf type="twosided" id="a">
        <ref id="b"/>
    </bsdf>
    <bsdf type="twosided" id="b">
        <ref id="a"/>
    </bsdf>
    <shape type="sphere"><ref id="a"/></shape>
</scene>"#,
    );
    for line in [2, 3, 5, 6] {
        assert!(e.contains(&format!("<string>:{line}:")), "line {line}: {e}");
    }
}
