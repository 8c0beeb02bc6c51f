//! Films. Only `hdrfilm` exists: a linear float image of `width × height`
//! pixels (optionally cropped), RGB or RGBA.
//!
//! | parameter | type | default | meaning |
//! |---|---|---|---|
//! | `width`, `height` | integer | 768, 576 | full film size in pixels |
//! | `pixel_format` | string | `rgba` | `rgb` or `rgba` (alpha = coverage) |
//! | `crop_offset_x`, `crop_offset_y` | integer | 0 | crop window origin |
//! | `crop_width`, `crop_height` | integer | full size | crop window size |
//! | `component_format` | string | `float16` | accepted for compatibility; heliograph stores float32 |
//! | nested `rfilter` | | `gaussian` | reconstruction filter |
//!
//! Sides are at most 32768 pixels; the CPU backend renders a crop window of at most
//! 2^28 pixels (16384 × 16384) at once, and says how much memory a larger one needs.
//!
//! ```xml
//! <film type="hdrfilm"><integer name="width" value="512"/><integer name="height" value="512"/>
//!   <string name="pixel_format" value="rgb"/><rfilter type="box"/></film>
//! ```

pub mod block;

use crate::error::{Error, Result};
use crate::rfilters::{self, AnyFilter};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::{Category, ObjectDesc};

/// The film's geometry and output format.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Film {
    /// Full film width (the camera's aspect ratio uses it).
    pub width: u32,
    /// Full film height.
    pub height: u32,
    /// Crop window origin (x, y).
    pub crop_offset: [u32; 2],
    /// Crop window size (the rendered image size).
    pub crop_size: [u32; 2],
    /// Whether an alpha channel is written.
    pub alpha: bool,
    /// Reconstruction filter.
    pub rfilter: AnyFilter,
}

impl Default for Film {
    fn default() -> Self {
        Film {
            width: 768,
            height: 576,
            crop_offset: [0, 0],
            crop_size: [768, 576],
            alpha: true,
            rfilter: AnyFilter::default(),
        }
    }
}

impl Film {
    /// Channels in the output image (3 or 4).
    pub fn channels(&self) -> usize {
        if self.alpha {
            4
        } else {
            3
        }
    }
}

/// Largest accepted film side, so a typo cannot allocate terabytes.
pub const MAX_SIZE: i64 = 1 << 15;

/// Names of the film plugins.
pub const KNOWN: &[&str] = &["hdrfilm"];

/// Builds a `<film>`.
pub fn build(obj: &ObjectDesc, ctx: &mut BuildCtx) -> Result<Film> {
    if obj.kind != "hdrfilm" {
        return Err(Error::UnknownPlugin {
            loc: obj.loc.clone(),
            category: "film",
            name: obj.kind.clone(),
            known: KNOWN.join(", "),
        });
    }
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
