//! Tests of the `aov` integrator: its parameters and errors, AOV values against
//! analytic hits, the film layout against Mitsuba 3.9.1's, and whole renders.

use super::*;
use crate::backend::cpu::render;
use crate::desc::xml;
use crate::io::Image;
use crate::math::Vec2;
use crate::render::RenderOptions;
use crate::scene::{build_scene, RenderSetup};

fn scene(body: &str) -> Result<RenderSetup> {
    let d = xml::load_string(&format!("<scene version=\"3.0.0\">{body}</scene>"), &[])?;
    build_scene(&d)
}

fn aov_of(integrator: &str) -> Result<RenderSetup> {
    scene(&format!("<shape type=\"sphere\"/>{integrator}"))
}

fn err(integrator: &str) -> String {
    match aov_of(integrator) {
        Ok(_) => panic!("accepted: {integrator}"),
        Err(e) => e.to_string(),
    }
}

const AOV_PATH: &str = r#"<integrator type="aov"><string name="aovs" value="dd.y:depth,nn:sh_normal"/>
    <integrator type="path" name="my_image"><integer name="max_depth" value="3"/></integrator></integrator>"#;

#[test]
fn the_list_the_nested_integrator_and_the_channel_names_follow_mitsuba() {
    let s = aov_of(AOV_PATH).unwrap();
    let aov = s.aov.as_deref().unwrap();
    assert_eq!(aov.nested.as_deref(), Some("my_image"));
    assert_eq!(
        s.integrator,
        AnyIntegrator::Path(crate::integrators::Path {
            max_depth: 3,
            ..Default::default()
        }),
        "the nested integrator renders the image"
    );
    // Mitsuba 3.9.1's film().bitmap() channels for this integrator and an rgba film
    let mitsuba = "R G B A my_image.R my_image.G my_image.B my_image.A dd.y.T nn.X nn.Y nn.Z";
    assert_eq!(s.film_channel_names().join(" "), mitsuba);
    // its render() returns the base channels and the AOVs
    assert_eq!(s.output_channels(), [0, 1, 2, 3, 8, 9, 10, 11]);
    let rgb = aov.film_names(false).join(" ");
    assert_eq!(
        rgb,
        "R G B my_image.R my_image.G my_image.B my_image.A dd.y.T nn.X nn.Y nn.Z"
    );
    assert_eq!(aov.output_channels(false), [0, 1, 2, 7, 8, 9, 10]);
    // without a nested integrator: zero base channels, and render() returns the AOVs only
    let all =
        "a:albedo,d:depth,p:position,u:uv,g:geo_normal,s:sh_normal,pi:prim_index,si:shape_index";
    let s = aov_of(&format!(
        "<integrator type=\"aov\"><string name=\"aovs\" value=\"{all}\"/></integrator>"
    ))
    .unwrap();
    let expected = "R G B A a.R a.G a.B d.T p.X p.Y p.Z u.U u.V g.X g.Y g.Z s.X s.Y s.Z pi.I si.I";
    assert_eq!(s.film_channel_names().join(" "), expected);
    assert_eq!(s.output_channels(), (4..21).collect::<Vec<_>>());
    assert_eq!(s.aov.as_deref().unwrap().nested, None);
}

#[test]
fn entries_are_separated_by_commas_or_spaces_and_unnamed_integrators_are_arg_0() {
    let s = aov_of(
        r#"<integrator type="aov"><string name="aovs" value=" dd:depth,, nn:uv "/>
           <integrator type="direct"/></integrator>"#,
    )
    .unwrap();
    let names = s.film_channel_names().join(" ");
    assert_eq!(
        names,
        "R G B A _arg_0.R _arg_0.G _arg_0.B _arg_0.A dd.T nn.U nn.V"
    );
    // an empty list is fine when there is a nested integrator
    let s = aov_of(
        r#"<integrator type="aov"><string name="aovs" value=""/><integrator type="path"/></integrator>"#,
    )
    .unwrap();
    assert_eq!(s.output_channels(), [0, 1, 2, 3]);
}

