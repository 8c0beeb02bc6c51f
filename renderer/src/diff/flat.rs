//! The parameters of a backward pass as the CUDA kernels read them
//! (`renderer/kernels/backward.cuh`, `FlatDiffParam`).

use super::{DiffKind, DiffParam};
use crate::error::{Error, Result};

/// [`FlatDiffParam::kind`] values (`HG_DIFF_*`).
pub const DIFF_CONSTANT: u32 = 0;
/// A bitmap's texels.
pub const DIFF_BITMAP: u32 = 1;
/// An environment map's texels.
pub const DIFF_ENVMAP_DATA: u32 = 2;
/// An environment map's scale.
pub const DIFF_ENVMAP_SCALE: u32 = 3;
/// A BSDF's plain float, through its rebuilt records.
pub const DIFF_BSDF_FLOAT: u32 = 4;
/// [`FlatDiffParam::reads`]: a BSDF reads the texture.
pub const READ_BSDF: u32 = 1;
/// [`FlatDiffParam::reads`]: an emitter reads it.
pub const READ_EMITTER: u32 = 2;
/// The accumulators a GPU thread keeps for constants and scales (`HG_DIFF_SMALL`).
pub const SMALL_SLOTS: u32 = 24;
/// [`FlatDiffParam::small`] of a parameter without accumulators.
pub const NO_SLOT: u32 = u32::MAX;

/// One parameter (`FlatDiffParam` in `backward/params.cuh`, 48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlatDiffParam {
    /// `DIFF_*`.
    pub kind: u32,
    /// The texture (constants, bitmaps), the emitter (environment maps) or the BSDF
    /// record (plain floats).
    pub source: u32,
    /// Channels of the value at a point.
    pub channels: u32,
    /// `READ_*` bits.
    pub reads: u32,
    /// Its first accumulator in a thread ([`NO_SLOT`]: none).
    pub small: u32,
    /// A plain float's central-difference step.
    pub step: f32,
    /// Where its gradient lies: a device address (or, for the host test driver, the
    /// offset into its one gradient array).
    pub grad: u64,
    /// A plain float's record at value + step: its words' address (offset into
    /// [`FlatParams::records`] from [`flatten`]).
    pub plus: u64,
    /// Its record at value - step, likewise.
    pub minus: u64,
}

/// What the backward kernel reads of its parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlatParams {
    /// The parameters, each `grad` the offset of its gradient in one array of all.
    pub params: Vec<FlatDiffParam>,
    /// For each BSDF (by handle; those beyond read none), a mask of the parameters it
    /// reads (bit k: parameter k; every bit for a table of more than 32).
    pub bsdf_masks: Vec<u32>,
    /// For each BSDF, as `bsdf_masks`, the parameters its `eval` is affine in
    /// ([`DiffParam::linear_bsdfs`]; none for a table of more than 32).
    pub bsdf_linear: Vec<u32>,
    /// Whether a parameter is an environment map's.
    pub envmap: bool,
    /// The rebuilt records of plain floats (words).
    pub records: Vec<u32>,
}

/// `params` as the kernels read them. An error names a parameter the GPU cannot
/// differentiate.
pub fn flatten(params: &[DiffParam]) -> Result<FlatParams> {
    let mut out = Vec::with_capacity(params.len());
    let (mut offset, mut small) = (0u64, 0u32);
    let mut envmap = false;
    let mut records = Vec::new();
    let mut record = |words: &[u32]| {
        let at = records.len() as u64;
        records.extend_from_slice(words);
        at
    };
    for p in params {
        let reads = if p.read_by_bsdfs() { READ_BSDF } else { 0 }
            | if p.read_by_emitters { READ_EMITTER } else { 0 };
        let (mut step, mut plus, mut minus) = (0.0, 0, 0);
        let (kind, source, slots) = match &p.kind {
            DiffKind::Constant { channels } => (DIFF_CONSTANT, p.texture, *channels as u32),
            DiffKind::Bitmap { .. } => (DIFF_BITMAP, p.texture, 0),
            DiffKind::EnvmapData { emitter, .. } => (DIFF_ENVMAP_DATA, *emitter, 0),
            DiffKind::EnvmapScale { emitter } => (DIFF_ENVMAP_SCALE, *emitter, 1),
            DiffKind::BsdfFloat { probe } => {
                step = probe.step;
                plus = record(&probe.plus_words);
                minus = record(&probe.minus_words);
                (DIFF_BSDF_FLOAT, probe.bsdf, 1)
            }
        };
        envmap |= matches!(kind, DIFF_ENVMAP_DATA | DIFF_ENVMAP_SCALE);
        let slot = if slots > 0 {
            if small + slots > SMALL_SLOTS {
                return Err(Error::Render(format!(
                    "parameter \"{}\": the CUDA backward pass differentiates at most {} \
                     values of constants and scales at once; split the keys over several \
                     renders",
                    p.key, SMALL_SLOTS
                )));
            }
            small += slots;
            small - slots
        } else {
            NO_SLOT
        };
        out.push(FlatDiffParam {
            kind,
            source,
            channels: p.channels() as u32,
            reads,
            small: slot,
            step,
            grad: offset,
            plus,
            minus,
        });
        offset += p.len() as u64;
    }
    let count = params
        .iter()
        .flat_map(|p| p.bsdfs.iter())
        .map(|&b| b as usize + 1)
        .max()
        .unwrap_or(0);
    let mut bsdf_masks = vec![0u32; count];
    let mut bsdf_linear = vec![0u32; count];
    for (k, p) in params.iter().enumerate() {
        for &b in &p.bsdfs {
            bsdf_masks[b as usize] |= if params.len() > 32 { u32::MAX } else { 1 << k };
        }
        if params.len() <= 32 {
            for &b in &p.linear_bsdfs {
                bsdf_linear[b as usize] |= 1 << k;
            }
        }
    }
    Ok(FlatParams {
        params: out,
        bsdf_masks,
        bsdf_linear,
        envmap,
        records,
    })
}

/// The bytes of `params` (kernel argument arrays, test files).
pub fn bytes(params: &[FlatDiffParam]) -> Vec<u8> {
    params
        .iter()
        .flat_map(|p| {
            [
                p.kind,
                p.source,
                p.channels,
                p.reads,
                p.small,
                p.step.to_bits(),
            ]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .chain(
                [p.grad, p.plus, p.minus]
                    .iter()
                    .flat_map(|v| v.to_le_bytes()),
            )
            .collect::<Vec<u8>>()
        })
        .collect()
}
