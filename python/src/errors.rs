//! heliograph's Python exception classes. Each derives from the built-in a
//! Python user would catch (`except ValueError` catches a bad scene), and carries
//! the core error's text unchanged (what, where, expected vs given).

use pyo3::create_exception;
use pyo3::exceptions::{
    PyBufferError, PyIndexError, PyOSError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;

create_exception!(
    heliograph,
    SceneError,
    PyValueError,
    "An invalid scene description, plugin, parameter or parameter value."
);
create_exception!(
    heliograph,
    VariantError,
    PyValueError,
    "An unknown variant name."
);
create_exception!(
    heliograph,
    RenderError,
    PyRuntimeError,
    "A render that could not be started or did not finish."
);
create_exception!(
    heliograph,
    CudaUnavailableError,
    PyRuntimeError,
    "CUDA was asked for but is not usable in this build, on this machine, or in this process (a child forked from a process that had initialised CUDA)."
);
create_exception!(
    heliograph,
    SceneFileError,
    PyOSError,
    "A scene or image file that could not be read or written."
);

/// Converts a core error into the matching Python exception, keeping its text.
pub fn to_py(e: heliograph::Error) -> PyErr {
    use heliograph::Error as E;
    let msg = e.to_string();
    match e {
        E::Parse { .. } | E::UnknownPlugin { .. } | E::Param { .. } => SceneError::new_err(msg),
        E::Io { .. } => SceneFileError::new_err(msg),
        E::Render(_) | E::Cancelled => RenderError::new_err(msg),
        E::CudaUnavailable(_) => CudaUnavailableError::new_err(msg),
        E::Cuda(_) => RenderError::new_err(msg),
        E::Array { problem, .. } => match problem {
            heliograph::ArrayProblem::Dtype => PyTypeError::new_err(msg),
            heliograph::ArrayProblem::Layout | heliograph::ArrayProblem::Argument => {
                PyValueError::new_err(msg)
            }
            heliograph::ArrayProblem::Device => PyBufferError::new_err(msg),
            heliograph::ArrayProblem::Index => PyIndexError::new_err(msg),
        },
    }
}

/// The name of `obj`'s type, for messages (empty if Python cannot say).
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SceneError", py.get_type::<SceneError>())?;
    m.add("VariantError", py.get_type::<VariantError>())?;
    m.add("RenderError", py.get_type::<RenderError>())?;
    m.add(
        "CudaUnavailableError",
        py.get_type::<CudaUnavailableError>(),
    )?;
    m.add("SceneFileError", py.get_type::<SceneFileError>())?;
    Ok(())
}
