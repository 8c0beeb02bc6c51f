//! End-to-end tests of the XML parser: values, transforms against hand-built
//! matrices, objects and references, parameters, includes (fixture files under
//! `tests/fixtures/xml/`), a Cornell box and legacy files. Shared helpers live
//! here; error paths are in `error_tests.rs`.

use std::path::PathBuf;
use std::sync::Arc;

use glam::Mat4;

use super::{load_file, load_string};
use crate::desc::props::{Entry, Value};
use crate::desc::{Category, ObjectDesc, SceneDesc};
use crate::math::spectrum::Spectrum;
use crate::math::{Transform, Vec3};

pub(super) fn parse(xml: &str) -> SceneDesc {
    match load_string(xml, &[]) {
        Ok(d) => d,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// Wraps `body` in `<scene>`: line 1 is the `<scene>` tag, the body starts on line 2.
pub(super) fn scene(body: &str) -> String {
    format!("<scene version=\"3.0.0\">\n{body}\n</scene>")
}

/// The error message for `xml`, asserting it is located at `<string>:line:`.
pub(super) fn err_at(xml: &str, line: u32) -> String {
    let e = match load_string(xml, &[]) {
        Ok(_) => panic!("expected an error for:\n{xml}"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.starts_with(&format!("<string>:{line}:")),
        "wrong line {line}: {e}"
    );
    e
}

pub(super) fn entry<'a>(o: &'a ObjectDesc, name: &str) -> &'a Entry {
    match o.props.entries().iter().find(|e| e.name == name) {
        Some(e) => e,
        None => panic!("no entry {name} in {:?}", o.props.entries()),
    }
}

pub(super) fn object<'a>(o: &'a ObjectDesc, name: &str) -> &'a Arc<ObjectDesc> {
    match &entry(o, name).value {
        Value::Object(c) => c,
        v => panic!("{name} is {v:?}"),
    }
}

pub(super) fn transform(o: &ObjectDesc, name: &str) -> Transform {
    match entry(o, name).value {
        Value::Transform(t) => t,
        ref v => panic!("{name} is {v:?}"),
    }
}

pub(super) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xml")
        .join(name)
}

/// A 4×4 matrix from rows, built without `Transform`.
pub(super) fn rows(r: [[f32; 4]; 4]) -> Mat4 {
    Mat4::from_cols_array_2d(&r).transpose()
}

pub(super) fn translation(x: f32, y: f32, z: f32) -> Mat4 {
    rows([
        [1., 0., 0., x],
        [0., 1., 0., y],
        [0., 0., 1., z],
        [0., 0., 0., 1.],
    ])
}

pub(super) fn scaling(x: f32, y: f32, z: f32) -> Mat4 {
    rows([
        [x, 0., 0., 0.],
        [0., y, 0., 0.],
        [0., 0., z, 0.],
        [0., 0., 0., 1.],
    ])
}

/// Rodrigues' rotation matrix (right-handed) about unit `(x, y, z)` by `deg` degrees.
pub(super) fn rotation(axis: [f32; 3], deg: f32) -> Mat4 {
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let [x, y, z] = axis.map(|a| a / n);
    let (s, c) = deg.to_radians().sin_cos();
    let k = 1.0 - c;
    rows([
        [c + x * x * k, x * y * k - z * s, x * z * k + y * s, 0.],
        [y * x * k + z * s, c + y * y * k, y * z * k - x * s, 0.],
        [z * x * k - y * s, z * y * k + x * s, c + z * z * k, 0.],
        [0., 0., 0., 1.],
    ])
}

pub(super) fn assert_mat(got: &Transform, want: Mat4) {
    assert!(
        got.m.abs_diff_eq(want, 1e-5),
        "matrix\n{:?}\n!= expected\n{want:?}",
        got.m
    );
    assert!(
        (got.m * got.inv).abs_diff_eq(Mat4::IDENTITY, 1e-4),
        "inverse is not consistent"
    );
}

