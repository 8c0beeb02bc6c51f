//! Turns a [`SceneDesc`] into a render-ready [`Scene`]: resolves references,
//! builds every plugin through its category's registry, and checks that every
//! property was read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::desc::{Category, ObjectDesc, SceneDesc};
use super::props::{Props, Value};
use super::Scene;
use crate::accel::Bvh;
use crate::bsdfs::{self, AnyBsdf, Diffuse};
use crate::emitters::{self, AnyEmitter};
use crate::error::{Error, Loc, Result};
use crate::integrators;
use crate::math::{Color, Distribution2D};
use crate::sensors::{self, Sensor};
use crate::shapes::{self, Geometry};
use crate::textures::{self, TexRef, TextureStore};

/// Mutable state while a scene is built. Plugin `build` functions receive it to
/// add records and to resolve textures, nested BSDFs and file paths.
#[derive(Default)]
pub struct BuildCtx {
    /// Geometry built so far.
    pub geom: Geometry,
    /// BSDFs built so far.
    pub bsdfs: Vec<AnyBsdf>,
    /// Textures built so far.
    pub textures: TextureStore,
    /// Emitters built so far.
    pub emitters: Vec<AnyEmitter>,
    /// Environment-map distributions built so far.
    pub dists2d: Vec<Distribution2D>,
    ids: HashMap<String, Arc<ObjectDesc>>,
    built_bsdfs: HashMap<String, u32>,
    built_textures: HashMap<String, TexRef>,
    default_bsdf: Option<u32>,
}

impl BuildCtx {
    /// A context that resolves `<ref>`s against the objects of `root` that have ids.
    pub fn new(root: &ObjectDesc) -> Result<Self> {
        let mut ctx = BuildCtx::default();
        ctx.collect_ids(root)?;
        Ok(ctx)
    }

    fn collect_ids(&mut self, obj: &ObjectDesc) -> Result<()> {
        for e in obj.props.entries() {
            if let Value::Object(child) = &e.value {
                if let Some(id) = &child.id {
                    if let Some(prev) = self.ids.get(id) {
                        return Err(Error::parse(
                            &child.loc,
                            format!("duplicate id \"{id}\" (first defined at {})", prev.loc),
                        ));
                    }
                    self.ids.insert(id.clone(), child.clone());
                }
                self.collect_ids(child)?;
            }
        }
        Ok(())
    }

    /// The object an `id` refers to.
    pub fn lookup(&self, id: &str, loc: &Loc) -> Result<Arc<ObjectDesc>> {
        self.ids.get(id).cloned().ok_or_else(|| {
            let mut known: Vec<&str> = self.ids.keys().map(|s| s.as_str()).collect();
            known.sort();
            Error::parse(
                loc,
                format!(
                    "reference to unknown id \"{id}\" (defined ids: {})",
                    known.join(", ")
                ),
            )
        })
    }

    /// Nested objects of `category` in `p` (references resolved), marking them used.
    pub fn children(&self, p: &Props, category: Category) -> Result<Vec<Arc<ObjectDesc>>> {
        let mut out = Vec::new();
        for e in p.entries() {
            let obj = match &e.value {
                Value::Object(o) => o.clone(),
                Value::Ref(id) => self.lookup(id, &e.loc)?,
                _ => continue,
            };
            if obj.category == category {
                e.mark_used();
                out.push(obj);
            }
        }
        Ok(out)
    }

    /// At most one nested object of `category`.
    pub fn child(&self, p: &Props, category: Category) -> Result<Option<Arc<ObjectDesc>>> {
        let mut v = self.children(p, category)?;
        if v.len() > 1 {
            return Err(Error::parse(
                &v[1].loc,
                format!("only one nested {} is allowed here", category.tag()),
            ));
        }
        Ok(v.pop())
    }

