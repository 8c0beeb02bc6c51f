//! Differentiable rendering: the gradient of a loss of the rendered image with respect
//! to scene parameters, given the loss's gradient with respect to the image (its
//! adjoint). The Python packages `heliograph.torch` and `heliograph.jax` wrap it into
//! PyTorch's and JAX's autograd.
//!
//! - **What is differentiable**: the value of any texture that a BSDF or an emitter
//!   reads. Under the keys of `traverse`, that is every constant colour or float given
//!   as a texture (`white.reflectance.value`, `light.emitter.radiance.value`,
//!   `metal.alpha.value`, ...) and a bitmap's texels (`shape.bsdf.reflectance.data`,
//!   where the gradient of a lookup scatters to the texels it read, four for bilinear
//!   filtering; a BSDF's or an area light's bitmap), an environment map's texels and
//!   scale (`sky.data`, `sky.scale`), and a BSDF's plain floats such as an index of
//!   refraction (`glass.eta`, through rebuilt records: [`probe::RecordProbe`]).
//!   Sensor parameters, transforms and vertex positions are not: moving
//!   geometry moves visibility edges, which needs projective sampling. Asking for them,
//!   or for any other parameter, is an error that names the key ([`resolve`]).
//! - **Method**: path replay backpropagation (Vicini et al. 2021) for `path` (also
//!   named `prb` and `prb_basic`, as in Mitsuba's scripts) and its one-bounce
//!   analogue for `direct`; see [`adjoint`]. Memory does not grow with path length.
//!   Derivatives of what a plugin evaluates come from probes ([`probe`]): two
//!   evaluations where a BSDF's `eval` is affine in the texture
//!   ([`DiffParam::linear_bsdfs`]), central differences otherwise.
//! - **Seeds**: the backward pass traces its own samples (`seed`, `spp`), which the
//!   caller usually decorrelates from the image's, as Mitsuba's `seed_grad`. With the
//!   image's own seed, the gradient is the exact derivative of that image (what the tests
//!   check against finite differences with common random numbers).
//! - **Accumulation** (CPU): the image's tiles are split into a fixed number of contiguous
//!   groups (depending on the parameters' size, never on the thread count); each group
//!   accumulates into its own gradient buffers, and the buffers are summed in group
//!   order, so gradients are bitwise reproducible on any number of threads.
//!
//! The CPU backend runs it ([`crate::backend::cpu::backward`]); the CUDA backend runs
//! the same method in `kernels/backward.cuh` (`CudaBackend::backward`, parameters laid
//! out by [`flat`]), with float atomics for texel gradients. This module keeps the
//! mathematics both share: the adjoint, the probes and the parameter kinds.

pub mod adjoint;
pub mod flat;
pub mod probe;

use std::collections::{HashMap, HashSet};

use crate::desc::params::ParamValue;
use crate::desc::Category;
use crate::emitters::AnyEmitter;
use crate::error::{Error, Result};
use crate::scene::builder::{Alloc, BuildLog};
use crate::scene::LoadedScene;
use crate::textures::AnyTexture;
use probe::RecordProbe;

/// [`DiffParam::texture`] of a parameter that is not a texture's value.
pub const NO_TEXTURE: u32 = u32::MAX;

/// A differentiable parameter: the texture whose value it is, or an environment map's
/// texels or scale.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffParam {
    /// Its key.
    pub key: String,
    /// The texture record ([`NO_TEXTURE`] for a parameter that is not a texture's).
    pub texture: u32,
    /// What the value is.
    pub kind: DiffKind,
    /// The BSDFs that read it (directly or through nested textures and BSDFs), by
    /// handle: a vertex whose BSDF is not one of them needs no derivative.
    pub bsdfs: Vec<u32>,
    /// Those of `bsdfs` whose `eval` is affine in it channel by channel (it fills one
    /// of their [`crate::bsdfs::AnyBsdf::linear_in`] slots, and nothing else they read
    /// reaches it): their derivatives take two evaluations (at values 1 and 0) instead
    /// of central differences.
    pub linear_bsdfs: Vec<u32>,
    /// Whether an emitter reads it.
    pub read_by_emitters: bool,
}

