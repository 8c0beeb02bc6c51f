//! What plugins see of the build context: the [`BuildContext`] trait of the leaf
//! module [`crate::plugin`] and, for shapes, [`ShapeContext`], both implemented by
//! [`BuildCtx`]; and a context for the tests of plugins.

use std::path::PathBuf;
use std::sync::Arc;

use super::BuildCtx;
use crate::desc::cache::LoadCache;
use crate::desc::params::{ParamValue, Range, Target};
use crate::desc::props::{PixelArray, Props};
use crate::desc::{Category, ObjectDesc};
use crate::error::{Loc, Result};
use crate::math::spectrum::SpectrumUse;
use crate::math::{Color, Distribution2D};
use crate::plugin::BuildContext;
use crate::shapes::{Geometry, ShapeContext};
use crate::textures::{self, AnyTexture, TexRef};

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
