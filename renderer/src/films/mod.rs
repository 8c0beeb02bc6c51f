//! Films: where a render's samples are accumulated and how the image is written.
//! Mitsuba 3's `hdrfilm`, one file per plugin (the file stem is the scene `type`, the
//! file's module doc the plugin's manual; `heliograph plugins hdrfilm` prints it).
//! [`block`] is the accumulation buffer the CPU backend splats samples into.
//!
//! ```xml
//! <film type="hdrfilm"><integer name="width" value="512"/><integer name="height" value="512"/></film>
//! ```
//!
//! # Adding a film plugin
//!
//! 1. **`src/films/<name>.rs`**: the manual (a first sentence `` `<name>`: ... ``, a
//!    `| parameter | type | default | meaning |` table, an XML example) and
//!    `pub fn build(obj: &ObjectDesc, ctx: &mut dyn BuildContext) -> Result<Film>`,
//!    which reads the properties and asks `ctx` for the nested filter; every property
//!    must be read (`check_unused`).
//! 2. **One line** `"<name>" => <module>` in the `register_plugins!` list below.
//!
//! From the list, the registry derives the module, [`KNOWN`] (an unknown `type` gets a
//! "did you mean"), [`REGISTRY`] (the manuals) and the build match behind [`build`].

pub mod block;

pub mod record;

use crate::desc::ObjectDesc;
use crate::error::{Error, Result};
use crate::io::gib;
use crate::plugin::registry::register_plugins;
use crate::plugin::BuildContext;
use crate::rfilters::AnyFilter;

/// Largest crop window the CPU backend renders at once: 16384 × 16384 pixels, about
/// 9 GiB of accumulator and image (RGBA).
pub const MAX_PIXELS: u64 = 1 << 28;

/// Refuses crop windows over [`MAX_PIXELS`], saying how much memory they would need
/// (with `aov_channels` more channels per pixel for an `aov` integrator).
pub fn check_film_size(film: &Film, aov_channels: usize) -> Result<()> {
    let [w, h] = film.crop_size;
    let pixels = w as u64 * h as u64;
    if pixels <= MAX_PIXELS {
        return Ok(());
    }
    // the accumulator (r, g, b, alpha, weight, AOVs) and the developed image, in f32
    let per_pixel = 4 * (5 + 2 * aov_channels as u64 + film.channels() as u64);
    Err(Error::Render(format!(
        "the film's {w} x {h} crop window would need {:.1} GiB of memory on the CPU \
         ({per_pixel} bytes a pixel); the CPU backend renders at most {MAX_PIXELS} pixels \
         (16384 x 16384) at once: lower width/height, or render crop windows \
         (crop_offset_x/y, crop_width/height) and assemble them",
        gib((pixels * per_pixel) as f64)
    )))
}

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

// The registry: one line per plugin, `"<type>" => module` (the file `<type>.rs`).
register_plugins! {
    category "film" in "films";
    fn build_kind(&ObjectDesc, ctx: &mut dyn BuildContext) -> Film;
    "hdrfilm" => hdrfilm,
}

/// Builds a `<film>` with its plugin (nested filter included).
pub fn build(obj: &ObjectDesc, ctx: &mut dyn BuildContext) -> Result<Film> {
    build_kind(obj, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::registry::testing::{check_registry, scene_error};

    #[test]
    fn the_registry_has_every_film_with_its_manual_and_suggests_the_nearest() {
        check_registry("film", REGISTRY, KNOWN);
        let e = scene_error(r#"<sensor type="perspective"><film type="hdrfilms"/></sensor>"#);
        assert!(
            e.contains("did you mean \"hdrfilm\"") && e.contains("<string>:2:"),
            "{e}"
        );
    }
}