/// The kind of value of a [`DiffParam`].
#[derive(Clone, Debug, PartialEq)]
pub enum DiffKind {
    /// A constant: 1 channel (a float) or 3 (a colour).
    Constant {
        /// Channels.
        channels: usize,
    },
    /// An environment map's texels (`envmap`'s `data`), `height × width × 3`.
    EnvmapData {
        /// The emitter.
        emitter: u32,
        /// Height in texels.
        height: usize,
        /// Width in texels.
        width: usize,
    },
    /// A plain float of a BSDF (an index of refraction), differentiated through its
    /// rebuilt records.
    BsdfFloat {
        /// The records.
        probe: Box<RecordProbe>,
    },
    /// An environment map's `scale`.
    EnvmapScale {
        /// The emitter.
        emitter: u32,
    },
    /// A bitmap's texels, `height × width × channels`.
    Bitmap {
        /// Height in texels.
        height: usize,
        /// Width in texels.
        width: usize,
        /// Channels per texel (1 or 3).
        channels: usize,
    },
}

impl DiffParam {
    /// Whether a BSDF reads it.
    pub fn read_by_bsdfs(&self) -> bool {
        !self.bsdfs.is_empty()
    }

    /// Whether BSDF `b` reads it.
    pub fn read_by_bsdf(&self, b: u32) -> bool {
        self.bsdfs.contains(&b)
    }

    /// Whether BSDF `b`'s `eval` is affine in it, channel by channel.
    pub fn read_linearly_by(&self, b: u32) -> bool {
        self.linear_bsdfs.contains(&b)
    }

    /// Channels of the value at a point.
    pub fn channels(&self) -> usize {
        match self.kind {
            DiffKind::Constant { channels } | DiffKind::Bitmap { channels, .. } => channels,
            DiffKind::EnvmapData { .. } => 3,
            DiffKind::EnvmapScale { .. } | DiffKind::BsdfFloat { .. } => 1,
        }
    }

    /// The shape of its gradient: that of its value under `traverse`.
    pub fn shape(&self) -> Vec<usize> {
        match self.kind {
            DiffKind::Constant { channels: 1 }
            | DiffKind::EnvmapScale { .. }
            | DiffKind::BsdfFloat { .. } => vec![],
            DiffKind::EnvmapData { height, width, .. } => vec![height, width, 3],
            DiffKind::Constant { channels } => vec![channels],
            DiffKind::Bitmap {
                height,
                width,
                channels,
            } => vec![height, width, channels],
        }
    }

