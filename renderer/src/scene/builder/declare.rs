//! Parameter declarations: the editable parameters of the object being built, each
//! with its key, current value, the property it writes and its range.

use std::sync::Arc;

use super::BuildCtx;
use crate::desc::params::{ParamDecl, ParamValue, Range, Target};
use crate::desc::props::{PixelArray, Props};
use crate::error::Result;
use crate::math::Vec3;
use crate::plugin::BuildContext;

impl BuildCtx {
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
}
