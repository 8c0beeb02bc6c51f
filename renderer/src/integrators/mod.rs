//! Integrators: `direct`, `path`, `depth`. Each computes the radiance (and
//! alpha) carried by one camera ray; the backend drives them per sample. `ptracer`
//! ([`ptracer`]) is the exception: it traces paths from the emitters and splats onto the
//! film, and the CPU backend hands it the whole render. `aov`
//! ([`aov`]) adds film channels (depth, normals, albedo, ...) to the image of a nested
//! integrator, which it holds as the scene's integrator.
//!
//! One file per plugin (the file stem is the scene `type`, the file's module doc the
//! plugin's manual; `heliograph plugins NAME` prints it); `moment` wraps exactly one
//! integrator and renders its image.
//!
//! ```xml
//! <integrator type="path"><integer name="max_depth" value="8"/></integrator>
//! ```
//!
//! # Adding an integrator plugin
//!
//! 1. **`src/integrators/<name>.rs`**: the manual (a first sentence `` `<name>`: ... ``,
//!    a `| parameter | type | default | meaning |` table, an XML example) and
//!    `pub fn build(obj: &ObjectDesc) -> Result<Built>`, which reads the properties
//!    (the registry checks that every one was read). One that renders camera rays its
//!    own way also needs a record: a line `TAG = module::Record` in the
//!    `AnyIntegrator` records list (the [`AnyIntegrator`] enum and its dispatch),
//!    the record implementing [`IntegratorRecord`], its flattening
//!    ([`record::flatten_integrator`]) and its CUDA kernel (`kernels/integrators/`).
//! 2. **One line** `"<name>" => <module>` in the `register_plugins!` list below.
//!
//! From the list, the registry derives the modules, [`KNOWN`] (an unknown `type` gets
//! a "did you mean"), [`REGISTRY`] (the manuals) and the build match behind [`build`].
//!
//! Shared pieces live here: emitter selection for next-event estimation,
//! emission seen by a ray (surface or environment), and the power heuristic.

use std::sync::Arc;

use crate::desc::props::{Entry, Value};
use crate::desc::{Category, ObjectDesc};
use crate::emitters::EmitterCtx;
use crate::error::Result;
use crate::math::{offset_origin, Color, Frame, Ray, Vec2, Vec3};
use crate::plugin::registry::register_plugins;
use crate::samplers::SampleRng;
use crate::scene::Scene;
use crate::shapes::{Hit, NO_EMITTER};

pub mod observe;
pub mod record;

pub use aov::Aov;
pub use depth::Depth;
pub use direct::Direct;
pub use path::Path;
pub use ptracer::Ptracer;

/// What an integrator record does per camera ray: the dispatch of [`AnyIntegrator`].
pub trait IntegratorRecord {
    /// Radiance and alpha along camera ray `ray`.
    fn sample(&self, scene: &Scene, ray: &Ray, rng: &mut SampleRng) -> (Color, f32);
}

impl IntegratorRecord for Direct {
    #[inline]
    fn sample(&self, scene: &Scene, ray: &Ray, rng: &mut SampleRng) -> (Color, f32) {
        Direct::sample(self, scene, ray, rng)
    }
}

impl IntegratorRecord for Path {
    #[inline]
    fn sample(&self, scene: &Scene, ray: &Ray, rng: &mut SampleRng) -> (Color, f32) {
        Path::sample(self, scene, ray, rng)
    }
}

impl IntegratorRecord for Depth {
    #[inline]
    fn sample(&self, scene: &Scene, ray: &Ray, _rng: &mut SampleRng) -> (Color, f32) {
        Depth::sample(self, scene, ray)
    }
}

/// Light tracing has no per-camera-ray estimate: the backends render it whole
/// ([`ptracer::render`]).
impl IntegratorRecord for Ptracer {
    #[inline]
    fn sample(&self, _scene: &Scene, _ray: &Ray, _rng: &mut SampleRng) -> (Color, f32) {
        (Color::ZERO, 0.0)
    }
}

// The records the integrator plugins build (`aov` and `moment` hold one of the others):
// `AnyIntegrator` and its dispatch. The device side (`record`, the kernels) flattens
// them by hand.
register_plugins! {
    /// Every integrator record, one variant per line of the records list.
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C, u32)]
    pub enum AnyIntegrator, dispatch any_integrator;
    DIRECT = direct::Direct,
    PATH = path::Path,
    DEPTH = depth::Depth,
    PTRACER = ptracer::Ptracer,
}

