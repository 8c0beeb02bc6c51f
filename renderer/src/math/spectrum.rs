//! Spectra given as wavelength:value pairs — `<spectrum value="400:0.5, 500:0.8"/>`
//! or an `.spd` file — and their conversion to linear sRGB, as Mitsuba 3's RGB
//! variants do it: the piecewise-linear spectrum is integrated against the CIE 1931
//! 2° colour-matching functions (1000-step quadrature over 360–830 nm, tables at
//! 5 nm, normalised so that a unit spectrum has luminance 1), then XYZ → linear sRGB.
//!
//! How the result depends on the parameter (Mitsuba's rules):
//!
//! | use | wavelength:value pairs | a single value `v` |
//! |---|---|---|
//! | reflectance (`diffuse.reflectance`, ...) | under the D65 illuminant, clamped to [0, 1] | grey `v` |
//! | unbounded (`conductor.eta`, `k`) | under D65, negatives clamped to 0 | grey `v` |
//! | emission (`radiance`, `intensity`, `irradiance`) | equal-energy, negatives clamped to 0 | `v` × sRGB of XYZ (1, 1, 1) |
//!
//! The last row is why a uniform emission spectrum is slightly purple in RGB: a flat
//! spectrum is not the sRGB white point (D65).

use crate::math::Color;

/// Shortest wavelength of the colour-matching tables, in nm.
pub const CIE_MIN: f64 = 360.0;
/// Longest wavelength of the colour-matching tables, in nm.
pub const CIE_MAX: f64 = 830.0;
const CIE_SAMPLES: usize = 95;
/// Makes a unit spectrum integrate to luminance 1.
const CIE_Y_NORMALIZATION: f64 = 1.0 / 106.750_259_399_414_06;
/// Makes the D65 spectrum integrate to luminance 1.
const D65_NORMALIZATION: f64 = 1.0 / 98.99742;

