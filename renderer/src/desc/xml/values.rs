//! Property tags (`float integer boolean string rgb spectrum point vector`) and the
//! number parsing they share with transform operations. Parse failures are plain
//! messages here; the caller attaches the location and parameter name.

use super::elem::{Attr, Elem};
use crate::desc::props::Value;
use crate::error::{Error, Result};
use crate::math::spectrum::Spectrum;
use crate::math::Vec3;

/// The property tags that take a `name` and a `value` (transform is handled apart).
pub(super) const PROPERTY_TAGS: [&str; 8] = [
    "float", "integer", "boolean", "string", "rgb", "spectrum", "point", "vector",
];

/// Splits a list of numbers on commas and/or whitespace.
pub(super) fn tokens(s: &str) -> Vec<&str> {
    s.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .collect()
}

/// A finite floating-point number (also finite in single precision, as rendered).
pub(super) fn parse_f64(s: &str) -> std::result::Result<f64, String> {
    let t = s.trim();
    let v: f64 = t.parse().map_err(|_| {
        format!("could not parse \"{t}\" as a number (expected e.g. 0.5, -2, 1e-3)")
    })?;
    if !crate::math::fits_f32(v) {
        return Err(format!(
            "\"{t}\" is not a finite number (NaN and infinities are not allowed)"
        ));
    }
    Ok(v)
}

/// A finite single-precision number.
pub(super) fn parse_f32(s: &str) -> std::result::Result<f32, String> {
    parse_f64(s).map(|v| v as f32)
}

/// A whole number.
pub(super) fn parse_int(s: &str) -> std::result::Result<i64, String> {
    let t = s.trim();
    t.parse().map_err(|_| {
        format!("could not parse \"{t}\" as an integer (expected a whole number such as 4 or -2)")
    })
}

/// `true` or `false`, in any case (as Mitsuba).
pub(super) fn parse_bool(s: &str) -> std::result::Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!(
            "could not parse \"{}\" as a boolean (accepted: \"true\" or \"false\")",
            s.trim()
        )),
    }
}

/// Exactly `n` numbers, or (with `splat`) a single one repeated.
pub(super) fn parse_floats(
    s: &str,
    counts: &[usize],
    splat_to: Option<usize>,
) -> std::result::Result<Vec<f32>, String> {
    let t = tokens(s);
    let mut v = t
        .iter()
        .map(|x| parse_f32(x))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    if let (Some(n), 1) = (splat_to, v.len()) {
        v = vec![v[0]; n];
    } else if !counts.contains(&v.len()) {
        let want: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
        return Err(format!(
            "expected {} numbers, got {} in \"{}\"",
            want.join(" or "),
            v.len(),
            s.trim()
        ));
    }
    Ok(v)
}

/// Three numbers, or one repeated three times.
pub(super) fn parse_vec3_or_splat(s: &str) -> std::result::Result<Vec3, String> {
    let v = parse_floats(s, &[1, 3], Some(3))?;
    Ok(Vec3::new(v[0], v[1], v[2]))
}

/// Exactly three numbers.
pub(super) fn parse_vec3(s: &str) -> std::result::Result<Vec3, String> {
    let v = parse_floats(s, &[3], None)?;
    Ok(Vec3::new(v[0], v[1], v[2]))
}

/// A 3-vector from `value="x, y, z"` (or one number, splatted) or from `x`/`y`/`z`
/// attributes where missing components are `missing`. Errors name the attribute.
pub(super) fn xyz(el: &Elem, missing: f32) -> std::result::Result<Vec3, (String, String)> {
    let comps = [el.get("x"), el.get("y"), el.get("z")];
    if let Some(v) = el.get("value") {
        if comps.iter().any(|c| c.is_some()) {
            return Err((
                "value".into(),
                "cannot combine \"value\" with \"x\"/\"y\"/\"z\" attributes".into(),
            ));
        }
        return parse_vec3_or_splat(&v.value).map_err(|m| ("value".into(), m));
    }
    let mut out = [missing; 3];
    for (o, c) in out.iter_mut().zip(comps) {
        if let Some(a) = c {
            *o = parse_f32(&a.value).map_err(|m| (a.name.clone(), m))?;
        }
    }
    Ok(Vec3::from(out))
}

