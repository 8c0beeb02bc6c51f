//! Refractive-index data: named dielectric IORs (Mitsuba 3's `ior.h` table) and
//! named conductor presets (complex IOR as RGB).
//!
//! Conductor RGB values: Mitsuba 3 (RGB variants) converts the measured spectral
//! `data/ior/<name>.{eta,k}.spd` files to sRGB with `spectrum_list_to_srgb`
//! (CIE 1931 integration of the spectrum under an equal-energy illuminant,
//! normalised by ∫ȳ, then XYZ → linear sRGB, negatives clamped to 0). The table
//! below was computed the same way (1000-step quadrature over 360–830 nm, CIE
//! 1931 2° tables at 5 nm) from the `.spd` files of the Mitsuba data set (as
//! shipped in mitsuba-renderer/mitsuba `data/ior`). Gold comes out as
//! η = (0.143, 0.375, 1.442), k = (3.983, 2.386, 1.603), the values commonly
//! quoted for Mitsuba's `Au`.

use crate::desc::props::{Props, Value};
use crate::error::{Error, Result};
use crate::math::Color;

/// Named dielectric IORs (Hecht, Optics; ~589 nm, 0–20 °C), as in Mitsuba 3.
pub const DIELECTRICS: &[(&str, f32)] = &[
    ("vacuum", 1.0),
    ("helium", 1.000036),
    ("hydrogen", 1.000132),
    ("air", 1.000277),
    ("carbon dioxide", 1.00045),
    ("water", 1.3330),
    ("acetone", 1.36),
    ("ethanol", 1.361),
    ("carbon tetrachloride", 1.461),
    ("glycerol", 1.4729),
    ("benzene", 1.501),
    ("silicone oil", 1.52045),
    ("bromine", 1.661),
    ("water ice", 1.31),
    ("fused quartz", 1.458),
    ("pyrex", 1.470),
    ("acrylic glass", 1.49),
    ("polypropylene", 1.49),
    ("bk7", 1.5046),
    ("sodium chloride", 1.544),
    ("amber", 1.55),
    ("pet", 1.5750),
    ("diamond", 2.419),
];

