//! `hdrfilm`: a linear float image of `width × height` pixels (optionally cropped),
//! RGB or RGBA, as Mitsuba's. The command line writes it as an EXR, or as an 8-bit
//! sRGB PNG or JPEG when the output's extension asks for one.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `width`, `height` | integer | 768, 576 | full film size in pixels |
//! | `pixel_format` | string | `rgba` | `rgb` or `rgba` (alpha = coverage) |
//! | `crop_offset_x`, `crop_offset_y` | integer | 0 | crop window origin |
//! | `crop_width`, `crop_height` | integer | full size | crop window size |
//! | `component_format` | string | `float16` | accepted for compatibility; heliograph stores float32 |
//! | (nested) | rfilter | `gaussian` | reconstruction filter |
//!
//! Sides are at most 32768 pixels; the CPU backend renders a crop window of at most
//! 2^28 pixels (16384 × 16384) at once, and says how much memory a larger one needs.
//!
//! ```xml
//! <film type="hdrfilm"><integer name="width" value="512"/><integer name="height" value="512"/>
//!   <string name="pixel_format" value="rgb"/><rfilter type="box"/></film>
//! ```

use super::{Film, MAX_SIZE};
use crate::desc::{Category, ObjectDesc};
use crate::error::Result;
use crate::plugin::BuildContext;
use crate::rfilters::{self, AnyFilter};

/// Reads an `hdrfilm`'s properties and its nested filter.
pub fn build(obj: &ObjectDesc, ctx: &mut dyn BuildContext) -> Result<Film> {
    let p = &obj.props;
    let width = p.int_in("width", 768, 1, MAX_SIZE)? as u32;
    let height = p.int_in("height", 576, 1, MAX_SIZE)? as u32;
    let alpha = p.choice("pixel_format", "rgba", &["rgb", "rgba"])? == "rgba";
    p.choice(
        "component_format",
        "float16",
        &["float16", "float32", "uint32"],
    )?;
    let ox = p.int_in("crop_offset_x", 0, 0, width as i64 - 1)? as u32;
    let oy = p.int_in("crop_offset_y", 0, 0, height as i64 - 1)? as u32;
    let cw = p.int_in("crop_width", (width - ox) as i64, 1, (width - ox) as i64)? as u32;
    let ch = p.int_in("crop_height", (height - oy) as i64, 1, (height - oy) as i64)? as u32;
    let rfilter = match ctx.child(p, Category::Rfilter)? {
        Some(f) => rfilters::build(&f)?,
        None => AnyFilter::default(),
    };
    p.check_unused(&obj.kind)?;
    Ok(Film {
        width,
        height,
        crop_offset: [ox, oy],
        crop_size: [cw, ch],
        alpha,
        rfilter,
    })
}
