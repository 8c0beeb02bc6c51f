//! BSDFs. One file per plugin (the file stem is the scene `type`), listed once in the
//! registry at the bottom of this file; everything else about the category is derived
//! from that list.
//!
//! Conventions (as Mitsuba): directions are in the local shading frame (normal
//! = +z); `wi` points towards where the light path came from (the camera side),
//! `wo` is the sampled/queried direction; `eval` returns `f(wi, wo) · |cos θo|`;
//! one-sided BSDFs are black when `wi.z <= 0`. Delta lobes (smooth surfaces)
//! are only reachable through `sample`: their `pdf` there is the discrete
//! probability of picking the lobe, `weight` the lobe's throughput, and
//! `eval`/`pdf` return 0 for them.
//!
//! Shared pieces: [`fresnel`] (dielectric / conductor Fresnel terms), [`microfacet`]
//! (GGX and Beckmann with Smith shadowing, visible-normal sampling), [`ior`] (named
//! dielectric IORs and conductor presets) and [`principledhelpers`] (what the two Disney
//! BSDFs, `principled` and `principledthin`, share).
//!
//! # Adding a BSDF
//!
//! A plugin is three things, and nothing outside them changes:
//!
//! 1. **`src/bsdfs/<name>.rs`**: the module doc is the plugin's manual (a first sentence
//!    `` `<name>`: ... ``, a `| parameter | type | default | meaning |` table, an XML
//!    example; `heliograph plugins <name>` prints it). The file defines the plugin's
//!    record, a `#[repr(C)]` struct of `u32`/`f32` fields (texture handles are
//!    [`TexRef`]s) declared with
//!    [`device_record!`](crate::device_record), and implements [`BsdfPlugin`]: `build`
//!    reads the properties through a [`BuildContext`] (textures, nested BSDFs, parameter
//!    declarations — never the scene builder itself), `sample`/`eval`/`pdf` evaluate it
//!    on the CPU, and the flags (`DELTA`, `TRANSMISSION`, `READS_TEXTURE_MEANS`,
//!    `ADAPTER`) say what the integrators, the updates and the kernels must know. Its
//!    tests (chi-square, furnace, errors) sit at the bottom.
//! 2. **`kernels/bsdfs/<name>.cuh`**: the CUDA twin. It includes `bsdf.cuh` (and shared
//!    pieces such as `microfacet.cuh`), defines the record's twin with the same name,
//!    field names and order (the layout checks compare it with the Rust record on every
//!    compile and on the GPU), and `<name>_sample`, `<name>_eval`, `<name>_pdf` with the
//!    signatures of [`registry`]'s dispatch (`eval`/`pdf` only when not `DELTA`),
//!    repeating the Rust float operations in the same order.
//! 3. **One line** in `register_plugins!` below, `TAG = module::Plugin`,
//!    appended at the end (a line's position is its tag), next to the module's
//!    `pub mod` line.
//!
//! From the list, the registry derives: the [`AnyBsdf`] enum and its dispatch, the
//! [`tag`] constants, [`KNOWN`] (unknown types get a "did you mean"), the build match
//! ([`build`]), the flattening into device records ([`registry::flatten`]: a
//! [`RecordRef`] `{kind, offset}` per BSDF and the records in one word blob, each in
//! a 16-byte slot), the record layout checks, and the CUDA side — the `HG_BSDF_<TAG>`
//! defines, the `#include` of every twin and the dispatch `switch`es, generated as the
//! kernel file `bsdfs/registry.cuh` ([`registry::cuda_source`]) — as well as the
//! per-plugin parity and render tests, which iterate the registry.
//!
//! ```ignore
//! //! `velvet`: ... manual ...
//! #[derive(Clone, Copy, Debug, PartialEq)]
//! #[repr(C)]
//! pub struct Velvet {
//!     /// Sheen colour.
//!     pub sheen: TexRef,
//!     /// Fibre spread.
//!     pub sigma: f32,
//! }
//! device_record!(Velvet { sheen, sigma });
//!
//! impl BsdfPlugin for Velvet {
//!     type Record = Self;
//!     fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self> { ... }
//!     fn record(&self, _refs: &[RecordRef]) -> Self { *self }
//!     fn sample(..) { .. }  fn eval(..) { .. }  fn pdf(..) { .. }
//! }
//! ```
//!
//! The README's "Adding a plugin" section walks through a complete example.

pub mod fresnel;
pub mod ior;
pub mod microfacet;
pub mod principledhelpers;
pub mod tilted;

pub mod registry;

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
pub(crate) mod testutil;

use crate::desc::props::Props;
use crate::desc::ObjectDesc;
use crate::error::Result;
use crate::math::{Color, Vec2, Vec3};
use crate::plugin::patch::EditableKey;
use crate::plugin::record::{DeviceRecord, RecordRef};
use crate::plugin::registry::register_plugins;
use crate::plugin::{BuildContext, TexRef};
use crate::textures::{SurfacePoint, TextureStore};
use registry::BsdfEntry;

