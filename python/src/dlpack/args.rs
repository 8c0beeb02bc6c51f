//! The arguments of `__dlpack__(*, stream, max_version, dl_device, copy)` converted
//! from Python, once for both kinds of tensor: `TypeError` for a wrong type,
//! `ValueError` for a value that is no stream or version (the Python array API
//! standard's exception types). Which values are streams and versions, and what a
//! tensor can serve, are the core's rules ([`heliograph::interop::export`]).

use heliograph::interop::export::{versioned_for, ExportArgs, StreamArg};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

use crate::errors::to_py;

/// Checks the types and values of `__dlpack__`'s arguments (not yet whether this
/// tensor can serve them: [`ExportArgs::check_host`], [`ExportArgs::check_cuda`]).
pub fn parse_export_args(
    stream: Option<&Bound<'_, PyAny>>,
    max_version: Option<&Bound<'_, PyAny>>,
    dl_device: Option<&Bound<'_, PyAny>>,
    copy: Option<&Bound<'_, PyAny>>,
) -> PyResult<ExportArgs> {
    Ok(ExportArgs {
        stream: parse_stream(stream)?,
        versioned: parse_max_version(max_version)?,
        dl_device: parse_dl_device(dl_device)?,
        copy: parse_copy(copy)?,
    })
}

fn parse_stream(stream: Option<&Bound<'_, PyAny>>) -> PyResult<StreamArg> {
    let Some(s) = stream.filter(|s| !s.is_none()) else {
        return Ok(StreamArg::Unspecified);
    };
    if s.is_instance_of::<PyBool>() || !s.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "__dlpack__: stream must be None or an int, got {}",
            s.get_type().name()?
        )));
    }
    StreamArg::from_int(s.extract()?).map_err(to_py)
}

fn parse_max_version(max_version: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    let Some(m) = max_version.filter(|m| !m.is_none()) else {
        return Ok(false);
    };
    let (major, minor): (i64, i64) = m.extract().map_err(|_| {
        PyTypeError::new_err("__dlpack__: max_version must be a (major, minor) tuple of ints")
    })?;
    versioned_for(major, minor).map_err(to_py)
}

fn parse_dl_device(dl_device: Option<&Bound<'_, PyAny>>) -> PyResult<Option<(i32, i32)>> {
    let Some(d) = dl_device.filter(|d| !d.is_none()) else {
        return Ok(None);
    };
    d.extract().map(Some).map_err(|_| {
        PyTypeError::new_err(
            "__dlpack__: dl_device must be a (device_type, device_id) tuple of ints",
        )
    })
}

fn parse_copy(copy: Option<&Bound<'_, PyAny>>) -> PyResult<Option<bool>> {
    let Some(c) = copy.filter(|c| !c.is_none()) else {
        return Ok(None);
    };
    if !c.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "__dlpack__: copy must be None, True or False, got {}",
            c.get_type().name()?
        )));
    }
    Ok(Some(c.extract()?))
}
