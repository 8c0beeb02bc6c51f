//! Colour parameters as textures: a constant (declared as the parameter
//! `<key>.value`), a nested `<texture>` or a reference to one, each texture object
//! built once per id.

use std::sync::Arc;

use super::{Alloc, BuildCtx};
use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::props::{Props, Value};
use crate::desc::{Category, ObjectDesc};
use crate::error::{Error, Loc, Result};
use crate::math::spectrum::{Spectrum, SpectrumUse};
use crate::math::Color;
use crate::textures::{self, TexRef};

impl BuildCtx {
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
    pub(super) fn texture_object(&mut self, obj: &Arc<ObjectDesc>, via: &Loc) -> Result<TexRef> {
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
}
