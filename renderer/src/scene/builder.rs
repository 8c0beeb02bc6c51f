//! Turns a [`SceneDesc`] into a render-ready [`Scene`]: resolves references,
//! builds every plugin through its category's registry, and checks that every
//! property was read.
//!
//! While it builds, the context also records what parameter updates need
//! ([`BuildLog`]): every object (texture, BSDF, emitter, shape, sensor) with its key
//! prefix and path, the records its build allocated (its own, nested constants,
//! images, distributions) and which objects read it. An update then rebuilds one
//! object by *replaying* its build on the same slots: the plugin's own `build` runs
//! again on the edited description, each allocation returns the handle it returned
//! the first time and overwrites that slot, and nested objects are not rebuilt — so an
//! updated scene is exactly the scene a fresh load of the edited description gives.
//! Plugins declare their editable parameters through [`BuildCtx::declare`] and the
//! helpers around it ([`crate::desc::params`]).
//!
//! Plugins see the context through the [`BuildContext`] trait of the leaf module
//! [`crate::plugin`]: they never import this builder.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::{RenderSetup, Scene};
use crate::accel::Bvh;
use crate::bsdfs::{self, AnyBsdf, Diffuse};
use crate::desc::cache::LoadCache;
use crate::desc::keys::ObjectKeys;
use crate::desc::params::{ParamDecl, ParamTable, ParamValue, Range, Target};
use crate::desc::paths::find_file;
use crate::desc::props::{PixelArray, Props, Value};
use crate::desc::{Category, ObjectDesc, SceneDesc};
use crate::emitters::{self, AnyEmitter};
use crate::error::{Error, Loc, Result};
use crate::integrators;
use crate::math::spectrum::{Spectrum, SpectrumUse};
use crate::math::{Color, Distribution2D, Vec3};
use crate::plugin::BuildContext;
use crate::sensors::{self, Sensor};
use crate::shapes::{self, Geometry, ShapeContext};
use crate::textures::{self, AnyTexture, TexRef, TextureStore};

/// A slot a build allocated (or a nested object it resolved), in call order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alloc {
    /// A texture record (a constant, a texture's own record, or a resolved nested texture).
    Texture(u32),
    /// An image of the texture store.
    Image(u32),
    /// An environment map's sampling distribution.
    Dist2d(u32),
    /// A BSDF record (own, or a resolved nested BSDF).
    Bsdf(u32),
    /// An emitter record.
    Emitter(u32),
}

/// One object of a built scene, as the build saw it.
#[derive(Clone, Debug)]
pub struct ObjRecord {
    /// Key prefix of its parameters (empty for objects without a name).
    pub key: String,
    /// Property names from the root of the description to the object.
    pub path: Vec<String>,
    /// Its category.
    pub category: Category,
    /// Its plugin name.
    pub kind: String,
    /// Its handle: texture, BSDF or emitter record, shape index (0 for the sensor).
    pub handle: u32,
    /// An area emitter's shape.
    pub shape: Option<u32>,
    /// What its build allocated or resolved, in order.
    pub allocs: Vec<Alloc>,
    /// When its build finished, among all objects (an object finishes after every
    /// object it reads).
    pub order: usize,
    /// Objects whose records were built from this one (they read its record, e.g. a
    /// texture's mean): rebuilt after it.
    pub dependents: Vec<usize>,
}

/// Every object of a built scene, in the order their builds finished (an object
/// finishes after the objects it reads).
#[derive(Clone, Debug, Default)]
pub struct BuildLog {
    /// The objects.
    pub objects: Vec<ObjRecord>,
}

/// The replay of one object's build (see the module docs).
#[derive(Debug)]
struct Replay {
    allocs: Vec<Alloc>,
    cursor: usize,
}

/// An object being built, and where its slot in the log is.
#[derive(Debug)]
struct Open {
    record: Option<usize>,
    /// Its id and where it is defined.
    id: Option<(String, Loc)>,
    /// Where it was reached from (a reference or the nesting property).
    via: Loc,
}