#[test]
fn property_values() {
    let d = parse(&scene(
        r#"<shape type="sphere">
            <float name="f1" value="1e-3"/>
            <float name="f2" value="-0.5"/>
            <integer name="i" value="-42"/>
            <boolean name="b1" value="true"/>
            <boolean name="b2" value="False"/>
            <string name="s" value="meshes/a b.obj"/>
            <rgb name="c3" value="0.1, 0.2 0.3"/>
            <rgb name="c1" value="0.5"/>
            <spectrum name="sp" value="2.5"/>
            <point name="p" value="1, 2, 3"/>
            <point name="pxy" x="4" z="-1"/>
            <vector name="v" x="0" y="0" z="1"/>
        </shape>"#,
    ));
    let s = object(&d.root, "_arg_0");
    assert_eq!(
        (s.category, s.kind.as_str(), s.loc.line),
        (Category::Shape, "sphere", 2)
    );
    let f = |n: &str| entry(s, n).value.clone();
    assert!(matches!(f("f1"), Value::Float(v) if v == 1e-3));
    assert!(matches!(f("f2"), Value::Float(v) if v == -0.5));
    assert!(matches!(f("i"), Value::Int(-42)));
    assert!(matches!(f("b1"), Value::Bool(true)));
    assert!(matches!(f("b2"), Value::Bool(false)));
    assert!(matches!(f("s"), Value::String(ref v) if v == "meshes/a b.obj"));
    assert!(matches!(f("c3"), Value::Rgb(c) if c == Vec3::new(0.1, 0.2, 0.3)));
    assert!(matches!(f("c1"), Value::Rgb(c) if c == Vec3::splat(0.5)));
    assert!(matches!(f("sp"), Value::Spectrum(Spectrum::Uniform(v)) if v == 2.5));
    assert!(matches!(f("p"), Value::Point(p) if p == Vec3::new(1.0, 2.0, 3.0)));
    assert!(matches!(f("pxy"), Value::Point(p) if p == Vec3::new(4.0, 0.0, -1.0)));
    assert!(matches!(f("v"), Value::Vector(p) if p == Vec3::Z));
    assert_eq!(entry(s, "p").loc.line, 12);
}

#[test]
fn transform_ops_compose_later_after_earlier() {
    let d = parse(&scene(
        r#"<shape type="cube">
            <transform name="to_world">
                <translate x="1" y="2"/>
                <rotate z="1" angle="90"/>
                <scale value="2, 3, 4"/>
                <matrix value="1 0 0 5  0 1 0 0  0 0 1 0  0 0 0 1"/>
            </transform>
        </shape>"#,
    ));
    let t = transform(object(&d.root, "_arg_0"), "to_world");
    let want = translation(5., 0., 0.)
        * scaling(2., 3., 4.)
        * rotation([0., 0., 1.], 90.)
        * translation(1., 2., 0.);
    assert_mat(&t, want);
    // By hand: (0,0,0) -> (1,2,0) -> (-2,1,0) -> (-4,3,0) -> (1,3,0).
    assert!((t.point(Vec3::ZERO) - Vec3::new(1.0, 3.0, 0.0)).length() < 1e-5);
}

#[test]
fn transform_op_forms() {
    let d = parse(&scene(
        r#"<shape type="cube">
            <transform name="a"><scale value="2"/></transform>
            <transform name="b"><scale y="3"/></transform>
            <transform name="c"><rotate value="1, 1, 0" angle="30"/></transform>
            <transform name="d"><translate value="1 2 3"/></transform>
            <transform name="e"><matrix value="0,-1,0, 1,0,0, 0,0,1"/></transform>
            <transform name="f"><lookat origin="0,0,5" target="0 0 0" up="0,1,0"/></transform>
            <transform name="g"/>
            <transform name="h"><rotate x="1" angle="-90"/></transform>
        </shape>"#,
    ));
    let s = object(&d.root, "_arg_0");
    assert_mat(&transform(s, "a"), scaling(2., 2., 2.));
    assert_mat(&transform(s, "b"), scaling(1., 3., 1.));
    assert_mat(&transform(s, "c"), rotation([1., 1., 0.], 30.));
    assert_mat(&transform(s, "d"), translation(1., 2., 3.));
    assert_mat(&transform(s, "e"), rotation([0., 0., 1.], 90.));
    // Mitsuba's look_at: columns (up x dir, dir x left, dir, origin), worked by hand.
    let want = rows([
        [-1., 0., 0., 0.],
        [0., 1., 0., 0.],
        [0., 0., -1., 5.],
        [0., 0., 0., 1.],
    ]);
    assert_mat(&transform(s, "f"), want);
    assert_mat(&transform(s, "g"), Mat4::IDENTITY);
    // -90 degrees about x maps +y to -z (right-handed).
    assert!((transform(s, "h").vector(Vec3::Y) - Vec3::new(0., 0., -1.)).length() < 1e-6);
}

