//! BSDFs. One file per plugin (the file stem is the scene `type`), dispatched
//! through the closed enum [`AnyBsdf`].
//!
//! Conventions (as Mitsuba): directions are in the local shading frame (normal
//! = +z); `wi` points towards where the light path came from (the camera side),
//! `wo` is the sampled/queried direction; `eval` returns `f(wi, wo) · |cos θo|`;
//! one-sided BSDFs are black when `wi.z <= 0`. Delta lobes (smooth surfaces)
//! are only reachable through `sample`: their `pdf` there is the discrete
//! probability of picking the lobe, `weight` the lobe's throughput, and
//! `eval`/`pdf` return 0 for them.
//!
//! Plugins: `diffuse`, `conductor`, `roughconductor`, `dielectric`,
//! `thindielectric`, `plastic`, `roughplastic`, `twosided`, `roughdielectric`. Shared pieces:
//! [`fresnel`] (dielectric / conductor Fresnel terms), [`microfacet`] (GGX and
//! Beckmann with Smith shadowing, visible-normal sampling) and [`ior`] (named
//! dielectric IORs and conductor presets).

pub mod conductor;
pub mod dielectric;
pub mod diffuse;
pub mod fresnel;
pub mod ior;
pub mod microfacet;
pub mod plastic;
pub mod roughconductor;
pub mod roughdielectric;
pub mod roughplastic;
pub mod thindielectric;
pub mod twosided;

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
pub(crate) mod testutil;

use crate::error::{Error, Result};
use crate::math::{Color, Vec2, Vec3};
use crate::scene::builder::BuildCtx;
use crate::scene::desc::ObjectDesc;
use crate::textures::TextureStore;

pub use conductor::Conductor;
pub use dielectric::Dielectric;
pub use diffuse::Diffuse;
pub use plastic::Plastic;
pub use roughconductor::RoughConductor;
pub use roughdielectric::RoughDielectric;
pub use roughplastic::RoughPlastic;
pub use thindielectric::ThinDielectric;
pub use twosided::TwoSided;

/// What a BSDF needs besides its own record: the texture store, the other
/// BSDFs (for `twosided`) and the surface coordinates of the hit.
#[derive(Clone, Copy)]
pub struct BsdfCtx<'a> {
    /// All BSDFs of the scene.
    pub bsdfs: &'a [AnyBsdf],
    /// All textures of the scene.
    pub tex: &'a TextureStore,
    /// Texture coordinates of the shading point.
    pub uv: Vec2,
}

/// The result of sampling a BSDF.
#[derive(Clone, Copy, Debug)]
pub struct BsdfSample {
    /// Sampled direction (local frame).
    pub wo: Vec3,
    /// Its density (solid angle); for a delta lobe the discrete probability of the lobe.
    pub pdf: f32,
    /// `eval(wi, wo) / pdf` (for delta lobes: the lobe's weight).
    pub weight: Color,
    /// Relative index of refraction along the sampled path (1 unless transmitted).
    pub eta: f32,
    /// Whether the sampled lobe is a Dirac delta (no MIS with emitter sampling).
    pub delta: bool,
}

/// Every BSDF plugin.
// `roughplastic` carries its 64-entry transmittance table inline: records stay
// plain data that the CUDA side can copy as is, at the cost of ~300 bytes per BSDF.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, u32)]
pub enum AnyBsdf {
    /// `diffuse`.
    Diffuse(Diffuse),
    /// `conductor`.
    Conductor(Conductor),
    /// `roughconductor`.
    RoughConductor(RoughConductor),
    /// `dielectric`.
    Dielectric(Dielectric),
    /// `thindielectric`.
    ThinDielectric(ThinDielectric),
    /// `plastic`.
    Plastic(Plastic),
    /// `roughplastic`.
    RoughPlastic(RoughPlastic),
    /// `twosided`.
    TwoSided(TwoSided),
    /// `roughdielectric`.
    RoughDielectric(RoughDielectric),
}

/// Evaluates `$e` with `$b` bound to whichever record `$self` holds.
macro_rules! dispatch {
    ($self:expr, $b:ident => $e:expr) => {
        match $self {
            AnyBsdf::Diffuse($b) => $e,
            AnyBsdf::Conductor($b) => $e,
            AnyBsdf::RoughConductor($b) => $e,
            AnyBsdf::Dielectric($b) => $e,
            AnyBsdf::ThinDielectric($b) => $e,
            AnyBsdf::Plastic($b) => $e,
            AnyBsdf::RoughPlastic($b) => $e,
            AnyBsdf::TwoSided($b) => $e,
            AnyBsdf::RoughDielectric($b) => $e,
        }
    };
}

