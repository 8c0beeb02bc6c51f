//! Flattened twins of the BSDF, texture and emitter records and of the sampling
//! distributions (see the module doc of [`super`] for why the `#[repr(C, u32)]`
//! enums are not uploaded as-is). Each record is a tag plus fixed word slots whose
//! meaning depends on the tag, as documented per field; variable-size data
//! (rough-plastic tables, distribution arrays) lives in side arrays of `f32`.
//!
//! [`unflatten_bsdf`], [`unflatten_texture`] and [`unflatten_emitter`] rebuild the
//! Rust records; the tests check the round trip, so a field dropped here fails.

use crate::bsdfs::microfacet::MicrofacetParams;
use crate::bsdfs::roughplastic::TABLE_RES;
use crate::bsdfs::{self, AnyBsdf};
use crate::emitters::{self, AnyEmitter};
use crate::math::{Distribution1D, Distribution2D, Mat3, Vec3};
use crate::textures::{AnyTexture, BitmapTex, Checkerboard, FilterType, UvTransform, WrapMode};

/// `FlatBsdf::kind` values, in `AnyBsdf` order.
pub mod bsdf_kind {
    /// `diffuse`: tex = [reflectance].
    pub const DIFFUSE: u32 = 0;
    /// `conductor`: tex = [eta, k, specular_reflectance].
    pub const CONDUCTOR: u32 = 1;
    /// `roughconductor`: tex = [eta, k, specular_reflectance, alpha_u, alpha_v].
    pub const ROUGH_CONDUCTOR: u32 = 2;
    /// `dielectric`: tex = [specular_reflectance, specular_transmittance], f = [eta].
    pub const DIELECTRIC: u32 = 3;
    /// `thindielectric`: as `dielectric`.
    pub const THIN_DIELECTRIC: u32 = 4;
    /// `plastic`: tex = [diffuse, specular], f = [eta, inv_eta2, fdr_int, spec_weight].
    pub const PLASTIC: u32 = 5;
    /// `roughplastic`: tex = [diffuse, specular],
    /// f = [alpha, eta, inv_eta2, spec_weight, internal_reflectance], table = offset.
    pub const ROUGH_PLASTIC: u32 = 6;
    /// `twosided`: tex = [front bsdf, back bsdf].
    pub const TWO_SIDED: u32 = 7;
    /// `roughdielectric`: tex = [specular_reflectance, specular_transmittance, -,
    /// alpha_u, alpha_v], f = [eta].
    pub const ROUGH_DIELECTRIC: u32 = 8;
}

/// One BSDF (64 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatBsdf {
    /// `bsdf_kind::*`.
    pub kind: u32,
    /// Texture (or BSDF) handles; meaning per kind.
    pub tex: [u32; 5],
    /// Float parameters; meaning per kind.
    pub f: [f32; 6],
    /// Microfacet distribution (0 Beckmann, 1 GGX, as `MicrofacetParams::kind`).
    pub distr: u32,
    /// 1 when visible normals are sampled.
    pub sample_visible: u32,
    /// `plastic`/`roughplastic`: 1 for `nonlinear`.
    pub nonlinear: u32,
    /// `roughplastic`: offset of its `TABLE_RES` transmittance values in `FlatScene::tables`.
    pub table: u32,
}

/// `FlatTexture::kind` of a constant colour.
pub const TEX_CONSTANT: u32 = 0;
/// `FlatTexture::kind` of a bitmap.
pub const TEX_BITMAP: u32 = 1;
/// `FlatTexture::kind` of a checkerboard.
pub const TEX_CHECKERBOARD: u32 = 2;

/// One texture (80 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatTexture {
    /// `TEX_*`.
    pub kind: u32,
    /// Bitmap: first texel in `FlatScene::texels`.
    pub offset: u32,
    /// Bitmap: width.
    pub width: u32,
    /// Bitmap: height.
    pub height: u32,
    /// Bitmap: channels.
    pub channels: u32,
    /// Bitmap: 0 nearest, 1 bilinear.
    pub filter: u32,
    /// Bitmap: 0 repeat, 1 mirror, 2 clamp.
    pub wrap: u32,
    /// Checkerboard: first colour (texture handle).
    pub color0: u32,
    /// Checkerboard: second colour (texture handle).
    pub color1: u32,
    /// Padding.
    pub pad0: u32,
    /// Bitmap and checkerboard: the uv map (two rows of an affine 2D map).
    pub to_uv: [f32; 6],
    /// Constant: the colour.
    pub color: [f32; 3],
    /// Padding.
    pub pad1: u32,
}