#[test]
fn bad_lists_name_the_entry_and_the_choices() {
    let e = err(
        r#"<integrator type="aov"><string name="aovs" value="dd:depth,nn:normal"/></integrator>"#,
    );
    assert!(
        e.contains("parameter \"aovs\"")
            && e.contains("entry \"nn:normal\"")
            && e.contains("unknown AOV type \"normal\"")
            && e.contains(
                "albedo, depth, position, uv, geo_normal, sh_normal, prim_index, shape_index"
            ),
        "{e}"
    );
    let e = err(r#"<integrator type="aov"><string name="aovs" value="dd:dept"/></integrator>"#);
    assert!(e.contains("did you mean \"depth\""), "{e}");
    for bad in ["dd", ":depth", "dd:", "a:depth:b"] {
        let e = err(&format!(
            "<integrator type=\"aov\"><string name=\"aovs\" value=\"x:uv,{bad}\"/></integrator>"
        ));
        assert!(
            e.contains(&format!("entry \"{bad}\" is not a <name>:<type> pair")),
            "{bad}: {e}"
        );
        assert!(e.starts_with("<string>:1:"), "with the location: {e}");
    }
    let e = err(r#"<integrator type="aov"><string name="aovs" value="d:dp_du"/></integrator>"#);
    assert!(
        e.contains("\"dp_du\" is not supported by heliograph") && e.contains("supported: albedo"),
        "{e}"
    );
}

#[test]
fn missing_or_empty_outputs_duplicates_and_nesting_are_errors() {
    let e = err(r#"<integrator type="aov"><integrator type="path"/></integrator>"#);
    assert!(e.contains("parameter \"aovs\": missing"), "{e}");
    let e = err(r#"<integrator type="aov"><string name="aovs" value=" , "/></integrator>"#);
    assert!(e.contains("nothing to output"), "{e}");
    let e = err(
        r#"<integrator type="aov"><string name="aovs" value="d:depth"/>
           <integrator type="path"/><integrator type="direct"/></integrator>"#,
    );
    assert!(
        e.starts_with("<string>:2:")
            && e.contains("at most one nested integrator in heliograph, found 2"),
        "{e}"
    );
    let e = err(
        r#"<integrator type="aov"><string name="aovs" value="d:depth"/>
           <integrator type="aov"><string name="aovs" value="e:depth"/></integrator></integrator>"#,
    );
    assert!(e.contains("cannot nest another aov"), "{e}");
    let e = err(
        r#"<integrator type="aov"><string name="aovs" value="n:position,n:sh_normal"/></integrator>"#,
    );
    assert!(
        e.contains("two film channels would be named \"n.X\""),
        "{e}"
    );
    let e = err(
        r#"<integrator type="aov"><string name="aovs" value="img:albedo"/>
           <integrator type="path" name="img"/></integrator>"#,
    );
    assert!(e.contains("\"img.R\""), "{e}");
    let e = err(
        r#"<integrator type="aov"><string name="aovs" value="d:depth"/><float name="x" value="1"/></integrator>"#,
    );
    assert!(
        e.contains("parameter \"x\""),
        "unread parameters are reported: {e}"
    );
    // a nested integrator's own errors come through
    let e = err(
        r#"<integrator type="aov"><string name="aovs" value="d:depth"/>
           <integrator type="path"><integer name="max_depth" value="0"/></integrator></integrator>"#,
    );
    assert!(e.contains("max_depth"), "{e}");
}

const ALL: &str =
    "a:albedo,d:depth,p:position,u:uv,g:geo_normal,s:sh_normal,pi:prim_index,si:shape_index";

fn eval_at(s: &RenderSetup, o: Vec3, d: Vec3) -> Vec<f32> {
    let aov = s.aov.as_deref().unwrap();
    let mut out = vec![f32::NAN; aov.channel_count()];
    aov.eval(&s.scene, &Ray::new(o, d.normalize()), &mut out);
    out
}

fn close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol,
            "{what}: got {got:?}, expected {want:?}"
        );
    }
}

#[test]
fn every_aov_of_a_sphere_hit_is_the_analytic_value() {
    // a unit sphere at (0, 0, 1) behind a rectangle that is the first shape
    let s = scene(&format!(
        r#"<shape type="rectangle"><transform name="to_world"><translate x="10"/></transform></shape>
           <shape type="sphere"><point name="center" x="0" y="0" z="1"/>
             <bsdf type="diffuse"><rgb name="reflectance" value="0.2, 0.4, 0.6"/></bsdf></shape>
           <integrator type="aov"><string name="aovs" value="{ALL}"/></integrator>"#
    ))
    .unwrap();
    for (a, b) in [(0.0f32, 0.0f32), (0.3, -0.5), (-0.6, 0.2), (0.1, 0.9)] {
        // straight down from z = 5 at (a, b): the hit is on the upper hemisphere
        let h = (1.0 - a * a - b * b).sqrt();
        let p = Vec3::new(a, b, 1.0 + h);
        let n = Vec3::new(a, b, h);
        let mut phi = b.atan2(a);
        if phi < 0.0 {
            phi += 2.0 * std::f32::consts::PI;
        }
        let u = phi / (2.0 * std::f32::consts::PI);
        let v = h.acos() / std::f32::consts::PI;
        let mut want = vec![0.2, 0.4, 0.6, 5.0 - p.z];
        want.extend(p.to_array());
        want.extend([u, v]);
        want.extend(n.to_array());
        want.extend(n.to_array());
        want.extend([0.0, 2.0]); // prim 0 of an analytic shape; the second shape
        let got = eval_at(&s, Vec3::new(a, b, 5.0), Vec3::new(0.0, 0.0, -1.0));
        close(&got, &want, 2e-5, &format!("ray at ({a}, {b})"));
    }
    let miss = eval_at(&s, Vec3::new(3.0, 0.0, 5.0), Vec3::new(0.0, 0.0, -1.0));
    assert!(miss.iter().all(|&x| x == 0.0), "a miss: {miss:?}");
}

#[test]
fn prim_index_counts_triangles_within_the_mesh_that_was_hit() {
    let s = scene(&format!(
        r#"<shape type="cube"><transform name="to_world"><translate x="-3"/></transform></shape>
           <shape type="cube"/>
           <integrator type="aov"><string name="aovs" value="{ALL}"/></integrator>"#
    ))
    .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for (o, d) in [
        (Vec3::new(0.3, 0.2, 5.0), -Vec3::Z),
        (Vec3::new(-0.3, -0.6, -5.0), Vec3::Z),
        (Vec3::new(5.0, 0.1, 0.4), -Vec3::X),
        (Vec3::new(0.5, 5.0, -0.2), -Vec3::Y),
    ] {
        let v = eval_at(&s, o, d);
        let (prim, shape) = (v[15], v[16]);
        assert_eq!(shape, 2.0, "the second cube");
        assert!(prim.fract() == 0.0 && (0.0..12.0).contains(&prim), "{prim}");
        // the triangle of that index (in the second mesh) contains the hit point
        let AnyShape::Mesh(m) = s.scene.geom.shapes[1].geom else {
            panic!("a cube is a mesh")
        };
        let tri = s.scene.geom.mesh.tris[(m.first_tri + prim as u32) as usize];
        let [a, b, c] = tri.map(|i| s.scene.geom.mesh.positions[i as usize]);
        let p = Vec3::new(v[4], v[5], v[6]);
        let n = (b - a).cross(c - a);
        let area = n.length();
        let bary = [
            (b - p).cross(c - p),
            (c - p).cross(a - p),
            (a - p).cross(b - p),
        ]
        .map(|x| x.dot(n) / (area * area));
        assert!(
            bary.iter().all(|&w| w > -1e-5) && (bary.iter().sum::<f32>() - 1.0).abs() < 1e-4,
            "hit {p} is not in triangle {prim}: {bary:?}"
        );
        seen.insert(prim as u32);
    }
    assert_eq!(seen.len(), 4, "four faces, four triangles: {seen:?}");
}

#[test]
fn albedo_is_the_diffuse_reflectance_of_the_side_seen() {
    let s = scene(&format!(
        r#"<shape type="rectangle"><bsdf type="twosided">
             <bsdf type="diffuse"><rgb name="reflectance" value="0.1, 0.2, 0.3"/></bsdf>
             <bsdf type="plastic"><rgb name="diffuse_reflectance" value="0.7, 0.5, 0.3"/></bsdf>
           </bsdf></shape>
           <shape type="sphere"><point name="center" x="5" y="0" z="0"/><bsdf type="conductor"/></shape>
           <shape type="sphere"><point name="center" x="-5" y="0" z="0"/>
             <bsdf type="roughplastic"><rgb name="diffuse_reflectance" value="0.25, 0.5, 0.75"/></bsdf></shape>
           <integrator type="aov"><string name="aovs" value="{ALL}"/></integrator>"#
    ))
    .unwrap();
    let at = |o: Vec3, d: Vec3| eval_at(&s, o, d)[..3].to_vec();
    close(
        &at(Vec3::new(0.2, 0.1, 3.0), -Vec3::Z),
        &[0.1, 0.2, 0.3],
        1e-6,
        "front",
    );
    close(
        &at(Vec3::new(0.2, 0.1, -3.0), Vec3::Z),
        &[0.7, 0.5, 0.3],
        1e-6,
        "back",
    );
    close(
        &at(Vec3::new(5.0, 0.0, 3.0), -Vec3::Z),
        &[0.0; 3],
        0.0,
        "smooth conductor",
    );
    let rough = at(Vec3::new(-5.0, 0.0, 3.0), -Vec3::Z);
    close(&rough, &[0.25, 0.5, 0.75], 1e-6, "roughplastic");
}

/// A rectangle at z = 0 (shape 1) seen from z = 4 by a `w x h` film, box filter.
fn plane_scene(integrator: &str, w: u32, h: u32) -> RenderSetup {
    scene(&format!(
        r#"<shape type="rectangle"><transform name="to_world"><scale x="1.5" y="1"/></transform>
             <bsdf type="diffuse"><rgb name="reflectance" value="0.3, 0.5, 0.7"/></bsdf></shape>
           <emitter type="constant"/>
           <sensor type="perspective"><float name="fov" value="50"/>
             <transform name="to_world"><lookat origin="0.2, 0.1, 4" target="0.2, 0.1, 0" up="0, 1, 0"/></transform>
             <film type="hdrfilm"><integer name="width" value="{w}"/><integer name="height" value="{h}"/>
               <rfilter type="box"/></film></sensor>
           {integrator}"#
    ))
    .unwrap()
}

fn render_img(s: &RenderSetup, spp: u32, seed: u64) -> Image {
    render(
        s,
        &RenderOptions {
            spp: Some(spp),
            seed,
        },
    )
    .unwrap()
}

/// The range of `f` over the camera rays through pixel (x, y): its corners and the point
/// of the pixel nearest the image centre (where the ray is closest to the axis).
fn range_over_pixel(s: &RenderSetup, x: u32, y: u32, f: impl Fn(&Ray) -> f32) -> (f32, f32) {
    let film = &s.sensor.film;
    let (cx, cy) = (film.width as f32 / 2.0, film.height as f32 / 2.0);
    let (x0, y0) = (x as f32, y as f32);
    let points = [
        (x0, y0),
        (x0 + 1.0, y0),
        (x0, y0 + 1.0),
        (x0 + 1.0, y0 + 1.0),
        (cx.clamp(x0, x0 + 1.0), cy.clamp(y0, y0 + 1.0)),
    ];
    points
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &(px, py)| {
            let v = f(&s
                .sensor
                .camera
                .sample_ray(Vec2::new(px, py), Vec2::ZERO, film));
            (lo.min(v), hi.max(v))
        })
}