/// Named conductor presets: (name, η RGB, k RGB); see the module docs.
#[rustfmt::skip]
pub const CONDUCTORS: &[(&str, [f32; 3], [f32; 3])] = &[
    ("a-C", [2.94405, 2.22714, 1.96816], [0.88746, 0.79930, 0.81529]),
    ("Ag", [0.15528, 0.11673, 0.13839], [4.82835, 3.12222, 2.14690]),
    ("Al", [1.65750, 0.88040, 0.52124], [9.22381, 6.26950, 4.83700]),
    ("AlAs", [3.60530, 3.23294, 2.21632], [0.00068, 0.00000, 0.00751]),
    ("AlAs_palik", [3.60530, 3.23294, 2.21632], [0.00068, 0.00000, 0.00751]),
    ("AlSb", [0.00000, 4.13937, 4.66925], [0.00000, 0.09401, 1.30057]),
    ("AlSb_palik", [0.00000, 4.13937, 4.66925], [0.00000, 0.09401, 1.30057]),
    ("Au", [0.14304, 0.37531, 1.44205], [3.98300, 2.38556, 1.60336]),
    ("Be", [4.18501, 3.18503, 2.78406], [3.83547, 3.01012, 2.86899]),
    ("Be_palik", [4.18501, 3.18503, 2.78406], [3.83547, 3.01012, 2.86899]),
    ("Cr", [4.36967, 2.91651, 1.65490], [5.20655, 4.23131, 3.75470]),
    ("CsI", [2.14490, 1.70232, 1.66243], [0.00000, 0.00000, 0.00000]),
    ("CsI_palik", [2.14490, 1.70232, 1.66243], [0.00000, 0.00000, 0.00000]),
    ("Cu", [0.20101, 0.92375, 1.10222], [3.91326, 2.45305, 2.14209]),
    ("Cu_palik", [0.21323, 0.91972, 1.10241], [3.92187, 2.45733, 2.13658]),
    ("Cu2O", [3.55177, 2.94987, 2.75188], [0.11421, 0.19390, 0.60613]),
    ("Cu2O_palik", [3.55177, 2.94987, 2.75188], [0.11421, 0.19390, 0.60613]),
    ("CuO", [3.24754, 2.44781, 2.21022], [0.52109, 0.57003, 0.72218]),
    ("CuO_palik", [3.24754, 2.44781, 2.21022], [0.52109, 0.57003, 0.72218]),
    ("d-C", [2.70872, 2.31883, 2.22890], [0.00000, 0.00000, 0.00000]),
    ("d-C_palik", [2.70872, 2.31883, 2.22890], [0.00000, 0.00000, 0.00000]),
    ("Hg", [2.39894, 1.44003, 0.90957], [6.32759, 4.37192, 3.42176]),
    ("Hg_palik", [2.39894, 1.44003, 0.90957], [6.32759, 4.37192, 3.42176]),
    ("HgTe", [4.77904, 3.23120, 2.65990], [1.63161, 1.58081, 1.72929]),
    ("HgTe_palik", [4.77904, 3.23120, 2.65990], [1.63161, 1.58081, 1.72929]),
    ("Ir", [3.08630, 2.08219, 1.61791], [5.59215, 4.06709, 3.26731]),
    ("Ir_palik", [3.08630, 2.08219, 1.61791], [5.59215, 4.06709, 3.26731]),
    ("K", [0.06404, 0.04641, 0.03818], [2.10420, 1.34894, 0.91313]),
    ("K_palik", [0.06404, 0.04641, 0.03818], [2.10420, 1.34894, 0.91313]),
    ("Li", [0.26579, 0.19562, 0.22095], [3.54016, 2.31112, 1.66861]),
    ("Li_palik", [0.26579, 0.19562, 0.22095], [3.54016, 2.31112, 1.66861]),
    ("MgO", [2.08958, 1.65072, 1.59488], [0.00000, 0.00000, 0.00000]),
    ("MgO_palik", [2.08958, 1.65072, 1.59488], [0.00000, 0.00000, 0.00000]),
    ("Na_palik", [0.06027, 0.05614, 0.06199], [3.17927, 2.11249, 1.57904]),
    ("Nb", [3.42007, 2.79009, 2.39563], [3.44139, 2.73767, 2.57975]),
    ("Nb_palik", [3.42007, 2.79009, 2.39563], [3.44139, 2.73767, 2.57975]),
    ("Ni_palik", [2.36730, 1.66337, 1.46708], [4.49881, 3.05015, 2.34544]),
    ("Rh", [2.58579, 1.86022, 1.55426], [6.78226, 4.70299, 3.97607]),
    ("Rh_palik", [2.58579, 1.86022, 1.55426], [6.78226, 4.70299, 3.97607]),
    ("Se", [4.05831, 2.84293, 2.82085], [0.75405, 0.63844, 0.52181]),
    ("Se_palik", [4.05831, 2.84293, 2.82085], [0.75405, 0.63844, 0.52181]),
    ("SiC", [3.17234, 2.52597, 2.47937], [0.00000, 0.00000, 0.00001]),
    ("SiC_palik", [3.17234, 2.52597, 2.47937], [0.00000, 0.00000, 0.00001]),
    ("SnTe", [4.52425, 1.98164, 1.28159], [0.00000, 0.00000, 0.00000]),
    ("SnTe_palik", [4.52425, 1.98164, 1.28159], [0.00000, 0.00000, 0.00000]),
    ("Ta", [2.06272, 2.39294, 2.62793], [2.40836, 1.74149, 1.94703]),
    ("Ta_palik", [2.06272, 2.39294, 2.62793], [2.40836, 1.74149, 1.94703]),
    ("Te", [7.39023, 4.48210, 2.63711], [3.25602, 3.52706, 3.29205]),
    ("Te_palik", [7.39023, 4.48210, 2.63711], [3.25602, 3.52706, 3.29205]),
    ("ThF4", [1.83071, 1.44223, 1.38765], [0.00000, 0.00000, 0.00000]),
    ("ThF4_palik", [1.83071, 1.44223, 1.38765], [0.00000, 0.00000, 0.00000]),
    ("TiC", [3.70053, 2.83742, 2.58229], [3.26564, 2.35159, 2.17279]),
    ("TiC_palik", [3.70053, 2.83742, 2.58229], [3.26564, 2.35159, 2.17279]),
    ("TiN", [1.64845, 1.15052, 1.37982], [3.36833, 1.94350, 1.10207]),
    ("TiN_palik", [1.64845, 1.15052, 1.37982], [3.36833, 1.94350, 1.10207]),
    ("TiO2", [3.45661, 2.80174, 2.90517], [0.00011, 0.00000, 0.00065]),
    ("TiO2_palik", [3.45661, 2.80174, 2.90517], [0.00011, 0.00000, 0.00065]),
    ("VC", [3.65757, 2.75274, 2.53267], [3.06830, 2.19869, 1.96319]),
    ("VC_palik", [3.65757, 2.75274, 2.53267], [3.06830, 2.19869, 1.96319]),
    ("VN", [2.86560, 2.11919, 1.94009], [3.03224, 2.05612, 1.61631]),
    ("VN_palik", [2.86560, 2.11919, 1.94009], [3.03224, 2.05612, 1.61631]),
    ("V_palik", [4.27758, 3.51295, 2.76107], [3.49130, 2.88945, 3.11152]),
    ("W", [4.37082, 3.30025, 2.99841], [3.50064, 2.60487, 2.27323]),
];

