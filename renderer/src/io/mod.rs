//! Image output and input. Writes OpenEXR (linear float32), PNG and JPEG (sRGB-encoded
//! 8-bit), chosen by the file extension; reads what Mitsuba reads: OpenEXR and Radiance
//! HDR as linear floats; PNG, JPEG, BMP, TGA and PPM decoded from sRGB. Writes go to a
//! temporary file that is renamed into place, so a failed write never leaves a partial
//! image. EXR files with any named channels are in [`exr_channels`], conversions of an
//! image in memory (sRGB, channel layouts, resampling) in [`bitmap`].

pub mod bitmap;
pub mod exr_channels;

use std::path::Path;

use image::{DynamicImage, ImageBuffer, ImageFormat, Rgb, Rgba};

use crate::error::{Error, Result};

/// A linear float image, row-major `height × width × channels` (row 0 = top).
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Channels per pixel: 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA).
    pub channels: usize,
    /// Pixel values.
    pub data: Vec<f32>,
}

impl Image {
    /// A zero image.
    pub fn new(width: usize, height: usize, channels: usize) -> Self {
        Image {
            width,
            height,
            channels,
            data: vec![0.0; width * height * channels],
        }
    }

    /// A zero image, or an error naming its size when the memory is not available.
    pub fn try_new(width: usize, height: usize, channels: usize) -> Result<Self> {
        let n = width
            .checked_mul(height)
            .and_then(|n| n.checked_mul(channels))
            .ok_or_else(|| {
                Error::Render(format!(
                    "a {width} x {height} x {channels} image is too large"
                ))
            })?;
        let data = try_filled(n, 0.0, || {
            format!("a {width} x {height} x {channels} image")
        })?;
        Ok(Image {
            width,
            height,
            channels,
            data,
        })
    }

    /// The value of channel `c` at pixel (x, y).
    pub fn at(&self, x: usize, y: usize, c: usize) -> f32 {
        self.data[(y * self.width + x) * self.channels + c]
    }

    /// The pixel at column `x`, row `y` as RGB (grey replicated, alpha ignored).
    pub fn rgb(&self, x: usize, y: usize) -> [f32; 3] {
        let i = (y * self.width + x) * self.channels;
        if self.channels == 1 {
            [self.data[i]; 3]
        } else {
            [self.data[i], self.data[i + 1], self.data[i + 2]]
        }
    }
}

/// `n` copies of `v`, or an error naming `what` and its size in GiB when the memory
/// cannot be reserved (instead of aborting the process).
pub fn try_filled<T: Clone>(n: usize, v: T, what: impl Fn() -> String) -> Result<Vec<T>> {
    try_filled_or(n, v, |size| {
        Error::Render(format!(
            "cannot allocate {size:.1} GiB for {}: not enough memory (render a smaller film \
             or crop window)",
            what()
        ))
    })
}

/// `n` copies of `v`, or the error `refused` makes of their size in GiB when the
/// memory cannot be reserved.
pub fn try_filled_or<T: Clone>(
    n: usize,
    v: T,
    refused: impl FnOnce(f64) -> Error,
) -> Result<Vec<T>> {
    let mut data = Vec::new();
    if data.try_reserve_exact(n).is_err() {
        return Err(refused(gib(n as f64 * std::mem::size_of::<T>() as f64)));
    }
    data.resize(n, v);
    Ok(data)
}

/// `bytes` in GiB, for messages.
pub fn gib(bytes: f64) -> f64 {
    bytes / (1u64 << 30) as f64
}

/// Linear → sRGB transfer function (IEC 61966-2-1); negative values encode to 0,
/// values over 1 beyond 1.
pub fn linear_to_srgb(x: f32) -> f32 {
    if x <= 0.0031308 {
        12.92 * x.max(0.0)
    } else {
        1.055 * x.powf(1.0 / 2.4) - 0.055
    }
}

