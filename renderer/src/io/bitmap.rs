//! Conversions of an image held in memory, as Mitsuba's `Bitmap` makes them: sRGB
//! decoding and encoding (alpha never is encoded), channel layouts (luminance, grey to
//! RGB, alpha added or dropped) and resampling through a reconstruction filter. The
//! Python package's `Bitmap` keeps its values as stored and converts through these.

use crate::error::{ArrayProblem, Error, Result};
use crate::io::exr_channels::NamedChannels;
use crate::io::{linear_to_srgb, srgb_to_linear, try_filled_or};
use crate::math::{luminance, Color};

/// A reconstruction filter as a resampling uses it: the support radius (pixels) and the
/// 1D weight at an offset (pixels). `rfilters::AnyFilter` is one.
pub trait Filter1D {
    /// Support radius in pixels.
    fn radius(&self) -> f32;
    /// The weight at offset `x` (pixels).
    fn eval(&self, x: f32) -> f32;
}

/// Which channels a pixel has (Mitsuba's `Bitmap.PixelFormat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PixelFormat {
    /// Luminance.
    Y,
    /// Luminance and alpha.
    YA,
    /// Red, green, blue.
    Rgb,
    /// Red, green, blue and alpha.
    Rgba,
    /// Three components of a vector (never a colour).
    Xyz,
    /// Any channels, named by the bitmap.
    MultiChannel,
}

impl PixelFormat {
    /// Every format, with the name Mitsuba's enumeration gives it.
    const NAMES: [(PixelFormat, &'static str); 6] = [
        (PixelFormat::Y, "Y"),
        (PixelFormat::YA, "YA"),
        (PixelFormat::Rgb, "RGB"),
        (PixelFormat::Rgba, "RGBA"),
        (PixelFormat::Xyz, "XYZ"),
        (PixelFormat::MultiChannel, "MultiChannel"),
    ];

    /// The format named `name` (`"RGB"`, `"YA"`, ...).
    pub fn parse(name: &str) -> Result<Self> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(f, _)| *f)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::NAMES.iter().map(|(_, n)| *n).collect();
                argument(format!(
                    "unknown pixel format \"{name}\" (one of {})",
                    known.join(", ")
                ))
            })
    }

    /// The name Mitsuba's enumeration gives the format.
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(f, _)| *f == self).unwrap().1
    }

    /// The channel names of the format; `None` for XYZ and multi-channel bitmaps, whose
    /// channels keep the bitmap's names.
    pub fn channel_names(self) -> Option<&'static [&'static str]> {
        match self {
            PixelFormat::Y => Some(&["Y"]),
            PixelFormat::YA => Some(&["Y", "A"]),
            PixelFormat::Rgb => Some(&["R", "G", "B"]),
            PixelFormat::Rgba => Some(&["R", "G", "B", "A"]),
            PixelFormat::Xyz | PixelFormat::MultiChannel => None,
        }
    }

    fn has_alpha(self) -> bool {
        matches!(self, PixelFormat::YA | PixelFormat::Rgba)
    }

    fn colour_channels(self) -> usize {
        match self {
            PixelFormat::Rgb | PixelFormat::Rgba => 3,
            _ => 1,
        }
    }
}

/// Whether channel `name` holds colour (sRGB-encoded in an sRGB bitmap); alpha never
/// does.
pub fn is_colour(name: &str) -> bool {
    name != "A"
}

fn argument(msg: String) -> Error {
    Error::array(ArrayProblem::Argument, msg)
}

/// Applies `f` to the colour channels of `img` (those [`is_colour`] names).
fn map_colour(img: &mut NamedChannels, f: fn(f32) -> f32) {
    let colour: Vec<bool> = img.names.iter().map(|n| is_colour(n)).collect();
    if colour.is_empty() {
        return;
    }
    for px in img.data.chunks_exact_mut(colour.len()) {
        for (v, &c) in px.iter_mut().zip(&colour) {
            if c {
                *v = f(*v);
            }
        }
    }
}

/// `img` (linear values in 0..1 for integer components, or floats), decoded from sRGB
/// when `srgb`, in the channel layout `to`, encoded to sRGB when `to_srgb`. `from` is
/// the layout of `img`. The result is named by `to` (or keeps `img`'s names for XYZ and
/// multi-channel layouts).
pub fn convert(
    mut img: NamedChannels,
    from: PixelFormat,
    srgb: bool,
    to: PixelFormat,
    to_srgb: bool,
) -> Result<NamedChannels> {
    if img.names.is_empty() || img.data.len() != img.width * img.height * img.names.len() {
        return Err(Error::array(
            ArrayProblem::Layout,
            format!(
                "Bitmap.convert: {} values for a {} x {} image of {} channels",
                img.data.len(),
                img.width,
                img.height,
                img.names.len()
            ),
        ));
    }
    if srgb {
        map_colour(&mut img, srgb_to_linear);
    }
    let mut out = relayout(img, from, to)?;
    if to_srgb {
        map_colour(&mut out, linear_to_srgb);
    }
    Ok(out)
}