impl AnyIntegrator {
    /// Radiance and alpha along camera ray `ray` ([`IntegratorRecord::sample`]).
    #[inline]
    pub fn sample(&self, scene: &Scene, ray: &Ray, rng: &mut SampleRng) -> (Color, f32) {
        any_integrator!(self, i => IntegratorRecord::sample(i, scene, ray, rng))
    }
}

impl Default for AnyIntegrator {
    fn default() -> Self {
        AnyIntegrator::Path(Path::default())
    }
}

/// What an integrator plugin builds: the integrator that computes each sample's
/// radiance and alpha and, for `aov`, the extra outputs (the nested integrator is the
/// first).
pub type Built = (AnyIntegrator, Option<Aov>);

// The registry: one line per plugin, `"<type>" => module` (the file `<type>.rs`).
register_plugins! {
    category "integrator" in "integrators";
    fn build_kind(&ObjectDesc) -> Built;
    "aov" => aov,
    "direct" => direct (cuda),
    "path" => path (cuda),
    "depth" => depth,
    "moment" => moment,
    "ptracer" => ptracer (cuda),
}

/// Other names of plugins: Mitsuba's scripts name its differentiable path tracers
/// `prb` and `prb_basic`, which render as `path` (whose backward pass is path replay
/// backpropagation, see [`crate::diff`]); a scene that names them loads unchanged.
pub const ALIASES: &[(&str, &str)] = &[("prb", "path"), ("prb_basic", "path")];

/// Builds an `<integrator>` with its plugin; every property must be read.
pub fn build(obj: &ObjectDesc) -> Result<Built> {
    let i = match ALIASES.iter().find(|(alias, _)| *alias == obj.kind) {
        Some(_) => path::build(obj)?,
        None => build_kind(obj)?,
    };
    obj.props.check_unused(&obj.kind)?;
    Ok(i)
}

/// The integrators nested in `obj` (`moment`, `aov`), with their entries.
fn nested_integrators(obj: &ObjectDesc) -> Vec<(&Entry, &Arc<ObjectDesc>)> {
    obj.props
        .entries()
        .iter()
        .filter_map(|e| match &e.value {
            Value::Object(o) if o.category == Category::Integrator => Some((e, o)),
            _ => None,
        })
        .collect()
}

/// The power heuristic (β = 2) weight of a strategy with density `a` against one with `b`.
#[inline]
pub fn mis_weight(a: f32, b: f32) -> f32 {
    let (a2, b2) = (a * a, b * b);
    let w = a2 / (a2 + b2);
    if w.is_finite() {
        w
    } else if a > 0.0 {
        1.0
    } else {
        0.0
    }
}

/// The shading frame at a hit (shading normal, tangent along dp/du).
#[inline]
pub fn shading_frame(hit: &Hit) -> Frame {
    Frame::from_normal_tangent(hit.n, hit.dpdu)
}

/// A ray leaving `hit` in direction `d`.
#[inline]
pub fn spawn_ray(hit: &Hit, d: Vec3) -> Ray {
    Ray::new(offset_origin(hit.p, hit.ng, d), d)
}

/// One emitter-sampling (next-event) result, before the visibility test.
pub struct EmitterSampleResult {
    /// World direction towards the light.
    pub d: Vec3,
    /// `radiance / pdf`.
    pub weight: Color,
    /// Solid-angle density including the emitter selection probability.
    pub pdf: f32,
    /// Whether the sampled emitter is a delta light.
    pub delta: bool,
    /// The shadow ray towards the sampled point (or direction).
    pub shadow: Ray,
    /// The emitter sampled.
    pub emitter: u32,
    /// Texture coordinates of the sampled point on an area light (zero otherwise).
    pub uv: Vec2,
}

/// Picks an emitter uniformly (as Mitsuba without sampling weights) and samples
/// a direction towards it from `hit`. Visibility is left to the caller, which
/// can skip the shadow ray when the BSDF is zero for this direction.
#[inline]
pub fn sample_emitter(scene: &Scene, hit: &Hit, u: Vec2) -> Option<EmitterSampleResult> {
    sample_emitter_in(scene, &scene.emitter_ctx(), hit, u)
}

