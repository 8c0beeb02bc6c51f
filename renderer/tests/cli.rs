//! The `heliograph` binary: renders, reports errors with file:line and a
//! non-zero exit code, and never leaves a partial output file.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_heliograph"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hg-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SCENE: &str = r#"<scene version="3.0.0">
    <default name="res" value="16"/>
    <integrator type="direct"/>
    <emitter type="constant"/>
    <shape type="sphere"/>
    <sensor type="perspective">
        <transform name="to_world"><lookat origin="0,0,4" target="0,0,0" up="0,1,0"/></transform>
        <film type="hdrfilm"><integer name="width" value="$res"/><integer name="height" value="$res"/></film>
    </sensor>
</scene>"#;

#[test]
fn renders_png_and_exr_with_a_summary_line() {
    let d = tmpdir("ok");
    let scene = d.join("s.xml");
    std::fs::write(&scene, SCENE).unwrap();
    for ext in ["png", "exr"] {
        let out = d.join(format!("o.{ext}"));
        let o = bin()
            .args([
                "render",
                scene.to_str().unwrap(),
                "--spp",
                "2",
                "-q",
                "-D",
                "res=8",
                "-o",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("8x8") && stdout.contains("2 spp") && stdout.contains("Msamples/s"),
            "{stdout}"
        );
        let img = heliograph::io::read_image(&out).unwrap();
        assert_eq!((img.width, img.height), (8, 8));
    }
}

#[test]
fn bad_input_fails_with_location_and_leaves_no_output() {
    let d = tmpdir("bad");
    let cases = [
        (
            "typo.xml",
            SCENE.replace(
                "<shape type=\"sphere\"/>",
                "<shape type=\"sphere\"><float name=\"radiuss\" value=\"1\"/></shape>",
            ),
            "radiuss",
        ),
        (
            "unknown.xml",
            SCENE.replace("type=\"sphere\"", "type=\"spheer\""),
            "spheer",
        ),
        (
            "malformed.xml",
            SCENE.replace("</scene>", ""),
            "malformed.xml",
        ),
        (
            "undefined.xml",
            SCENE.replace(
                "$res\"/><integer name=\"height\"",
                "$nope\"/><integer name=\"height\"",
            ),
            "nope",
        ),
    ];
    for (name, text, needle) in cases {
        let scene = d.join(name);
        std::fs::write(&scene, text).unwrap();
        let out = d.join(format!("{name}.exr"));
        let o = bin()
            .args(["render", scene.to_str().unwrap(), "-q", "-o"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name} should fail");
        assert!(err.contains(needle) && err.contains(name), "{name}: {err}");
        assert!(!out.exists(), "{name}: no output file on error");
    }
    let o = bin()
        .args(["render", "/nonexistent/scene.xml"])
        .output()
        .unwrap();
    assert!(
        !o.status.success()
            && String::from_utf8_lossy(&o.stderr).contains("/nonexistent/scene.xml")
    );
    let scene = d.join("ok.xml");
    std::fs::write(&scene, SCENE).unwrap();
    let o = bin()
        .args(["render", scene.to_str().unwrap(), "--spp", "0", "-q", "-o"])
        .arg(d.join("z.exr"))
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("spp"));
    let o = bin()
        .args(["render", scene.to_str().unwrap(), "--backend", "cuda", "-q"])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("CUDA"));
    let o = bin()
        .args(["render", scene.to_str().unwrap(), "-D", "novalue", "-q"])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("NAME=VALUE"));
}

#[test]
fn info_lists_objects_and_parameters() {
    let d = tmpdir("info");
    let scene = d.join("s.xml");
    std::fs::write(&scene, SCENE).unwrap();
    let o = bin()
        .args(["info", scene.to_str().unwrap()])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        s.contains("shape \"sphere\"")
            && s.contains("film \"hdrfilm\"")
            && s.contains("width = 16"),
        "{s}"
    );
}

