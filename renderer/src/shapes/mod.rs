//! Shapes. Analytic shapes (`sphere`, `rectangle`, `disk`, `cylinder`) keep their own
//! records; `obj`, `ply`, `serialized` and `cube` become triangles in the shared
//! [`MeshStore`]. Every shape is split into BVH primitives ([`Prim`]). A
//! `shapegroup` is built once into a [`Geometry`] and BVH of its own; each `instance`
//! of it is one primitive of the scene (two-level acceleration, see [`instance`]).
//!
//! Shared parameters (every shape):
//!
//! | parameter          | type      | default            | meaning                                        |
//! |----------------|-----------|--------------------|------------------------------------------------|
//! | `to_world`     | transform | identity           | object-to-world transform                      |
//! | `flip_normals` | boolean   | false              | flip geometric and shading normals             |
//! | (nested)       | bsdf      | diffuse, 0.5 grey  | the material (nested or `<ref>`)               |
//! | (nested)       | emitter   | none               | an `area` emitter that makes the shape glow    |
//!
//! Conventions follow Mitsuba 3: triangles are front-facing when counter-clockwise
//! (the geometric normal is the normalised cross product of the world-space edges,
//! so a mirroring `to_world` flips it), shading normals are flipped together with
//! the geometric normal by `flip_normals`. Triangles are intersected with a
//! watertight test (no rays slip between triangles that share an edge).
//!
//! # Adding a shape plugin
//!
//! One file per plugin (the file stem is the scene `type`), listed once in the
//! plugin list of `register_plugins!` at the bottom of this file:
//!
//! 1. **`src/shapes/<name>.rs`**: the module doc is the plugin's manual (a first
//!    sentence `` `<name>`: ... ``, a `| parameter | type | default | meaning |` table,
//!    an XML example; `heliograph plugins <name>` prints it), and
//!    `pub fn build(p: &Props, ctx: &dyn BuildContext, to_world: &Transform, flip: bool)
//!    -> Result<Built>` reads the shape's own properties (the shared ones above, the
//!    material and the emitter are read here) and returns an analytic record or a
//!    world-space [`TriMesh`]; files are found and loaded through `ctx`
//!    ([`BuildContext::resolve_path`], [`BuildContext::cache`]), never through the scene
//!    builder.
//! 2. **One line** `"<name>" => <module>` in the plugin list.
//!
//! A plugin that makes triangles needs nothing else. A new analytic record kind is a
//! line `TAG = module::Record (cuda)` at the end of the `AnyShape` records list, whose
//! type implements [`ShapeRecord`] in its own file (bounds, intersection, interaction,
//! sampling, area, its fields of the GPU's [`record::FlatShape`], whether its scenes
//! walk the BVH), plus its CUDA twin `kernels/shapes/<module>.cuh`, which defines
//! `<module>_intersect(const ShapeTest& s, const Ray& r, float tmax)` (t, or `HG_INF`),
//! `<module>_hit(sh, ray, t, &p, &n, &uv, &dpdu, &dpdv)` (the geometric normal is the
//! shading normal) and `<module>_sample_position(sh, u, &p, &n, &uv)` (uniform by area).
//! The registry generates the twin's `#include` and its arms in the kernels'
//! intersection, hit and position-sampling dispatch (`shapes/registry.cuh`).
//!
//! From the lists, [`registry`] derives the [`AnyShape`] enum and its dispatch (the
//! [`Geometry`] queries), [`KNOWN`] (an unknown `type` gets a "did you mean"),
//! [`REGISTRY`] (the manuals) and the build match. `instance` and `shapegroup` are
//! registered like the others; their `build` refuses them as plain geometry (a
//! shapegroup is built at the top level by [`build_group`], an instance is placed by
//! [`build`]).

pub mod mesh;
pub mod record;
pub mod registry;

pub use cylinder::Cylinder;
pub use disk::Disk;
pub use mesh::{Mesh, TriMesh};
pub use rectangle::Rectangle;
pub use sphere::Sphere;

use std::sync::Arc;

use crate::accel::{LeafPrim, Primitives};
use crate::desc::props::Props;
use crate::desc::{Category, ObjectDesc};
use crate::error::{Error, Result};
use crate::math::{Aabb, Distribution1D, Ray, Transform, Vec2, Vec3};
use crate::plugin::registry::register_plugins;
use crate::plugin::BuildContext;
use mesh::tri_vertices;
pub use registry::ShapeRecord;