#[test]
fn lookat_without_up_picks_a_perpendicular_one() {
    for (o, t) in [("1,2,3", "4,-1,0"), ("0,0,0", "0,0,-2"), ("0,0,0", "0,3,0")] {
        let xml = scene(&format!(
            r#"<sensor type="perspective"><transform name="to_world">
                <lookat origin="{o}" target="{t}"/></transform></sensor>"#
        ));
        let m = transform(object(&parse(&xml).root, "_arg_0"), "to_world").m;
        let v = |s: &str| {
            let p: Vec<f32> = s.split(',').map(|x| x.parse().unwrap()).collect();
            Vec3::new(p[0], p[1], p[2])
        };
        let (origin, target) = (v(o), v(t));
        let dir = (target - origin).normalize();
        let (x, y, z) = (
            m.x_axis.truncate(),
            m.y_axis.truncate(),
            m.z_axis.truncate(),
        );
        assert!((z - dir).length() < 1e-5, "z axis {z} != {dir}");
        assert!((m.w_axis.truncate() - origin).length() < 1e-5);
        for (a, b) in [(x, y), (y, z), (x, z)] {
            assert!(a.dot(b).abs() < 1e-5);
        }
        assert!((x.length() - 1.0).abs() < 1e-5 && (y.length() - 1.0).abs() < 1e-5);
        assert!((m.determinant() - 1.0).abs() < 1e-4);
    }
}

#[test]
fn huge_but_finite_axes_and_points_give_the_same_rotations() {
    // Lengths of these vectors overflow single precision; the directions do not.
    let xml = scene(
        r#"<transform name="a"><rotate x="3e38" y="3e38" z="3e38" angle="30"/></transform>
        <transform name="b"><lookat origin="3e38,0,0" target="-3e38,0,0" up="0,1,0"/></transform>
        <transform name="c"><lookat origin="0,0,0" target="0,0,1" up="0,3e38,0"/></transform>
        <transform name="d"><lookat origin="-3e38,0,0" target="3e38,0,0"/></transform>"#,
    );
    let d = parse(&xml);
    assert_mat(&transform(&d.root, "a"), rotation([1., 1., 1.], 30.));
    let b = transform(&d.root, "b").m;
    assert!((b.z_axis.truncate() - Vec3::new(-1., 0., 0.)).length() < 1e-6);
    assert_eq!(b.w_axis.truncate(), Vec3::new(3e38, 0., 0.));
    let c = transform(&d.root, "c").m;
    assert!((c.y_axis.truncate() - Vec3::Y).length() < 1e-6);
    let d = transform(&d.root, "d").m;
    assert!((d.z_axis.truncate() - Vec3::X).length() < 1e-6);
}

#[test]
fn nested_objects_names_and_refs() {
    let d = parse(&scene(
        r#"<bsdf type="diffuse" id="mat">
            <texture type="bitmap" name="reflectance">
                <string name="filename" value="wood.png"/>
            </texture>
        </bsdf>
        <shape type="sphere" id="ball">
            <ref id="mat"/>
            <ref id="mat" name="interior"/>
            <emitter type="area"><rgb name="radiance" value="1"/></emitter>
        </shape>
        <float name="top_level_is_the_builders_business" value="1"/>"#,
    ));
    let root = &d.root;
    assert_eq!(
        (root.category, root.kind.as_str(), root.loc.line),
        (Category::Scene, "scene", 1)
    );
    let names: Vec<&str> = root
        .props
        .entries()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["_arg_0", "_arg_1", "top_level_is_the_builders_business"]
    );
    let bsdf = object(root, "_arg_0");
    assert_eq!(bsdf.id.as_deref(), Some("mat"));
    let tex = object(bsdf, "reflectance");
    assert_eq!(
        (tex.category, tex.kind.as_str(), tex.loc.line),
        (Category::Texture, "bitmap", 3)
    );
    assert!(tex.id.is_none());
    let shape = object(root, "_arg_1");
    assert_eq!(shape.id.as_deref(), Some("ball"));
    assert!(matches!(&entry(shape, "_arg_0").value, Value::Ref(id) if id == "mat"));
    assert!(matches!(&entry(shape, "interior").value, Value::Ref(id) if id == "mat"));
    assert_eq!(entry(shape, "interior").loc.line, 9);
    assert_eq!(object(shape, "_arg_2").category, Category::Emitter);
    // A typed <spectrum> is a texture object, as in Mitsuba.
    let d = parse(&scene(
        r#"<emitter type="area"><spectrum type="blackbody" name="radiance">
            <float name="temperature" value="5000"/></spectrum></emitter>"#,
    ));
    let sp = object(object(&d.root, "_arg_0"), "radiance");
    assert_eq!(
        (sp.category, sp.kind.as_str()),
        (Category::Texture, "blackbody")
    );
}

