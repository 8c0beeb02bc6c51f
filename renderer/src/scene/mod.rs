//! Scene description (parsed from XML or dicts), the typed property bag, and the
//! built, render-ready [`Scene`].

pub mod builder;
pub mod desc;
pub mod params;
pub mod props;
pub mod xml;

use crate::accel::Bvh;
use crate::bsdfs::{AnyBsdf, BsdfCtx};
use crate::emitters::{AnyEmitter, EmitterCtx};
use crate::integrators::AnyIntegrator;
use crate::math::{Distribution2D, Ray, Vec2, Vec3};
use crate::sensors::Sensor;
use crate::shapes::{Geometry, Hit};
use crate::textures::TextureStore;

pub use builder::build_scene;
pub use desc::{Category, ObjectDesc, SceneDesc};
pub use params::{ParamValue, SceneParams};
pub use props::{PixelArray, Props, Value};

/// A render-ready scene: plain-data plugin records indexed by `u32` handles.
#[derive(Clone, Debug)]
pub struct Scene {
    /// Shapes, meshes and BVH primitives.
    pub geom: Geometry,
    /// The BVH over `geom.prims`.
    pub bvh: Bvh,
    /// BSDF records.
    pub bsdfs: Vec<AnyBsdf>,
    /// Texture records and texels.
    pub textures: TextureStore,
    /// Emitter records (area emitters included).
    pub emitters: Vec<AnyEmitter>,
    /// Indices of infinite emitters (constant, envmap; evaluated on escape).
    pub env_emitters: Vec<u32>,
    /// Environment-map sampling distributions.
    pub dists2d: Vec<Distribution2D>,
    /// The camera with its film, filter and sampler.
    pub sensor: Sensor,
    /// The integrator.
    pub integrator: AnyIntegrator,
    /// Bounding sphere of the geometry (centre, radius).
    pub bsphere: (Vec3, f32),
}

impl Scene {
    /// The closest surface hit along `ray`.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<Hit> {
        let (prim, t, coords) = self.bvh.intersect(&self.geom, ray)?;
        Some(self.geom.surface_interaction(prim, ray, t, coords))
    }

    /// Whether anything blocks `ray` before `ray.tmax`.
    #[inline]
    pub fn occluded(&self, ray: &Ray) -> bool {
        self.bvh.occluded(&self.geom, ray)
    }

    /// What BSDFs need to evaluate at surface coordinates `uv`.
    #[inline]
    pub fn bsdf_ctx(&self, uv: Vec2) -> BsdfCtx<'_> {
        BsdfCtx {
            bsdfs: &self.bsdfs,
            tex: &self.textures,
            uv,
        }
    }

    /// What emitters need.
    #[inline]
    pub fn emitter_ctx(&self) -> EmitterCtx<'_> {
        EmitterCtx {
            geom: &self.geom,
            tex: &self.textures,
            dists: &self.dists2d,
            bsphere: self.bsphere,
        }
    }
}