/// The IOR `key` as a float or a (case-insensitive) name, `default` when absent.
/// Must be finite and > 0.
pub fn lookup_ior(p: &Props, key: &str, default: &str) -> Result<f32> {
    let loc = p.entry_loc(key);
    let v = match p.get(key).map(|e| &e.value) {
        None => named_ior(default).unwrap_or(1.0),
        Some(Value::String(s)) => named_ior(s).ok_or_else(|| {
            let names: Vec<&str> = DIELECTRICS.iter().map(|d| d.0).collect();
            Error::param(
                &loc,
                key,
                format!("unknown IOR name \"{s}\" (known: {})", names.join(", ")),
            )
        })?,
        Some(_) => p.float(key, 1.0)?,
    };
    if !(v.is_finite() && v > 0.0) {
        return Err(Error::param(
            &loc,
            key,
            format!("IOR must be a finite value > 0, got {v}"),
        ));
    }
    Ok(v)
}

fn named_ior(name: &str) -> Option<f32> {
    let lower = name.to_lowercase();
    DIELECTRICS.iter().find(|d| d.0 == lower).map(|d| d.1)
}

/// The complex IOR (η, k) of a named conductor preset (exact, case-sensitive
/// names as Mitsuba's files).
pub fn conductor(name: &str) -> Option<(Color, Color)> {
    CONDUCTORS
        .iter()
        .find(|c| c.0 == name)
        .map(|c| (Color::from_array(c.1), Color::from_array(c.2)))
}

/// The known conductor preset names, for error messages.
pub fn conductor_names() -> String {
    let mut v: Vec<&str> = CONDUCTORS.iter().map(|c| c.0).collect();
    v.push("none");
    v.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Loc;

    fn props(v: Value) -> Props {
        let mut p = Props::new(Loc::new("t.xml", 1, 1));
        p.insert("int_ior", v, Loc::new("t.xml", 3, 1)).unwrap();
        p
    }

    #[test]
    fn names_floats_defaults_and_errors() {
        let p = Props::new(Loc::new("t.xml", 1, 1));
        assert_eq!(lookup_ior(&p, "int_ior", "bk7").unwrap(), 1.5046);
        assert_eq!(lookup_ior(&p, "ext_ior", "air").unwrap(), 1.000277);
        let p = props(Value::String("Water".into()));
        assert_eq!(lookup_ior(&p, "int_ior", "bk7").unwrap(), 1.333);
        let p = props(Value::Float(1.7));
        assert_eq!(lookup_ior(&p, "int_ior", "bk7").unwrap(), 1.7);
        let p = props(Value::String("unobtainium".into()));
        let e = lookup_ior(&p, "int_ior", "bk7").unwrap_err().to_string();
        assert!(
            e.contains("t.xml:3") && e.contains("unobtainium") && e.contains("diamond"),
            "{e}"
        );
        for bad in [-1.0, 0.0, f64::NAN] {
            let e = lookup_ior(&props(Value::Float(bad)), "int_ior", "bk7").unwrap_err();
            assert!(e.to_string().contains("> 0"), "{e}");
        }
    }

    #[test]
    fn conductor_presets() {
        let (eta, k) = conductor("Au").unwrap();
        // published RGB gold constants of Mitsuba's Au preset (to ~1e-3)
        assert!(
            (eta - Color::new(0.143119, 0.374957, 1.44248))
                .abs()
                .max_element()
                < 2e-3
        );
        assert!(
            (k - Color::new(3.98316, 2.38572, 1.60322))
                .abs()
                .max_element()
                < 2e-3
        );
        for m in ["Ag", "Al", "Cu", "Cr", "W"] {
            assert!(conductor(m).is_some(), "{m}");
        }
        assert!(conductor("Unobtainium").is_none());
        assert!(conductor_names().contains("none"));
    }
}
