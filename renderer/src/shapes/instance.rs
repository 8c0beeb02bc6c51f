//! `instance`: a `shapegroup` placed in the world (see [`super::shapegroup`]).
//!
//! | parameter      | type       | default  | meaning                                            |
//! |------------|------------|----------|----------------------------------------------------|
//! | (nested)   | shapegroup | required | the group, by `<ref id=...>` (or nested)           |
//! | `to_world` | transform  | identity | group-to-world transform (editable via `traverse`) |
//!
//! The scene's BVH holds the instance as one primitive with the bounds of the group's
//! box under `to_world`. A ray that reaches it is carried into group space (origin and
//! direction by the inverse map, not renormalised, so hit distances stay world
//! distances), traced through the group's shared BVH, and the hit is carried back:
//! positions and tangents by `to_world`, normals by its inverse transpose (renormalised),
//! as Mitsuba 3 does. Hits report the group's shape (its material), not the instance.
//! An instance takes no material and no emitter of its own.
//!
//! Both backends render instances. On CUDA each group's tree and mesh data are uploaded
//! once, however many instances place them, and the kernels walk the same two levels
//! (`crate::flat::instances`, `renderer/kernels/geometry.cuh`); a scene without instances
//! compiles none of that code.
//!
//! ```xml
//! <shape type="instance">
//!     <ref id="tree"/>
//!     <transform name="to_world"><rotate y="1" angle="45"/><translate x="3"/></transform>
//! </shape>
//! ```

use glam::{Affine3A, Mat3A, Vec3A};

use super::record::{affine_cols, FlatShape};
use super::shapegroup::{self, ShapeGroup};
use super::ShapeContext;
use super::{normalize_or, AnyShape, Built, Geometry, Hit, PositionSample, Prim, ShapeRecord};
use crate::desc::props::Props;
use crate::desc::{Category, ObjectDesc};
use crate::error::{Error, Result};
use crate::math::{Aabb, Ray, Transform, Vec2, Vec3};
use crate::plugin::BuildContext;

/// An instance record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instance {
    /// Index of its group in [`Geometry::groups`].
    pub group: u32,
    /// Group → world.
    pub to_world: Affine3A,
    /// World → group.
    pub to_local: Affine3A,
    /// The inverse transpose of `to_world`'s linear part (for normals).
    pub normal_to_world: Mat3A,
    /// World bounds.
    pub bounds: Aabb,
}

/// Builds an `instance` object: builds (or finds) its group and adds the instance as
/// one primitive of the scene.
pub fn place(obj: &ObjectDesc, ctx: &mut dyn ShapeContext) -> Result<u32> {
    let p = &obj.props;
    let to_world = p.transform("to_world")?;
    ctx.declare_transform(p, "to_world");
    let group_obj = group_of(obj, &*ctx)?;
    if let Some(b) = ctx.children(p, Category::Bsdf)?.first() {
        return Err(Error::parse(
            &b.loc,
            "an instance takes no material: the shapes of its shapegroup carry their own",
        ));
    }
    if let Some(e) = ctx.children(p, Category::Emitter)?.first() {
        return Err(Error::parse(
            &e.loc,
            "an instance cannot emit light (instancing of emitters is not supported)",
        ));
    }
    let g = shapegroup::ensure(&group_obj, ctx)?;
    // never shaded (hits report the group's shapes), but a valid handle all the same
    let bsdf = ctx.bsdf_of(p)?;
    p.check_unused(&obj.kind)?;
    let geom = ctx.geometry();
    let inst = Instance::new(g, &to_world, &geom.groups[g as usize])
        .ok_or_else(|| Error::param(&p.entry_loc("to_world"), "to_world", "is not invertible"))?;
    Ok(geom.add_analytic(AnyShape::Instance(inst), bsdf))
}

/// An instance as plain geometry (a member of a shapegroup): an error, as Mitsuba 3
/// has no nested instancing.
pub fn build(
    p: &Props,
    _ctx: &dyn BuildContext,
    _to_world: &Transform,
    _flip: bool,
) -> Result<Built> {
    Err(Error::parse(
        &p.loc,
        "a shapegroup cannot hold an instance (nested instancing)",
    ))
}