/// `FlatEmitter::kind` values, in `AnyEmitter` order.
pub mod emitter_kind {
    /// `area`: shape, tex = radiance.
    pub const AREA: u32 = 0;
    /// `point`: vec = position, tex = intensity.
    pub const POINT: u32 = 1;
    /// `directional`: vec = direction, tex = irradiance.
    pub const DIRECTIONAL: u32 = 2;
    /// `constant`: tex = radiance.
    pub const CONSTANT: u32 = 3;
    /// `envmap`: offset/width/height (texels), dist (2D distribution), scale, maps.
    pub const ENVMAP: u32 = 4;
}

/// One emitter (128 bytes). The 3×3 maps are column-major.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatEmitter {
    /// `emitter_kind::*`.
    pub kind: u32,
    /// Area: the emitting shape.
    pub shape: u32,
    /// Radiance / intensity / irradiance texture.
    pub tex: u32,
    /// Envmap: index into `FlatScene::dist2d`.
    pub dist: u32,
    /// Envmap: first texel.
    pub offset: u32,
    /// Envmap: width.
    pub width: u32,
    /// Envmap: height.
    pub height: u32,
    /// Envmap: radiance scale.
    pub scale: f32,
    /// Point: position; directional: direction.
    pub vec: [f32; 3],
    /// Padding.
    pub pad0: u32,
    /// Envmap: world-from-local rotation.
    pub to_world: [f32; 9],
    /// Envmap: local-from-world rotation.
    pub to_local: [f32; 9],
    /// Padding to 128 bytes.
    pub pad1: [u32; 2],
}

/// A 1D distribution: `func[n]` then `cdf[n + 1]` at `offset` in `FlatScene::dist_data` (16 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatDist1D {
    /// First float of `func`.
    pub offset: u32,
    /// Number of bins (0: empty distribution).
    pub n: u32,
    /// Sum of the weights.
    pub sum: f32,
    /// Padding.
    pub pad: u32,
}

/// A 2D distribution: `h` row distributions from `rows`, and a marginal (16 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlatDist2D {
    /// Index of the first row's `FlatDist1D`.
    pub rows: u32,
    /// Number of rows.
    pub h: u32,
    /// Index of the marginal's `FlatDist1D`.
    pub marginal: u32,
    /// Padding.
    pub pad: u32,
}

/// Appends `d` to the distribution arrays and returns its index.
pub fn push_dist1d(d: &Distribution1D, dists: &mut Vec<FlatDist1D>, data: &mut Vec<f32>) -> u32 {
    let rec = FlatDist1D {
        offset: data.len() as u32,
        n: d.func.len() as u32,
        sum: d.sum,
        pad: 0,
    };
    data.extend_from_slice(&d.func);
    data.extend_from_slice(&d.cdf);
    dists.push(rec);
    (dists.len() - 1) as u32
}

/// Appends `d` (rows first, then the marginal) and returns the `FlatDist2D`.
pub fn flatten_dist2d(
    d: &Distribution2D,
    dists: &mut Vec<FlatDist1D>,
    data: &mut Vec<f32>,
) -> FlatDist2D {
    let rows = dists.len() as u32;
    for r in &d.rows {
        push_dist1d(r, dists, data);
    }
    let marginal = push_dist1d(&d.marginal, dists, data);
    FlatDist2D {
        rows,
        h: d.rows.len() as u32,
        marginal,
        pad: 0,
    }
}