/// What a shape's build asks of the scene being built beyond what any plugin may ask
/// ([`BuildContext`]): the geometry that shapes add their records and groups to. It is
/// declared here, with the shapes, so that the plugin layer below knows no category.
pub trait ShapeContext: BuildContext {
    /// The scene's geometry built so far.
    fn geometry(&mut self) -> &mut Geometry;
}

/// `Shape::emitter` when the shape does not emit.
pub const NO_EMITTER: u32 = u32::MAX;

/// A ray–surface intersection, in world space.
#[derive(Clone, Copy, Debug)]
pub struct Hit {
    /// Ray distance.
    pub t: f32,
    /// Position.
    pub p: Vec3,
    /// Geometric normal (unit; follows winding / outward side, and `flip_normals`).
    pub ng: Vec3,
    /// Shading normal (unit; interpolated vertex normals where present, else `ng`).
    pub n: Vec3,
    /// Texture coordinates.
    pub uv: Vec2,
    /// Position derivative along u (for anisotropic frames); may be zero.
    pub dpdu: Vec3,
    /// Position derivative along v (for bump mapping); may be zero.
    pub dpdv: Vec3,
    /// The shape that was hit.
    pub shape: u32,
    /// Meshes: the triangle (an index into the mesh store's triangles); 0 otherwise.
    pub prim: u32,
    /// Meshes: the barycentric coordinates (b1, b2) of the point in the triangle.
    pub bary: Vec2,
}

/// A point sampled on a shape's surface.
#[derive(Clone, Copy, Debug)]
pub struct PositionSample {
    /// Position.
    pub p: Vec3,
    /// Unit normal at `p` (the emitting side for area lights): the same normal
    /// as [`Hit::n`] would be at that point.
    pub n: Vec3,
    /// Texture coordinates at `p`.
    pub uv: Vec2,
    /// Density with respect to area.
    pub pdf: f32,
    /// Meshes: the triangle (as [`Hit::prim`]); 0 for other shapes.
    pub prim: u32,
    /// Meshes: the barycentric coordinates (b1, b2) in the triangle (as [`Hit::bary`]).
    pub bary: Vec2,
}

/// One BVH primitive: a triangle of a mesh shape, or a whole analytic shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Prim {
    /// Owning shape.
    pub shape: u32,
    /// Triangle index in [`MeshStore::tris`] (meshes) or 0.
    pub index: u32,
}

/// Vertex and index data of every mesh of the scene.
///
/// `normals` and `uvs` are either empty (no mesh has them) or parallel to
/// `positions` (zero-filled for the vertices of meshes that lack them, see
/// [`Mesh::has_normals`] / [`Mesh::has_uvs`]).
#[derive(Clone, Debug, Default)]
pub struct MeshStore {
    /// World-space positions.
    pub positions: Vec<Vec3>,
    /// World-space unit normals (see the type's doc for the layout).
    pub normals: Vec<Vec3>,
    /// Texture coordinates (see the type's doc for the layout).
    pub uvs: Vec<Vec2>,
    /// Triangles as absolute vertex indices.
    pub tris: Vec<[u32; 3]>,
    /// The meshes' named attributes.
    pub attributes: Vec<mesh::StoredAttribute>,
}

/// A shape record: its geometry plus material and emitter handles.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Shape {
    /// Geometry.
    pub geom: AnyShape,
    /// BSDF handle.
    pub bsdf: u32,
    /// Emitter handle or [`NO_EMITTER`].
    pub emitter: u32,
}

/// All geometry of a scene.
#[derive(Clone, Debug, Default)]
pub struct Geometry {
    /// Shape records.
    pub shapes: Vec<Shape>,
    /// Mesh data.
    pub mesh: MeshStore,
    /// BVH primitives.
    pub prims: Vec<Prim>,
    /// Per-shape area distributions over triangles (index = shape; empty for analytic shapes).
    pub area_dists: Vec<Distribution1D>,
    /// The shape groups that instances place ([`shapegroup`]), each with its own
    /// geometry and BVH in group space.
    pub groups: Vec<Arc<shapegroup::ShapeGroup>>,
    /// The handle in `shapes` of each group's first shape: [`Self::seal_groups`]
    /// appends the groups' shape records after the scene's own shapes, so that a hit
    /// inside an instance names a shape (its material) like any other hit. Those
    /// records have no primitives of the scene's and their geometry is in group space.
    pub group_base: Vec<u32>,
    /// Nothing reads the texture coordinates of hits (no texture that reads them, no
    /// `aov` integrator): sphere hits leave `uv` at zero rather than compute an `atan2`
    /// and an `acos`. Off by default; the scene builder turns it on.
    pub uv_unread: bool,
}