#[test]
fn plugins_lists_every_registered_plugin_with_its_parameters_and_prints_manuals() {
    let o = bin().arg("plugins").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let list = String::from_utf8_lossy(&o.stdout);
    // `info` without a scene is the same listing
    let info = bin().arg("info").output().unwrap();
    assert!(info.status.success());
    assert_eq!(String::from_utf8_lossy(&info.stdout), list);
    let registered = heliograph::catalog::registered();
    for category in [
        "shape",
        "bsdf",
        "texture",
        "emitter",
        "sensor",
        "film",
        "rfilter",
        "sampler",
        "integrator",
    ] {
        let n = registered.iter().filter(|p| p.category == category).count();
        let plural = if n == 1 { "" } else { "s" };
        assert!(
            n > 0 && list.contains(&format!("\n{category} ({n} plugin{plural}):\n")),
            "{category} missing:\n{list}"
        );
    }
    for info in &registered {
        let name = info.name;
        assert!(
            list.contains(&format!("\n  {name} ")),
            "{name} missing:\n{list}"
        );
        for p in info.parameters() {
            assert!(list.contains(&p.name), "{name}.{} missing", p.name);
        }
    }
    // a texture's manual too
    let o = bin().args(["plugins", "checkerboard"]).output().unwrap();
    let manual = String::from_utf8_lossy(&o.stdout);
    assert!(manual.starts_with("texture \"checkerboard\"") && manual.contains("| `color0` |"));
    // a plugin of a category other than bsdf: its manual too
    let o = bin().args(["plugins", "thinlens"]).output().unwrap();
    let manual = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        manual.starts_with("sensor \"thinlens\"")
            && manual.contains("| `aperture_radius` | float |")
            && manual.contains("<sensor type=\"thinlens\">"),
        "{manual}"
    );
    // one plugin's manual: its module doc, with the table and the XML example
    let o = bin().args(["plugins", "roughplastic"]).output().unwrap();
    let manual = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        manual.contains("| `alpha` | float | 0.1 |")
            && manual.contains("<bsdf type=\"roughplastic\">"),
        "{manual}"
    );
    // Mitsuba's name of the differentiable path tracer: path's manual, saying so
    let o = bin().args(["plugins", "prb"]).output().unwrap();
    let manual = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        manual.starts_with("\"prb\" is another name of integrator \"path\"")
            && manual.contains("| `max_depth` |"),
        "{manual}"
    );
    // a misspelt name is an error with a suggestion
    let o = bin().args(["plugins", "roughplastik"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("did you mean \"roughplastic\""), "{err}");
    // an emitter's manual
    let o = bin().args(["plugins", "spot"]).output().unwrap();
    let manual = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        manual.starts_with("emitter \"spot\"")
            && manual.contains("| `cutoff_angle` | float | 20 |"),
        "{manual}"
    );
}

/// The README's plugin table between its two markers.
fn readme_plugin_table(readme: &str) -> Option<&str> {
    let start = "<!-- plugin table: generated by `heliograph plugins --markdown` -->\n";
    let from = readme.find(start)? + start.len();
    let len = readme[from..].find("<!-- end of the plugin table -->")?;
    Some(&readme[from..from + len])
}

#[test]
fn the_readme_plugin_table_is_the_registry_s() {
    let o = bin().args(["plugins", "--markdown"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    assert_eq!(printed, heliograph::catalog::markdown_table());
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let table = readme_plugin_table(&readme).expect("the README's plugin table markers");
    assert!(
        table == printed,
        "README.md's plugin table differs from the registry: paste the output of \
         `heliograph plugins --markdown` between its markers"
    );
    // the comparison has power: a table that lost a row is caught
    let first_row_end = printed.find("|\n| ").unwrap() + 2;
    let second_row_end = first_row_end + printed[first_row_end..].find('\n').unwrap() + 1;
    let lost = format!(
        "{}{}",
        &printed[..first_row_end],
        &printed[second_row_end..]
    );
    let shortened = readme.replace(&printed, &lost);
    assert_ne!(readme_plugin_table(&shortened).unwrap(), printed);
}