/// Flattens a BSDF; a rough-plastic table is appended to `tables`.
pub fn flatten_bsdf(b: &AnyBsdf, tables: &mut Vec<f32>) -> FlatBsdf {
    use bsdf_kind as k;
    let mut f = FlatBsdf::default();
    let distr = |f: &mut FlatBsdf, d: &MicrofacetParams| {
        f.distr = d.kind;
        f.sample_visible = d.sample_visible;
        f.tex[3] = d.alpha_u;
        f.tex[4] = d.alpha_v;
    };
    match b {
        AnyBsdf::Diffuse(d) => (f.kind, f.tex[0]) = (k::DIFFUSE, d.reflectance),
        AnyBsdf::Conductor(c) => {
            f.kind = k::CONDUCTOR;
            f.tex[..3].copy_from_slice(&[c.eta, c.k, c.specular_reflectance]);
        }
        AnyBsdf::RoughConductor(c) => {
            f.kind = k::ROUGH_CONDUCTOR;
            f.tex[..3].copy_from_slice(&[c.eta, c.k, c.specular_reflectance]);
            distr(&mut f, &c.distr);
        }
        AnyBsdf::Dielectric(d) => {
            f.kind = k::DIELECTRIC;
            f.tex[..2].copy_from_slice(&[d.specular_reflectance, d.specular_transmittance]);
            f.f[0] = d.eta;
        }
        AnyBsdf::ThinDielectric(d) => {
            f.kind = k::THIN_DIELECTRIC;
            f.tex[..2].copy_from_slice(&[d.specular_reflectance, d.specular_transmittance]);
            f.f[0] = d.eta;
        }
        AnyBsdf::Plastic(p) => {
            f.kind = k::PLASTIC;
            f.tex[..2].copy_from_slice(&[p.diffuse_reflectance, p.specular_reflectance]);
            f.f[..4].copy_from_slice(&[p.eta, p.inv_eta2, p.fdr_int, p.specular_sampling_weight]);
            f.nonlinear = p.nonlinear;
        }
        AnyBsdf::RoughPlastic(p) => {
            f.kind = k::ROUGH_PLASTIC;
            f.tex[..2].copy_from_slice(&[p.diffuse_reflectance, p.specular_reflectance]);
            f.f[..5].copy_from_slice(&[
                p.alpha,
                p.eta,
                p.inv_eta2,
                p.specular_sampling_weight,
                p.internal_reflectance,
            ]);
            (f.distr, f.sample_visible, f.nonlinear) = (p.kind, p.sample_visible, p.nonlinear);
            f.table = tables.len() as u32;
            tables.extend_from_slice(&p.transmittance);
        }
        AnyBsdf::TwoSided(t) => (f.kind, f.tex[0], f.tex[1]) = (k::TWO_SIDED, t.front, t.back),
        AnyBsdf::RoughDielectric(d) => {
            f.kind = k::ROUGH_DIELECTRIC;
            f.tex[..2].copy_from_slice(&[d.specular_reflectance, d.specular_transmittance]);
            f.f[0] = d.eta;
            distr(&mut f, &d.distr);
        }
    }
    f
}

/// Rebuilds the Rust BSDF record from its twin (`None` for an unknown kind or table).
pub fn unflatten_bsdf(f: &FlatBsdf, tables: &[f32]) -> Option<AnyBsdf> {
    use bsdf_kind as k;
    let t = f.tex;
    let distr = MicrofacetParams {
        kind: f.distr,
        alpha_u: t[3],
        alpha_v: t[4],
        sample_visible: f.sample_visible,
    };
    Some(match f.kind {
        k::DIFFUSE => AnyBsdf::Diffuse(bsdfs::Diffuse { reflectance: t[0] }),
        k::CONDUCTOR => AnyBsdf::Conductor(bsdfs::Conductor {
            eta: t[0],
            k: t[1],
            specular_reflectance: t[2],
        }),
        k::ROUGH_CONDUCTOR => AnyBsdf::RoughConductor(bsdfs::RoughConductor {
            distr,
            eta: t[0],
            k: t[1],
            specular_reflectance: t[2],
        }),
        k::DIELECTRIC => AnyBsdf::Dielectric(bsdfs::Dielectric {
            eta: f.f[0],
            specular_reflectance: t[0],
            specular_transmittance: t[1],
        }),
        k::THIN_DIELECTRIC => AnyBsdf::ThinDielectric(bsdfs::ThinDielectric {
            eta: f.f[0],
            specular_reflectance: t[0],
            specular_transmittance: t[1],
        }),
        k::PLASTIC => AnyBsdf::Plastic(bsdfs::Plastic {
            diffuse_reflectance: t[0],
            specular_reflectance: t[1],
            eta: f.f[0],
            inv_eta2: f.f[1],
            fdr_int: f.f[2],
            specular_sampling_weight: f.f[3],
            nonlinear: f.nonlinear,
        }),
        k::ROUGH_PLASTIC => {
            let s = f.table as usize;
            AnyBsdf::RoughPlastic(bsdfs::RoughPlastic {
                diffuse_reflectance: t[0],
                specular_reflectance: t[1],
                kind: f.distr,
                sample_visible: f.sample_visible,
                alpha: f.f[0],
                eta: f.f[1],
                inv_eta2: f.f[2],
                specular_sampling_weight: f.f[3],
                internal_reflectance: f.f[4],
                nonlinear: f.nonlinear,
                transmittance: tables.get(s..s + TABLE_RES)?.try_into().ok()?,
            })
        }
        k::TWO_SIDED => AnyBsdf::TwoSided(bsdfs::TwoSided {
            front: t[0],
            back: t[1],
        }),
        k::ROUGH_DIELECTRIC => AnyBsdf::RoughDielectric(bsdfs::RoughDielectric {
            distr,
            eta: f.f[0],
            specular_reflectance: t[0],
            specular_transmittance: t[1],
        }),
        _ => return None,
    })
}

