//! `rawconstant`: a constant returned exactly as given, whatever it is used for: no
//! colour conversion and no range check (a normal map's (0.5, 0.5, 1), a signed
//! offset). A float is the same value in every channel.
//!
//! Every `<rgb>`, `<float>` or `<spectrum>` parameter of a plugin is a texture of this
//! kind too, its value converted to RGB for its use (a reflectance, an emission).
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `value` | float or vector | — | required; the value (a vector gives the three channels) |
//!
//! ```xml
//! <texture type="rawconstant" name="normalmap">
//!     <vector name="value" value="0.5, 0.5, 1.0"/>
//! </texture>
//! ```

use super::{RecordCtx, SurfacePoint, TexturePlugin, TextureStore};
use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::props::{Props, Value};
use crate::error::{Error, Result};
use crate::math::Color;
use crate::plugin::BuildContext;

/// The constant's record: its colour.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Constant {
    /// The colour (RGB).
    pub value: [f32; 3],
}
crate::device_record!(Constant { value });

impl Constant {
    /// The constant `c`.
    pub fn new(c: Color) -> Self {
        Constant {
            value: c.to_array(),
        }
    }

    /// Its colour.
    #[inline]
    pub fn color(&self) -> Color {
        Color::from_array(self.value)
    }
}

impl TexturePlugin for Constant {
    type Record = Self;
    const READS_UV: bool = false;

    /// Reads the value (declared as the parameter `value`).
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> {
        let Some(e) = p.get("value") else {
            return Err(Error::param(
                &p.loc,
                "value",
                "is required (a float or a vector)",
            ));
        };
        let c = match &e.value {
            Value::Float(v) => Color::splat(*v as f32),
            Value::Int(v) => Color::splat(*v as f32),
            Value::Vector(v) | Value::Point(v) => Color::new(v.x, v.y, v.z),
            Value::Rgb(c) => *c,
            other => {
                return Err(Error::param(
                    &e.loc,
                    "value",
                    format!("expected a float or a vector, got {}", other.type_name()),
                ))
            }
        };
        if !c.is_finite() {
            return Err(Error::param(
                &e.loc,
                "value",
                format!("must be finite, got {c}"),
            ));
        }
        let value = match &e.value {
            Value::Float(_) | Value::Int(_) => ParamValue::Float(c.x as f64),
            _ => ParamValue::Color(c),
        };
        ctx.declare("value", value, Target::prop("value"), Range::Any);
        Ok(Constant::new(c))
    }

    fn record(&self, _at: &RecordCtx) -> Self {
        *self
    }

    #[inline]
    fn eval(&self, _st: &TextureStore, _at: &SurfacePoint) -> Color {
        self.color()
    }

    fn mean(&self, _st: &TextureStore) -> Color {
        self.color()
    }

    fn constant(&self) -> Option<Color> {
        Some(self.color())
    }
}

#[cfg(test)]
mod tests {
    use crate::desc::xml;
    use crate::math::{Color, Vec2};
    use crate::scene::build_scene;

    fn texture(value: &str) -> crate::error::Result<Color> {
        let src = format!(
            r#"<scene version="3.0.0"><shape type="rectangle"><bsdf type="diffuse">
            <texture type="rawconstant" name="reflectance">{value}</texture></bsdf></shape></scene>"#
        );
        let setup = build_scene(&xml::load_string(&src, &[])?)?;
        let last = setup.scene.textures.records.len() as u32 - 1;
        Ok(setup.scene.textures.eval(
            last,
            &crate::textures::SurfacePoint::at_uv(Vec2::new(0.3, 0.7)),
        ))
    }

    #[test]
    fn values_are_returned_as_given() {
        let v = texture(r#"<vector name="value" value="0.5, -2.0, 1.5"/>"#).unwrap();
        assert_eq!(v, Color::new(0.5, -2.0, 1.5));
        let f = texture(r#"<float name="value" value="0.25"/>"#).unwrap();
        assert_eq!(f, Color::splat(0.25));
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let e = texture("").unwrap_err().to_string();
        assert!(e.contains("\"value\"") && e.contains("required"), "{e}");
        let e = texture(r#"<string name="value" value="red"/>"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("<string>:2:") && e.contains("got string"), "{e}");
        let e = texture(r#"<float name="value" value="nan"/>"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("finite"), "{e}");
    }
}
