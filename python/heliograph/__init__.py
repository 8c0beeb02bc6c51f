"""heliograph: a physically based path tracer with a Mitsuba 3 style Python API.

``import heliograph as mi`` runs most Mitsuba 3 scripts (``cuda_ad_rgb`` means
``cuda_rgb``; ``scalar_rgb`` and ``llvm_ad_rgb`` mean ``cpu_rgb``)::

    mi.set_variant("scalar_rgb")            # alias of heliograph's cpu_rgb
    scene = mi.load_dict(mi.cornell_box())
    image = mi.render(scene, spp=16)        # returns at once; reading waits
    mi.util.write_bitmap("cbox.png", image)

The compiled core lives in the private module ``heliograph._native``. The command
line (``heliograph render scene.xml``, ``python -m heliograph``) is in ``__main__``;
``pip install "heliograph[cuda]"`` adds the CUDA backend's compiler (NVRTC).
"""

from __future__ import annotations

from . import _nvrtc, util, xml
from ._bitmap import Bitmap, Struct
from ._cbox import cornell_box
from ._native import (
    CudaUnavailableError,
    RenderError,
    Scene,
    SceneError,
    SceneFileError,
    SceneParameters,
    TensorXf,
    VariantError,
    __version__,
    cuda_stream,
    load_file,
    load_string,
    progress,
    set_progress,
    set_variant,
    sync_device,
    traverse,
    variant,
    variants,
)
from ._objects import (
    BSDF,
    BoundingBox3f,
    Emitter,
    Film,
    Integrator,
    ReconstructionFilter,
    Sensor,
    Shape,
    Texture,
    load_dict,
    render,
)
from ._transform import ScalarTransform4f, Transform4f
from ._types import (
    Color3f,
    Float,
    Frame3f,
    Point3f,
    ScalarColor3f,
    ScalarNormal3f,
    ScalarPoint3f,
    ScalarVector3f,
    Vector3f,
)

# Before the CUDA backend can open: where the nvidia-cuda-nvrtc wheel may be.
_nvrtc.register()

__all__ = [
    "BSDF",
    "Bitmap",
    "BoundingBox3f",
    "Color3f",
    "Emitter",
    "Film",
    "Float",
    "Frame3f",
    "Integrator",
    "Point3f",
    "ReconstructionFilter",
    "ScalarNormal3f",
    "ScalarPoint3f",
    "ScalarVector3f",
    "Sensor",
    "Shape",
    "Struct",
    "Texture",
    "Transform4f",
    "Vector3f",
    "xml",
    "CudaUnavailableError",
    "RenderError",
    "ScalarColor3f",
    "ScalarTransform4f",
    "Scene",
    "SceneError",
    "SceneFileError",
    "SceneParameters",
    "TensorXf",
    "VariantError",
    "__version__",
    "cornell_box",
    "cuda_stream",
    "load_dict",
    "load_file",
    "load_string",
    "progress",
    "render",
    "set_progress",
    "set_variant",
    "sync_device",
    "traverse",
    "util",
    "variant",
    "variants",
]