/// CIE 1931 2° colour-matching functions x̄, ȳ, z̄ at 360, 365, ..., 830 nm.
#[rustfmt::skip]
const CIE_XYZ: [f32; 3 * CIE_SAMPLES] = [
    // x̄
    0.0001299, 0.0002321, 0.0004149, 0.0007416, 0.001368, 0.002236, 0.004243, 0.00765,
    0.01431, 0.02319, 0.04351, 0.07763, 0.13438, 0.21477, 0.2839, 0.3285,
    0.34828, 0.34806, 0.3362, 0.3187, 0.2908, 0.2511, 0.19536, 0.1421,
    0.09564, 0.05795001, 0.03201, 0.0147, 0.0049, 0.0024, 0.0093, 0.0291,
    0.06327, 0.1096, 0.1655, 0.2257499, 0.2904, 0.3597, 0.4334499, 0.5120501,
    0.5945, 0.6784, 0.7621, 0.8425, 0.9163, 0.9786, 1.0263, 1.0567,
    1.0622, 1.0456, 1.0026, 0.9384, 0.8544499, 0.7514, 0.6424, 0.5419,
    0.4479, 0.3608, 0.2835, 0.2187, 0.1649, 0.1212, 0.0874, 0.0636,
    0.04677, 0.0329, 0.0227, 0.01584, 0.01135916, 0.008110916, 0.005790346, 0.004109457,
    0.002899327, 0.00204919, 0.001439971, 0.0009999493, 0.0006900786, 0.0004760213, 0.0003323011, 0.0002348261,
    0.0001661505, 0.000117413, 0.00008307527, 0.00005870652, 0.00004150994, 0.00002935326, 0.00002067383, 0.00001455977,
    0.00001025398, 0.000007221456, 0.000005085868, 0.000003581652, 0.000002522525, 0.000001776509, 0.000001251141,
    // ȳ
    0.000003917, 0.000006965, 0.00001239, 0.00002202, 0.000039, 0.000064, 0.00012, 0.000217,
    0.000396, 0.00064, 0.00121, 0.00218, 0.004, 0.0073, 0.0116, 0.01684,
    0.023, 0.0298, 0.038, 0.048, 0.06, 0.0739, 0.09098, 0.1126,
    0.13902, 0.1693, 0.20802, 0.2586, 0.323, 0.4073, 0.503, 0.6082,
    0.71, 0.7932, 0.862, 0.9148501, 0.954, 0.9803, 0.9949501, 1.0,
    0.995, 0.9786, 0.952, 0.9154, 0.87, 0.8163, 0.757, 0.6949,
    0.631, 0.5668, 0.503, 0.4412, 0.381, 0.321, 0.265, 0.217,
    0.175, 0.1382, 0.107, 0.0816, 0.061, 0.04458, 0.032, 0.0232,
    0.017, 0.01192, 0.00821, 0.005723, 0.004102, 0.002929, 0.002091, 0.001484,
    0.001047, 0.00074, 0.00052, 0.0003611, 0.0002492, 0.0001719, 0.00012, 0.0000848,
    0.00006, 0.0000424, 0.00003, 0.0000212, 0.00001499, 0.0000106, 0.0000074657, 0.0000052578,
    0.0000037029, 0.0000026078, 0.0000018366, 0.0000012934, 0.00000091093, 0.00000064153, 0.00000045181,
    // z̄
    0.0006061, 0.001086, 0.001946, 0.003486, 0.006450001, 0.01054999, 0.02005001, 0.03621,
    0.06785001, 0.1102, 0.2074, 0.3713, 0.6456, 1.0390501, 1.3856, 1.62296,
    1.74706, 1.7826, 1.77211, 1.7441, 1.6692, 1.5281, 1.28764, 1.0419,
    0.8129501, 0.6162, 0.46518, 0.3533, 0.272, 0.2123, 0.1582, 0.1117,
    0.07824999, 0.05725001, 0.04216, 0.02984, 0.0203, 0.0134, 0.008749999, 0.005749999,
    0.0039, 0.002749999, 0.0021, 0.0018, 0.001650001, 0.0014, 0.0011, 0.001,
    0.0008, 0.0006, 0.00034, 0.00024, 0.00019, 0.0001, 0.00004999999, 0.00003,
    0.00002, 0.00001, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
];

/// CIE standard illuminant D65 (relative power, 100 at 560 nm) at 360, 365, ..., 830 nm.
#[rustfmt::skip]
const D65: [f32; CIE_SAMPLES] = [
    46.6383, 49.3637, 52.0891, 51.0323, 49.9755, 52.3118, 54.6482, 68.7015,
    82.7549, 87.1204, 91.486, 92.4589, 93.4318, 90.057, 86.6823, 95.7736,
    104.865, 110.936, 117.008, 117.41, 117.812, 116.336, 114.861, 115.392,
    115.923, 112.367, 108.811, 109.082, 109.354, 108.578, 107.802, 106.296,
    104.79, 106.239, 107.689, 106.047, 104.405, 104.225, 104.046, 102.023,
    100.0, 98.1671, 96.3342, 96.0611, 95.788, 92.2368, 88.6856, 89.3459,
    90.0062, 89.8026, 89.5991, 88.6489, 87.6987, 85.4936, 83.2886, 83.4939,
    83.6992, 81.863, 80.0268, 80.1207, 80.2146, 81.2462, 82.2778, 80.281,
    78.2842, 74.0027, 69.7213, 70.6652, 71.6091, 72.979, 74.349, 67.9765,
    61.604, 65.7448, 69.8856, 72.4863, 75.087, 69.3398, 63.5927, 55.0054,
    46.4182, 56.6118, 66.8054, 65.0941, 63.3828, 63.8434, 64.304, 61.8779,
    59.4519, 55.7054, 51.959, 54.6998, 57.4406, 58.8765, 60.3125,
];

/// A spectrum as a scene file gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Spectrum {
    /// The same value at every wavelength.
    Uniform(f64),
    /// Values at increasing wavelengths (nm), linear in between.
    Sampled {
        /// Wavelengths in nm, strictly increasing, at least two.
        wavelengths: Vec<f64>,
        /// The value at each wavelength.
        values: Vec<f64>,
    },
}