/// Mutable state while a scene is built. Plugin `build` functions receive it to
/// add records, resolve textures, nested BSDFs and file paths, and declare their
/// parameters.
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
    keys: ObjectKeys,
    log: BuildLog,
    /// Log record of each object built so far, by address.
    record_of: HashMap<usize, usize>,
    /// Objects finished so far.
    finished: usize,
    /// Slots a replay overwrote.
    written: Vec<Alloc>,
    /// In a replay context: the scene's distributions, copied into `dists2d` only
    /// when a replay writes one (they can be large).
    base_dists: Option<Arc<Vec<Distribution2D>>>,
    params: ParamTable,
    open: Vec<Open>,
    replay: Option<Replay>,
    cache: LoadCache,
}

impl BuildCtx {
    /// A context that resolves `<ref>`s against the objects of `root` that have ids.
    pub fn new(root: &ObjectDesc) -> Result<Self> {
        Self::with_cache(root, LoadCache::default())
    }

    /// As [`Self::new`], reading files through `cache`.
    pub fn with_cache(root: &ObjectDesc, cache: LoadCache) -> Result<Self> {
        let mut ctx = BuildCtx {
            keys: ObjectKeys::new(root),
            cache,
            ..BuildCtx::default()
        };
        ctx.collect_ids(root)?;
        Ok(ctx)
    }