/// What a BSDF needs besides its own record: the texture store, the other
/// BSDFs (for adapters) and the surface point of the hit.
#[derive(Clone, Copy)]
pub struct BsdfCtx<'a> {
    /// All BSDFs of the scene.
    pub bsdfs: &'a [AnyBsdf],
    /// All textures of the scene.
    pub tex: &'a TextureStore,
    /// The shading point (texture coordinates, mesh data, local differential geometry).
    pub at: SurfacePoint,
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

/// A BSDF plugin: how it is built, what the kernels read, and how it scatters on the
/// CPU (its CUDA twin repeats `sample`/`eval`/`pdf`; see the module docs).
pub trait BsdfPlugin: Copy + std::fmt::Debug + PartialEq {
    /// The record the kernels read: `Self` unless the plugin holds handles of other
    /// BSDFs (an adapter's record holds where their records are instead).
    type Record: DeviceRecord;

    /// Every lobe is a Dirac delta: `eval` and `pdf` are zero, emitter sampling is
    /// skipped, and the CUDA twin has only `<name>_sample`.
    const DELTA: bool = false;
    /// Transmits light: two-sided by nature, and no adapter may wrap it.
    const TRANSMISSION: bool = false;
    /// The record holds values derived from its textures' means (sampling weights,
    /// range checks): an update of such a texture rebuilds it on the host.
    const READS_TEXTURE_MEANS: bool = false;
    /// [`Self::parameters_changed`] recomputes every value the record derives from its
    /// textures' means: an update of those textures runs the hook instead of building
    /// the plugin again (which it does for the others that read means, whose builds
    /// also check the means).
    const MEANS_IN_HOOK: bool = false;
    /// Wraps other BSDFs (`twosided`, `mask`): the kernels dispatch to it before the
    /// other kinds, its twin's functions are templates over the adapter levels below it
    /// (`template <int L>`, calling `bsdf_nested_*<L>` for what it wraps), its twin also
    /// defines `<name>_is_delta`, and it names what it wraps in [`Self::nested`].
    const ADAPTER: bool = false;
    /// The parameters an update writes in place, with where each lives; the others
    /// rebuild the plugin from its edited description.
    const EDITABLE: &'static [EditableKey] = &[];

    /// Reads the plugin's properties (every one must be read: the registry checks).
    fn build(p: &Props, ctx: &mut dyn BuildContext) -> Result<Self>;

    /// After an update wrote some of its [`Self::EDITABLE`] parameters in place:
    /// recomputes what the record derives from them, given the textures' means
    /// (`mean`), as [`Self::build`] computes it. The default: nothing derives.
    fn parameters_changed(&mut self, _mean: &dyn Fn(TexRef) -> Color) {}

    /// The record the kernels read; `refs` locates the records of lower handles (the
    /// BSDFs this one may wrap).
    fn record(&self, refs: &[RecordRef]) -> Self::Record;

    /// Samples `wo` given `wi`; `u1` picks a lobe, `u2` the direction.
    fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample>;

    /// `f(wi, wo) · |cos θo|` (zero for delta lobes).
    fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color;

    /// Density of [`Self::sample`] producing `wo` (solid angle; zero for delta lobes).
    fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32;

    /// Whether every lobe is a delta, so emitter sampling is pointless.
    fn is_delta(&self, _ctx: &BsdfCtx) -> bool {
        Self::DELTA
    }

    /// Handles of the BSDFs it wraps (an adapter's; none otherwise).
    fn nested(&self) -> Vec<u32> {
        Vec::new()
    }

    /// The textures (its own slots) that `eval` is affine in channel by channel: each
    /// channel of the texture's value moves only that channel of `eval`, in proportion,
    /// and nothing else of `eval` depends on it. Differentiable rendering takes the
    /// derivative of `eval` with respect to such a texture from two evaluations (at
    /// values 1 and 0) instead of central differences per channel. A texture that also
    /// fills another slot is not affine there (the backward pass checks). The default:
    /// none.
    fn linear_in(&self) -> Vec<crate::plugin::TexRef> {
        Vec::new()
    }

    /// The diffuse reflectance seen from `wi` (Mitsuba's `eval_diffuse_reflectance`, the
    /// `albedo` AOV): a plugin with a diffuse texture returns it; the default is
    /// `π · eval(wi, +z)`, the reflectance of a Lambertian surface that would send as
    /// much light along the normal.
    fn diffuse_reflectance(&self, ctx: &BsdfCtx, wi: Vec3) -> Color {
        self.eval(ctx, wi, Vec3::Z) * crate::math::PI
    }
}

impl AnyBsdf {
    /// Recomputes what the record derives from its editable parameters
    /// ([`BsdfPlugin::parameters_changed`]).
    pub fn parameters_changed(&mut self, mean: &dyn Fn(TexRef) -> Color) {
        any_bsdf!(self, b => b.parameters_changed(mean))
    }