    /// Resolves a filename property relative to the file that wrote it, checking it exists.
    pub fn resolve_path(&self, p: &Props, key: &str) -> Result<PathBuf> {
        let name = p
            .string_opt(key)?
            .ok_or_else(|| Error::param(&p.loc, key, "is required"))?;
        let loc = p.entry_loc(key);
        let path = resolve_relative(&loc, &name);
        if !path.is_file() {
            return Err(Error::param(
                &loc,
                key,
                format!("file not found: {}", path.display()),
            ));
        }
        Ok(path)
    }

    /// A colour parameter as a texture handle: a constant (`rgb`, `float`), a nested
    /// `<texture>` or a reference to one. `default = None` makes it required.
    pub fn texture(&mut self, p: &Props, key: &str, default: Option<Color>) -> Result<TexRef> {
        let entry = p.entries().iter().find(|e| e.name == key);
        let obj = match entry.map(|e| (&e.value, e)) {
            None => {
                return match default {
                    Some(c) => Ok(self.textures.add_constant(c)),
                    None => Err(Error::param(&p.loc, key, "is required")),
                }
            }
            Some((Value::Object(o), e)) => {
                e.mark_used();
                o.clone()
            }
            Some((Value::Ref(id), e)) => {
                e.mark_used();
                self.lookup(id, &e.loc)?
            }
            Some(_) => {
                let c = p.color_opt(key)?.expect("present");
                if !c.is_finite() {
                    return Err(Error::param(
                        &p.entry_loc(key),
                        key,
                        format!("must be finite, got {c}"),
                    ));
                }
                return Ok(self.textures.add_constant(c));
            }
        };
        if obj.category != Category::Texture {
            return Err(Error::param(
                &p.entry_loc(key),
                key,
                format!("expected a texture, got a {}", obj.category.tag()),
            ));
        }
        if let Some(id) = &obj.id {
            if let Some(&t) = self.built_textures.get(id) {
                return Ok(t);
            }
        }
        let t = textures::build(&obj, self)?;
        if let Some(id) = &obj.id {
            self.built_textures.insert(id.clone(), t);
        }
        Ok(t)
    }

    /// Builds a BSDF object (once per id) and returns its handle.
    pub fn bsdf(&mut self, obj: &ObjectDesc) -> Result<u32> {
        if let Some(id) = &obj.id {
            if let Some(&b) = self.built_bsdfs.get(id) {
                return Ok(b);
            }
        }
        let b = bsdfs::build(obj, self)?;
        let h = self.add_bsdf(b);
        if let Some(id) = &obj.id {
            self.built_bsdfs.insert(id.clone(), h);
        }
        Ok(h)
    }

    /// The BSDF nested in (or referenced by) `p`, or the shared default
    /// (diffuse, reflectance 0.5) when there is none.
    pub fn bsdf_of(&mut self, p: &Props) -> Result<u32> {
        match self.child(p, Category::Bsdf)? {
            Some(obj) => self.bsdf(&obj),
            None => Ok(self.default_bsdf()),
        }
    }

    fn default_bsdf(&mut self) -> u32 {
        if let Some(b) = self.default_bsdf {
            return b;
        }
        let reflectance = self.textures.add_constant(Color::splat(0.5));
        let b = self.add_bsdf(AnyBsdf::Diffuse(Diffuse { reflectance }));
        self.default_bsdf = Some(b);
        b
    }

    /// Adds a BSDF record.
    pub fn add_bsdf(&mut self, b: AnyBsdf) -> u32 {
        self.bsdfs.push(b);
        (self.bsdfs.len() - 1) as u32
    }

    /// Adds an emitter record.
    pub fn add_emitter(&mut self, e: AnyEmitter) -> u32 {
        self.emitters.push(e);
        (self.emitters.len() - 1) as u32
    }
}

/// `name` relative to the directory of the file `loc` points into.
pub fn resolve_relative(loc: &Loc, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    let file = Path::new(&*loc.file);
    match file.parent() {
        Some(dir) if !loc.file.starts_with('<') => dir.join(p),
        _ => p.to_path_buf(),
    }
}

/// Builds the render-ready scene from a description.
pub fn build_scene(desc: &SceneDesc) -> Result<Scene> {
    build_scene_reusing(desc, None)
}

