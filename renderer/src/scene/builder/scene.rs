//! The build of a whole scene: every top-level object of the description, the sensor
//! and the integrator, then the BVH and the assembled [`Scene`], with the log and
//! parameters that updates need.

use std::sync::Arc;

use super::{BuildCtx, BuildLog};
use crate::accel::Bvh;
use crate::desc::cache::LoadCache;
use crate::desc::params::ParamTable;
use crate::desc::props::Value;
use crate::desc::{Category, SceneDesc};
use crate::error::{Error, Result};
use crate::integrators;
use crate::scene::{RenderSetup, Scene};
use crate::sensors::{self, Sensor};
use crate::shapes::{self, Geometry};

/// Builds the render-ready scene, with its sensor and integrator, from a description.
pub fn build_scene(desc: &SceneDesc) -> Result<RenderSetup> {
    let cache = LoadCache::with_search_paths(desc.search_paths.clone());
    Ok(build_logged(desc, cache)?.0)
}

/// What a build produced besides the scene: the log and the declared parameters.
pub(crate) type Built = (RenderSetup, BuildLog, ParamTable);

/// Builds the scene, reading files through `cache`, and returns what updates need.
pub(crate) fn build_logged(desc: &SceneDesc, cache: LoadCache) -> Result<Built> {
    let root = &desc.root;
    let mut ctx = BuildCtx::with_cache(root, cache)?;
    let mut sensor_obj = None;
    let mut integrator_obj = None;
    for e in root.props.entries() {
        let Value::Object(obj) = &e.value else {
            e.mark_used();
            return Err(Error::parse(
                &e.loc,
                format!(
                    "a {} property is not allowed at the scene's top level",
                    e.value.type_name()
                ),
            ));
        };
        e.mark_used();
        match obj.category {
            // built once, rendered only through its instances (no shape record)
            Category::Shape if obj.kind == "shapegroup" => {
                shapes::build_group(obj, &mut ctx)?;
            }
            Category::Shape => {
                let via = obj.loc.clone();
                ctx.scoped(obj, &via, None, |ctx| Ok((shapes::build(obj, ctx)?, ())))?;
            }
            Category::Emitter => {
                ctx.emitter(obj, None)?;
            }
            Category::Sensor => {
                if sensor_obj.replace(obj.clone()).is_some() {
                    return Err(Error::parse(
                        &obj.loc,
                        "only one sensor per scene is supported",
                    ));
                }
            }
            Category::Integrator => {
                if integrator_obj.replace(obj.clone()).is_some() {
                    return Err(Error::parse(
                        &obj.loc,
                        "only one integrator per scene is allowed",
                    ));
                }
            }
            // Declared for reference; built (and so validated) on their own too.
            Category::Bsdf => {
                ctx.bsdf(obj)?;
            }
            Category::Texture => {
                let via = obj.loc.clone();
                ctx.texture_object(obj, &via)?;
            }
            c => {
                return Err(Error::parse(
                    &obj.loc,
                    format!("a <{}> is not allowed at the scene's top level", c.tag()),
                ))
            }
        }
    }
    let sensor = match &sensor_obj {
        Some(obj) => {
            let via = obj.loc.clone();
            ctx.scoped(obj, &via, None, |ctx| Ok((0, sensors::build(obj, ctx)?)))?
        }
        None => Sensor::default_for(&root.loc)?,
    };
    let integrator = match &integrator_obj {
        Some(obj) => integrators::build(obj)?,
        None => (integrators::AnyIntegrator::default(), None),
    };
    let (log, params) = ctx.take_log();
    let setup = finish(ctx, sensor, integrator)?;
    if let integrators::AnyIntegrator::Ptracer(_) = setup.integrator {
        // what light tracing cannot render is an error at the <integrator>, not at render
        let loc = integrator_obj.as_ref().map(|o| &o.loc);
        integrators::Ptracer::check_setup(&setup.sensor, setup.aov.is_some(), loc)?;
    }
    Ok((setup, log, params))
}

fn finish(
    mut ctx: BuildCtx,
    sensor: Sensor,
    (integrator, aov): (integrators::AnyIntegrator, Option<integrators::Aov>),
) -> Result<RenderSetup> {
    ctx.geom.seal_groups();
    ctx.textures.attributes.resolve(&ctx.geom)?;
    // texture coordinates are read by textures and the aov integrator's outputs only
    // (parameter updates rebuild objects of the same kinds, so this holds after them)
    ctx.geom
        .set_uv_unread(!ctx.textures.reads_uv() && aov.is_none());
    let bvh = Bvh::build(&ctx.geom);
    let scene = Scene::assemble(
        ctx.geom,
        bvh,
        ctx.bsdfs,
        ctx.textures,
        ctx.emitters,
        ctx.dists2d,
    );
    Ok(RenderSetup {
        scene,
        sensor,
        integrator,
        aov: aov.map(Arc::new),
    })
}

/// Whether a BVH built over `a` is valid for `b`: the same primitives, the same
/// triangles (the BVH inlines their vertices) and the same analytic bounds.
pub(crate) fn same_bvh_input(a: &Geometry, b: &Geometry) -> bool {
    a.prims == b.prims
        && a.mesh.tris == b.mesh.tris
        && a.mesh.positions == b.mesh.positions
        && (0..a.prims.len() as u32).all(|i| a.prim_bounds(i) == b.prim_bounds(i))
}

