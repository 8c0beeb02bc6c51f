//! The records a build adds (textures, constants, images, distributions, BSDFs,
//! emitters): each is logged for its object, or in a replay overwrites the slot the
//! first build got.

use std::sync::Arc;

use super::{Alloc, BuildCtx};
use crate::bsdfs::AnyBsdf;
use crate::desc::props::PixelArray;
use crate::emitters::AnyEmitter;
use crate::error::Result;
use crate::math::{Color, Distribution2D};
use crate::textures::{self, AnyTexture, TexRef};

impl BuildCtx {
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
}