/// sRGB → linear transfer function (IEC 61966-2-1).
pub fn srgb_to_linear(x: f32) -> f32 {
    if x <= 0.04045 {
        x / 12.92
    } else {
        ((x + 0.055) / 1.055).powf(2.4)
    }
}

fn format_of(path: &Path) -> Result<ImageFormat> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("exr") => Ok(ImageFormat::OpenExr),
        Some("png") => Ok(ImageFormat::Png),
        Some("jpg" | "jpeg") => Ok(ImageFormat::Jpeg),
        other => Err(Error::io(
            path,
            format!(
                "unsupported output format {:?}: use .exr (linear float), .png or .jpg (sRGB 8-bit)",
                other.unwrap_or("")
            ),
        )),
    }
}

/// Checks, before any work, that an image can be written to `path`: a known
/// extension (.exr, .png, .jpg) and an existing folder that accepts new files.
pub fn check_output_path(path: &Path) -> Result<()> {
    format_of(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(Error::io(
            path,
            format!("the folder {} does not exist", dir.display()),
        ));
    }
    let probe = dir.join(format!(".heliograph-write-test-{}", std::process::id()));
    std::fs::File::create(&probe)
        .map_err(|e| Error::io(path, format!("cannot write into {}: {e}", dir.display())))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// A linear value as an 8-bit sRGB code (rounded; outside 0..1 clamped, NaN to 255).
fn srgb8(x: f32) -> u8 {
    linear8(linear_to_srgb(x.min(1.0)))
}

/// A value in 0..1 as an 8-bit code, as it is (alpha; rounded, clamped).
fn linear8(x: f32) -> u8 {
    (x * 255.0 + 0.5).clamp(0.0, 255.0) as u8
}

/// Converts to an `image` crate buffer: float for EXR, sRGB 8-bit for PNG and JPEG
/// (JPEG has no alpha: it is dropped).
fn to_dynamic(img: &Image, format: ImageFormat) -> Result<DynamicImage> {
    let (w, h) = (img.width as u32, img.height as u32);
    let rgba: Vec<[f32; 4]> = img
        .data
        .chunks_exact(img.channels)
        .map(|p| match img.channels {
            1 => [p[0], p[0], p[0], 1.0],
            2 => [p[0], p[0], p[0], p[1]],
            3 => [p[0], p[1], p[2], 1.0],
            _ => [p[0], p[1], p[2], p[3]],
        })
        .collect();
    let alpha = img.channels == 2 || img.channels == 4;
    let bad = || Error::Render("image buffer size does not match its dimensions".into());
    Ok(match (format, alpha) {
        (ImageFormat::OpenExr, false) => {
            let v = rgba.iter().flat_map(|p| [p[0], p[1], p[2]]).collect();
            DynamicImage::ImageRgb32F(
                ImageBuffer::<Rgb<f32>, _>::from_raw(w, h, v).ok_or_else(bad)?,
            )
        }
        (ImageFormat::OpenExr, true) => {
            let v = rgba.iter().flatten().copied().collect();
            DynamicImage::ImageRgba32F(
                ImageBuffer::<Rgba<f32>, _>::from_raw(w, h, v).ok_or_else(bad)?,
            )
        }
        (_, alpha) => {
            if alpha && format != ImageFormat::Jpeg {
                let v = rgba
                    .iter()
                    .flat_map(|p| [srgb8(p[0]), srgb8(p[1]), srgb8(p[2]), linear8(p[3])])
                    .collect();
                DynamicImage::ImageRgba8(ImageBuffer::from_raw(w, h, v).ok_or_else(bad)?)
            } else {
                let v = rgba
                    .iter()
                    .flat_map(|p| [srgb8(p[0]), srgb8(p[1]), srgb8(p[2])])
                    .collect();
                DynamicImage::ImageRgb8(ImageBuffer::from_raw(w, h, v).ok_or_else(bad)?)
            }
        }
    })
}

/// The (width, height, channels) of a tensor of `dims` that is an image: (H, W) or
/// (H, W, C) with 1 to 4 channels; `None` otherwise.
pub fn image_dims(dims: &[usize]) -> Option<(usize, usize, usize)> {
    match *dims {
        [h, w, c] if (1..=4).contains(&c) => Some((w, h, c)),
        [h, w] => Some((w, h, 1)),
        _ => None,
    }
}

/// Encodes linear float pixels as an 8-bit sRGB PNG (alpha, the fourth channel of
/// four, stays linear).
pub fn encode_png(
    data: &[f32],
    w: usize,
    h: usize,
    c: usize,
) -> std::result::Result<Vec<u8>, String> {
    let bytes: Vec<u8> = data
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if c == 4 && i % 4 == 3 {
                linear8(v)
            } else {
                srgb8(v)
            }
        })
        .collect();
    let color = match c {
        1 => image::ExtendedColorType::L8,
        2 => image::ExtendedColorType::La8,
        3 => image::ExtendedColorType::Rgb8,
        _ => image::ExtendedColorType::Rgba8,
    };
    let mut out = Vec::new();
    let enc = image::codecs::png::PngEncoder::new(std::io::Cursor::new(&mut out));
    image::ImageEncoder::write_image(enc, &bytes, w as u32, h as u32, color)
        .map_err(|e| format!("PNG encoding failed: {e}"))?;
    Ok(out)
}