/// What a spectrum parameter means, which decides its RGB value (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpectrumUse {
    /// A reflectance or transmittance in [0, 1].
    Reflectance,
    /// A non-negative quantity without upper bound (an index of refraction).
    Unbounded,
    /// Emitted radiance, intensity or irradiance.
    Emission,
}

impl Spectrum {
    /// Parses `"0.5"` (uniform) or `"400:0.5, 500:0.8"` (pairs separated by commas or
    /// spaces).
    pub fn parse(text: &str) -> Result<Spectrum, String> {
        let tokens: Vec<&str> = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .collect();
        if let [one] = tokens[..] {
            if !one.contains(':') {
                return number(one).map(Spectrum::Uniform);
            }
        }
        if tokens.is_empty() {
            return Err("empty spectrum (expected a value such as 0.5 or pairs such as \"400:0.5, 700:0.8\")".into());
        }
        let mut wavelengths = Vec::with_capacity(tokens.len());
        let mut values = Vec::with_capacity(tokens.len());
        for t in tokens {
            let Some((w, v)) = t.split_once(':') else {
                return Err(format!(
                    "\"{t}\" is not a wavelength:value pair (e.g. 400:0.5)"
                ));
            };
            wavelengths.push(number(w)?);
            values.push(number(v)?);
        }
        Spectrum::sampled(wavelengths, values)
    }

    /// Parses an `.spd` file: one `wavelength value` pair per line; lines starting
    /// with `#` and blank lines are skipped. Errors name the line.
    pub fn parse_spd(text: &str) -> Result<Spectrum, String> {
        let mut wavelengths = Vec::new();
        let mut values = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .collect();
            let [w, v] = fields[..] else {
                return Err(format!(
                    "line {}: expected \"wavelength value\", got \"{line}\"",
                    i + 1
                ));
            };
            wavelengths.push(number(w).map_err(|m| format!("line {}: {m}", i + 1))?);
            values.push(number(v).map_err(|m| format!("line {}: {m}", i + 1))?);
        }
        Spectrum::sampled(wavelengths, values)
    }

    /// Pairs of wavelengths and values, checked as Mitsuba checks them.
    pub fn sampled(wavelengths: Vec<f64>, values: Vec<f64>) -> Result<Spectrum, String> {
        if wavelengths.len() < 2 {
            return Err(format!(
                "a spectrum needs at least two wavelength:value pairs, got {}",
                wavelengths.len()
            ));
        }
        if let Some(w) = wavelengths.windows(2).find(|w| w[1] <= w[0]) {
            return Err(format!(
                "wavelengths must increase ({} nm is followed by {} nm)",
                w[0], w[1]
            ));
        }
        Ok(Spectrum::Sampled {
            wavelengths,
            values,
        })
    }

    /// Its linear sRGB value for a parameter used as `usage`.
    pub fn to_rgb(&self, usage: SpectrumUse) -> Color {
        let rgb = match (self, usage) {
            (Spectrum::Uniform(v), SpectrumUse::Emission) => {
                xyz_to_srgb([1.0, 1.0, 1.0]).map(|c| c * v)
            }
            (Spectrum::Uniform(v), _) => [*v; 3],
            (
                Spectrum::Sampled {
                    wavelengths,
                    values,
                },
                _,
            ) => {
                let d65 = usage != SpectrumUse::Emission;
                let rgb = xyz_to_srgb(integrate_xyz(wavelengths, values, d65));
                match usage {
                    SpectrumUse::Reflectance => rgb.map(|c| c.clamp(0.0, 1.0)),
                    _ => rgb.map(|c| c.max(0.0)),
                }
            }
        };
        Color::new(rgb[0] as f32, rgb[1] as f32, rgb[2] as f32)
    }
}

/// A finite number.
fn number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if super::fits_f32(v) => Ok(v),
        Ok(_) => Err(format!("\"{}\" is not a finite number", s.trim())),
        Err(_) => Err(format!("could not parse \"{}\" as a number", s.trim())),
    }
}

