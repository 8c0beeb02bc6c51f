//! Image loading shared by the `bitmap` texture and the `envmap` emitter:
//! files (PNG, JPEG, OpenEXR through the `image` crate) or in-memory pixel
//! arrays, turned into linear `f32` texels with row 0 at the top of the image.
//!
//! 8- and 16-bit files are sRGB-encoded and decoded to linear unless `raw`
//! (Mitsuba's `raw` flag); float files and in-memory arrays are linear already.
//! Alpha is dropped; grey images keep one channel.

use std::path::Path;
use std::sync::Arc;

use crate::desc::props::{PixelArray, Props, Value};
use crate::error::{Error, Loc, Result};
use crate::plugin::BuildContext;

pub use crate::io::{srgb_to_linear, Image};

/// Loads an image file as linear RGB or grey (alpha dropped); `raw` keeps
/// 8/16-bit values as stored (no sRGB decoding).
pub fn load(path: &Path, raw: bool) -> Result<Image> {
    let img = crate::io::read_image_with(path, raw)?;
    if img.width == 0 || img.height == 0 {
        return Err(Error::io(path, "image has no pixels"));
    }
    if let Some(bad) = img.data.iter().find(|v| !v.is_finite()) {
        return Err(Error::io(
            path,
            format!("image holds a non-finite value ({bad})"),
        ));
    }
    Ok(drop_alpha(img))
}

/// Keeps grey (with or without alpha) as one channel and RGB(A) as three.
fn drop_alpha(img: Image) -> Image {
    let keep = match img.channels {
        2 => 1,
        4 => 3,
        _ => return img,
    };
    let data = img
        .data
        .chunks_exact(img.channels)
        .flat_map(|p| p[..keep].to_vec())
        .collect();
    Image {
        channels: keep,
        data,
        ..img
    }
}

/// Converts an in-memory array (linear; 1, 3 or 4 channels, alpha dropped) to the
/// stored form (1 or 3 channels), checking its shape and values; errors name `key`
/// at `loc`. An array already in the stored form is shared, not copied.
pub fn from_pixels(px: &Arc<PixelArray>, loc: &Loc, key: &str) -> Result<Arc<PixelArray>> {
    if !crate::math::all_finite(&px.data) {
        let i = px.data.iter().position(|v| !v.is_finite()).unwrap_or(0);
        let c = px.channels.max(1);
        let (pix, ch) = (i / c, i % c);
        return Err(Error::param(
            loc,
            key,
            format!(
                "non-finite value {} at row {}, column {}, channel {ch}",
                px.data[i],
                pix / px.width.max(1),
                pix % px.width.max(1)
            ),
        ));
    }
    stored_form(px, loc, key)
}

/// `px` (shape checked) with alpha dropped: shared when it has 1 or 3 channels.
fn stored_form(px: &Arc<PixelArray>, loc: &Loc, key: &str) -> Result<Arc<PixelArray>> {
    let (w, h, c) = (px.width, px.height, px.channels);
    if w == 0 || h == 0 || !matches!(c, 1 | 3 | 4) {
        return Err(Error::param(
            loc,
            key,
            format!("expected a non-empty array with 1, 3 or 4 channels, got {h}x{w}x{c}"),
        ));
    }
    if px.data.len() != w * h * c {
        return Err(Error::param(
            loc,
            key,
            format!("array of shape {h}x{w}x{c} holds {} values", px.data.len()),
        ));
    }
    if c != 4 {
        return Ok(px.clone());
    }
    let data = px
        .data
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    Ok(Arc::new(PixelArray {
        width: w,
        height: h,
        channels: 3,
        data,
    }))
}