/// Writes `img` to `path` (.exr or .png), atomically: the image goes to a temporary
/// file beside `path`, is flushed and synced to the disk, and only then renamed over
/// `path`. On any failure (a full disk, a read-only directory) the temporary file is
/// removed and an earlier file at `path` is left as it was.
pub fn write_image(path: &Path, img: &Image) -> Result<()> {
    let format = format_of(path)?;
    let dynimg = to_dynamic(img, format)?;
    let file_name = path
        .file_name()
        .ok_or_else(|| Error::io(path, "not a file path"))?;
    let tmp = path.with_file_name(format!(".{}.partial", file_name.to_string_lossy()));
    let encode = || -> std::result::Result<(), Box<dyn std::error::Error>> {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        dynimg.write_to(&mut w, format)?;
        // the last buffered bytes: dropping the writer would flush them and drop an error
        let file = w.into_inner().map_err(|e| e.into_error())?;
        // errors the file system reports late (quotas, network file systems) come here
        file.sync_all()?;
        Ok(())
    };
    let res = encode().map_err(|e| Error::io(path, e));
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Reads an EXR or HDR (linear) or 8-bit image (decoded from sRGB unless `raw`) as
/// linear floats, keeping the file's channels (grey, grey + alpha, RGB, RGBA).
pub fn read_image_with(path: &Path, raw: bool) -> Result<Image> {
    let img = image::ImageReader::open(path)
        .map_err(|e| Error::io(path, format!("cannot open image: {e}")))?
        .with_guessed_format()
        .map_err(|e| Error::io(path, format!("cannot read image: {e}")))?
        .decode()
        .map_err(|e| Error::io(path, format!("cannot decode image: {e}")))?;
    let is_float = matches!(
        img,
        DynamicImage::ImageRgb32F(_) | DynamicImage::ImageRgba32F(_)
    );
    let decode = |x: f32| {
        if is_float || raw {
            x
        } else {
            srgb_to_linear(x)
        }
    };
    let (w, h) = (img.width() as usize, img.height() as usize);
    let color = img.color();
    let channels = match (color.has_color(), color.has_alpha()) {
        (false, false) => 1,
        (false, true) => 2,
        (true, false) => 3,
        (true, true) => 4,
    };
    let data: Vec<f32> = match channels {
        1 => img
            .to_luma32f()
            .into_raw()
            .into_iter()
            .map(decode)
            .collect(),
        2 => img
            .to_luma_alpha32f()
            .into_raw()
            .chunks_exact(2)
            .flat_map(|p| [decode(p[0]), p[1]])
            .collect(),
        3 => img.to_rgb32f().into_raw().into_iter().map(decode).collect(),
        _ => img
            .to_rgba32f()
            .into_raw()
            .chunks_exact(4)
            .flat_map(|p| [decode(p[0]), decode(p[1]), decode(p[2]), p[3]])
            .collect(),
    };
    Ok(Image {
        width: w,
        height: h,
        channels,
        data,
    })
}

/// Reads an image as linear floats (8-bit files decoded from sRGB).
pub fn read_image(path: &Path) -> Result<Image> {
    read_image_with(path, false)
}

#[cfg(test)]
mod format_tests;
/// Test support for "the disk is full": runs the test at `path` (as `module_path!()`
/// gives it) again in a child process whose files are limited to one block
/// (`ulimit -f 1`; SIGXFSZ ignored, so a write past the limit fails with EFBIG instead of
/// killing the process), with the environment variable `env` set to `dir`, and asserts
/// that the child's run of it passed. Returns the child's stderr.
#[cfg(test)]
pub(crate) fn rerun_on_a_full_disk(path: &str, env: &str, dir: &std::path::Path) -> String {
    let name = path.split_once("::").unwrap().1;
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 1 && exec \"$0\" \"$@\"")
        .arg(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(env, dir)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{stderr}"
    );
    stderr.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srgb_round_trip_and_known_value() {
        assert!((srgb_to_linear(128.0 / 255.0) - 0.2158605).abs() < 1e-6);
        for i in 0..=255 {
            let x = i as f32 / 255.0;
            assert!((linear_to_srgb(srgb_to_linear(x)) - x).abs() < 1e-5);
        }
    }

    #[test]
    fn exr_round_trip_is_exact_and_png_is_srgb() {
        let dir = std::env::temp_dir().join(format!("hg-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut img = Image::new(3, 2, 3);
        for (i, v) in img.data.iter_mut().enumerate() {
            *v = i as f32 * 0.37;
        }
        let exr = dir.join("a.exr");
        write_image(&exr, &img).unwrap();
        assert_eq!(read_image(&exr).unwrap(), img);
        let png = dir.join("a.png");
        let grey = Image {
            width: 1,
            height: 1,
            channels: 3,
            data: vec![0.2158605; 3],
        };
        write_image(&png, &grey).unwrap();
        let back = read_image_with(&png, true).unwrap();
        assert!(
            (back.data[0] - 128.0 / 255.0).abs() < 1e-6,
            "{:?}",
            back.data
        );
        assert!(check_output_path(&dir.join("ok.exr")).is_ok());
        let err = check_output_path(&dir.join("a.bmp"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unsupported output format"), "{err}");
        let err = check_output_path(&dir.join("missing/a.png"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
        let err = write_image(&dir.join("a.bmp"), &img)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unsupported output format"), "{err}");
        let err = write_image(&dir.join("missing/dir/a.exr"), &img)
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing/dir/a.exr"), "{err}");
        assert!(!dir.join("missing/dir/.a.exr.partial").exists());
    }

    /// A `w × h` RGB image of noise (it does not compress: the file size is known).
    fn noise(w: usize, h: usize, seed: u32) -> Image {
        let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
        let mut img = Image::new(w, h, 3);
        for v in &mut img.data {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *v = (x >> 8) as f32 / (1u32 << 24) as f32;
        }
        img
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn unwritable_places_are_errors_that_name_the_path_and_keep_what_was_there() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("hg-io-places-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let img = noise(8, 8, 1);
        // a read-only directory holding an earlier image (chmod does not stop root)
        let ro = dir.join("ro");
        std::fs::create_dir(&ro).unwrap();
        write_image(&ro.join("old.exr"), &noise(8, 8, 2)).unwrap();
        let old = std::fs::read(ro.join("old.exr")).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::write(ro.join("probe"), b"x").is_err() {
            let e = write_image(&ro.join("old.exr"), &img)
                .unwrap_err()
                .to_string();
            assert!(e.contains("ro/old.exr"), "{e}");
            assert_eq!(names(&ro), ["old.exr"], "no partial file");
            assert_eq!(std::fs::read(ro.join("old.exr")).unwrap(), old);
        }
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
        // a directory no one can create files in, root included
        let e = write_image(Path::new("/proc/self/out.exr"), &img)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/proc/self/out.exr: "), "{e}");
        // below a regular file
        std::fs::write(dir.join("file"), b"x").unwrap();
        let e = write_image(&dir.join("file/out.png"), &img)
            .unwrap_err()
            .to_string();
        assert!(e.contains("file/out.png"), "{e}");
        // onto a directory: refused, the directory and its contents stay
        std::fs::create_dir_all(dir.join("taken.exr/inside")).unwrap();
        let e = write_image(&dir.join("taken.exr"), &img)
            .unwrap_err()
            .to_string();
        assert!(e.contains("taken.exr"), "{e}");
        assert!(dir.join("taken.exr/inside").is_dir());
        assert_eq!(names(&dir), ["file", "ro", "taken.exr"], "no partial file");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Set in the child process of the full-disk test: the directory to write in.
    const FULL_DISK_CHILD: &str = "HELIOGRAPH_TEST_FULL_DISK_IMAGES";

    #[test]
    fn a_full_disk_is_an_error_and_keeps_the_earlier_image() {
        // images whose files are smaller and larger than a write buffer (8 KiB), all
        // larger than the child's file size limit (one block: 512 or 1024 bytes)
        let images = [
            ("small.exr", noise(16, 16, 3)),
            ("small.png", noise(24, 24, 4)),
            ("large.exr", noise(64, 64, 5)),
            ("large.png", noise(64, 64, 6)),
        ];
        if let Some(dir) = std::env::var_os(FULL_DISK_CHILD) {
            let dir = std::path::PathBuf::from(dir);
            for (name, img) in &images {
                // over an earlier image, and as a new file
                for path in [dir.join(name), dir.join(format!("new-{name}"))] {
                    let e = write_image(&path, img).map(|()| path.display().to_string());
                    let e = e.expect_err("written past the file size limit");
                    assert!(e.to_string().contains(&*path.to_string_lossy()), "{e}");
                }
            }
            // a file within the limit is still written: the process goes on
            write_image(&dir.join("tiny.png"), &Image::new(1, 1, 3)).unwrap();
            return;
        }
        let dir = std::env::temp_dir().join(format!("hg-io-full-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut earlier = Vec::new();
        for (i, (name, img)) in images.iter().enumerate() {
            write_image(
                &dir.join(name),
                &noise(img.width, img.height, 10 + i as u32),
            )
            .unwrap();
            earlier.push(std::fs::read(dir.join(name)).unwrap());
        }
        rerun_on_a_full_disk(
            concat!(
                module_path!(),
                "::a_full_disk_is_an_error_and_keeps_the_earlier_image"
            ),
            FULL_DISK_CHILD,
            &dir,
        );
        let mut want: Vec<String> = images.iter().map(|(n, _)| n.to_string()).collect();
        want.push("tiny.png".into());
        want.sort();
        assert_eq!(names(&dir), want, "no partial or new file");
        for ((name, _), bytes) in images.iter().zip(&earlier) {
            assert!(
                std::fs::read(dir.join(name)).unwrap() == *bytes,
                "{name} changed"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn images_too_large_for_memory_are_errors_not_aborts() {
        let e = Image::try_new(1 << 40, 1 << 20, 4).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "cannot allocate 17179869184.0 GiB for a 1099511627776 x 1048576 x 4 image"
            ),
            "{e}"
        );
        let e = Image::try_new(usize::MAX, 2, 1).unwrap_err().to_string();
        assert!(e.contains("too large"), "{e}");
        assert_eq!(Image::try_new(3, 2, 4).unwrap(), Image::new(3, 2, 4));
    }
}