/// XYZ of the piecewise-linear spectrum: Mitsuba's 1000-step quadrature over
/// [`CIE_MIN`, `CIE_MAX`], skipping wavelengths outside the given range (the
/// spectrum is zero there), optionally under the D65 illuminant.
fn integrate_xyz(wavelengths: &[f64], values: &[f64], d65: bool) -> [f64; 3] {
    const STEPS: usize = 1000;
    let n = wavelengths.len();
    let (first, last) = (wavelengths[0], wavelengths[n - 1]);
    let mut xyz = [0.0f64; 3];
    for i in 0..STEPS {
        let w = CIE_MIN + (i as f64 / (STEPS - 1) as f64) * (CIE_MAX - CIE_MIN);
        if w < first || w > last {
            continue;
        }
        // the last pair whose wavelength is <= w, at most the second to last
        let k = wavelengths.partition_point(|&x| x <= w).clamp(1, n - 1) - 1;
        let (w0, w1, v0, v1) = (wavelengths[k], wavelengths[k + 1], values[k], values[k + 1]);
        let v = ((w - w1) * v0 + (w0 - w) * v1) / (w0 - w1);
        let weight = v * if d65 {
            table(&D65, w) * D65_NORMALIZATION
        } else {
            1.0
        };
        for (c, out) in xyz.iter_mut().enumerate() {
            *out += table(&CIE_XYZ[c * CIE_SAMPLES..(c + 1) * CIE_SAMPLES], w) * weight;
        }
    }
    xyz.map(|c| c * (CIE_MAX - CIE_MIN) * CIE_Y_NORMALIZATION / STEPS as f64)
}

/// A 5 nm table linearly interpolated at `w` (zero outside [`CIE_MIN`, `CIE_MAX`]).
fn table(t: &[f32], w: f64) -> f64 {
    if !(CIE_MIN..=CIE_MAX).contains(&w) {
        return 0.0;
    }
    let x = (w - CIE_MIN) * ((CIE_SAMPLES - 1) as f64 / (CIE_MAX - CIE_MIN));
    let i = (x as usize).min(CIE_SAMPLES - 2);
    let f = x - i as f64;
    (1.0 - f) * t[i] as f64 + f * t[i + 1] as f64
}