/// Reads the image of a plugin in the stored form (1 or 3 channels): `filename`
/// (decoded once per scene, see [`crate::desc::cache`]), or in-memory pixels under
/// `bitmap` or `data` (exactly one of them). `raw` applies to 8/16-bit files only.
/// In-memory pixels are checked for non-finite values, except when an update replays
/// the plugin: a new parameter value was checked when it was set.
pub fn from_props(p: &Props, ctx: &dyn BuildContext, raw: bool) -> Result<Arc<PixelArray>> {
    let mut mem = None;
    for key in ["bitmap", "data"] {
        if let Some(e) = p.get(key) {
            let Value::Pixels(px) = &e.value else {
                return Err(Error::param(
                    &e.loc,
                    key,
                    format!("expected a bitmap array, got {}", e.value.type_name()),
                ));
            };
            if mem.is_some() {
                return Err(Error::param(
                    &e.loc,
                    key,
                    "give only one of \"bitmap\", \"data\"",
                ));
            }
            mem = Some(if ctx.is_replay() {
                stored_form(px, &e.loc, key)?
            } else {
                from_pixels(px, &e.loc, key)?
            });
        }
    }
    match mem {
        Some(_) if p.has("filename") => {
            p.mark_used("filename");
            let loc = p.entry_loc("filename");
            Err(Error::param(
                &loc,
                "filename",
                "give either a filename or in-memory pixels, not both",
            ))
        }
        Some(img) => Ok(img),
        None => {
            let path = ctx.resolve_path(p, "filename")?;
            let options = format!("image raw={raw}");
            ctx.cache()
                .image(&path, options, || load(&path, raw).map(Into::into))
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh scratch directory for test files under the crate's target dir.
    pub(crate) fn scratch(name: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/test-scratch")
            .join(name);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn srgb_decoding_matches_the_standard() {
        // 128/255 -> ((0.50196 + 0.055) / 1.055)^2.4 = 0.2158605 (IEC 61966-2-1)
        assert!((srgb_to_linear(128.0 / 255.0) - 0.2158605).abs() < 1e-6);
        assert_eq!(srgb_to_linear(0.0), 0.0);
        assert!((srgb_to_linear(1.0) - 1.0).abs() < 1e-6);
        assert!((srgb_to_linear(0.04) - 0.04 / 12.92).abs() < 1e-9);
    }

    #[test]
    fn png_8bit_is_srgb_decoded_unless_raw_and_rows_start_at_top() {
        let dir = scratch("image_file_png");
        let path = dir.join("rgb.png");
        // 2x2: top row (128, 0, 255) (0, 0, 0); bottom row grey 64
        let px: Vec<u8> = vec![128, 0, 255, 0, 0, 0, 64, 64, 64, 64, 64, 64];
        image::save_buffer(&path, &px, 2, 2, image::ExtendedColorType::Rgb8).unwrap();
        let img = load(&path, false).unwrap();
        assert_eq!((img.width, img.height, img.channels), (2, 2, 3));
        let top = img.rgb(0, 0);
        assert!((top[0] - 0.2158605).abs() < 1e-6 && top[1] == 0.0 && (top[2] - 1.0).abs() < 1e-6);
        let raw = load(&path, true).unwrap();
        assert!((raw.rgb(0, 0)[0] - 128.0 / 255.0).abs() < 1e-6);
        assert!((raw.rgb(1, 1)[1] - 64.0 / 255.0).abs() < 1e-6);
        // grey + alpha: one channel, alpha dropped
        let path = dir.join("ga.png");
        image::save_buffer(
            &path,
            &[128, 7, 255, 9],
            2,
            1,
            image::ExtendedColorType::La8,
        )
        .unwrap();
        let g = load(&path, false).unwrap();
        assert_eq!(g.channels, 1);
        assert!((g.data[0] - 0.2158605).abs() < 1e-6 && (g.data[1] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn jpeg_is_srgb_decoded() {
        let dir = scratch("image_file_jpeg");
        let path = dir.join("grey.jpg");
        image::save_buffer(
            &path,
            &[128u8; 4 * 4 * 3],
            4,
            4,
            image::ExtendedColorType::Rgb8,
        )
        .unwrap();
        let img = load(&path, false).unwrap();
        assert_eq!((img.width, img.height), (4, 4));
        // lossy, but a flat image survives within a code value or two
        assert!(
            img.data.iter().all(|v| (v - 0.2158605).abs() < 0.005),
            "{:?}",
            &img.data[..3]
        );
    }

    #[test]
    fn exr_is_linear_float() {
        let dir = scratch("image_file_exr");
        let path = dir.join("f.exr");
        let buf =
            image::Rgb32FImage::from_raw(2, 1, vec![0.5, 2.0, 7.25, 0.0, 0.125, 1e3]).unwrap();
        image::DynamicImage::ImageRgb32F(buf).save(&path).unwrap();
        let img = load(&path, false).unwrap();
        assert_eq!(img.data, vec![0.5, 2.0, 7.25, 0.0, 0.125, 1e3]);
    }

    #[test]
    fn bad_files_name_the_path() {
        let dir = scratch("image_file_bad");
        let path = dir.join("corrupt.png");
        std::fs::write(&path, b"\x89PNG\r\n\x1a\nthis is not a png").unwrap();
        let e = load(&path, false).unwrap_err().to_string();
        assert!(e.contains("corrupt.png"), "{e}");
        let missing = dir.join("missing.exr");
        let e = load(&missing, false).unwrap_err().to_string();
        assert!(e.contains("missing.exr"), "{e}");
    }

    #[test]
    fn pixel_arrays_are_checked() {
        let loc = Loc::new("s.xml", 3, 1);
        let px = PixelArray {
            width: 2,
            height: 1,
            channels: 4,
            data: vec![1.0, 2.0, 3.0, 0.5, 4.0, 5.0, 6.0, 0.5],
        };
        let img = from_pixels(&Arc::new(px.clone()), &loc, "data").unwrap();
        assert_eq!(img.data, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let rgb = Arc::new(PixelArray {
            channels: 3,
            data: img.data.clone(),
            ..px.clone()
        });
        assert!(
            Arc::ptr_eq(&from_pixels(&rgb, &loc, "data").unwrap(), &rgb),
            "the stored form is shared, not copied"
        );
        let mut bad = px.clone();
        bad.data[5] = f32::NAN;
        let e = from_pixels(&Arc::new(bad), &loc, "data")
            .unwrap_err()
            .to_string();
        assert!(e.contains("s.xml:3") && e.contains("column 1"), "{e}");
        let mut short = px.clone();
        short.data.pop();
        assert!(from_pixels(&Arc::new(short), &loc, "data").is_err());
        let two = PixelArray {
            channels: 2,
            data: vec![0.0; 4],
            ..px
        };
        assert!(from_pixels(&Arc::new(two), &loc, "data").is_err());
    }
}