/// Rebuilds an instance into `geom` (after a parameter update), whose groups are the
/// built scene's: the group is found by its key.
pub fn rebuild(
    obj: &ObjectDesc,
    ctx: &dyn BuildContext,
    geom: &mut Geometry,
    bsdf: u32,
) -> Result<u32> {
    let to_world = obj.props.transform("to_world")?;
    let key = shapegroup::key_of(&*group_of(obj, ctx)?);
    let g = geom
        .groups
        .iter()
        .position(|g| g.key == key)
        .ok_or_else(|| Error::Render(format!("internal error: shapegroup \"{key}\" is missing")))?;
    let inst = Instance::new(g as u32, &to_world, &geom.groups[g]).ok_or_else(|| {
        Error::param(
            &obj.props.entry_loc("to_world"),
            "to_world",
            "is not invertible",
        )
    })?;
    Ok(geom.add_analytic(AnyShape::Instance(inst), bsdf))
}

/// The one shapegroup an instance references or nests.
fn group_of(obj: &ObjectDesc, ctx: &dyn BuildContext) -> Result<std::sync::Arc<ObjectDesc>> {
    let groups = ctx.children_at(&obj.props, Category::Shape)?;
    match &groups[..] {
        [(g, _)] if g.kind == "shapegroup" => Ok(g.clone()),
        [(g, via)] => Err(Error::parse(
            via,
            format!(
                "an instance references a shapegroup, not a \"{}\" shape",
                g.kind
            ),
        )),
        [] => Err(Error::parse(
            &obj.loc,
            "an instance needs a shapegroup: add <ref id=\"...\"/> naming one",
        )),
        [_, (_, via), ..] => Err(Error::parse(
            via,
            "an instance references exactly one shapegroup",
        )),
    }
}

impl Instance {
    /// The instance of group `g` (index `group`) under `to_world`; `None` when the
    /// transform is not invertible.
    pub fn new(group: u32, to_world: &Transform, g: &ShapeGroup) -> Option<Self> {
        let to_world = Affine3A::from_mat4(to_world.m);
        let to_local = to_world.inverse();
        let det = to_world.matrix3.determinant();
        if det == 0.0 || !det.is_finite() || !to_local.is_finite() {
            return None;
        }
        let b = g.bvh.bounds();
        let bounds = (0..8).fold(Aabb::EMPTY, |acc, i| {
            let c = Vec3::new(
                if i & 1 == 0 { b.min.x } else { b.max.x },
                if i & 2 == 0 { b.min.y } else { b.max.y },
                if i & 4 == 0 { b.min.z } else { b.max.z },
            );
            let w = to_world.transform_point3(c);
            acc.union(&Aabb { min: w, max: w })
        });
        Some(Instance {
            group,
            to_world,
            to_local,
            normal_to_world: to_local.matrix3.transpose(),
            bounds,
        })
    }

    /// `ray` in group space (same `t` parametrisation).
    #[inline]
    fn local_ray(&self, ray: &Ray) -> Ray {
        Ray {
            o: self.to_local.transform_point3(ray.o),
            d: self.to_local.transform_vector3(ray.d),
            tmax: ray.tmax,
        }
    }

    /// The nearest hit in the group: `(t, coordinates)` as the group's primitive gives
    /// them.
    #[inline]
    pub fn intersect(
        &self,
        groups: &[std::sync::Arc<ShapeGroup>],
        ray: &Ray,
    ) -> Option<(f32, Vec2)> {
        let g = &groups[self.group as usize];
        g.bvh
            .intersect(&g.geom, &self.local_ray(ray))
            .map(|(_, t, c)| (t, c))
    }