/// Builds the scene, reusing `prev`'s BVH when the rebuilt geometry is the same
/// (a material, texture, light or camera change): the hierarchy depends only on
/// the primitives and their bounds, and it is the expensive part of a rebuild.
pub fn build_scene_reusing(desc: &SceneDesc, prev: Option<&Scene>) -> Result<Scene> {
    let root = &desc.root;
    let mut ctx = BuildCtx::new(root)?;
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
            Category::Shape => shapes::build(obj, &mut ctx)?,
            Category::Emitter => {
                let em = emitters::build(obj, None, &mut ctx)?;
                ctx.add_emitter(em);
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
                let holder = texture_holder(obj);
                ctx.texture(&holder, "texture", None)?;
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
        Some(obj) => sensors::build(obj, &mut ctx)?,
        None => Sensor::default_for(&root.loc)?,
    };
    let integrator = match &integrator_obj {
        Some(obj) => integrators::build(obj)?,
        None => integrators::AnyIntegrator::default(),
    };
    finish(ctx, sensor, integrator, prev)
}

fn texture_holder(obj: &Arc<ObjectDesc>) -> Props {
    let mut p = Props::new(obj.loc.clone());
    p.set("texture", Value::Object(obj.clone()), obj.loc.clone());
    p
}

fn finish(
    ctx: BuildCtx,
    sensor: Sensor,
    integrator: integrators::AnyIntegrator,
    prev: Option<&Scene>,
) -> Result<Scene> {
    let bvh = match prev {
        Some(p) if same_bvh_input(&p.geom, &ctx.geom) => p.bvh.clone(),
        _ => Bvh::build(&ctx.geom),
    };
    let bsphere = ctx.geom.bounds().bounding_sphere();
    let env_emitters = ctx
        .emitters
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_environment())
        .map(|(i, _)| i as u32)
        .collect();
    Ok(Scene {
        geom: ctx.geom,
        bvh,
        bsdfs: ctx.bsdfs,
        textures: ctx.textures,
        emitters: ctx.emitters,
        env_emitters,
        dists2d: ctx.dists2d,
        sensor,
        integrator,
        bsphere,
    })
}

/// Whether a BVH built over `a` is valid for `b`: the same primitives, the same
/// triangles (the BVH inlines their vertices) and the same analytic bounds.
fn same_bvh_input(a: &Geometry, b: &Geometry) -> bool {
    a.prims == b.prims
        && a.mesh.tris == b.mesh.tris
        && a.mesh.positions == b.mesh.positions
        && (0..a.prims.len() as u32).all(|i| a.prim_bounds(i) == b.prim_bounds(i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::xml::load_string;

    fn scene(reflectance: &str, x: &str) -> Scene {
        let xml = format!(
            r#"<scene version="3.0.0"><emitter type="constant"/>
               <shape type="sphere"><point name="center" x="{x}" y="0" z="0"/>
                 <bsdf type="diffuse"><rgb name="reflectance" value="{reflectance}"/></bsdf></shape>
               <shape type="cube"/></scene>"#
        );
        build_scene(&load_string(&xml, &[]).unwrap()).unwrap()
    }

    #[test]
    fn bvh_is_reused_exactly_when_the_geometry_is_unchanged() {
        let a = scene("0.5", "3");
        assert!(
            same_bvh_input(&a.geom, &scene("0.9", "3").geom),
            "a material change keeps the BVH"
        );
        assert!(
            !same_bvh_input(&a.geom, &scene("0.5", "4").geom),
            "a moved shape needs a new BVH"
        );
        let desc = load_string(
            r#"<scene version="3.0.0"><shape type="sphere"><point name="center" x="3" y="0" z="0"/>
               <bsdf type="diffuse"><rgb name="reflectance" value="0.2"/></bsdf></shape><shape type="cube"/></scene>"#,
            &[],
        )
        .unwrap();
        let b = build_scene_reusing(&desc, Some(&a)).unwrap();
        assert_eq!(b.bvh.nodes, a.bvh.nodes);
    }
}