impl AnyBsdf {
    /// Samples `wo` given `wi`; `u1` picks a lobe, `u2` the direction.
    pub fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        dispatch!(self, b => b.sample(ctx, wi, u1, u2))
    }

    /// `f(wi, wo) · |cos θo|` (zero for delta lobes).
    pub fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        dispatch!(self, b => b.eval(ctx, wi, wo))
    }

    /// Density of [`Self::sample`] producing `wo` (solid angle; zero for delta lobes).
    pub fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        dispatch!(self, b => b.pdf(ctx, wi, wo))
    }

    /// The diffuse reflectance seen from `wi` (Mitsuba's `eval_diffuse_reflectance`, the
    /// `albedo` AOV): the diffuse texture of the BSDFs that have one, through `twosided`
    /// that of the side `wi` is on, and `π · eval(wi, +z)` (the reflectance of a
    /// Lambertian surface that would send as much light along the normal) for the others.
    pub fn diffuse_reflectance(&self, ctx: &BsdfCtx, wi: Vec3) -> Color {
        match self {
            AnyBsdf::Diffuse(b) => ctx.tex.eval(b.reflectance, ctx.uv),
            AnyBsdf::Plastic(b) => ctx.tex.eval(b.diffuse_reflectance, ctx.uv),
            AnyBsdf::RoughPlastic(b) => ctx.tex.eval(b.diffuse_reflectance, ctx.uv),
            AnyBsdf::TwoSided(b) => b.diffuse_reflectance(ctx, wi),
            _ => self.eval(ctx, wi, Vec3::Z) * crate::math::PI,
        }
    }

    /// Whether every lobe is a delta, so emitter sampling is pointless.
    pub fn is_delta(&self, ctx: &BsdfCtx) -> bool {
        match self {
            AnyBsdf::Conductor(_) | AnyBsdf::Dielectric(_) | AnyBsdf::ThinDielectric(_) => true,
            AnyBsdf::TwoSided(b) => b.is_delta(ctx),
            _ => false,
        }
    }

    /// Whether the BSDF transmits light (the dielectric family); such BSDFs are
    /// two-sided by nature and cannot be nested in `twosided`.
    pub fn has_transmission(&self) -> bool {
        matches!(
            self,
            AnyBsdf::Dielectric(_) | AnyBsdf::ThinDielectric(_) | AnyBsdf::RoughDielectric(_)
        )
    }
}

/// Names of the BSDF plugins, for error messages.
pub const KNOWN: &[&str] = &[
    "conductor",
    "dielectric",
    "diffuse",
    "plastic",
    "roughconductor",
    "roughdielectric",
    "roughplastic",
    "thindielectric",
    "twosided",
];

/// Builds a `<bsdf>` object into an [`AnyBsdf`]. Nested BSDFs (twosided) are
/// added to the context and referred to by handle.
pub fn build(obj: &ObjectDesc, ctx: &mut BuildCtx) -> Result<AnyBsdf> {
    let p = &obj.props;
    let b = match obj.kind.as_str() {
        "diffuse" => AnyBsdf::Diffuse(Diffuse::build(p, ctx)?),
        "conductor" => AnyBsdf::Conductor(Conductor::build(p, ctx)?),
        "roughconductor" => AnyBsdf::RoughConductor(RoughConductor::build(p, ctx)?),
        "dielectric" => AnyBsdf::Dielectric(Dielectric::build(p, ctx)?),
        "thindielectric" => AnyBsdf::ThinDielectric(ThinDielectric::build(p, ctx)?),
        "plastic" => AnyBsdf::Plastic(Plastic::build(p, ctx)?),
        "roughplastic" => AnyBsdf::RoughPlastic(RoughPlastic::build(p, ctx)?),
        "roughdielectric" => AnyBsdf::RoughDielectric(RoughDielectric::build(p, ctx)?),
        "twosided" => AnyBsdf::TwoSided(TwoSided::build(obj, ctx)?),
        _ => {
            return Err(Error::UnknownPlugin {
                loc: obj.loc.clone(),
                category: "bsdf",
                name: obj.kind.clone(),
                known: KNOWN.join(", "),
            })
        }
    };
    p.check_unused(&obj.kind)?;
    Ok(b)
}