#[test]
fn parameters_defaults_and_defines() {
    let xml = scene(
        r#"<default name="res" value="64"/>
        <default name="res_x" value="$res"/>
        <default name="spp" value="16"/>
        <default name="spp" value="999"/>
        <film type="hdrfilm" name="film_$res">
            <integer name="width" value="$res_x"/>
            <string name="label" value="$spp-spp_$res"/>
        </film>"#,
    );
    let d = parse(&xml);
    let film = object(&d.root, "film_64");
    assert!(matches!(entry(film, "width").value, Value::Int(64)));
    assert!(matches!(&entry(film, "label").value, Value::String(s) if s == "16-spp_64"));
    // Defines override defaults (and the defaults derived from them); one that names no
    // parameter of the scene is an error (see error_tests.rs).
    let defs = [("res", "8"), ("spp", "2")];
    let defs: Vec<(String, String)> = defs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let d = load_string(&xml, &defs).unwrap();
    let film = object(&d.root, "film_8");
    assert!(matches!(entry(film, "width").value, Value::Int(8)));
    assert!(matches!(&entry(film, "label").value, Value::String(s) if s == "2-spp_8"));
}

#[test]
fn version_comments_and_whitespace() {
    let d = parse("<?xml version=\"1.0\"?>\n<!-- c --><scene>\n  <!-- x -->\n</scene>\n");
    assert!(d.root.props.entries().is_empty());
    parse("<scene version=\"0.6.0\"/>");
    let e = err_at("<scene version=\"3.0\">\n</scene>", 1);
    assert!(e.contains("major.minor.patch"), "{e}");
}

#[test]
fn includes_splice_in_order_and_resolve_relative_paths() {
    let d = load_file(&fixture("include_main.xml"), &[]).unwrap();
    let root = &d.root;
    let names: Vec<&str> = root
        .props
        .entries()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["before", "_arg_1", "_arg_2", "after", "_arg_4"]);
    let red = object(root, "_arg_1");
    assert_eq!(red.id.as_deref(), Some("red"));
    // The default declared in the including file is visible in the included one.
    assert!(
        matches!(entry(red, "reflectance").value, Value::Rgb(c) if c == Vec3::new(0.25, 0.0, 0.0))
    );
    let rl = &entry(red, "reflectance").loc;
    assert!(
        rl.file.ends_with("parts/materials.xml") && rl.line == 5,
        "{rl}"
    );
    // parts/materials.xml includes "shapes.xml" from its own directory.
    let floor = object(root, "_arg_2");
    assert_eq!(floor.id.as_deref(), Some("floor"));
    assert!(
        floor.loc.file.ends_with("parts/shapes.xml"),
        "{}",
        floor.loc
    );
    // An included file whose root is an object adds that object (here under its name).
    let sphere = object(root, "_arg_4");
    let inner = object(sphere, "inner_bsdf");
    assert_eq!(
        (inner.category, inner.kind.as_str()),
        (Category::Bsdf, "conductor")
    );
    assert!(inner.loc.file.ends_with("single_bsdf.xml") && inner.loc.line == 1);
}