#[test]
fn a_rendered_plane_has_its_normal_depth_and_position_in_every_pixel() {
    let aovs = r#"<integrator type="aov"><string name="aovs" value="d:depth,p:position,n:geo_normal,s:sh_normal,a:albedo,i:shape_index"/></integrator>"#;
    let s = plane_scene(aovs, 12, 8);
    let img = render_img(&s, 16, 7);
    let names = s.film_channel_names();
    assert_eq!(img.channels, names.len());
    let c = |n: &str| names.iter().position(|x| x == n).unwrap();
    let hit_t = |r: &Ray| -r.o.z / r.d.z; // the plane z = 0
    let mut covered = 0;
    for y in 0..8u32 {
        for x in 0..12u32 {
            let at = |n: &str| img.at(x as usize, y as usize, c(n));
            let (xs, ys) = (
                range_over_pixel(&s, x, y, |r| r.at(hit_t(r)).x),
                range_over_pixel(&s, x, y, |r| r.at(hit_t(r)).y),
            );
            let inside = xs.0 >= -1.5 && xs.1 <= 1.5 && ys.0 >= -1.0 && ys.1 <= 1.0;
            let outside = xs.1 <= -1.5 || xs.0 >= 1.5 || ys.1 <= -1.0 || ys.0 >= 1.0;
            if outside {
                for n in &names {
                    assert_eq!(
                        img.at(x as usize, y as usize, c(n)),
                        0.0,
                        "{n} at ({x}, {y})"
                    );
                }
                continue;
            }
            if !inside {
                continue; // the rectangle's edge crosses this pixel
            }
            covered += 1;
            let what = format!("pixel ({x}, {y})");
            close(
                &[at("n.X"), at("n.Y"), at("n.Z")],
                &[0.0, 0.0, 1.0],
                1e-6,
                &what,
            );
            close(
                &[at("s.X"), at("s.Y"), at("s.Z")],
                &[0.0, 0.0, 1.0],
                1e-6,
                &what,
            );
            close(
                &[at("a.R"), at("a.G"), at("a.B")],
                &[0.3, 0.5, 0.7],
                1e-6,
                &what,
            );
            close(&[at("p.Z"), at("i.I")], &[0.0, 1.0], 1e-6, &what);
            let t = range_over_pixel(&s, x, y, hit_t);
            for (v, (lo, hi)) in [(at("d.T"), t), (at("p.X"), xs), (at("p.Y"), ys)] {
                assert!(
                    v >= lo - 1e-5 && v <= hi + 1e-5,
                    "{what}: {v} not in [{lo}, {hi}]"
                );
            }
        }
    }
    assert!(covered >= 40, "{covered} pixels inside the rectangle");
}