/// The tree is built over the scene's primitives (triangles and analytic shapes).
impl Primitives for Geometry {
    #[inline]
    fn prim_count(&self) -> usize {
        self.prims.len()
    }

    #[inline]
    fn prim_bounds(&self, prim: u32) -> Aabb {
        Geometry::prim_bounds(self, prim)
    }

    #[inline]
    fn prim_is_triangle(&self, prim: u32) -> bool {
        Geometry::prim_is_triangle(self, prim)
    }

    /// The leaf record of primitive `prim` (triangles inlined).
    fn leaf_prim(&self, prim: u32) -> LeafPrim {
        let pr = self.prims[prim as usize];
        match self.shapes[pr.shape as usize].geom {
            AnyShape::Mesh(_) => {
                let (_, p) = tri_vertices(&self.mesh, pr.index);
                LeafPrim {
                    p0: p[0].into(),
                    prim,
                    p1: p[1].into(),
                    is_tri: 1,
                    p2: p[2].into(),
                    shape: pr.shape,
                }
            }
            _ => LeafPrim {
                prim,
                shape: pr.shape,
                ..Default::default()
            },
        }
    }

    #[inline]
    fn intersect_prim(&self, prim: u32, ray: &Ray) -> Option<(f32, Vec2)> {
        Geometry::intersect_prim(self, prim, ray)
    }
}

impl Geometry {
    /// Bounds of one primitive.
    #[inline]
    pub fn prim_bounds(&self, prim: u32) -> Aabb {
        let pr = self.prims[prim as usize];
        self.shapes[pr.shape as usize].geom.bounds(self, pr)
    }

    /// Whether primitive `prim` is a mesh triangle (else an analytic shape).
    #[inline]
    pub fn prim_is_triangle(&self, prim: u32) -> bool {
        let pr = self.prims[prim as usize];
        matches!(self.shapes[pr.shape as usize].geom, AnyShape::Mesh(_))
    }

    /// Intersects one primitive: `(t, prim-specific coordinates)` for
    /// `RAY_TMIN < t < ray.tmax` (triangles: barycentrics `(b1, b2)`;
    /// rectangles and disks: local `(x, y)`; spheres: unused).
    #[inline]
    pub fn intersect_prim(&self, prim: u32, ray: &Ray) -> Option<(f32, Vec2)> {
        let pr = self.prims[prim as usize];
        self.shapes[pr.shape as usize].geom.intersect(self, pr, ray)
    }

    /// Completes a hit found by [`Self::intersect_prim`].
    pub fn surface_interaction(&self, prim: u32, ray: &Ray, t: f32, coords: Vec2) -> Hit {
        let pr = self.prims[prim as usize];
        self.shapes[pr.shape as usize]
            .geom
            .interaction(self, pr, ray, t, coords)
    }

    /// Samples a point uniformly by area on shape `shape` (`pdf = 0` for a
    /// shape without area).
    pub fn sample_position(&self, shape: u32, u: Vec2) -> PositionSample {
        self.shapes[shape as usize]
            .geom
            .sample_position(self, shape, u)
    }

    /// Total surface area of shape `shape`.
    pub fn surface_area(&self, shape: u32) -> f32 {
        self.shapes[shape as usize].geom.surface_area()
    }

    /// Bounds of everything.
    pub fn bounds(&self) -> Aabb {
        (0..self.prims.len() as u32).fold(Aabb::EMPTY, |b, i| b.union(&self.prim_bounds(i)))
    }

    /// The scene's own shapes (an instance counts once; the groups' shape records that
    /// [`Self::seal_groups`] appends are not counted).
    pub fn shape_count(&self) -> usize {
        self.group_base
            .first()
            .map_or(self.shapes.len(), |&b| b as usize)
    }

    /// Sets [`Self::uv_unread`] here and in the shape groups (cloning a group only if
    /// something else holds it), so instanced shapes' hits match directly placed ones.
    pub fn set_uv_unread(&mut self, unread: bool) {
        self.uv_unread = unread;
        for g in &mut self.groups {
            if g.geom.uv_unread != unread {
                Arc::make_mut(g).geom.uv_unread = unread;
            }
        }
    }