/// Linear `img` from layout `from` to layout `to`.
fn relayout(img: NamedChannels, from: PixelFormat, to: PixelFormat) -> Result<NamedChannels> {
    if to == from || to == PixelFormat::MultiChannel {
        return Ok(img);
    }
    if from == PixelFormat::MultiChannel {
        return Err(argument(format!(
            "Bitmap.convert: cannot convert a multi-channel bitmap to {}; use split()",
            to.name()
        )));
    }
    if from == PixelFormat::Xyz || to == PixelFormat::Xyz {
        return Err(argument(format!(
            "Bitmap.convert: cannot convert {} to {} (XYZ bitmaps hold vectors)",
            from.name(),
            to.name()
        )));
    }
    let names = to.channel_names().expect("a colour layout");
    let c = img.names.len();
    let (colour, alpha) = (from.colour_channels(), from.has_alpha());
    let mut data = Vec::with_capacity(img.width * img.height * names.len());
    for px in img.data.chunks_exact(c) {
        let a = if alpha { px[c - 1] } else { 1.0 };
        match (to.colour_channels(), colour) {
            (1, 3) => data.push(luminance(Color::new(px[0], px[1], px[2]))),
            (3, 1) => data.extend([px[0]; 3]),
            (n, _) => data.extend_from_slice(&px[..n]),
        }
        if to.has_alpha() {
            data.push(a);
        }
    }
    Ok(NamedChannels {
        width: img.width,
        height: img.height,
        names: names.iter().map(|n| n.to_string()).collect(),
        data,
    })
}

/// For each of `n` output samples over `m` source samples: the first source sample and
/// the normalised weights of those that follow. The filter is widened by the
/// downscaling factor, so that every source sample contributes; an output sample that
/// no source reaches takes its nearest one.
fn taps(m: usize, n: usize, filter: &dyn Filter1D) -> Vec<(usize, Vec<f32>)> {
    let ratio = m as f64 / n as f64;
    let scale = ratio.max(1.0);
    let reach = filter.radius() as f64 * scale;
    (0..n)
        .map(|i| {
            let centre = (i as f64 + 0.5) * ratio;
            let lo = (centre - reach - 0.5).floor().max(0.0) as usize;
            let hi = ((centre + reach - 0.5).ceil().max(0.0) as usize).min(m - 1);
            let w: Vec<f32> = (lo.min(hi)..=hi)
                .map(|j| filter.eval(((j as f64 + 0.5 - centre) / scale) as f32))
                .collect();
            let sum: f32 = w.iter().sum();
            if sum > 0.0 {
                (lo.min(hi), w.iter().map(|x| x / sum).collect())
            } else {
                let nearest = (centre - 0.5).round_ties_even().clamp(0.0, (m - 1) as f64);
                (nearest as usize, vec![1.0])
            }
        })
        .collect()
}

