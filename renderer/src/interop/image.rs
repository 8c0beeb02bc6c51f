//! Arrays as the images that the file writers take: an (H, W) or (H, W, 1|3|4) array
//! as an [`Image`] ([`image_of`]), an (H, W, C) array with C channel names as
//! [`NamedChannels`] ([`channels_of`]). `what` starts each error message (the
//! function the user called).

use crate::desc::params::shape_str;
use crate::error::{ArrayProblem, Error, Result};
use crate::io::exr_channels::NamedChannels;
use crate::io::Image;
use crate::tensor::HostArray;

/// An error about the array given to `what`.
fn refused(what: &str, msg: String) -> Error {
    Error::array(ArrayProblem::Layout, format!("{what}: {msg}"))
}

/// Array `a` as an image of 1, 3 or 4 channels ((H, W) is one channel).
pub fn image_of(a: HostArray, what: &str) -> Result<Image> {
    let (h, w, c) = match a.shape[..] {
        [h, w] => (h, w, 1),
        [h, w, c] if matches!(c, 1 | 3 | 4) => (h, w, c),
        _ => {
            return Err(refused(
                what,
                format!(
                    "expected an image of shape (H, W) or (H, W, 1|3|4), got {}",
                    shape_str(&a.shape)
                ),
            ))
        }
    };
    Ok(Image {
        width: w,
        height: h,
        channels: c,
        data: a.data,
    })
}

/// Array `a` of shape (H, W, C) as an image whose C channels are named `names`.
pub fn channels_of(a: HostArray, names: Vec<String>, what: &str) -> Result<NamedChannels> {
    let [h, w, c] = a.shape[..] else {
        return Err(refused(
            what,
            format!(
                "expected an image of shape (H, W, C), got {}",
                shape_str(&a.shape)
            ),
        ));
    };
    if names.len() != c {
        return Err(refused(
            what,
            format!("{} channel names for {c} channels", names.len()),
        ));
    }
    Ok(NamedChannels {
        width: w,
        height: h,
        names,
        data: a.data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::dlpack::DLDataType;

    fn array(shape: Vec<usize>) -> HostArray {
        let data = vec![0.5; shape.iter().product()];
        HostArray {
            shape,
            data,
            dtype: DLDataType::F32,
        }
    }

    #[test]
    fn a_two_dimensional_array_is_one_channel_and_other_ranks_are_refused() {
        let img = image_of(array(vec![2, 3]), "w").unwrap();
        assert_eq!((img.height, img.width, img.channels), (2, 3, 1));
        let e = image_of(array(vec![2, 3, 2]), "w").unwrap_err().to_string();
        assert!(e.starts_with("w: expected an image of shape (H, W) or (H, W, 1|3|4)"));
    }

    #[test]
    fn named_channels_need_one_name_per_channel() {
        let names = vec!["R".to_string(), "G".to_string()];
        let img = channels_of(array(vec![1, 1, 2]), names.clone(), "w").unwrap();
        assert_eq!(img.names, names);
        let e = channels_of(array(vec![1, 1, 3]), names, "w").unwrap_err();
        assert_eq!(e.to_string(), "w: 2 channel names for 3 channels");
    }
}