    /// Appends the shape records of every group after the scene's own shapes and
    /// notes where each group's start ([`Self::group_base`]). Called once, after the
    /// last shape of the scene is added.
    pub fn seal_groups(&mut self) {
        self.group_base.clear();
        for g in &self.groups {
            self.group_base.push(self.shapes.len() as u32);
            self.shapes.extend_from_slice(&g.geom.shapes);
            let n = g.geom.shapes.len();
            self.area_dists
                .extend(std::iter::repeat_n(Distribution1D::default(), n));
        }
    }

    /// Adds an analytic shape (one primitive) and returns its handle.
    pub fn add_analytic(&mut self, geom: AnyShape, bsdf: u32) -> u32 {
        let handle = self.shapes.len() as u32;
        self.shapes.push(Shape {
            geom,
            bsdf,
            emitter: NO_EMITTER,
        });
        self.area_dists.push(Distribution1D::default());
        self.prims.push(Prim {
            shape: handle,
            index: 0,
        });
        handle
    }
}

/// What a shape plugin produces before it is added to the scene.
pub enum Built {
    /// An analytic shape record.
    Analytic(AnyShape),
    /// A world-space triangle mesh (already transformed by `to_world`).
    Mesh(TriMesh),
}

/// Builds a `<shape>` object: adds its geometry, primitives, BSDF and area
/// emitter to the context. An `instance` is placed by [`instance::place`].
pub fn build(obj: &ObjectDesc, ctx: &mut dyn ShapeContext) -> Result<u32> {
    if obj.kind == "instance" {
        return instance::place(obj, ctx);
    }
    let p = &obj.props;
    let to_world = p.transform("to_world")?;
    ctx.declare_transform(p, "to_world");
    let flip = p.bool("flip_normals", false)?;
    let built = build_geometry(obj, &*ctx, &to_world, flip)?;
    if let Built::Mesh(m) = &built {
        mesh::declare_positions(ctx, &m.positions);
    }
    let bsdf = ctx.bsdf_of(p)?;
    let emitter = ctx.child(p, Category::Emitter)?;
    p.check_unused(&obj.kind)?;
    let handle = add_geometry(ctx.geometry(), built, flip, bsdf);
    if let Some(e) = emitter {
        if e.kind != "area" {
            return Err(Error::param(
                &e.loc,
                "emitter",
                format!(
                    "only an \"area\" emitter can be nested in a shape, got \"{}\"",
                    e.kind
                ),
            ));
        }
        let eh = ctx.emitter(&e, Some(handle))?;
        ctx.geometry().shapes[handle as usize].emitter = eh;
    }
    Ok(handle)
}

/// Builds shape group `obj` (declared at the scene's top level, rendered only through
/// its instances: no shape record of its own); its index among the groups.
pub fn build_group(obj: &ObjectDesc, ctx: &mut dyn ShapeContext) -> Result<u32> {
    shapegroup::ensure(obj, ctx)
}

/// Rebuilds the geometry of shape `obj` alone (after its `to_world` changed), with
/// the material and emitter handles it had: appended to `geom` as [`build`] did.
pub fn rebuild_geometry(
    obj: &ObjectDesc,
    ctx: &dyn BuildContext,
    geom: &mut Geometry,
    bsdf: u32,
    emitter: u32,
) -> Result<u32> {
    if obj.kind == "instance" {
        return instance::rebuild(obj, ctx, geom, bsdf);
    }
    let p = &obj.props;
    let to_world = p.transform("to_world")?;
    let flip = p.bool("flip_normals", false)?;
    let built = build_geometry(obj, ctx, &to_world, flip)?;
    let handle = add_geometry(geom, built, flip, bsdf);
    geom.shapes[handle as usize].emitter = emitter;
    Ok(handle)
}

/// The triangles of mesh shape `obj` as its description says now (`None` for an
/// analytic shape): what [`mesh::move_in_place`] takes after a positions update.
pub fn mesh_of(obj: &ObjectDesc, ctx: &dyn BuildContext) -> Result<Option<TriMesh>> {
    if obj.kind == "instance" {
        return Ok(None);
    }
    let p = &obj.props;
    let to_world = p.transform("to_world")?;
    let flip = p.bool("flip_normals", false)?;
    Ok(match build_geometry(obj, ctx, &to_world, flip)? {
        Built::Mesh(m) => Some(m),
        Built::Analytic(_) => None,
    })
}