#[test]
fn the_nested_image_is_the_plain_render_with_the_same_seed() {
    let nested = r#"<integrator type="aov"><string name="aovs" value="d:depth,a:albedo"/>
        <integrator type="path" name="img"><integer name="max_depth" value="4"/></integrator></integrator>"#;
    let plain = r#"<integrator type="path"><integer name="max_depth" value="4"/></integrator>"#;
    let (sa, sp) = (plane_scene(nested, 10, 6), plane_scene(plain, 10, 6));
    let (a, p) = (render_img(&sa, 3, 11), render_img(&sp, 3, 11));
    assert_eq!((a.channels, p.channels), (4 + 4 + 4, 4));
    for (fa, fp) in a.data.chunks_exact(12).zip(p.data.chunks_exact(4)) {
        assert_eq!(&fa[..4], fp, "base channels: the plain render, bit for bit");
        assert_eq!(&fa[4..8], fp, "img.R, .G, .B, .A: the same image again");
    }
    // without a nested integrator the base channels are zero and the AOVs the same
    let alone = plane_scene(
        r#"<integrator type="aov"><string name="aovs" value="d:depth,a:albedo"/></integrator>"#,
        10,
        6,
    );
    let b = render_img(&alone, 3, 11);
    assert_eq!(b.channels, 4 + 4);
    for (fb, fa) in b.data.chunks_exact(8).zip(a.data.chunks_exact(12)) {
        assert_eq!(&fb[..4], &[0.0; 4]);
        assert_eq!(&fb[4..], &fa[8..]);
    }
}

#[test]
fn aovs_are_filtered_like_the_image() {
    // a wide gaussian spreads each sample over its neighbours: the AOVs of a constant
    // surface stay exact, and at the crop border nothing is lost
    let s = scene(
        r#"<shape type="rectangle"><transform name="to_world"><scale value="50"/></transform></shape>
           <sensor type="perspective"><float name="fov" value="40"/>
             <transform name="to_world"><lookat origin="0, 0, 3" target="0, 0, 0" up="0, 1, 0"/></transform>
             <film type="hdrfilm"><integer name="width" value="9"/><integer name="height" value="7"/>
               <string name="pixel_format" value="rgb"/><rfilter type="gaussian"/></film></sensor>
           <integrator type="aov"><string name="aovs" value="n:geo_normal,i:shape_index"/>
             <integrator type="direct" name="x"/></integrator>"#,
    )
    .unwrap();
    let img = render_img(&s, 4, 1);
    assert_eq!(img.channels, 3 + 4 + 4);
    for px in img.data.chunks_exact(11) {
        close(&px[7..], &[0.0, 0.0, 1.0, 1.0], 1e-6, "filtered AOVs");
        assert!((px[6] - 1.0).abs() < 1e-6, "x.A: every sample hit");
    }
}