    fn collect_ids(&mut self, root: &ObjectDesc) -> Result<()> {
        let mut todo = vec![root];
        while let Some(obj) = todo.pop() {
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
                    todo.push(child);
                }
            }
        }
        Ok(())
    }

    /// The files this scene read.
    pub fn cache(&self) -> &LoadCache {
        &self.cache
    }

    /// Whether this context replays an object for an update (its parameter values
    /// were checked when they were set).
    pub fn is_replay(&self) -> bool {
        self.replay.is_some()
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
        BuildContext::children(self, p, category)
    }

    /// As [`Self::children`], with where each was nested or referenced.
    pub fn children_at(
        &self,
        p: &Props,
        category: Category,
    ) -> Result<Vec<(Arc<ObjectDesc>, Loc)>> {
        let mut out = Vec::new();
        for e in p.entries() {
            let obj = match &e.value {
                Value::Object(o) => o.clone(),
                Value::Ref(id) => self.lookup(id, &e.loc)?,
                _ => continue,
            };
            if obj.category == category {
                e.mark_used();
                out.push((obj, e.loc.clone()));
            }
        }
        Ok(out)
    }

    /// At most one nested object of `category`.
    pub fn child(&self, p: &Props, category: Category) -> Result<Option<Arc<ObjectDesc>>> {
        BuildContext::child(self, p, category)
    }

    /// Resolves a filename property: next to the file that wrote it, else in the
    /// scene's `<path>` folders (latest first), as Mitsuba's file resolver does.
    pub fn resolve_path(&self, p: &Props, key: &str) -> Result<PathBuf> {
        let name = p
            .string_opt(key)?
            .ok_or_else(|| Error::param(&p.loc, key, "is required"))?;
        let loc = p.entry_loc(key);
        find_file(&loc, &name, self.cache.search_paths())
            .map_err(|msg| Error::param(&loc, key, msg))
    }

    // ---- objects: scopes, the log and reference cycles -----------------------------

    /// Opens the scope of `obj` (reached through a property at `via`): allocations and
    /// declarations until [`Self::end`] belong to it. A reference back to an object
    /// whose build is still running is a cycle: an error naming both places.
    fn begin(&mut self, obj: &ObjectDesc, via: &Loc) -> Result<()> {
        if let Some(id) = &obj.id {
            let open: Vec<(&(String, Loc), &Loc)> = self
                .open
                .iter()
                .filter_map(|o| o.id.as_ref().map(|i| (i, &o.via)))
                .collect();
            if let Some(k) = open.iter().position(|((o, _), _)| o == id) {
                // each object of the cycle, where it is defined and where it refers to
                // the next one
                let cycle = &open[k..];
                let mut steps = Vec::new();
                for (i, ((name, def), _)) in cycle.iter().enumerate() {
                    let (next, at) = match cycle.get(i + 1) {
                        Some(((n, _), v)) => (n.as_str(), *v),
                        None => (id.as_str(), via),
                    };
                    steps.push(format!(
                        "\"{name}\" (defined at {def}) refers to \"{next}\" at {at}"
                    ));
                }
                let names: Vec<&str> = cycle.iter().map(|((o, _), _)| o.as_str()).collect();
                return Err(Error::parse(
                    via,
                    format!(
                        "reference cycle {} -> {id}: {}; an object cannot contain itself",
                        names.join(" -> "),
                        steps.join(", ")
                    ),
                ));
            }
        }
        let record = match (&self.replay, self.keys.get(obj)) {
            (None, Some(name)) => {
                self.log.objects.push(ObjRecord {
                    key: name.key.clone(),
                    path: name.path.clone(),
                    category: obj.category,
                    kind: obj.kind.clone(),
                    handle: 0,
                    shape: None,
                    allocs: Vec::new(),
                    order: 0,
                    dependents: Vec::new(),
                });
                let r = self.log.objects.len() - 1;
                self.record_of.insert(obj as *const ObjectDesc as usize, r);
                Some(r)
            }
            _ => None,
        };
        self.open.push(Open {
            record,
            id: obj.id.clone().map(|id| (id, obj.loc.clone())),
            via: via.clone(),
        });
        Ok(())
    }

    /// Closes the innermost scope; the object's handle is `handle`. The enclosing
    /// object (if any) logs it as a resolved child (`as_child`) and becomes its
    /// dependent.
    fn end(&mut self, handle: u32, as_child: Option<fn(u32) -> Alloc>) {
        let Some(open) = self.open.pop() else {
            return;
        };
        if let Some(r) = open.record {
            self.log.objects[r].handle = handle;
            self.log.objects[r].order = self.finished;
            self.finished += 1;
            if let Some(parent) = self.current_record() {
                self.log.objects[r].dependents.push(parent);
            }
        }
        if let Some(child) = as_child {
            self.log_alloc(child(handle));
        }
    }

    /// Runs `f` in the scope of `obj`, closing it on success and failure alike.
    fn scoped<T>(
        &mut self,
        obj: &ObjectDesc,
        via: &Loc,
        as_child: Option<fn(u32) -> Alloc>,
        f: impl FnOnce(&mut Self) -> Result<(u32, T)>,
    ) -> Result<T> {
        self.begin(obj, via)?;
        match f(self) {
            Ok((handle, v)) => {
                self.end(handle, as_child);
                Ok(v)
            }
            Err(e) => {
                self.open.pop();
                Err(e)
            }
        }
    }

    fn current_record(&self) -> Option<usize> {
        self.open.last().and_then(|o| o.record)
    }

    fn log_alloc(&mut self, a: Alloc) {
        if self.replay.is_none() {
            if let Some(r) = self.current_record() {
                self.log.objects[r].allocs.push(a);
            }
        }
    }

    /// In a replay: the slot the original build got at this point, which must be of
    /// the kind `want` describes.
    fn replayed(&mut self, want: &str) -> Option<Result<Alloc>> {
        let r = self.replay.as_mut()?;
        let a = r.allocs.get(r.cursor).copied();
        r.cursor += 1;
        Some(a.ok_or_else(|| {
            Error::Render(format!(
                "internal error: an updated object allocated more than its first build \
                 (a {want} past the end)"
            ))
        }))
    }

    fn replay_mismatch(got: Alloc, want: &str) -> Error {
        Error::Render(format!(
            "internal error: an updated object's build diverged from its first build \
             (wanted a {want}, the first build had {got:?})"
        ))
    }

    // ---- allocations -----------------------------------------------------------------

    /// Adds a texture record (in a replay: overwrites the slot of the first build).
    pub fn add_texture(&mut self, t: AnyTexture) -> Result<TexRef> {
        if let Some(a) = self.replayed("texture") {
            return match a? {
                Alloc::Texture(h) => {
                    self.textures.records[h as usize] = t;
                    self.written.push(Alloc::Texture(h));
                    Ok(h)
                }
                other => Err(Self::replay_mismatch(other, "texture")),
            };
        }
        let h = self.textures.add(t);
        self.log_alloc(Alloc::Texture(h));
        Ok(h)
    }

    /// Adds a constant texture.
    pub fn add_constant(&mut self, c: Color) -> Result<TexRef> {
        self.add_texture(AnyTexture::Constant(textures::Constant::new(c)))
    }

    /// Adds an image to the texture store.
    pub fn add_image(&mut self, img: Arc<PixelArray>) -> Result<u32> {
        if let Some(a) = self.replayed("image") {
            return match a? {
                Alloc::Image(i) => {
                    self.textures.images[i as usize] = img;
                    self.written.push(Alloc::Image(i));
                    Ok(i)
                }
                other => Err(Self::replay_mismatch(other, "image")),
            };
        }
        let i = self.textures.add_image(img);
        self.log_alloc(Alloc::Image(i));
        Ok(i)
    }

    /// Adds an environment map's sampling distribution.
    pub fn add_dist2d(&mut self, d: Distribution2D) -> Result<u32> {
        if let Some(a) = self.replayed("distribution") {
            return match a? {
                Alloc::Dist2d(i) => {
                    if let Some(base) = self.base_dists.take() {
                        self.dists2d = base.to_vec();
                    }
                    self.dists2d[i as usize] = d;
                    self.written.push(Alloc::Dist2d(i));
                    Ok(i)
                }
                other => Err(Self::replay_mismatch(other, "distribution")),
            };
        }
        self.dists2d.push(d);
        let i = (self.dists2d.len() - 1) as u32;
        self.log_alloc(Alloc::Dist2d(i));
        Ok(i)
    }

    /// Adds a BSDF record.
    pub fn add_bsdf(&mut self, b: AnyBsdf) -> Result<u32> {
        if let Some(a) = self.replayed("BSDF") {
            return match a? {
                Alloc::Bsdf(h) => {
                    self.bsdfs[h as usize] = b;
                    self.written.push(Alloc::Bsdf(h));
                    Ok(h)
                }
                other => Err(Self::replay_mismatch(other, "BSDF")),
            };
        }
        self.bsdfs.push(b);
        let h = (self.bsdfs.len() - 1) as u32;
        self.log_alloc(Alloc::Bsdf(h));
        Ok(h)
    }

    /// Adds an emitter record.
    pub fn add_emitter(&mut self, e: AnyEmitter) -> Result<u32> {
        if let Some(a) = self.replayed("emitter") {
            return match a? {
                Alloc::Emitter(h) => {
                    self.emitters[h as usize] = e;
                    self.written.push(Alloc::Emitter(h));
                    Ok(h)
                }
                other => Err(Self::replay_mismatch(other, "emitter")),
            };
        }
        self.emitters.push(e);
        let h = (self.emitters.len() - 1) as u32;
        self.log_alloc(Alloc::Emitter(h));
        Ok(h)
    }

    // ---- textures, BSDFs and emitters ------------------------------------------------

    /// A colour parameter as a texture handle: a constant (`rgb`, `float`), a nested
    /// `<texture>` or a reference to one. `default = None` makes it required. A constant
    /// (or the default) is declared as the parameter `<key>.value`.
    pub fn texture(&mut self, p: &Props, key: &str, default: Option<Color>) -> Result<TexRef> {
        self.texture_in(p, key, default, Range::Any, SpectrumUse::Reflectance)
    }

    /// As [`Self::texture`]; a constant's parameter accepts values in `range`, and a
    /// `<spectrum>` is converted to RGB for `usage` (as Mitsuba: emission, a bounded
    /// reflectance or an unbounded quantity such as an index of refraction).
    pub fn texture_in(
        &mut self,
        p: &Props,
        key: &str,
        default: Option<Color>,
        range: Range,
        usage: SpectrumUse,
    ) -> Result<TexRef> {
        let entry = p.entries().iter().find(|e| e.name == key);
        let (obj, via) = match entry.map(|e| (&e.value, e)) {
            None => {
                let c = default.ok_or_else(|| Error::param(&p.loc, key, "is required"))?;
                let value = if c.x == c.y && c.y == c.z {
                    ParamValue::Float(c.x as f64)
                } else {
                    ParamValue::Color(c)
                };
                return self.declare_constant(key, value, range, c);
            }
            Some((Value::Object(o), e)) => {
                e.mark_used();
                (o.clone(), e.loc.clone())
            }
            Some((Value::Ref(id), e)) => {
                e.mark_used();
                (self.lookup(id, &e.loc)?, e.loc.clone())
            }
            Some((v, _)) => {
                let c = p.color_as(key, usage)?.expect("present");
                if !c.is_finite() {
                    return Err(Error::param(
                        &p.entry_loc(key),
                        key,
                        format!("must be finite, got {c}"),
                    ));
                }
                let grey_spectrum = matches!(v, Value::Spectrum(Spectrum::Uniform(_)))
                    && usage != SpectrumUse::Emission;
                let value = match v {
                    Value::Float(_) | Value::Int(_) => ParamValue::Float(c.x as f64),
                    _ if grey_spectrum => ParamValue::Float(c.x as f64),
                    _ => ParamValue::Color(c),
                };
                return self.declare_constant(key, value, range, c);
            }
        };
        if obj.category != Category::Texture {
            return Err(Error::param(
                &p.entry_loc(key),
                key,
                format!("expected a texture, got a {}", obj.category.tag()),
            ));
        }
        self.texture_object(&obj, &via)
    }

    /// Adds constant texture `c` given by property `key` and declares its parameter
    /// `key.value` (holding `value`), tied to the texture.
    fn declare_constant(
        &mut self,
        key: &str,
        value: ParamValue,
        range: Range,
        c: Color,
    ) -> Result<TexRef> {
        let name = format!("{key}.value");
        self.declare(&name, value, Target::prop(key), range);
        let t = self.add_constant(c)?;
        if self.replay.is_none() {
            if let Some(r) = self.current_record() {
                let full = format!("{}.{name}", self.log.objects[r].key);
                self.params.set_texture(&full, t);
            }
        }
        Ok(t)
    }

    /// Builds a texture object (once per id) and returns its handle; in a replay, the
    /// handle the first build resolved.
    fn texture_object(&mut self, obj: &Arc<ObjectDesc>, via: &Loc) -> Result<TexRef> {
        if let Some(a) = self.replayed("nested texture") {
            return match a? {
                Alloc::Texture(h) => Ok(h),
                other => Err(Self::replay_mismatch(other, "nested texture")),
            };
        }
        if let Some(id) = &obj.id {
            if let Some(&t) = self.built_textures.get(id) {
                self.link_child(obj, Alloc::Texture(t));
                return Ok(t);
            }
        }
        let t = self.scoped(obj, via, Some(Alloc::Texture), |ctx| {
            let t = textures::build(obj, ctx)?;
            let t = ctx.add_texture(t)?;
            Ok((t, t))
        })?;
        if let Some(id) = &obj.id {
            self.built_textures.insert(id.clone(), t);
        }
        Ok(t)
    }

    /// An object built earlier (by id) is read again here: log it for the current
    /// object and make the current object its dependent.
    fn link_child(&mut self, child: &ObjectDesc, a: Alloc) {
        let Some(parent) = self.current_record() else {
            return;
        };
        self.log_alloc(a);
        if let Some(&r) = self.record_of.get(&(child as *const ObjectDesc as usize)) {
            let deps = &mut self.log.objects[r].dependents;
            if !deps.contains(&parent) {
                deps.push(parent);
            }
        }
    }

    /// Builds a BSDF object (once per id) and returns its handle; in a replay, the
    /// handle the first build resolved.
    pub fn bsdf(&mut self, obj: &Arc<ObjectDesc>) -> Result<u32> {
        let via = obj.loc.clone();
        self.bsdf_at(obj, &via)
    }

    /// As [`Self::bsdf`], for an object nested or referenced at `via`.
    pub fn bsdf_at(&mut self, obj: &Arc<ObjectDesc>, via: &Loc) -> Result<u32> {
        if let Some(a) = self.replayed("nested BSDF") {
            return match a? {
                Alloc::Bsdf(h) => Ok(h),
                other => Err(Self::replay_mismatch(other, "nested BSDF")),
            };
        }
        if let Some(id) = &obj.id {
            if let Some(&b) = self.built_bsdfs.get(id) {
                self.link_child(obj, Alloc::Bsdf(b));
                return Ok(b);
            }
        }
        let h = self.scoped(obj, via, Some(Alloc::Bsdf), |ctx| {
            let h = ctx.build_bsdf_record(obj)?;
            Ok((h, h))
        })?;
        if let Some(id) = &obj.id {
            self.built_bsdfs.insert(id.clone(), h);
        }
        Ok(h)
    }

    /// The plugin's build plus its own record (what a replay repeats).
    fn build_bsdf_record(&mut self, obj: &ObjectDesc) -> Result<u32> {
        let b = bsdfs::build(obj, self)?;
        let max = bsdfs::registry::MAX_ADAPTER_DEPTH;
        if bsdfs::registry::adapter_depth(&b, &self.bsdfs) > max {
            return Err(Error::parse(
                &obj.loc,
                format!(
                    "this \"{}\" sits on more than {max} nested adapter BSDFs (mask, twosided, \
                     ...); use at most {max}",
                    obj.kind
                ),
            ));
        }
        self.add_bsdf(b)
    }

    /// The BSDF nested in (or referenced by) `p`, or the shared default
    /// (diffuse, reflectance 0.5) when there is none.
    pub fn bsdf_of(&mut self, p: &Props) -> Result<u32> {
        let entry = p.entries().iter().find(|e| match &e.value {
            Value::Object(o) => o.category == Category::Bsdf,
            Value::Ref(_) => true,
            _ => false,
        });
        let via = entry.map(|e| e.loc.clone());
        match (self.child(p, Category::Bsdf)?, via) {
            (Some(obj), Some(via)) => self.bsdf_at(&obj, &via),
            (Some(obj), None) => self.bsdf(&obj),
            (None, _) => self.default_bsdf(),
        }
    }

    fn default_bsdf(&mut self) -> Result<u32> {
        if let Some(b) = self.default_bsdf {
            return Ok(b);
        }
        // not part of any object: never replayed, no parameters
        let open = std::mem::take(&mut self.open);
        let made = self
            .add_constant(Color::splat(0.5))
            .and_then(|reflectance| self.add_bsdf(AnyBsdf::Diffuse(Diffuse { reflectance })));
        self.open = open;
        let b = made?;
        self.default_bsdf = Some(b);
        Ok(b)
    }

    /// Builds an `<emitter>` object (`shape`: the shape an area emitter is nested in)
    /// and adds its record.
    pub fn emitter(&mut self, obj: &Arc<ObjectDesc>, shape: Option<u32>) -> Result<u32> {
        let via = obj.loc.clone();
        self.scoped(obj, &via, Some(Alloc::Emitter), |ctx| {
            let h = ctx.build_emitter_record(obj, shape)?;
            if let Some(r) = ctx.current_record() {
                ctx.log.objects[r].shape = shape;
            }
            Ok((h, h))
        })
    }

    fn build_emitter_record(&mut self, obj: &ObjectDesc, shape: Option<u32>) -> Result<u32> {
        let e = emitters::build(obj, shape, self)?;
        self.add_emitter(e)
    }

    // ---- parameter declarations ------------------------------------------------------

    /// Declares parameter `<object key>.<name>` of the object being built with its
    /// current `value`; nothing in a replay or outside a named object.
    pub fn declare(&mut self, name: &str, value: ParamValue, target: Target, range: Range) {
        if self.replay.is_some() {
            return;
        }
        let Some(r) = self.current_record() else {
            return;
        };
        let key = format!("{}.{name}", self.log.objects[r].key);
        self.params.declare(ParamDecl {
            key,
            value,
            owner: r,
            target,
            range,
            texture: None,
        });
    }

    /// Declares float parameter `name` (property `name`) with value `v`.
    pub fn declare_float(&mut self, _p: &Props, name: &str, v: f32) -> Result<()> {
        self.declare(
            name,
            ParamValue::Float(v as f64),
            Target::prop(name),
            Range::Any,
        );
        Ok(())
    }

    /// Declares transform parameter `name` (identity when the property is absent).
    pub fn declare_transform(&mut self, p: &Props, name: &str) -> Result<()> {
        BuildContext::declare_transform(self, p, name);
        Ok(())
    }

    /// Declares point/vector parameter `name` with value `v`; setting it removes the
    /// properties in `instead` (another way to give the same value).
    pub fn declare_vector(&mut self, name: &str, v: Vec3, instead: &[&str]) {
        let target = Target::Prop {
            set: name.to_string(),
            remove: instead.iter().map(|s| s.to_string()).collect(),
        };
        self.declare(name, ParamValue::Vector(v), target, Range::Any);
    }

    /// Declares image parameter `name` (a bitmap's or environment map's texels, as
    /// stored); setting it replaces the file or array the image came from.
    pub fn declare_image(&mut self, _p: &Props, name: &str, img: &Arc<PixelArray>) -> Result<()> {
        BuildContext::declare_image(self, name, img);
        Ok(())
    }

    /// Declares a relative index of refraction `eta` (written as `int_ior = eta`,
    /// `ext_ior = 1`).
    pub fn declare_eta(&mut self, eta: f32) {
        let value = ParamValue::Float(eta as f64);
        self.declare("eta", value, Target::Eta, Range::Open(0.0, f64::INFINITY));
    }

    // ---- whole scenes and replays ----------------------------------------------------

    /// Rebuilds the object of record `r` (found at `obj` in the edited description) on
    /// the slots of its first build.
    pub(crate) fn replay(&mut self, log: &BuildLog, r: usize, obj: &ObjectDesc) -> Result<()> {
        let rec = &log.objects[r];
        self.replay = Some(Replay {
            allocs: rec.allocs.clone(),
            cursor: 0,
        });
        self.open.push(Open {
            record: None,
            id: None,
            via: obj.loc.clone(),
        });
        let res = match rec.category {
            Category::Texture => textures::build(obj, self)
                .and_then(|t| self.add_texture(t))
                .map(drop),
            Category::Bsdf => self.build_bsdf_record(obj).map(drop),
            Category::Emitter => self.build_emitter_record(obj, rec.shape).map(drop),
            c => Err(Error::Render(format!(
                "internal error: a {} is not rebuilt by replay",
                c.tag()
            ))),
        };
        self.open.pop();
        self.replay = None;
        res
    }

    /// A context that replays objects of a built scene on copies of its records.
    pub(crate) fn for_replay(
        root: &ObjectDesc,
        cache: LoadCache,
        scene: &Scene,
    ) -> Result<BuildCtx> {
        let mut ctx = BuildCtx::with_cache(root, cache)?;
        ctx.bsdfs = scene.bsdfs.to_vec();
        ctx.textures = TextureStore::clone(&scene.textures);
        ctx.emitters = scene.emitters.to_vec();
        ctx.base_dists = Some(scene.dists2d.clone());
        Ok(ctx)
    }

    /// The slots replays have overwritten so far.
    pub(crate) fn written(&self) -> &[Alloc] {
        &self.written
    }

    /// The distributions after the replays: `None` when no replay wrote one.
    pub(crate) fn take_replayed_dists(&mut self) -> Option<Vec<Distribution2D>> {
        match self.base_dists {
            Some(_) => None,
            None => Some(std::mem::take(&mut self.dists2d)),
        }
    }

    /// The log and declarations of the build.
    pub(crate) fn take_log(&mut self) -> (BuildLog, ParamTable) {
        (
            std::mem::take(&mut self.log),
            std::mem::take(&mut self.params),
        )
    }
}