pub(crate) fn add_geometry(geom: &mut Geometry, built: Built, flip: bool, bsdf: u32) -> u32 {
    match built {
        Built::Analytic(g) => geom.add_analytic(g, bsdf),
        Built::Mesh(m) => m.add_to(geom, flip, bsdf),
    }
}

// The registry: the record kinds (`TAG = module::Record`, each a `ShapeRecord`:
// the `AnyShape` enum and its dispatch; `(cuda)`: its CUDA twin `kernels/shapes/<module>.cuh`
// is in the kernels' generated dispatch, `shapes/registry.cuh`) and the plugins
// (`"<type>" => module`: the scene `type`, its manual and its `build`).
register_plugins! {
    /// Every kind of shape record, one variant per line of the registry's records.
    #[derive(Clone, Copy, Debug)]
    pub enum AnyShape in "shapes", dispatch any_shape;
    MESH = mesh::Mesh,
    SPHERE = sphere::Sphere (cuda),
    RECTANGLE = rectangle::Rectangle,
    DISK = disk::Disk,
    CYLINDER = cylinder::Cylinder (cuda),
    INSTANCE = instance::Instance,
}

register_plugins! {
    category "shape" in "shapes";
    fn build_geometry(&Props, ctx: &dyn BuildContext, to_world: &Transform, flip: bool) -> Built;
    "cube" => cube,
    "cylinder" => cylinder,
    "disk" => disk,
    "instance" => instance,
    "obj" => obj,
    "ply" => ply,
    "rectangle" => rectangle,
    "serialized" => serialized,
    "shapegroup" => shapegroup,
    "sphere" => sphere,
}

impl AnyShape {
    /// Bounds of primitive `pr` ([`ShapeRecord::bounds`]).
    #[inline]
    pub fn bounds(&self, g: &Geometry, pr: Prim) -> Aabb {
        any_shape!(self, r => ShapeRecord::bounds(r, g, pr))
    }

    /// Intersects primitive `pr` ([`ShapeRecord::intersect`]).
    #[inline]
    pub fn intersect(&self, g: &Geometry, pr: Prim, ray: &Ray) -> Option<(f32, Vec2)> {
        any_shape!(self, r => ShapeRecord::intersect(r, g, pr, ray))
    }

    /// Completes a hit ([`ShapeRecord::interaction`]).
    #[inline]
    pub fn interaction(&self, g: &Geometry, pr: Prim, ray: &Ray, t: f32, coords: Vec2) -> Hit {
        any_shape!(self, r => ShapeRecord::interaction(r, g, pr, ray, t, coords))
    }

    /// A point uniformly by area ([`ShapeRecord::sample_position`]).
    pub fn sample_position(&self, g: &Geometry, shape: u32, u: Vec2) -> PositionSample {
        any_shape!(self, r => ShapeRecord::sample_position(r, g, shape, u))
    }

    /// Total surface area ([`ShapeRecord::surface_area`]).
    pub fn surface_area(&self) -> f32 {
        any_shape!(self, r => ShapeRecord::surface_area(r))
    }

    /// Writes the record's own fields of the kernels' record ([`ShapeRecord::flatten`]).
    pub fn flatten(&self, f: &mut record::FlatShape) {
        any_shape!(self, r => ShapeRecord::flatten(r, f))
    }

    /// Whether its scene walks the BVH on the GPU ([`ShapeRecord::walks_bvh`]).
    pub fn walks_bvh(&self) -> bool {
        any_shape!(self, r => ShapeRecord::walks_bvh(r))
    }
}