/// [`sample_emitter`] with the emitters reading from `ctx` (differentiable rendering
/// evaluates them with swapped textures).
pub fn sample_emitter_in(
    scene: &Scene,
    ctx: &EmitterCtx,
    hit: &Hit,
    u: Vec2,
) -> Option<EmitterSampleResult> {
    let n = scene.emitters.len();
    if n == 0 {
        return None;
    }
    let scaled = u.x * n as f32;
    let idx = (scaled as usize).min(n - 1);
    let u = Vec2::new((scaled - idx as f32).min(1.0 - f32::EPSILON / 2.0), u.y);
    let s = scene.emitters[idx].sample_direction(ctx, hit.p, u)?;
    if !(s.pdf > 0.0) || s.radiance == Color::ZERO {
        return None;
    }
    let shadow = if s.dist.is_finite() {
        // Aim at the sampled point itself from the offset origin: a ray parallel to s.d
        // would miss it by the offset, and near a planar light's horizon that miss
        // turns into hitting the light's own plane early (a false self-shadow).
        let target = hit.p + s.d * s.dist;
        let o = offset_origin(hit.p, hit.ng, s.d);
        let to = target - o;
        let len = to.length();
        Ray {
            o,
            d: to / len,
            tmax: len * (1.0 - 1e-3),
        }
    } else {
        spawn_ray(hit, s.d)
    };
    let pdf = s.pdf / n as f32;
    Some(EmitterSampleResult {
        d: s.d,
        weight: s.radiance / pdf,
        pdf,
        delta: s.delta,
        shadow,
        emitter: idx as u32,
        uv: s.uv,
    })
}

/// Radiance emitted by the surface at `hit` towards the ray's origin, and the
/// density with which emitter sampling from `from` would have produced it.
#[inline]
pub fn surface_emission(scene: &Scene, hit: &Hit, ray_d: Vec3, from: Vec3) -> Option<(Color, f32)> {
    let e = scene.geom.shapes[hit.shape as usize].emitter;
    if e == NO_EMITTER {
        return None;
    }
    let em = &scene.emitters[e as usize];
    let ctx = scene.emitter_ctx();
    let le = em.eval_hit(&ctx, hit, ray_d);
    let pdf = em.pdf_hit(&ctx, from, hit) / scene.emitters.len() as f32;
    Some((le, pdf))
}

/// Radiance from environment emitters along an escaping ray direction `d`, read from
/// `ctx` (differentiable rendering reads swapped textures). Cheaper than
/// [`environment_emission`] where no MIS weight needs the density: after a camera ray or
/// a delta scattering.
#[inline]
pub fn environment_radiance(scene: &Scene, ctx: &EmitterCtx, d: Vec3) -> Color {
    let envs = scene.env_emitters.iter();
    envs.fold(Color::ZERO, |l, &e| {
        l + scene.emitters[e as usize].eval_env(ctx, d)
    })
}

/// Radiance from environment emitters along an escaping ray direction `d`, and
/// the emitter-sampling density of that direction.
#[inline]
pub fn environment_emission(scene: &Scene, d: Vec3) -> (Color, f32) {
    let ctx = scene.emitter_ctx();
    let n = scene.emitters.len() as f32;
    scene
        .env_emitters
        .iter()
        .fold((Color::ZERO, 0.0), |(l, p), &e| {
            let (le, pe) = scene.emitters[e as usize].eval_pdf_env(&ctx, d);
            (l + le, p + pe / n)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::registry::testing::{check_registry, scene_error};

    #[test]
    fn the_registry_has_every_integrator_with_its_manual_and_suggests_the_nearest() {
        check_registry("integrator", REGISTRY, KNOWN);
        let e = scene_error(r#"<integrator type="ptracr"/>"#);
        assert!(
            e.contains("did you mean \"ptracer\"") && e.contains("<string>:2:"),
            "{e}"
        );
    }
    use crate::desc::xml::load_string;

    fn integrator(xml: &str) -> Result<AnyIntegrator> {
        let d = load_string(&format!("<scene version=\"3.0.0\">\n{xml}\n</scene>"), &[])?;
        let e = &d.root.props.entries()[0];
        let Value::Object(o) = &e.value else {
            unreachable!("an object")
        };
        Ok(build(o)?.0)
    }

    #[test]
    fn moment_renders_its_nested_integrator() {
        let inner = r#"<integrator type="path"><integer name="max_depth" value="2"/></integrator>"#;
        let wrapped = integrator(&format!("<integrator type=\"moment\">{inner}</integrator>"));
        let direct = integrator(inner).unwrap();
        assert_eq!(wrapped.unwrap(), direct);
        assert_ne!(direct, AnyIntegrator::default(), "max_depth was read");
        for body in [
            "",
            "<integrator type=\"path\"/><integrator type=\"direct\"/>",
        ] {
            let e = integrator(&format!("<integrator type=\"moment\">{body}</integrator>"))
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("<string>:2:") && e.contains("exactly one"),
                "{e}"
            );
        }
        let e = integrator(
            "<integrator type=\"moment\"><integrator type=\"path\"/><float name=\"x\" value=\"1\"/></integrator>",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("\"x\""),
            "unused parameters are still reported: {e}"
        );
    }
}
