//! BSDF and emitter objects: a BSDF built once per id (with the depth limit of nested
//! adapters), the shared default BSDF of shapes without one, and emitters with the
//! shape an area emitter is nested in.

use std::sync::Arc;

use super::{Alloc, BuildCtx};
use crate::bsdfs::{self, AnyBsdf, Diffuse};
use crate::desc::props::{Props, Value};
use crate::desc::{Category, ObjectDesc};
use crate::emitters;
use crate::error::{Error, Loc, Result};
use crate::math::Color;

impl BuildCtx {
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
    pub(super) fn build_bsdf_record(&mut self, obj: &ObjectDesc) -> Result<u32> {
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

    pub(super) fn build_emitter_record(
        &mut self,
        obj: &ObjectDesc,
        shape: Option<u32>,
    ) -> Result<u32> {
        let e = emitters::build(obj, shape, self)?;
        self.add_emitter(e)
    }
}
