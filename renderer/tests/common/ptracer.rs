//! The scenes of the CPU `ptracer` tests (renderer/src/integrators/ptracer/tests.rs), at a
//! size the block comparisons of the CUDA tests can use: a sphere on a floor under a
//! rectangular area light and the given lights, seen by a pinhole camera.

use std::path::Path;

use heliograph::desc::xml;
use heliograph::integrators::{AnyIntegrator, Ptracer};
use heliograph::scene::{build_scene, RenderSetup};

/// The point and spot lights of the CPU tests' scene.
pub const POINT_LIGHTS: &str = r#"<emitter type="point"><point name="position" x="1.5" y="1.5" z="1.5"/>
    <rgb name="intensity" value="2"/></emitter>
  <emitter type="spot"><rgb name="intensity" value="8"/><float name="cutoff_angle" value="25"/>
    <transform name="to_world"><lookat origin="1, 3, -1" target="0.6, 0, 0.5" up="0, 0, 1"/></transform></emitter>"#;

/// Infinitely distant emitters: a sky seen in the background and a sun.
pub const DISTANT_LIGHTS: &str = r#"<emitter type="constant"><rgb name="radiance" value="0.3, 0.4, 0.5"/></emitter>
  <emitter type="directional"><vector name="direction" x="0.4" y="-1" z="-0.3"/>
    <rgb name="irradiance" value="2"/></emitter>"#;

/// The CPU tests' scene with `lights` (besides the area light), `max_depth`, a `w`×`h`
/// rgb film and the reconstruction filter `rfilter` (XML, e.g. `<rfilter type="box"/>`).
pub fn scene_xml(max_depth: i32, lights: &str, w: u32, h: u32, rfilter: &str) -> String {
    format!(
        r#"<scene version="3.0.0">
  <integrator type="ptracer"><integer name="max_depth" value="{max_depth}"/></integrator>
  <sensor type="perspective"><float name="fov" value="45"/>
    <transform name="to_world"><lookat origin="0, 2, 6" target="0, 0.6, 0" up="0, 1, 0"/></transform>
    <film type="hdrfilm"><integer name="width" value="{w}"/><integer name="height" value="{h}"/>
      <string name="pixel_format" value="rgb"/>{rfilter}</film></sensor>
  <bsdf type="diffuse" id="grey"><rgb name="reflectance" value="0.7, 0.6, 0.5"/></bsdf>
  <shape type="rectangle"><ref id="grey"/>
    <transform name="to_world"><scale value="3"/><rotate x="1" angle="-90"/></transform></shape>
  <shape type="sphere"><point name="center" x="0" y="0.6" z="0"/><float name="radius" value="0.6"/>
    <bsdf type="diffuse"><rgb name="reflectance" value="0.3, 0.5, 0.8"/></bsdf></shape>
  <shape type="rectangle"><bsdf type="diffuse"/>
    <transform name="to_world"><scale value="0.6"/><rotate x="1" angle="90"/>
      <translate x="-0.8" y="2.5" z="0.5"/></transform>
    <emitter type="area"><rgb name="radiance" value="6, 5, 4"/></emitter></shape>
  {lights}
</scene>"#
    )
}

