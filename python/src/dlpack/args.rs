//! The arguments of `__dlpack__(*, stream, max_version, dl_device, copy)`, checked
//! once for both kinds of tensor (the README's DLPack rules; the Python array API standard
//! names the exception types: `TypeError` for a wrong type, `ValueError` for a
//! disallowed value, `BufferError` for a request this tensor cannot serve).

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

use super::{DEVICE_CPU, DEVICE_CUDA};

/// What `stream` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamArg {
    /// `None`: the consumer did not say; the producer must make the data safe to use
    /// from anywhere (the host waits).
    Unspecified,
    /// `-1`: the consumer orders itself; no synchronisation.
    NoSync,
    /// A `CUstream` handle (1 = legacy default stream, 2 = per-thread default stream).
    Handle(usize),
}

/// The checked arguments.
#[derive(Clone, Copy, Debug)]
pub struct ExportArgs {
    /// The consumer's stream.
    pub stream: StreamArg,
    /// Versioned (`dltensor_versioned`) rather than legacy (`dltensor`) capsule.
    pub versioned: bool,
    /// The device the consumer wants the data on, when it named one.
    pub dl_device: Option<(i32, i32)>,
    /// `copy`: `Some(true)` always copy, `Some(false)` never, `None` as needed.
    pub copy: Option<bool>,
}

impl ExportArgs {
    /// Checks types and values (not yet whether this tensor can serve them).
    pub fn parse(
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

    /// The checks of a CPU tensor: `stream` must be None, `dl_device` the host.
    pub fn check_host(&self) -> PyResult<()> {
        if let StreamArg::Handle(h) = self.stream {
            return Err(PyBufferError::new_err(format!(
                "__dlpack__: a CPU tensor takes only stream=None, got stream={h}"
            )));
        }
        if self.stream == StreamArg::NoSync {
            return Err(PyBufferError::new_err(
                "__dlpack__: a CPU tensor takes only stream=None, got stream=-1",
            ));
        }
        match self.dl_device {
            None | Some((DEVICE_CPU, 0)) => Ok(()),
            Some((kind, id)) => Err(PyBufferError::new_err(format!(
                "__dlpack__: a CPU tensor cannot be exported to device ({kind}, {id}); \
                 it can be exported to (1, 0), the host"
            ))),
        }
    }

    /// The checks of a CUDA tensor on device `ordinal`; returns whether the consumer
    /// wants a host copy (`dl_device=(1, 0)`).
    pub fn check_cuda(&self, ordinal: usize) -> PyResult<bool> {
        if self.stream == StreamArg::Handle(0) {
            return Err(PyValueError::new_err(
                "__dlpack__: stream=0 is ambiguous and disallowed by the DLPack standard; \
                 pass 1 for the legacy default stream, 2 for the per-thread default stream, \
                 or the stream's handle",
            ));
        }
        match self.dl_device {
            None => Ok(false),
            Some((DEVICE_CUDA, id)) if id as usize == ordinal && id >= 0 => Ok(false),
            Some((DEVICE_CPU, 0)) if self.copy == Some(false) => Err(PyBufferError::new_err(
                "__dlpack__: dl_device=(1, 0) needs a copy of this CUDA tensor to the host, \
                 but copy=False",
            )),
            Some((DEVICE_CPU, 0)) => Ok(true),
            Some((kind, id)) => Err(PyBufferError::new_err(format!(
                "__dlpack__: this tensor lives on CUDA device {ordinal}; it can be exported to \
                 ({DEVICE_CUDA}, {ordinal}) or copied to the host (1, 0), not to ({kind}, {id})"
            ))),
        }
    }
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
    let v: i128 = s.extract()?;
    match v {
        -1 => Ok(StreamArg::NoSync),
        v if v < -1 => Err(PyValueError::new_err(format!(
            "__dlpack__: stream {v} is not a valid stream: it must be >= -1 (None, -1, 1, 2 \
             or a stream handle)"
        ))),
        v => usize::try_from(v)
            .map(StreamArg::Handle)
            .map_err(|_| PyValueError::new_err(format!("__dlpack__: stream {v} is too large"))),
    }
}

fn parse_max_version(max_version: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    let Some(m) = max_version.filter(|m| !m.is_none()) else {
        return Ok(false);
    };
    let (major, minor): (i64, i64) = m.extract().map_err(|_| {
        PyTypeError::new_err("__dlpack__: max_version must be a (major, minor) tuple of ints")
    })?;
    if major < 0 || minor < 0 {
        return Err(PyValueError::new_err(format!(
            "__dlpack__: max_version ({major}, {minor}) is not a version"
        )));
    }
    // A consumer of DLPack >= 1 gets a 1.1 capsule: the standard lets the producer
    // return an older version than max_version, and the consumer checks the version.
    Ok(major >= 1)
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