#[test]
fn cornell_box_fixture_parses() {
    let defs = vec![("res".to_string(), "64".to_string())];
    let d = load_file(&fixture("cbox.xml"), &defs).unwrap();
    let root = &d.root;
    let objs: Vec<&Arc<ObjectDesc>> = root
        .props
        .entries()
        .iter()
        .filter_map(|e| match &e.value {
            Value::Object(o) => Some(o),
            _ => None,
        })
        .collect();
    let count = |c: Category| objs.iter().filter(|o| o.category == c).count();
    assert_eq!(objs.len(), root.props.entries().len());
    assert_eq!((count(Category::Shape), count(Category::Bsdf)), (8, 4));
    assert_eq!(
        (count(Category::Sensor), count(Category::Integrator)),
        (1, 1)
    );
    assert_eq!(objs[0].kind, "path"); // type='$integrator'
    assert!(matches!(entry(objs[0], "max_depth").value, Value::Int(6)));
    let sensor = objs[1];
    let film = object(sensor, "_arg_6");
    assert!(matches!(entry(film, "width").value, Value::Int(64)));
    assert_eq!(object(film, "_arg_2").kind, "tent");
    let sampler = object(sensor, "_arg_5");
    assert!(matches!(
        entry(sampler, "sample_count").value,
        Value::Int(128)
    ));
    let cam = rows([
        [-1., 0., 0., 0.],
        [0., 1., 0., 0.],
        [0., 0., -1., 4.],
        [0., 0., 0., 1.],
    ]);
    assert_mat(&transform(sensor, "to_world"), cam);
    let small = objs
        .iter()
        .find(|o| o.id.as_deref() == Some("smallbox"))
        .unwrap();
    let want =
        translation(0.335, -0.7, 0.38) * rotation([0., 1., 0.], -17.) * scaling(0.3, 0.3, 0.3);
    assert_mat(&transform(small, "to_world"), want);
    assert!(matches!(&entry(small, "_arg_1").value, Value::Ref(id) if id == "gray"));
    let light = objs
        .iter()
        .find(|o| o.id.as_deref() == Some("light"))
        .unwrap();
    let em = object(light, "_arg_2");
    assert!(
        matches!(entry(em, "radiance").value, Value::Rgb(c) if c == Vec3::new(18.387, 13.9873, 6.75357))
    );
    assert_eq!(em.loc.line, 58);
}

#[test]
fn legacy_files_are_upgraded_like_mitsuba_3() {
    let d = parse(
        r#"<scene version="0.5.0">
            <default name="maxDepth" value="8"/>
            <integrator type="path"><integer name="maxDepth" value="$maxDepth"/></integrator>
            <sensor type="perspective">
                <transform name="toWorld"><lookAt origin="0,0,5" target="0,0,0" up="0,1,0"/></transform>
            </sensor>
            <bsdf type="diffuse" id="_white"><rgb name="diffuseReflectance" value="0.5"/></bsdf>
            <shape type="sphere"><ref id="_white"/><float name="intIOR" value="1.5"/></shape>
        </scene>"#,
    );
    let root = &d.root;
    assert!(matches!(
        entry(object(root, "_arg_0"), "max_depth").value,
        Value::Int(8)
    ));
    let cam = rows([
        [-1., 0., 0., 0.],
        [0., 1., 0., 0.],
        [0., 0., -1., 5.],
        [0., 0., 0., 1.],
    ]);
    assert_mat(&transform(object(root, "_arg_1"), "to_world"), cam);
    let bsdf = object(root, "_arg_2");
    assert_eq!(bsdf.id.as_deref(), Some("ID_white__UPGR"));
    assert!(matches!(entry(bsdf, "reflectance").value, Value::Rgb(c) if c == Vec3::splat(0.5)));
    let shape = object(root, "_arg_3");
    assert!(matches!(&entry(shape, "_arg_0").value, Value::Ref(id) if id == "ID_white__UPGR"));
    assert!(matches!(entry(shape, "int_ior").value, Value::Float(v) if v == 1.5));
    // Mitsuba upgrades files older than 2.0.0 only: 2.x and 3.x files (Mitsuba's own
    // test scenes say 2.0.0) are left alone, camelCase stays (the builder flags it).
    for v in ["2.0.0", "2.1.0", "3.0.0"] {
        let d = parse(&format!(
            "<scene version=\"{v}\"><integer name=\"maxDepth\" value=\"1\"/></scene>"
        ));
        entry(&d.root, "maxDepth");
    }
    let d = parse("<scene version=\"1.9.9\"><integer name=\"maxDepth\" value=\"1\"/></scene>");
    entry(&d.root, "max_depth");
    err_at(
        "<scene version=\"3.0.0\">\n<transform name=\"t\"><lookAt/></transform></scene>",
        2,
    );
}