/// `v` normalised, or `fallback` when `v` is zero or not finite.
#[inline]
pub(crate) fn normalize_or(v: Vec3, fallback: Vec3) -> Vec3 {
    let l2 = v.length_squared();
    if l2 > 0.0 && l2.is_finite() {
        v / l2.sqrt()
    } else {
        fallback
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Helpers shared by the shape tests: building shapes from property lists.
    use std::sync::Arc;

    use super::*;
    use crate::desc::props::{Props, Value};
    use crate::error::Loc;

    /// A `<shape type=kind>` description with the given properties.
    pub fn shape_desc(kind: &str, props: Vec<(&str, Value)>) -> Arc<ObjectDesc> {
        let loc = Loc::new("test.xml", 3, 5);
        let mut p = Props::new(loc.clone());
        for (i, (k, v)) in props.into_iter().enumerate() {
            let l = Loc::new("test.xml", 10 + i as u32, 7);
            p.insert(k, v, l).expect("distinct keys");
        }
        Arc::new(ObjectDesc {
            category: Category::Shape,
            kind: kind.to_string(),
            id: None,
            props: p,
            loc,
        })
    }

    /// Builds the given shapes into a fresh scene context; its geometry.
    pub fn try_build(shapes: &[Arc<ObjectDesc>]) -> Result<Geometry> {
        let mut root = Props::new(Loc::new("test.xml", 1, 1));
        for s in shapes {
            root.push_object(s.clone(), s.loc.clone());
        }
        let root = ObjectDesc {
            category: Category::Scene,
            kind: "scene".into(),
            id: None,
            props: root,
            loc: Loc::new("test.xml", 1, 1),
        };
        crate::scene::with_test_context(&root, |ctx| {
            for s in shapes {
                build(s, ctx)?;
            }
            Ok(ctx.geometry().clone())
        })
    }

    /// The geometry of the given shapes (panics with the error text on failure).
    pub fn geom_of(shapes: &[Arc<ObjectDesc>]) -> Geometry {
        match try_build(shapes) {
            Ok(geom) => geom,
            Err(e) => panic!("shapes failed to build: {e}"),
        }
    }

    /// Brute-force closest hit over every primitive.
    pub fn closest(g: &Geometry, ray: &Ray) -> Option<Hit> {
        let mut r = *ray;
        let mut best = None;
        for i in 0..g.prims.len() as u32 {
            if let Some((t, c)) = g.intersect_prim(i, &r) {
                r.tmax = t;
                best = Some((i, t, c));
            }
        }
        best.map(|(i, t, c)| g.surface_interaction(i, ray, t, c))
    }

    /// Chi-square test that `sample_position` lands in the bins given by `bin`
    /// with the probabilities `expected` (independent truth: area ratios).
    pub fn check_bins(g: &Geometry, shape: u32, bin: impl Fn(Vec3) -> usize, expected: &[f64]) {
        let mut rng = crate::math::Pcg32::new(11, 5);
        let n = 20_000;
        let mut counts = vec![0f64; expected.len()];
        for _ in 0..n {
            let ps = g.sample_position(shape, Vec2::new(rng.next_f32(), rng.next_f32()));
            counts[bin(ps.p)] += 1.0;
        }
        let chi2: f64 = counts
            .iter()
            .zip(expected)
            .map(|(c, p)| (c - p * n as f64).powi(2) / (p * n as f64))
            .sum();
        let dof = (expected.len() - 1) as f64;
        // mean dof, sd sqrt(2 dof): 6 sd is a ~1e-6 false alarm rate
        assert!(
            chi2 < dof + 6.0 * (2.0 * dof).sqrt(),
            "chi2 {chi2} (dof {dof}): {counts:?}"
        );
    }

    /// Checks `E[1/pdf] = area` and that samples lie on the surface (hit from outside).
    pub fn check_sampling(g: &Geometry, shape: u32, area: f32) {
        let mut rng = crate::math::Pcg32::new(7, 3);
        let n = 4000;
        let mut sum = 0.0f64;
        for _ in 0..n {
            let u = Vec2::new(rng.next_f32(), rng.next_f32());
            let ps = g.sample_position(shape, u);
            assert!(ps.pdf > 0.0 && ps.n.is_normalized(), "{ps:?}");
            sum += 1.0 / ps.pdf as f64;
            // a ray aimed at the sample along -n from outside must hit it
            let o = ps.p + ps.n * 0.5;
            let hit = closest(g, &Ray::new(o, -ps.n)).expect("sample is on the surface");
            assert!((hit.p - ps.p).length() < 2e-3, "{:?} vs {:?}", hit.p, ps.p);
            // compare texture coordinates modulo 1 (periodic u on spheres, v on disks)
            let d = (hit.uv - ps.uv).abs();
            let d = d.min(Vec2::ONE - d);
            assert!(d.max_element() < 2e-3, "{:?} vs {:?}", hit.uv, ps.uv);
            assert!(hit.n.dot(ps.n) > 0.999, "{:?} vs {:?}", hit.n, ps.n);
        }
        let mean = (sum / n as f64) as f32;
        assert!(
            (mean - area).abs() < 1e-3 * area,
            "E[1/pdf] = {mean}, area {area}"
        );
        assert!((g.surface_area(shape) - area).abs() < 1e-3 * area);
    }
}

#[cfg(test)]
mod tests;