/// The CPU tests' rough glass variant of [`scene_xml`] (point lights, box filter): a rough
/// glass sphere, and a rough glass pane between the camera and the left of the scene.
pub fn rough_glass_xml(max_depth: i32, w: u32, h: u32) -> String {
    let pane = r#"<shape type="rectangle"><bsdf type="roughdielectric"><float name="alpha" value="0.3"/></bsdf>
        <transform name="to_world"><scale value="0.7"/><translate x="-0.9" y="1.0" z="3"/></transform></shape>"#;
    scene_xml(max_depth, POINT_LIGHTS, w, h, r#"<rfilter type="box"/>"#)
        .replace(
            r#"<bsdf type="diffuse"><rgb name="reflectance" value="0.3, 0.5, 0.8"/></bsdf>"#,
            r#"<bsdf type="roughdielectric"><float name="alpha" value="0.4"/></bsdf>"#,
        )
        .replace("</scene>", &format!("{pane}</scene>"))
}

/// The importance-sampled sky of the CPU tests (a dim map with a bright patch), written
/// to `dir/sky.exr`, as an `<emitter>` element.
pub fn envmap_sky(dir: &Path) -> String {
    let path = dir.join("sky.exr");
    let data: Vec<f32> = (0..16 * 8)
        .flat_map(|i| {
            let (x, y) = (i % 16, i / 16);
            let v = if (5..8).contains(&x) && (1..3).contains(&y) {
                20.0
            } else {
                0.2
            };
            [v, 0.8 * v, 0.6 * v]
        })
        .collect();
    let img = heliograph::io::Image {
        width: 16,
        height: 8,
        channels: 3,
        data,
    };
    heliograph::io::write_image(&path, &img).unwrap();
    format!(
        r#"<emitter type="envmap"><string name="filename" value="{}"/></emitter>"#,
        path.display()
    )
}

/// Builds scene `xml`.
pub fn build(xml: &str) -> RenderSetup {
    build_scene(&xml::load_string(xml, &[]).unwrap()).unwrap()
}

/// The CUDA tests' `ptracer` cases (label, scene, spp for a block comparison of 5 to 8
/// seeds that sees a 5% bias) at 64×48: the CPU tests' scenes (area, point and spot
/// lights; a sky and a sun; an importance-sampled envmap, written to `dir`; rough glass),
/// with box, gaussian and tent filters, hidden emitters with early Russian roulette, a
/// crop with alpha, and the Cornell box under point, directional, spot and projector
/// lights (its files written to `dir`).
pub fn cases(dir: &Path) -> Vec<(&'static str, RenderSetup, u32)> {
    let (w, h) = (64, 48);
    let bx = r#"<rfilter type="box"/>"#;
    let sky = envmap_sky(dir);
    let lights = build(&scene_xml(3, POINT_LIGHTS, w, h, bx));
    let mut scenes: Vec<(&'static str, RenderSetup, u32)> = vec![
        ("area, point and spot lights", lights.clone(), 256),
        (
            "sky and sun",
            build(&scene_xml(3, DISTANT_LIGHTS, w, h, bx)),
            256,
        ),
        ("envmap", build(&scene_xml(3, &sky, w, h, bx)), 256),
        ("rough glass", build(&rough_glass_xml(6, w, h)), 256),
        (
            "unbounded depth, gaussian filter",
            build(&scene_xml(
                -1,
                POINT_LIGHTS,
                w,
                h,
                r#"<rfilter type="gaussian"/>"#,
            )),
            256,
        ),
        (
            "sky and sun, tent filter",
            build(&scene_xml(
                4,
                DISTANT_LIGHTS,
                w,
                h,
                r#"<rfilter type="tent"><float name="radius" value="1.5"/></rfilter>"#,
            )),
            256,
        ),
    ];
    let mut c = lights.clone();
    c.integrator = AnyIntegrator::Ptracer(Ptracer {
        max_depth: 6,
        rr_depth: 1,
        hide_emitters: true,
    });
    scenes.push(("hidden emitters, rr_depth 1", c, 512));
    let mut c = build(&scene_xml(3, DISTANT_LIGHTS, w, h, bx));
    c.sensor.film.crop_offset = [8, 4];
    c.sensor.film.crop_size = [48, 32];
    c.sensor.film.alpha = true;
    scenes.push(("sky and sun, cropped, alpha", c, 256));
    let mut c = super::parity::cbox_with_delta_lights(dir, 64);
    c.integrator = AnyIntegrator::Ptracer(Ptracer {
        max_depth: 4,
        ..Default::default()
    });
    scenes.push(("cbox + point, directional, spot, projector", c, 256));
    scenes
}