/// Flattens a texture record; `image_offsets[i]` is where image `i` starts in the
/// flat texel array.
pub fn flatten_texture(t: &AnyTexture, image_offsets: &[u32]) -> FlatTexture {
    let mut f = FlatTexture::default();
    match t {
        AnyTexture::Constant(c) => (f.kind, f.color) = (TEX_CONSTANT, c.to_array()),
        AnyTexture::Bitmap(b) => {
            f.kind = TEX_BITMAP;
            f.offset = image_offsets[b.image as usize];
            (f.width, f.height, f.channels) = (b.width, b.height, b.channels);
            (f.filter, f.wrap, f.to_uv) = (b.filter as u32, b.wrap as u32, b.to_uv.m);
        }
        AnyTexture::Checkerboard(c) => {
            f.kind = TEX_CHECKERBOARD;
            (f.color0, f.color1, f.to_uv) = (c.color0, c.color1, c.to_uv.m);
        }
    }
    f
}

/// Rebuilds a texture record (`None` for an unknown kind, filter or wrap mode, or an
/// offset where no image starts).
pub fn unflatten_texture(f: &FlatTexture, image_offsets: &[u32]) -> Option<AnyTexture> {
    Some(match f.kind {
        TEX_CONSTANT => AnyTexture::Constant(Vec3::from(f.color)),
        TEX_BITMAP => AnyTexture::Bitmap(BitmapTex {
            image: image_offsets.iter().position(|&o| o == f.offset)? as u32,
            width: f.width,
            height: f.height,
            channels: f.channels,
            filter: [FilterType::Nearest, FilterType::Bilinear]
                .into_iter()
                .find(|x| *x as u32 == f.filter)?,
            wrap: [WrapMode::Repeat, WrapMode::Mirror, WrapMode::Clamp]
                .into_iter()
                .find(|x| *x as u32 == f.wrap)?,
            to_uv: UvTransform { m: f.to_uv },
        }),
        TEX_CHECKERBOARD => AnyTexture::Checkerboard(Checkerboard {
            color0: f.color0,
            color1: f.color1,
            to_uv: UvTransform { m: f.to_uv },
        }),
        _ => return None,
    })
}

/// Flattens an emitter record (`image_offsets` as for [`flatten_texture`]).
pub fn flatten_emitter(e: &AnyEmitter, image_offsets: &[u32]) -> FlatEmitter {
    use emitter_kind as k;
    let mut f = FlatEmitter::default();
    match e {
        AnyEmitter::Area(a) => (f.kind, f.shape, f.tex) = (k::AREA, a.shape, a.radiance),
        AnyEmitter::Point(p) => {
            (f.kind, f.tex, f.vec) = (k::POINT, p.intensity, p.position.to_array())
        }
        AnyEmitter::Directional(d) => {
            (f.kind, f.tex, f.vec) = (k::DIRECTIONAL, d.irradiance, d.direction.to_array())
        }
        AnyEmitter::Constant(c) => (f.kind, f.tex) = (k::CONSTANT, c.radiance),
        AnyEmitter::Envmap(m) => {
            f.kind = k::ENVMAP;
            f.offset = image_offsets[m.image as usize];
            (f.width, f.height, f.dist) = (m.width, m.height, m.dist);
            f.scale = m.scale;
            f.to_world = m.to_world.to_cols_array();
            f.to_local = m.to_local.to_cols_array();
        }
    }
    f
}

/// Rebuilds an emitter record (`None` for an unknown kind or an offset where no image
/// starts).
pub fn unflatten_emitter(f: &FlatEmitter, image_offsets: &[u32]) -> Option<AnyEmitter> {
    use emitter_kind as k;
    Some(match f.kind {
        k::AREA => AnyEmitter::Area(emitters::AreaEmitter {
            shape: f.shape,
            radiance: f.tex,
        }),
        k::POINT => AnyEmitter::Point(emitters::PointEmitter {
            position: Vec3::from(f.vec),
            intensity: f.tex,
        }),
        k::DIRECTIONAL => AnyEmitter::Directional(emitters::DirectionalEmitter {
            direction: Vec3::from(f.vec),
            irradiance: f.tex,
        }),
        k::CONSTANT => AnyEmitter::Constant(emitters::ConstantEmitter { radiance: f.tex }),
        k::ENVMAP => AnyEmitter::Envmap(emitters::EnvmapEmitter {
            to_world: Mat3::from_cols_array(&f.to_world),
            to_local: Mat3::from_cols_array(&f.to_local),
            image: image_offsets.iter().position(|&o| o == f.offset)? as u32,
            width: f.width,
            height: f.height,
            dist: f.dist,
            scale: f.scale,
        }),
        _ => return None,
    })
}
