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

use crate::error::Result;
use crate::plugin::registry::register_plugins;
use crate::plugin::BuildContext;
use crate::rfilters::AnyFilter;
use crate::scene::desc::ObjectDesc;

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
    fn build_kind(obj, ctx: &mut dyn BuildContext) -> Film;
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
