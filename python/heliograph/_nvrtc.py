"""Where the CUDA backend looks for NVRTC from the ``nvidia-cuda-nvrtc`` wheel, which
``pip install "heliograph[cuda]"`` installs: the folders Python imports from, in
order, so the wheel is found wherever ``import nvidia`` would find it (a virtual
environment, the user site, ``PYTHONPATH``, ``pip install --target``). The backend
looks there after ``$HELIOGRAPH_NVRTC`` and before the system's libraries
(``renderer/src/backend/cuda/nvrtc_lib.rs``)."""

import os
import sys
from typing import List

from . import _native


def search_paths() -> List[str]:
    """The existing folders of ``sys.path``, absolute, without repeats. The empty entry
    (the current directory of an interactive session) is left out: a shared library is
    not loaded from wherever the user happens to be."""
    out: List[str] = []
    for entry in sys.path:
        if not entry:
            continue
        path = os.path.abspath(entry)
        if path not in out and os.path.isdir(path):
            out.append(path)
    return out


def register() -> None:
    """Tells the backend the folders (before it opens: it is opened on first use)."""
    _native._set_nvrtc_search_paths(search_paths())