/// What plugins see of the context (the leaf trait in [`crate::plugin`]).
impl BuildContext for BuildCtx {
    fn texture_in(
        &mut self,
        p: &Props,
        key: &str,
        default: Option<Color>,
        range: Range,
        usage: SpectrumUse,
    ) -> Result<TexRef> {
        BuildCtx::texture_in(self, p, key, default, range, usage)
    }

    fn add_constant(&mut self, c: Color) -> Result<TexRef> {
        BuildCtx::add_constant(self, c)
    }

    fn texture_mean(&self, t: TexRef) -> Color {
        self.textures.mean(t)
    }

    fn declare(&mut self, name: &str, value: ParamValue, target: Target, range: Range) {
        BuildCtx::declare(self, name, value, target, range)
    }

    fn children_at(&self, p: &Props, category: Category) -> Result<Vec<(Arc<ObjectDesc>, Loc)>> {
        BuildCtx::children_at(self, p, category)
    }

    fn bsdf_at(&mut self, obj: &Arc<ObjectDesc>, via: &Loc) -> Result<u32> {
        BuildCtx::bsdf_at(self, obj, via)
    }

    fn bsdf_transmits(&self, h: u32) -> bool {
        self.bsdfs[h as usize].transmits(&self.bsdfs, &self.textures)
    }