    /// Values in its gradient.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    /// Whether the gradient is empty (never: a parameter has at least one value).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The error for a parameter that cannot be differentiated.
fn not_differentiable(key: &str, why: &str) -> Error {
    Error::Render(format!(
        "parameter \"{key}\" cannot be differentiated: {why}"
    ))
}

/// The textures each category of object reads, nested textures included.
fn textures_read_by(log: &BuildLog, category: Category) -> HashSet<u32> {
    let starts: Vec<usize> = (0..log.objects.len())
        .filter(|&i| log.objects[i].category == category)
        .collect();
    reach(log, starts).0
}

/// The textures and BSDF records that the objects `starts` (indices into the log) read,
/// nested textures and BSDFs included.
fn reach(log: &BuildLog, starts: Vec<usize>) -> (HashSet<u32>, HashSet<u32>) {
    let record_of = |category: Category| -> HashMap<u32, usize> {
        log.objects
            .iter()
            .enumerate()
            .filter(|(_, o)| o.category == category)
            .map(|(i, o)| (o.handle, i))
            .collect()
    };
    let (texture_records, bsdf_records) = (record_of(Category::Texture), record_of(Category::Bsdf));
    let (mut textures, mut bsdfs) = (HashSet::new(), HashSet::new());
    let mut stack = starts;
    let mut seen = HashSet::new();
    while let Some(r) = stack.pop() {
        if !seen.insert(r) {
            continue;
        }
        for a in &log.objects[r].allocs {
            let (set, records, h) = match *a {
                Alloc::Texture(t) => (&mut textures, &texture_records, t),
                Alloc::Bsdf(b) => (&mut bsdfs, &bsdf_records, b),
                _ => continue,
            };
            set.insert(h);
            if let Some(&next) = records.get(&h) {
                stack.push(next);
            }
        }
    }
    (textures, bsdfs)
}

/// Whether the `eval` of the BSDF that object `i` of the log built (`bsdf`) is affine in
/// texture `t` channel by channel: `t` fills exactly one of its slots, one it declares
/// linear ([`crate::bsdfs::AnyBsdf::linear_in`]), and none of its other textures or the
/// BSDFs it wraps reach `t`.
fn reads_linearly(log: &BuildLog, i: usize, bsdf: &crate::bsdfs::AnyBsdf, t: u32) -> bool {
    if bsdf.linear_in().iter().filter(|&&x| x == t).count() != 1 {
        return false;
    }
    let object_of = |category: Category, h: u32| {
        log.objects
            .iter()
            .position(|o| o.category == category && o.handle == h)
    };
    let reaches_t = |category: Category, h: u32| {
        object_of(category, h).is_some_and(|r| reach(log, vec![r]).0.contains(&t))
    };
    let own = log.objects[i].handle;
    let mut direct = 0;
    for a in &log.objects[i].allocs {
        match *a {
            Alloc::Texture(u) if u == t => direct += 1,
            Alloc::Texture(u) if reaches_t(Category::Texture, u) => return false,
            Alloc::Bsdf(b) if b != own && reaches_t(Category::Bsdf, b) => return false,
            _ => {}
        }
    }
    direct == 1
}

/// For each BSDF (by handle), the textures and BSDF records it reads.
fn bsdf_reads(log: &BuildLog) -> Vec<(u32, HashSet<u32>, HashSet<u32>)> {
    (0..log.objects.len())
        .filter(|&i| log.objects[i].category == Category::Bsdf)
        .map(|i| {
            let (t, b) = reach(log, vec![i]);
            (log.objects[i].handle, t, b)
        })
        .collect()
}

/// The differentiable parameters named by `keys`, in order; an error naming the key
/// for one that is not a parameter of the scene, cannot be differentiated, or is
/// named twice.
pub fn resolve(loaded: &LoadedScene, keys: &[String]) -> Result<Vec<DiffParam>> {
    let (table, log, scene) = (loaded.params(), loaded.log(), &loaded.setup().scene);
    let emitter_textures = textures_read_by(log, Category::Emitter);
    let per_bsdf = bsdf_reads(log);
    let bsdfs_reading_texture = |t: u32| -> Vec<u32> {
        let mut v: Vec<u32> = per_bsdf
            .iter()
            .filter(|(_, ts, _)| ts.contains(&t))
            .map(|(b, ..)| *b)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let bsdfs_reading_linearly = |t: u32| -> Vec<u32> {
        let mut v: Vec<u32> = (0..log.objects.len())
            .filter(|&i| log.objects[i].category == Category::Bsdf)
            .filter(|&i| {
                let b = log.objects[i].handle;
                scene
                    .bsdfs
                    .get(b as usize)
                    .is_some_and(|bsdf| reads_linearly(log, i, bsdf, t))
            })
            .map(|i| log.objects[i].handle)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let bsdfs_reading_bsdf = |r: u32| -> Vec<u32> {
        let mut v: Vec<u32> = per_bsdf
            .iter()
            .filter(|(b, _, bs)| *b == r || bs.contains(&r))
            .map(|(b, ..)| *b)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let bump_textures: HashSet<u32> = log
        .objects
        .iter()
        .filter(|o| o.kind == "bumpmap")
        .flat_map(|o| o.allocs.iter())
        .filter_map(|a| match a {
            Alloc::Texture(t) => Some(*t),
            _ => None,
        })
        .collect();
    let mut out: Vec<DiffParam> = Vec::with_capacity(keys.len());
    for key in keys {
        if out.iter().any(|p| &p.key == key) {
            return Err(not_differentiable(key, "it is named twice"));
        }
        let Some(i) = table.find(key) else {
            let known: Vec<&str> = table.decls().iter().map(|d| d.key.as_str()).collect();
            return Err(Error::Render(format!(
                "\"{key}\" is not a parameter of this scene; it has: {}",
                known.join(", ")
            )));
        };
        let decl = &table.decls()[i];
        let owner = &log.objects[decl.owner];
        let param = if let Some(t) = decl.texture {
            let channels = match decl.value {
                ParamValue::Color(_) => 3,
                _ => 1,
            };
            DiffParam {
                key: key.clone(),
                texture: t,
                kind: DiffKind::Constant { channels },
                bsdfs: bsdfs_reading_texture(t),
                linear_bsdfs: bsdfs_reading_linearly(t),
                read_by_emitters: emitter_textures.contains(&t),
            }
        } else if owner.category == Category::Texture && key.ends_with(".data") {
            let Some(AnyTexture::Bitmap(b)) = scene.textures.records.get(owner.handle as usize)
            else {
                return Err(not_differentiable(key, "it is not a bitmap's texels"));
            };
            if bump_textures.contains(&owner.handle) {
                return Err(not_differentiable(
                    key,
                    "it is a bump map's height, which moves the shading normal (geometry)",
                ));
            }
            DiffParam {
                key: key.clone(),
                texture: owner.handle,
                kind: DiffKind::Bitmap {
                    height: b.height as usize,
                    width: b.width as usize,
                    channels: b.channels as usize,
                },
                bsdfs: bsdfs_reading_texture(owner.handle),
                linear_bsdfs: bsdfs_reading_linearly(owner.handle),
                read_by_emitters: emitter_textures.contains(&owner.handle),
            }
        } else if owner.category == Category::Emitter
            && owner.kind == "envmap"
            && (key.ends_with(".data") || key.ends_with(".scale"))
        {
            let emitter = owner.handle;
            let kind = match &scene.emitters.get(emitter as usize) {
                Some(AnyEmitter::EnvmapEmitter(e)) if key.ends_with(".data") => {
                    DiffKind::EnvmapData {
                        emitter,
                        height: e.height as usize,
                        width: e.width as usize,
                    }
                }
                Some(AnyEmitter::EnvmapEmitter(_)) => DiffKind::EnvmapScale { emitter },
                _ => return Err(not_differentiable(key, "its environment map was not found")),
            };
            DiffParam {
                key: key.clone(),
                texture: NO_TEXTURE,
                kind,
                bsdfs: Vec::new(),
                linear_bsdfs: Vec::new(),
                read_by_emitters: false,
            }
        } else if let (Category::Bsdf, ParamValue::Float(v)) = (&owner.category, &decl.value) {
            let step = (1.0e-3 * v.abs()).max(1.0e-6);
            let h = owner.handle as usize;
            // the record rebuilt at x, and its words in the scene's flat BSDF array
            let rebuilt = |x: f64| -> Result<(crate::bsdfs::AnyBsdf, Vec<u32>)> {
                let mut l = loaded.clone();
                let mut p = l.traverse();
                p.set(key, ParamValue::Float(x))?;
                l.update(&p.staged())?;
                let bsdfs = &l.setup().scene.bsdfs;
                let (refs, blob) = crate::bsdfs::registry::flatten(bsdfs);
                let start = refs[h].offset as usize;
                let end = refs
                    .get(h + 1)
                    .map_or(blob.words.len(), |r| r.offset as usize);
                Ok((bsdfs[h], blob.words[start..end].to_vec()))
            };
            let ((plus, plus_words), (minus, minus_words)) =
                (rebuilt(v + step)?, rebuilt(v - step)?);
            let probe = RecordProbe {
                bsdf: owner.handle,
                plus,
                minus,
                step: step as f32,
                plus_words,
                minus_words,
            };
            DiffParam {
                key: key.clone(),
                texture: NO_TEXTURE,
                kind: DiffKind::BsdfFloat {
                    probe: Box::new(probe),
                },
                bsdfs: bsdfs_reading_bsdf(owner.handle),
                linear_bsdfs: Vec::new(),
                read_by_emitters: false,
            }
        } else {
            let why = match (&owner.category, &decl.value) {
                (Category::Sensor, _) => "sensor parameters are not differentiated".to_string(),
                (_, ParamValue::Transform(_) | ParamValue::Array(_)) => {
                    "transforms and vertex positions are not differentiated (moving geometry \
                     moves visibility edges, which needs projective sampling)"
                        .to_string()
                }
                _ => format!(
                    "it is a parameter of {} `{}`, and only texture values are \
                     differentiable: constant colours and floats given as textures \
                     (keys ending in `.value`) and bitmap texels (`.data`)",
                    owner.category.tag(),
                    owner.kind
                ),
            };
            return Err(not_differentiable(key, &why));
        };
        out.push(param);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
