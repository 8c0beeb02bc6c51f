//! The conversions of `Bitmap` (`python/heliograph/_bitmap.py`): sRGB, channel layouts
//! and resampling, made by the core ([`heliograph::io::bitmap`]). The package keeps
//! the values as stored and passes them here as floats (integer codes scaled to 0..1).

use heliograph::desc::Category;
use heliograph::interop::image::channels_of;
use heliograph::interop::Storage;
use heliograph::io::bitmap::{self, PixelFormat};
use heliograph::rfilters;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::to_py;
use crate::tensor::{to_host_array, TensorXf};

/// `data` (H, W, C) with channels `names` in `layout` (decoded from sRGB when
/// `srgb`), converted to layout `to` (encoded to sRGB when `to_srgb`): the values and
/// their channel names.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _bitmap_convert(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    names: Vec<String>,
    layout: &str,
    srgb: bool,
    to: &str,
    to_srgb: bool,
) -> PyResult<(TensorXf, Vec<String>)> {
    let img = channels_of(to_host_array(py, data)?, names, "Bitmap.convert").map_err(to_py)?;
    let from = PixelFormat::parse(layout).map_err(to_py)?;
    let to = PixelFormat::parse(to).map_err(to_py)?;
    let out = py
        .detach(|| bitmap::convert(img, from, srgb, to, to_srgb))
        .map_err(to_py)?;
    let shape = vec![out.height, out.width, out.names.len()];
    let t = Storage::from_values(shape, &out.data).map_err(to_py)?;
    Ok((t.into(), out.names))
}

/// `data` (H, W, C) resampled to `res` = (width, height) through `rfilter` (the dict of
/// a reconstruction filter; a box filter when `None`).
#[pyfunction]
#[pyo3(signature = (data, res, rfilter=None))]
pub fn _bitmap_resample(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    res: [usize; 2],
    rfilter: Option<&Bound<'_, PyDict>>,
) -> PyResult<TensorXf> {
    let a = to_host_array(py, data)?;
    let filter = match rfilter {
        Some(d) => {
            let obj = crate::dict::load_plugin(py, d, Category::Rfilter)?;
            rfilters::build(&obj).map_err(to_py)?
        }
        // a box of one pixel
        None => rfilters::AnyFilter::Box { radius: 0.5 },
    };
    let out = py
        .detach(|| bitmap::resample(&a.data, &a.shape, res, &filter))
        .map_err(to_py)?;
    let t = Storage::from_values(vec![res[1], res[0], a.shape[2]], &out).map_err(to_py)?;
    Ok(t.into())
}