#[test]
fn search_paths_resolve_includes_and_files_latest_first() {
    // main.xml declares ../../other, then ../../common: both hold meshes/m.obj (a
    // triangle in other, a quad in common); the later <path> is searched first, as in
    // Mitsuba. The included fragment names a mesh only "other" has.
    let d = load_file(&fixture("search/scenes/set/main.xml"), &[]).unwrap();
    assert_eq!(d.search_paths.len(), 2);
    assert!(
        d.search_paths[0].ends_with("common"),
        "{:?}",
        d.search_paths
    );
    let setup = crate::scene::build_scene(&d).unwrap();
    let tris: Vec<usize> = (0..2)
        .map(|s| {
            let prims = &setup.scene.geom.prims;
            prims.iter().filter(|p| p.shape == s).count()
        })
        .collect();
    assert_eq!(tris, [2, 1], "quad from common, triangle from other");
}

#[test]
fn search_path_errors_name_the_folder_and_place() {
    let e = err_at(&scene("<path value=\"no/such/folder\"/>"), 2);
    assert!(e.contains("folder \"no/such/folder\" not found"), "{e}");
    let nested = scene("<shape type=\"sphere\">\n<path value=\".\"/>\n</shape>");
    let e = err_at(&nested, 3);
    assert!(e.contains("direct child of <scene>"), "{e}");
    let e = err_at(&scene("<path/>"), 2);
    assert!(e.contains("missing the \"value\" attribute"), "{e}");
    let e = err_at(&scene("<path value=\".\" x=\"1\"/>"), 2);
    assert!(e.contains("unexpected attribute \"x\""), "{e}");
}

#[test]
fn spectra_become_the_rgb_mitsuba_gives_each_parameter() {
    use crate::desc::ParamValue;
    use crate::math::spectrum::tests::MITSUBA_SPD;
    use crate::scene::LoadedScene;
    // Values from Mitsuba 3.9.1 (scalar_rgb), read with mi.traverse on the same
    // parameters: a reflectance (D65, clamped), an emitter (equal-energy), an index of
    // refraction from an .spd file (D65, unbounded), a uniform emitter spectrum.
    let xml = format!(
        r#"<scene version="2.0.0">
        <shape type="sphere" id="s1"><bsdf type="diffuse" id="d">
            <spectrum name="reflectance" value="400:0.78, 500:0.78, 600:0.78, 700:0.78"/>
        </bsdf></shape>
        <shape type="sphere" id="s2">
            <bsdf type="conductor" id="c"><spectrum name="eta" filename="{}"/></bsdf>
            <emitter type="area" id="a">
                <spectrum name="radiance" value="400:0, 500:8, 600:15.6, 700:18.4"/>
            </emitter>
        </shape>
        <emitter type="point" id="p"><spectrum name="intensity" value="0.25"/></emitter>
        </scene>"#,
        fixture("test.spd").display()
    );
    let loaded = LoadedScene::new(parse(&xml)).unwrap();
    let params = loaded.traverse();
    let rgb = |key: &str| match params.get(key) {
        Ok(ParamValue::Color(c)) => *c,
        other => panic!(
            "{key}: {other:?} (keys: {:?})",
            params.keys().collect::<Vec<_>>()
        ),
    };
    let close = crate::math::spectrum::tests::close;
    for (key, want) in [
        ("s1.bsdf.reflectance.value", [0.7763668, 0.77981, 0.7760291]),
        ("s2.bsdf.eta.value", MITSUBA_SPD[1].1),
        (
            "s2.emitter.radiance.value",
            [20.710836, 10.854634, 2.771152],
        ),
        ("p.intensity.value", [0.30119848, 0.23707275, 0.22722901]),
    ] {
        assert!(close(rgb(key), want), "{key}: {} vs {want:?}", rgb(key));
    }
}