    /// The world-space hit at distance `t` (found by [`Self::intersect`]); `base` is
    /// the scene handle of the group's first shape ([`Geometry::group_base`]).
    pub fn interaction(
        &self,
        groups: &[std::sync::Arc<ShapeGroup>],
        base: u32,
        ray: &Ray,
        t: f32,
    ) -> Hit {
        let g = &groups[self.group as usize];
        // the primitive is found again: the same ray in the same space gives the same
        // primitive tests, so the nearest hit below a bound a little past t is the one
        // found before (the margin covers the rounding of the box tests, whose entry
        // distance can exceed t by an ulp where a surface touches its box)
        let mut local = self.local_ray(ray);
        local.tmax = (t * (1.0 + 1e-4)).max(t.next_up());
        let Some((prim, tl, c)) = g.bvh.intersect(&g.geom, &local) else {
            // unreachable (the same test hit before); a hit facing the ray keeps going
            let n = normalize_or(-ray.d, Vec3::Z);
            return Hit {
                t,
                p: ray.at(t),
                ng: n,
                n,
                uv: Vec2::ZERO,
                dpdu: Vec3::ZERO,
                dpdv: Vec3::ZERO,
                shape: base,
                prim: 0,
                bary: Vec2::ZERO,
            };
        };
        let h = g.geom.surface_interaction(prim, &local, tl, c);
        let normal = |n: Vec3| {
            let w = Vec3::from(self.normal_to_world * Vec3A::from(n));
            normalize_or(w, n)
        };
        Hit {
            t,
            p: self.to_world.transform_point3(h.p),
            ng: normal(h.ng),
            n: normal(h.n),
            uv: h.uv,
            dpdu: self.to_world.transform_vector3(h.dpdu),
            dpdv: self.to_world.transform_vector3(h.dpdv),
            shape: base + h.shape,
            prim: h.prim,
            bary: h.bary,
        }
    }
}