    /// The plugin's registry entry.
    pub fn entry(&self) -> &'static BsdfEntry {
        &REGISTRY[self.tag() as usize]
    }

    /// Whether this instance has a transmission lobe (Mitsuba's `Transmission` flag,
    /// which `null` lobes count in): the transmitting kinds always; `principled` only
    /// with a `spec_trans` that is not a constant 0; an adapter when what it wraps does
    /// (`bsdfs` holds those, `tex` the textures). `twosided` refuses such instances.
    pub fn transmits(&self, bsdfs: &[AnyBsdf], tex: &TextureStore) -> bool {
        match self {
            AnyBsdf::Principled(p) => tex.constant(p.spec_trans) != Some(Color::ZERO),
            _ if self.entry().transmission => true,
            _ => (self.nested().iter()).any(|&h| bsdfs[h as usize].transmits(bsdfs, tex)),
        }
    }
}

// The registry: one line per plugin, `TAG = module::Plugin`. Append new plugins at the
// end: a line's position is its tag, which the kernel caches and tests rely on.
register_plugins! {
    category "bsdf" in "bsdfs";
    /// Every BSDF plugin, one variant per registry line.
    // Records are plain data that the kernels read as they are (`roughplastic` holds
    // its 64-entry table inline): some variants are large.
    #[allow(clippy::large_enum_variant)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum AnyBsdf: BsdfPlugin, entry BsdfEntry, dispatch any_bsdf;
    fn build_kind(props, ctx: &mut dyn BuildContext);
    DIFFUSE = diffuse::Diffuse,
    CONDUCTOR = conductor::Conductor,
    ROUGH_CONDUCTOR = roughconductor::RoughConductor,
    DIELECTRIC = dielectric::Dielectric,
    THIN_DIELECTRIC = thindielectric::ThinDielectric,
    PLASTIC = plastic::Plastic,
    ROUGH_PLASTIC = roughplastic::RoughPlastic,
    TWO_SIDED = twosided::TwoSided,
    ROUGH_DIELECTRIC = roughdielectric::RoughDielectric,
    MASK = mask::Mask,
    NORMALMAP = normalmap::NormalMap,
    BLEND = blendbsdf::BlendBsdf,
    NULL = null::Null,
    PRINCIPLED = principled::Principled,
    PRINCIPLED_THIN = principledthin::PrincipledThin,
    BUMPMAP = bumpmap::BumpMap,
}

impl AnyBsdf {
    /// Samples `wo` given `wi`; `u1` picks a lobe, `u2` the direction.
    pub fn sample(&self, ctx: &BsdfCtx, wi: Vec3, u1: f32, u2: Vec2) -> Option<BsdfSample> {
        any_bsdf!(self, b => b.sample(ctx, wi, u1, u2))
    }

    /// `f(wi, wo) · |cos θo|` (zero for delta lobes).
    pub fn eval(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> Color {
        any_bsdf!(self, b => b.eval(ctx, wi, wo))
    }

    /// Density of [`Self::sample`] producing `wo` (solid angle; zero for delta lobes).
    pub fn pdf(&self, ctx: &BsdfCtx, wi: Vec3, wo: Vec3) -> f32 {
        any_bsdf!(self, b => b.pdf(ctx, wi, wo))
    }

    /// Whether every lobe is a delta, so emitter sampling is pointless.
    pub fn is_delta(&self, ctx: &BsdfCtx) -> bool {
        any_bsdf!(self, b => b.is_delta(ctx))
    }

    /// The diffuse reflectance seen from `wi` (Mitsuba's `eval_diffuse_reflectance`,
    /// the `albedo` AOV; [`BsdfPlugin::diffuse_reflectance`]).
    pub fn diffuse_reflectance(&self, ctx: &BsdfCtx, wi: Vec3) -> Color {
        any_bsdf!(self, b => b.diffuse_reflectance(ctx, wi))
    }

    /// Handles of the BSDFs it wraps ([`BsdfPlugin::nested`]).
    pub fn nested(&self) -> Vec<u32> {
        any_bsdf!(self, b => b.nested())
    }

    /// The textures `eval` is affine in, channel by channel ([`BsdfPlugin::linear_in`]).
    pub fn linear_in(&self) -> Vec<crate::plugin::TexRef> {
        any_bsdf!(self, b => b.linear_in())
    }

    /// The words of the record the kernels read (its slot in the blob); `refs` locates
    /// the records of the BSDFs it may wrap (lower handles).
    pub fn record_words(&self, refs: &[RecordRef]) -> Vec<u32> {
        use crate::plugin::record::record_words;
        any_bsdf!(self, b => record_words(&b.record(refs)))
    }
}

/// Builds a `<bsdf>` object into an [`AnyBsdf`] (nested BSDFs are built through `ctx`
/// and referred to by handle); every property must be read.
pub fn build(obj: &ObjectDesc, ctx: &mut dyn BuildContext) -> Result<AnyBsdf> {
    let b = build_kind(obj, ctx)?;
    obj.props.check_unused(&obj.kind)?;
    Ok(b)
}