/// CIE XYZ → linear sRGB (Rec. 709 primaries, D65 white), the matrix Mitsuba uses.
pub fn xyz_to_srgb(xyz: [f64; 3]) -> [f64; 3] {
    const M: [[f32; 3]; 3] = [
        [3.240479, -1.53715, -0.498535],
        [-0.969256, 1.875991, 0.041556],
        [0.055648, -0.204043, 1.057311],
    ];
    M.map(|r| r[0] as f64 * xyz[0] + r[1] as f64 * xyz[1] + r[2] as f64 * xyz[2])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use SpectrumUse::{Emission, Reflectance, Unbounded};

    /// Mitsuba 3.9.1 (`scalar_rgb`): the RGB value its scene loader gives the
    /// parameter (`diffuse.reflectance`, `conductor.eta`, `point.intensity`) for each
    /// `<spectrum value>`, read back with `mi.traverse`.
    #[rustfmt::skip]
    const MITSUBA: &[(&str, SpectrumUse, [f32; 3])] = &[
        ("400:0.5, 500:0.8", Reflectance, [0.0, 0.022436945, 0.71929914]),
        ("400:0.5, 500:0.8", Unbounded, [0.0, 0.022436945, 0.71929914]),
        ("400:0.5, 500:0.8", Emission, [0.0, 0.016868504, 0.65592194]),
        ("400:0.78, 500:0.78, 600:0.78, 700:0.78", Reflectance, [0.7763668, 0.77981, 0.7760291]),
        ("400:0.78, 500:0.78, 600:0.78, 700:0.78", Emission, [0.93576103, 0.7406259, 0.7046858]),
        ("400:0, 500:8, 600:15.6, 700:18.4", Reflectance, [1.0, 1.0, 1.0]),
        ("400:0, 500:8, 600:15.6, 700:18.4", Unbounded, [17.714712, 11.354429, 3.3045077]),
        ("400:0, 500:8, 600:15.6, 700:18.4", Emission, [20.710836, 10.854634, 2.771152]),
        ("400:2, 700:2", Unbounded, [1.990684, 1.9995128, 1.9898182]),
        ("400:2, 700:2", Emission, [2.3993871, 1.8990407, 1.8068867]),
        ("300:0.2, 550:1.5, 900:-0.3", Reflectance, [1.0, 1.0, 0.95299]),
        ("300:0.2, 550:1.5, 900:-0.3", Unbounded, [1.1243043, 1.4247204, 0.95299]),
        ("300:0.2, 550:1.5, 900:-0.3", Emission, [1.3622891, 1.3583953, 0.85553795]),
        ("1.0", Reflectance, [1.0, 1.0, 1.0]),
        ("1.0", Emission, [1.2047939, 0.948291, 0.90891606]),
        ("0.25", Unbounded, [0.25, 0.25, 0.25]),
        ("0.25", Emission, [0.30119848, 0.23707275, 0.22722901]),
    ];

    /// The same for `tests/fixtures/xml/test.spd` given as `<spectrum filename>`.
    pub(crate) const MITSUBA_SPD: [(SpectrumUse, [f32; 3]); 3] = [
        (Reflectance, [0.10060823, 0.22145797, 0.7987273]),
        (Unbounded, [0.10060823, 0.22145797, 0.7987273]),
        (Emission, [0.15164626, 0.2039486, 0.72568005]),
    ];

    pub(crate) fn close(a: Color, b: [f32; 3]) -> bool {
        (0..3).all(|i| (a[i] - b[i]).abs() <= 1e-5 * b[i].abs().max(1.0))
    }

    #[test]
    fn conversion_matches_mitsuba_for_every_use() {
        for &(text, usage, want) in MITSUBA {
            let got = Spectrum::parse(text).unwrap().to_rgb(usage);
            assert!(close(got, want), "{text} as {usage:?}: {got} vs {want:?}");
        }
    }

    #[test]
    fn spd_files_convert_as_in_mitsuba() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/xml/test.spd");
        let s = Spectrum::parse_spd(&std::fs::read_to_string(path).unwrap()).unwrap();
        for (usage, want) in MITSUBA_SPD {
            let got = s.to_rgb(usage);
            assert!(close(got, want), "{usage:?}: {got} vs {want:?}");
        }
    }

    #[test]
    fn a_flat_spectrum_under_d65_is_white() {
        // The D65 weighting makes a flat reflectance neutral in sRGB (up to the 5 nm
        // tables and the quadrature): the reason reflectances use it.
        let c = Spectrum::parse("360:0.5, 830:0.5")
            .unwrap()
            .to_rgb(Reflectance);
        for i in 0..3 {
            assert!((c[i] - 0.5).abs() < 0.01, "{c}");
        }
    }

    #[test]
    fn bad_spectra_are_explained() {
        for (text, msg) in [
            ("400:0.5", "at least two"),
            ("500:0.5, 400:0.8", "must increase"),
            ("400:0.5, 400:0.8", "must increase"),
            ("400-0.5, 500:1", "not a wavelength:value pair"),
            ("400:x, 500:1", "could not parse \"x\""),
            ("400:nan, 500:1", "not a finite number"),
            ("1 2", "not a wavelength:value pair"),
            ("", "empty spectrum"),
        ] {
            let e = Spectrum::parse(text).unwrap_err();
            assert!(e.contains(msg), "{text}: {e}");
        }
        let e = Spectrum::parse_spd("# c\n400 0.5\n500\n").unwrap_err();
        assert!(
            e.contains("line 3") && e.contains("wavelength value"),
            "{e}"
        );
        let e = Spectrum::parse_spd("400 a\n500 1\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
    }
}