    fn resolve_path(&self, p: &Props, key: &str) -> Result<PathBuf> {
        BuildCtx::resolve_path(self, p, key)
    }

    fn is_replay(&self) -> bool {
        BuildCtx::is_replay(self)
    }

    fn cache(&self) -> &LoadCache {
        &self.cache
    }

    fn bsdf_of(&mut self, p: &Props) -> Result<u32> {
        BuildCtx::bsdf_of(self, p)
    }

    fn emitter(&mut self, obj: &Arc<ObjectDesc>, shape: Option<u32>) -> Result<u32> {
        BuildCtx::emitter(self, obj, shape)
    }

    fn texture_constant(&self, t: TexRef) -> Option<Color> {
        self.textures.constant(t)
    }

    fn texture_image_size(&self, t: TexRef) -> Option<(u32, u32)> {
        match self.textures.records.get(t as usize)? {
            AnyTexture::Bitmap(b) => Some((b.width, b.height)),
            _ => None,
        }
    }

    fn image(&self, p: &Props, raw: bool) -> Result<Arc<PixelArray>> {
        textures::image_file::from_props(p, self, raw)
    }

    fn add_image(&mut self, img: Arc<PixelArray>) -> Result<u32> {
        BuildCtx::add_image(self, img)
    }

    fn attribute_slot(&mut self, name: &str, loc: &Loc) -> u32 {
        self.textures.attributes.slot(name, loc)
    }

    fn add_dist2d(&mut self, d: Distribution2D) -> Result<u32> {
        BuildCtx::add_dist2d(self, d)
    }
}

impl ShapeContext for BuildCtx {
    fn geometry(&mut self) -> &mut Geometry {
        &mut self.geom
    }
}

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

/// Runs `f` with a fresh build context over `root` (for the tests of plugins, which
/// build against [`BuildContext`] or, for shapes, [`ShapeContext`], and never name the
/// builder).
#[cfg(test)]
pub(crate) fn with_test_context<T>(
    root: &ObjectDesc,
    f: impl FnOnce(&mut dyn ShapeContext) -> Result<T>,
) -> Result<T> {
    f(&mut BuildCtx::new(root)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desc::xml::load_string;

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
