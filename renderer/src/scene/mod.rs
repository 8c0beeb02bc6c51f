//! The built [`Scene`] (shapes, BVH, materials, textures and emitters: what an
//! integrator sees), the [`RenderSetup`] that renders it (the scene with its sensor and
//! integrator), the builder that makes both from a
//! [`SceneDesc`](crate::desc::SceneDesc), and the loaded scene that keeps its
//! description and applies parameter updates.

pub mod builder;
pub mod loaded;
pub mod setup;

use std::sync::Arc;

use crate::accel::Bvh;
use crate::bsdfs::{AnyBsdf, BsdfCtx};
use crate::emitters::{AnyEmitter, EmitterCtx};
use crate::math::{Distribution2D, Frame, Ray, Vec3};
use crate::shapes::{Geometry, Hit};
use crate::textures::SurfacePoint;
use crate::textures::TextureStore;

pub use builder::build_scene;
#[cfg(test)]
pub(crate) use builder::with_test_context;
pub use loaded::LoadedScene;
pub use setup::RenderSetup;

/// A built scene: plain-data plugin records indexed by `u32` handles. It holds what
/// the integrators trace; the sensor and the integrator that render it stand beside it
/// in a [`RenderSetup`] (as pbrt-v4's integrator holds camera, sampler and aggregate).
///
/// Each part is shared (`Arc`): a render holds a clone of the scene, and a parameter
/// update makes a new scene that shares every part it did not change, so an update
/// never waits for a render and never copies what it does not touch.
#[derive(Clone, Debug)]
pub struct Scene {
    /// Shapes, meshes and BVH primitives.
    pub geom: Arc<Geometry>,
    /// The BVH over `geom.prims`.
    pub bvh: Arc<Bvh>,
    /// BSDF records.
    pub bsdfs: Arc<Vec<AnyBsdf>>,
    /// Texture records and images.
    pub textures: Arc<TextureStore>,
    /// Emitter records (area emitters included).
    pub emitters: Arc<Vec<AnyEmitter>>,
    /// Indices of infinite emitters (constant, envmap; evaluated on escape).
    pub env_emitters: Vec<u32>,
    /// Environment-map sampling distributions.
    pub dists2d: Arc<Vec<Distribution2D>>,
    /// Bounding sphere of the geometry (centre, radius).
    pub bsphere: (Vec3, f32),
}

impl Scene {
    /// A scene from its parts (derives the environment emitters and bounding sphere).
    #[allow(clippy::too_many_arguments)]
    pub fn assemble(
        geom: Geometry,
        bvh: Bvh,
        bsdfs: Vec<AnyBsdf>,
        textures: TextureStore,
        emitters: Vec<AnyEmitter>,
        dists2d: Vec<Distribution2D>,
    ) -> Scene {
        let bsphere = geom.bounds().bounding_sphere();
        let env_emitters = environment_emitters(&emitters);
        Scene {
            geom: Arc::new(geom),
            bvh: Arc::new(bvh),
            bsdfs: Arc::new(bsdfs),
            textures: Arc::new(textures),
            emitters: Arc::new(emitters),
            env_emitters,
            dists2d: Arc::new(dists2d),
            bsphere,
        }
    }

    /// The closest surface hit along `ray`.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<Hit> {
        let (prim, t, coords) = self.bvh.intersect(&*self.geom, ray)?;
        Some(self.geom.surface_interaction(prim, ray, t, coords))
    }

    /// Whether anything blocks `ray` before `ray.tmax`.
    #[inline]
    pub fn occluded(&self, ray: &Ray) -> bool {
        self.bvh.occluded(&*self.geom, ray)
    }

    /// What BSDFs need to evaluate at `hit`, whose shading frame is `frame`.
    #[inline]
    pub fn bsdf_ctx(&self, hit: &Hit, frame: &Frame) -> BsdfCtx<'_> {
        BsdfCtx {
            bsdfs: &self.bsdfs,
            tex: &self.textures,
            at: SurfacePoint::at_hit(hit, frame),
        }
    }

    /// What emitters need.
    #[inline]
    pub fn emitter_ctx(&self) -> EmitterCtx<'_> {
        self.emitter_ctx_with(&self.textures)
    }

    /// What emitters need, with their textures read from `tex` (differentiable
    /// rendering evaluates them with swapped textures).
    #[inline]
    pub fn emitter_ctx_with<'a>(&'a self, tex: &'a TextureStore) -> EmitterCtx<'a> {
        EmitterCtx {
            geom: &self.geom,
            tex,
            dists: &self.dists2d,
            bsphere: self.bsphere,
        }
    }
}

/// Indices of the emitters that rays escaping the scene see.
pub(crate) fn environment_emitters(emitters: &[AnyEmitter]) -> Vec<u32> {
    let envs = emitters.iter().enumerate();
    envs.filter(|(_, e)| e.is_environment())
        .map(|(i, _)| i as u32)
        .collect()
}