/// Parses one property tag into its name and value.
pub(super) fn parse_property(el: &Elem) -> Result<(String, Value)> {
    let xyz_attrs: &[&str] = &["name", "value", "x", "y", "z"];
    match el.tag {
        "point" | "vector" => el.allow(xyz_attrs)?,
        "spectrum" => el.allow(&["name", "value", "filename"])?,
        _ => el.allow(&["name", "value"])?,
    }
    let name = el.name_attr()?.to_string();
    let err = |a: &Attr, m: String| Error::param(&a.loc, &name, format!("<{}>: {m}", el.tag));
    let value = match el.tag {
        "point" | "vector" => {
            let v = xyz(el, 0.0).map_err(|(attr, m)| {
                let loc = el.get(&attr).map_or(el.loc.clone(), |a| a.loc.clone());
                Error::param(&loc, &name, format!("<{}>: {m}", el.tag))
            })?;
            if el.tag == "point" {
                Value::Point(v)
            } else {
                Value::Vector(v)
            }
        }
        "spectrum" => spectrum(el, &name)?,
        tag => {
            let a = el.req("value")?;
            scalar(tag, &a.value).map_err(|m| err(a, m))?
        }
    };
    Ok((name, value))
}

/// The single-`value` property tags.
fn scalar(tag: &str, s: &str) -> std::result::Result<Value, String> {
    Ok(match tag {
        "float" => Value::Float(parse_f64(s)?),
        "integer" => Value::Int(parse_int(s)?),
        "boolean" => Value::Bool(parse_bool(s)?),
        "string" => Value::String(s.to_string()),
        "rgb" => Value::Rgb(parse_vec3_or_splat(s)?),
        other => return Err(format!("internal: <{other}> is not a scalar property")),
    })
}

/// `<spectrum value="0.5"/>` or `<spectrum value="400:0.5, 700:0.8"/>` (files are
/// read by the parser, which knows where to look for them).
fn spectrum(el: &Elem, name: &str) -> Result<Value> {
    if el.get("filename").is_some() == el.get("value").is_some() {
        return Err(Error::param(
            &el.loc,
            name,
            "<spectrum> needs either a \"value\" or a \"filename\" attribute (not both)",
        ));
    }
    let a = el.req("value")?;
    Spectrum::parse(&a.value)
        .map(Value::Spectrum)
        .map_err(|m| Error::param(&a.loc, name, format!("<spectrum>: {m}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_accept_the_usual_forms_and_reject_non_finite() {
        assert_eq!(parse_f64("1e-3").unwrap(), 1e-3);
        assert_eq!(parse_f64(" -0.5 ").unwrap(), -0.5);
        assert_eq!(parse_f64("+2").unwrap(), 2.0);
        for bad in [
            "nan", "NaN", "inf", "-inf", "infinity", "1e40", "abc", "", "1.0.0",
        ] {
            assert!(parse_f64(bad).is_err(), "{bad} accepted");
        }
        assert!(parse_f64("inf").unwrap_err().contains("finite"));
        assert_eq!(parse_int("-7").unwrap(), -7);
        assert!(parse_int("1.5").unwrap_err().contains("whole number"));
        assert!(parse_bool("TRUE").unwrap());
        assert!(!parse_bool("false").unwrap());
        assert!(parse_bool("yes")
            .unwrap_err()
            .contains("\"true\" or \"false\""));
    }

    #[test]
    fn lists_split_on_commas_and_spaces() {
        assert_eq!(tokens("1, 2 ,3\t4,,5"), vec!["1", "2", "3", "4", "5"]);
        assert_eq!(
            parse_vec3_or_splat("0.1,0.2 0.3").unwrap(),
            Vec3::new(0.1, 0.2, 0.3)
        );
        assert_eq!(parse_vec3_or_splat("0.5").unwrap(), Vec3::splat(0.5));
        let e = parse_vec3_or_splat("1, 2").unwrap_err();
        assert!(e.contains("expected 1 or 3 numbers, got 2"), "{e}");
        assert!(parse_vec3("1")
            .unwrap_err()
            .contains("expected 3 numbers, got 1"));
        assert!(parse_vec3("1, nan, 2").is_err());
    }
}