impl ShapeRecord for Instance {
    fn bounds(&self, _g: &Geometry, _pr: Prim) -> Aabb {
        self.bounds
    }
    fn intersect(&self, g: &Geometry, _pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        Instance::intersect(self, &g.groups, ray)
    }
    fn interaction(&self, g: &Geometry, pr: Prim, ray: &Ray, t: f32, _coords: Vec2) -> Hit {
        let base = g.group_base.get(self.group as usize).copied();
        Instance::interaction(self, &g.groups, base.unwrap_or(pr.shape), ray, t)
    }
    // instances never emit (emitters are refused in shape groups)
    fn sample_position(&self, _g: &Geometry, _shape: u32, _u: Vec2) -> PositionSample {
        PositionSample {
            p: Vec3::ZERO,
            n: Vec3::Z,
            uv: Vec2::ZERO,
            pdf: 0.0,
            prim: 0,
            bary: Vec2::ZERO,
        }
    }
    fn surface_area(&self) -> f32 {
        0.0
    }
    // `first_tri` (the group's BVH header) is set by `flat::instances::append_groups`
    fn flatten(&self, f: &mut FlatShape) {
        f.tri_count = self.group;
        f.to_world = affine_cols(&self.to_world);
        f.to_local = affine_cols(&self.to_local);
    }
    // it holds a whole tree of its group's
    fn walks_bvh(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::desc::xml::load_string;
    use crate::math::{Pcg32, Ray, Vec3};
    use crate::scene::{build_scene, RenderSetup};

    fn scene(body: &str) -> crate::error::Result<RenderSetup> {
        let xml = format!(r#"<scene version="3.0.0">{body}</scene>"#);
        build_scene(&load_string(&xml, &[])?)
    }

    /// The group's shapes, each with its own `to_world` (then `{post}`).
    fn members(post: &str) -> String {
        format!(
            r#"<shape type="sphere"><transform name="to_world"><scale value="0.5"/>
                 <translate x="-1"/>{post}</transform>
                 <bsdf type="diffuse"><rgb name="reflectance" value="0.9, 0.5, 0.3"/></bsdf></shape>
               <shape type="cube"><transform name="to_world"><scale x="0.3" y="0.6" z="0.2"/>
                 <rotate z="1" angle="20"/><translate x="0.8" z="0.3"/>{post}</transform>
                 <bsdf type="diffuse"><rgb name="reflectance" value="0.2, 0.5, 0.3"/></bsdf></shape>
               <shape type="rectangle"><transform name="to_world"><scale value="1.2"/>
                 <rotate y="1" angle="-80"/>{post}</transform>
                 <bsdf type="diffuse"><rgb name="reflectance" value="0.1, 0.2, 0.9"/></bsdf></shape>"#
        )
    }

    const PLACEMENTS: [&str; 2] = [
        r#"<rotate y="1" angle="45"/><scale value="1.5"/><translate z="2"/>"#,
        r#"<rotate y="1" angle="-45"/><rotate x="1" angle="-25"/><scale value="1.3"/><translate z="-2"/>"#,
    ];

    fn instanced() -> RenderSetup {
        instanced_with("")
    }

    /// [`instanced`] with `extra` objects before the shapes.
    fn instanced_with(extra: &str) -> RenderSetup {
        let mut body = format!(
            r#"{extra}<shape type="shapegroup" id="g">{}</shape>"#,
            members("")
        );
        for p in PLACEMENTS {
            body += &format!(
                r#"<shape type="instance"><ref id="g"/><transform name="to_world">{p}</transform></shape>"#
            );
        }
        scene(&body).unwrap()
    }

    #[test]
    fn instances_hit_what_the_same_shapes_placed_directly_hit() {
        // with and without a texture that reads hits' texture coordinates: a sphere
        // computes them only where one does, in a group as placed directly
        for extra in ["", r#"<texture type="checkerboard" id="reads_uv"/>"#] {
            hits_match(extra);
        }
    }

    fn hits_match(extra: &str) {
        // independent truth: the group's shapes built again as plain shapes, each with
        // its own transform followed by the instance's
        let a = instanced_with(extra);
        let b = scene(&(extra.to_string() + &PLACEMENTS.map(members).concat())).unwrap();
        let unread = extra.is_empty();
        assert_eq!(
            (a.scene.geom.uv_unread, b.scene.geom.uv_unread),
            (unread, unread)
        );
        assert_eq!(
            a.scene.geom.groups[0].geom.uv_unread, unread,
            "the group's flag"
        );
        assert_eq!(a.scene.geom.groups.len(), 1, "one group, shared");
        assert_eq!(
            a.scene.geom.prims.len(),
            2,
            "one scene primitive per instance"
        );
        assert_eq!(a.scene.geom.group_base, vec![2]);
        assert_eq!(
            (a.scene.geom.shape_count(), a.scene.geom.shapes.len()),
            (2, 5)
        );
        let mut rng = Pcg32::new(8, 2);
        let mut hits = 0;
        let mut uv_seen = false;
        for _ in 0..4000 {
            let o = Vec3::new(
                rng.next_f32() - 0.5,
                rng.next_f32() - 0.5,
                rng.next_f32() - 0.5,
            ) * 12.0;
            let target = Vec3::new(
                rng.next_f32() - 0.5,
                rng.next_f32() - 0.5,
                rng.next_f32() - 0.5,
            ) * 4.0;
            let ray = Ray::new(o, (target - o).normalize());
            match (a.scene.intersect(&ray), b.scene.intersect(&ray)) {
                (None, None) => {}
                (Some(x), Some(y)) => {
                    hits += 1;
                    assert!(
                        (x.t - y.t).abs() < 1e-4 * y.t.max(1.0),
                        "t {} vs {}: {ray:?}\n{x:?}\n{y:?}",
                        x.t,
                        y.t
                    );
                    assert!((x.p - y.p).length() < 1e-3, "{:?} vs {:?}", x.p, y.p);
                    // directly placed triangles follow their world winding; an instance
                    // carries the group's normal by the inverse transpose (Mitsuba): the
                    // same line, and the same side for these non-mirroring placements
                    assert!(x.ng.dot(y.ng) > 0.999, "{ray:?}\n{x:?}\n{y:?}");
                    assert!(x.n.dot(y.n) > 0.999, "{:?} vs {:?}", x.n, y.n);
                    assert!((x.uv - y.uv).length() < 1e-3, "{:?} vs {:?}", x.uv, y.uv);
                    // (member 0 is the sphere; the other shapes always compute uv)
                    uv_seen |= y.shape % 3 == 0 && x.uv != crate::math::Vec2::ZERO;
                    // the same member (three per placement directly; the group's
                    // records follow the two instances), with that member's material
                    assert_eq!(x.shape - 2, y.shape % 3);
                    let member = a.scene.geom.groups[0].geom.shapes[x.shape as usize - 2];
                    assert_eq!(a.scene.geom.shapes[x.shape as usize].bsdf, member.bsdf);
                    let mut shadow = ray;
                    shadow.tmax = y.t * 1.001;
                    assert!(a.scene.occluded(&shadow));
                    shadow.tmax = y.t * 0.999;
                    assert_eq!(a.scene.occluded(&shadow), b.scene.occluded(&shadow));
                }
                (x, y) => panic!("{ray:?}: instanced {x:?} vs direct {y:?}"),
            }
        }
        assert!(hits > 800, "{hits} hits");
        assert_eq!(uv_seen, !unread, "sphere uv {uv_seen}, unread {unread}");
        let (ca, ra) = a.scene.bsphere;
        let (cb, rb) = b.scene.bsphere;
        assert!(ra >= rb * 0.999 && (ca - cb).length() < ra, "{ra} vs {rb}");
    }

    #[test]
    fn wrong_groups_and_instances_are_errors_naming_the_place() {
        let err = |body: &str| match scene(body) {
            Ok(_) => panic!("built: {body}"),
            Err(e) => e.to_string(),
        };
        let e = err(r#"<shape type="shapegroup" id="g"><shape type="sphere">
            <emitter type="area"/></shape></shape><shape type="instance"><ref id="g"/></shape>"#);
        assert!(e.contains("emit") && e.contains("<string>:2"), "{e}");
        let e = err(
            r#"<shape type="shapegroup" id="a"><shape type="sphere"/></shape>
            <shape type="shapegroup" id="g"><shape type="instance"><ref id="a"/></shape></shape>"#,
        );
        assert!(e.contains("nested instancing"), "{e}");
        let e = err(r#"<shape type="shapegroup" id="g"><shape type="shapegroup"/></shape>"#);
        assert!(e.contains("another shapegroup"), "{e}");
        let e = err(r#"<shape type="instance"/>"#);
        assert!(e.contains("needs a shapegroup"), "{e}");
        let e = err(r#"<shape type="sphere" id="s"/><shape type="instance"><ref id="s"/></shape>"#);
        assert!(e.contains("not a \"sphere\""), "{e}");
        let e = err(
            r#"<shape type="shapegroup" id="g"><shape type="sphere"/></shape>
            <shape type="instance"><ref id="g"/><bsdf type="diffuse"/></shape>"#,
        );
        assert!(e.contains("no material"), "{e}");
        let e = err(r#"<shape type="shapegroup" id="g"></shape>"#);
        assert!(e.contains("holds no shapes"), "{e}");
        let e = err(
            r#"<shape type="shapegroup" id="g"><shape type="sphere"/></shape>
            <shape type="instance"><ref id="g"/><transform name="to_world"><scale x="0"/></transform></shape>"#,
        );
        assert!(e.contains("to_world"), "{e}");
    }

    #[test]
    fn the_cuda_backend_accepts_instances_and_flattens_each_group_once() {
        // the kernels' two-level traversal is compared with this file's on 10^5 rays by
        // tests/gpu_plugins_on_host.rs (host) and tests/gpu_render.rs (GPU)
        let s = instanced();
        crate::backend::cuda::check_supported(&s).unwrap();
        let f = crate::flat::FlatScene::from_scene(&s).unwrap();
        let kinds: Vec<u32> = f.shapes.iter().map(|r| r.kind).collect();
        use crate::shapes::tag::{
            INSTANCE as I, MESH as SHAPE_MESH, RECTANGLE as SHAPE_RECTANGLE, SPHERE as SHAPE_SPHERE,
        };
        assert_eq!(kinds, [I, I, SHAPE_SPHERE, SHAPE_MESH, SHAPE_RECTANGLE]);
        // one group: its 14 primitives (sphere, 12 cube triangles, rectangle) once
        assert_eq!(f.prims.len(), 2 + 14);
        assert_eq!(
            f.shapes[0].first_tri, f.shapes[1].first_tri,
            "one shared tree"
        );
        assert!(f.unit_prims.is_empty(), "instanced scenes walk the BVH");
    }

    #[test]
    fn a_group_nested_in_its_instance_and_an_unreferenced_group_build() {
        let s = scene(
            r#"<shape type="shapegroup" id="unused"><shape type="cube"/></shape>
               <shape type="instance"><shape type="shapegroup"><shape type="sphere"/></shape>
               <transform name="to_world"><translate x="5"/></transform></shape>"#,
        )
        .unwrap();
        assert_eq!(s.scene.geom.groups.len(), 2);
        let h = s
            .scene
            .intersect(&Ray::new(Vec3::new(5.0, 0.0, 10.0), -Vec3::Z))
            .unwrap();
        assert!((h.t - 9.0).abs() < 1e-5 && (h.n - Vec3::Z).length() < 1e-5);
        assert!(s
            .scene
            .intersect(&Ray::new(Vec3::new(0.0, 0.0, 10.0), -Vec3::Z))
            .is_none());
    }
}