#[cfg(test)]
mod tests {
    use super::super::Alloc;
    use super::*;
    use crate::bsdfs::AnyBsdf;
    use crate::desc::xml::load_string;
    use crate::math::Vec3;

    fn setup(reflectance: &str, x: &str) -> RenderSetup {
        let xml = format!(
            r#"<scene version="3.0.0"><emitter type="constant"/>
               <shape type="sphere"><point name="center" x="{x}" y="0" z="0"/>
                 <bsdf type="diffuse"><rgb name="reflectance" value="{reflectance}"/></bsdf></shape>
               <shape type="cube"/></scene>"#
        );
        build_scene(&load_string(&xml, &[]).unwrap()).unwrap()
    }

    #[test]
    fn bvh_input_is_the_same_exactly_when_the_geometry_is() {
        let a = setup("0.5", "3");
        assert!(
            same_bvh_input(&a.scene.geom, &setup("0.9", "3").scene.geom),
            "a material change keeps the BVH"
        );
        assert!(
            !same_bvh_input(&a.scene.geom, &setup("0.5", "4").scene.geom),
            "a moved shape needs a new BVH"
        );
    }

    #[test]
    fn sphere_hits_have_texture_coordinates_exactly_when_something_reads_them() {
        // a ray from +z towards the centre of a unit sphere turned -90 degrees about x:
        // it meets the sphere's local -y, where Mitsuba's uv is (3/4, 1/2) (phi = 270
        // degrees around z from +x, theta = 90 degrees from +z)
        let uv_of = |middle: &str| {
            let xml = format!(
                r#"<scene version="3.0.0">{middle}
                   <shape type="sphere"><transform name="to_world"><rotate x="1" angle="-90"/></transform>
                     <bsdf type="diffuse"><rgb name="reflectance" value="0.5"/></bsdf></shape></scene>"#
            );
            let s = build_scene(&load_string(&xml, &[]).unwrap()).unwrap();
            let ray = crate::math::Ray::new(Vec3::new(0.0, 0.0, 3.0), Vec3::new(0.0, 0.0, -1.0));
            (
                s.scene.geom.uv_unread,
                s.scene.intersect(&ray).expect("a hit").uv,
            )
        };
        let (unread, uv) = uv_of("");
        assert!(unread && uv == crate::math::Vec2::ZERO, "{unread} {uv}");
        let png = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../assets/textures/seed_texture.png"
        );
        for reader in [
            r#"<texture type="checkerboard" id="unused"/>"#.to_string(),
            format!(
                r#"<texture type="bitmap" id="unused"><string name="filename" value="{png}"/></texture>"#
            ),
            r#"<integrator type="aov"><string name="aovs" value="dd.y:depth"/></integrator>"#
                .to_string(),
        ] {
            let (unread, uv) = uv_of(&reader);
            assert!(!unread, "{reader}");
            assert!(
                (uv - crate::math::Vec2::new(0.75, 0.5)).abs().max_element() < 1e-6,
                "{reader}: {uv}"
            );
        }
    }

    #[test]
    fn the_log_names_objects_records_their_slots_and_dependents() {
        let xml = r#"<scene version="3.0.0">
            <texture type="checkerboard" id="checks"><rgb name="color0" value="0.8"/></texture>
            <bsdf type="plastic" id="red"><ref name="diffuse_reflectance" id="checks"/></bsdf>
            <shape type="sphere"><ref id="red"/></shape>
            <shape type="rectangle"><bsdf type="twosided"><ref id="red"/></bsdf></shape></scene>"#;
        let desc = load_string(xml, &[]).unwrap();
        let (setup, log, params) = build_logged(&desc, LoadCache::default()).unwrap();
        let by_key = |k: &str| {
            log.objects
                .iter()
                .position(|r| r.key == k)
                .unwrap_or_else(|| panic!("{k} not in {:?}", log.objects))
        };
        let (checks, red) = (by_key("checks"), by_key("red"));
        let twosided = by_key("shape_1.bsdf");
        assert_eq!(log.objects[checks].category, Category::Texture);
        // the checkerboard's two constants, then its own record
        let a = &log.objects[checks].allocs;
        assert!(
            matches!(a[..], [Alloc::Texture(_), Alloc::Texture(_), Alloc::Texture(h)] if h == log.objects[checks].handle)
        );
        // plastic: the resolved checkerboard, its specular constant, its own record
        let a = &log.objects[red].allocs;
        assert_eq!(a[0], Alloc::Texture(log.objects[checks].handle));
        assert_eq!(a.last(), Some(&Alloc::Bsdf(log.objects[red].handle)));
        assert_eq!(log.objects[checks].dependents, [red]);
        assert!(log.objects[red].dependents.contains(&twosided));
        assert!(matches!(
            setup.scene.bsdfs[log.objects[twosided].handle as usize],
            AnyBsdf::TwoSided(_)
        ));
        let keys: Vec<&str> = params.decls().iter().map(|d| d.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "checks.color0.value",
                "checks.color1.value",
                "red.eta",
                "red.specular_reflectance.value",
                "shape.to_world",
                "shape_1.to_world",
            ]
        );
    }
}
