//! OpenEXR files with any number of named channels (`R`, `G`, `B`, `depth.T`,
//! `sh_normal.X`, ...), as renderers write their AOVs. Channels come back in the file's
//! order within each layer prefix, colours as R, G, B, A and vectors as X, Y, Z, as
//! Mitsuba orders them.

use std::path::Path;

use exr::prelude::*;

use crate::error::{Error as HgError, Result as HgResult};

/// An image of `names.len()` float channels, interleaved per pixel, rows top down.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedChannels {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// The channel names.
    pub names: Vec<String>,
    /// `height * width * names.len()` values.
    pub data: Vec<f32>,
}

/// Where channel `name` goes among its layer's channels (R, G, B, A and X, Y, Z first).
fn rank(name: &str) -> (String, usize) {
    let (prefix, last) = match name.rsplit_once('.') {
        Some((p, l)) => (p.to_string(), l),
        None => (String::new(), name),
    };
    let order = ["R", "G", "B", "A", "X", "Y", "Z"];
    let k = order.iter().position(|o| *o == last).unwrap_or(order.len());
    (prefix, k)
}

/// Reads every channel of the first layer of an EXR file as float32.
pub fn read_exr_channels(path: &Path) -> HgResult<NamedChannels> {
    let image = read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .first_valid_layer()
        .all_attributes()
        .from_file(path)
        .map_err(|e| HgError::io(path, format!("cannot read EXR: {e}")))?;
    let layer = &image.layer_data;
    let (width, height) = (layer.size.width(), layer.size.height());
    let mut chans: Vec<(String, Vec<f32>)> = layer
        .channel_data
        .list
        .iter()
        .map(|c| (c.name.to_string(), c.sample_data.values_as_f32().collect()))
        .collect();
    // stable: the file's (alphabetical) order among equal ranks
    chans.sort_by_key(|(n, _)| rank(n));
    let mut data = Vec::with_capacity(width * height * chans.len());
    for i in 0..width * height {
        data.extend(chans.iter().map(|(_, v)| v[i]));
    }
    Ok(NamedChannels {
        width,
        height,
        names: chans.into_iter().map(|(n, _)| n).collect(),
        data,
    })
}

/// Writes `img` as a float32 EXR with its channel names.
pub fn write_exr_channels(path: &Path, img: &NamedChannels) -> HgResult<()> {
    let c = img.names.len();
    if c == 0 || img.data.len() != img.width * img.height * c {
        return Err(HgError::io(
            path,
            format!(
                "{} values do not make a {}x{} image of {c} channels",
                img.data.len(),
                img.width,
                img.height
            ),
        ));
    }
    let list: Vec<AnyChannel<FlatSamples>> = img
        .names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let v = img.data.iter().skip(k).step_by(c).copied().collect();
            AnyChannel::new(name.as_str(), FlatSamples::F32(v))
        })
        .collect();
    let channels = AnyChannels::sort(SmallVec::from_vec(list));
    Image::from_channels((img.width, img.height), channels)
        .write()
        .to_file(path)
        .map_err(|e| HgError::io(path, format!("cannot write EXR: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_channels_round_trip_in_mitsuba_order() {
        let dir = std::env::temp_dir().join(format!("hg_exr_channels_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("aov.exr");
        let names = ["depth.T", "B", "R", "G", "n.Z", "n.X", "n.Y"];
        let (w, h) = (5, 3);
        let data: Vec<f32> = (0..w * h * names.len()).map(|i| i as f32 * 0.25).collect();
        let img = NamedChannels {
            width: w,
            height: h,
            names: names.iter().map(|s| s.to_string()).collect(),
            data: data.clone(),
        };
        write_exr_channels(&path, &img).unwrap();
        let back = read_exr_channels(&path).unwrap();
        assert_eq!(back.names, ["R", "G", "B", "depth.T", "n.X", "n.Y", "n.Z"]);
        assert_eq!((back.width, back.height), (w, h));
        // every value comes back in the channel of its name
        for (k, name) in back.names.iter().enumerate() {
            let src = names.iter().position(|n| n == name).unwrap();
            for p in 0..w * h {
                assert_eq!(back.data[p * 7 + k], data[p * 7 + src], "{name} pixel {p}");
            }
        }
        assert!(write_exr_channels(
            &path,
            &NamedChannels {
                data: vec![1.0],
                ..img
            }
        )
        .is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