/// `data` of `shape` (height, width, channels), values as stored, resampled to
/// `to_width × to_height` through `filter`, first along the columns, then along the
/// rows.
pub fn resample(
    data: &[f32],
    shape: &[usize],
    [to_width, to_height]: [usize; 2],
    filter: &dyn Filter1D,
) -> Result<Vec<f32>> {
    let &[height, width, channels] = shape else {
        return Err(Error::array(
            ArrayProblem::Layout,
            format!("Bitmap.resample: expected an image of shape (H, W, C), got {shape:?}"),
        ));
    };
    if width
        .checked_mul(height)
        .and_then(|n| n.checked_mul(channels))
        != Some(data.len())
        || data.is_empty()
    {
        return Err(Error::array(
            ArrayProblem::Layout,
            format!(
                "Bitmap.resample: {} values for a {width} x {height} image of {channels} channels",
                data.len()
            ),
        ));
    }
    if to_width == 0 || to_height == 0 {
        return Err(argument(format!(
            "Bitmap.resample: 'res' must be 2 positive sizes, got [{to_width}, {to_height}]"
        )));
    }
    // a zero image of w x h pixels, or an error naming it
    let zeros = |w: usize, h: usize| {
        let n = w
            .checked_mul(h)
            .and_then(|n| n.checked_mul(channels))
            .ok_or_else(|| argument(format!("Bitmap.resample: a {w} x {h} image is too large")))?;
        try_filled_or(n, 0.0f32, |size| {
            argument(format!(
                "Bitmap.resample: cannot allocate {size:.1} GiB for a {w} x {h} image (ask for a smaller 'res')"
            ))
        })
    };
    let row = width * channels;
    // along the columns: height rows become to_height
    let mut tall = zeros(width, to_height)?;
    for (i, (lo, w)) in taps(height, to_height, filter).into_iter().enumerate() {
        let out = &mut tall[i * row..(i + 1) * row];
        for (k, wk) in w.iter().enumerate() {
            let src = &data[(lo + k) * row..(lo + k + 1) * row];
            for (o, s) in out.iter_mut().zip(src) {
                *o += wk * s;
            }
        }
    }
    // along the rows: width columns become to_width
    let mut out = zeros(to_width, to_height)?;
    let col = taps(width, to_width, filter);
    for y in 0..to_height {
        for (x, (lo, w)) in col.iter().enumerate() {
            let o = (y * to_width + x) * channels;
            for (k, wk) in w.iter().enumerate() {
                let s = (y * width + lo + k) * channels;
                for ch in 0..channels {
                    out[o + ch] += wk * tall[s + ch];
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rfilters::AnyFilter;

    const BOX: AnyFilter = AnyFilter::Box { radius: 0.5 };

    fn image(names: &[&str], data: Vec<f32>) -> NamedChannels {
        NamedChannels {
            width: data.len() / names.len(),
            height: 1,
            names: names.iter().map(|n| n.to_string()).collect(),
            data,
        }
    }

    #[test]
    fn srgb_round_trips_and_leaves_alpha_alone() {
        let img = image(&["R", "G", "B", "A"], vec![0.5, 0.002, 1.0, 0.5]);
        let enc = convert(
            img.clone(),
            PixelFormat::Rgba,
            false,
            PixelFormat::Rgba,
            true,
        )
        .unwrap();
        // IEC 61966-2-1: 0.5 encodes to 0.7354, below 0.0031308 the slope is 12.92
        assert!((enc.data[0] - 0.735_357).abs() < 1e-5);
        assert!((enc.data[1] - 0.002 * 12.92).abs() < 1e-7);
        assert_eq!(enc.data[3], 0.5);
        let back = convert(enc, PixelFormat::Rgba, true, PixelFormat::Rgba, false).unwrap();
        for (a, b) in back.data.iter().zip(&img.data) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }

    #[test]
    fn layouts_convert_through_luminance_and_grey() {
        let rgb = image(&["R", "G", "B"], vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        let ya = convert(rgb, PixelFormat::Rgb, false, PixelFormat::YA, false).unwrap();
        assert_eq!(ya.names, ["Y", "A"]);
        assert_eq!(ya.data, [0.212671, 1.0, 0.072169, 1.0]);
        let grey = image(&["Y", "A"], vec![0.25, 0.5]);
        let rgba = convert(grey, PixelFormat::YA, false, PixelFormat::Rgba, false).unwrap();
        assert_eq!(rgba.data, [0.25, 0.25, 0.25, 0.5]);
        let many = image(&["a", "b"], vec![0.0, 1.0]);
        let err = convert(
            many,
            PixelFormat::MultiChannel,
            false,
            PixelFormat::Rgb,
            false,
        );
        assert!(err.unwrap_err().to_string().contains("use split()"));
        assert!(PixelFormat::parse("rgb").is_err());
        assert_eq!(PixelFormat::parse("RGBA").unwrap(), PixelFormat::Rgba);
    }

    #[test]
    fn a_box_filter_halving_the_size_averages_pixel_pairs() {
        // 4 x 2 one-channel image to 2 x 1: each output is the mean of a 2 x 2 block
        let data = [1.0, 2.0, 3.0, 5.0, 3.0, 4.0, 7.0, 9.0];
        let out = resample(&data, &[2, 4, 1], [2, 1], &BOX).unwrap();
        assert_eq!(out, [2.5, 6.0]);
        // upscaling by 2 with a box filter repeats each pixel
        let up = resample(&[1.0, 3.0], &[1, 2, 1], [4, 1], &BOX).unwrap();
        assert_eq!(up, [1.0, 1.0, 3.0, 3.0]);
        // a tent between two pixels weights them by distance
        let mid = resample(
            &[0.0, 4.0],
            &[1, 2, 1],
            [3, 1],
            &AnyFilter::Tent { radius: 1.0 },
        )
        .unwrap();
        assert!((mid[1] - 2.0).abs() < 1e-6 && mid[0] < mid[1] && mid[1] < mid[2]);
        assert!(resample(&data, &[2, 4, 1], [0, 1], &AnyFilter::default()).is_err());
        assert!(resample(&data, &[3, 4, 1], [2, 1], &AnyFilter::default()).is_err());
        assert!(resample(&data, &[8], [2, 1], &AnyFilter::default()).is_err());
    }
}
