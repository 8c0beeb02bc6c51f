"""Fixtures of the GPU suite: the cuda_rgb variant, the frameworks, seed scenes.

Policy (../../gpu/README.md): without a usable GPU every test SKIPS with the reason;
with HELIOGRAPH_REQUIRE_GPU=1 (set by tests/gpu/run_python_gpu.sh on the GPU machine) a
failure to select cuda_rgb FAILS every test instead. A missing framework (PyTorch, JAX,
CuPy, TensorFlow) skips only the tests that need it. Every test runs under a watchdog
that dumps the stacks into WATCHDOG_LOG and exits after TEST_TIMEOUT_S: a hung CUDA wait
cannot be interrupted from Python, and the GPU run must end.
"""

from __future__ import annotations

import faulthandler
import importlib.util
import os
import tempfile
import warnings
from typing import Any, Callable

# before any framework is imported: JAX would reserve 75 % of the GPU, TensorFlow all of it
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402

import heliograph as hg  # noqa: E402

from .common import CALL_FAILED, EXAMPLE, HEAVY, Seed, scenes_root  # noqa: E402

REQUIRE_GPU = os.environ.get("HELIOGRAPH_REQUIRE_GPU") == "1"
TEST_TIMEOUT_S = float(os.environ.get("HELIOGRAPH_GPU_TEST_TIMEOUT", "150"))
# pytest captures fd 2 while a test runs and the watchdog's exit would lose that capture,
# so its stack dump goes to a file (run_python_gpu.sh prints it).
WATCHDOG_LOG = os.environ.get("HELIOGRAPH_GPU_WATCHDOG_LOG") or os.path.join(
    tempfile.gettempdir(), f"heliograph-gpu-watchdog-{os.getpid()}.txt")


_cuda_problem: Any = ...  # not checked yet


def _select_cuda() -> Any:
    global _cuda_problem
    if _cuda_problem is ...:
        try:
            hg.set_variant("cuda_rgb")
            _cuda_problem = None
        except Exception as e:  # CudaUnavailableError; VariantError on a build without CUDA
            _cuda_problem = f"{type(e).__name__}: {e} (variants of this build: {hg.variants()})"
    return _cuda_problem


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Marks failed calls, so that teardown checks do not pile a second report on them."""
    outcome = yield
    if call.when == "call" and outcome.get_result().failed:
        item.stash[CALL_FAILED] = True


@pytest.fixture(scope="session", autouse=True)
def _cuda_variant_available():
    """Runs before every other fixture: skip (or fail) the whole suite without cuda_rgb."""
    problem = _select_cuda()
    if problem is not None:
        if REQUIRE_GPU:
            pytest.fail(f"HELIOGRAPH_REQUIRE_GPU=1 but the cuda_rgb variant is unusable: {problem}",
                        pytrace=False)
        pytest.skip(f"no usable GPU, cuda_rgb unavailable: {problem}")


@pytest.fixture(autouse=True)
def _quiet_cpu_variant(request):
    """Overrides ../conftest.py's fixture of this name: GPU tests run on cuda_rgb."""
    hg.set_variant("cuda_rgb")
    hg.set_progress(False)
    with open(WATCHDOG_LOG, "a") as log:
        log.write(f"watchdog: {TEST_TIMEOUT_S:.0f} s for {request.node.nodeid}\n")
        log.flush()
        faulthandler.dump_traceback_later(TEST_TIMEOUT_S, exit=True, file=log)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
        hg.set_progress(False, delay=0.5)


# ---------------------------------------------------------------- frameworks


def _import(module: str, name: str) -> Any:
    """Imports a framework, or skips saying it is missing. Warnings raised while the
    framework imports itself are its own business (the suite turns warnings into errors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pytest.importorskip(module, reason=f"{name} is not installed")


@pytest.fixture(scope="session")
def torch():
    """PyTorch with a CUDA device (skips with the reason otherwise)."""
    torch = _import("torch", "PyTorch")
    if not torch.cuda.is_available():
        pytest.skip(f"PyTorch {torch.__version__} sees no CUDA device")
    return torch


@pytest.fixture(scope="session")
def jax():
    """JAX with its GPU backend."""
    jax = _import("jax", "JAX")
    _import("jax.dlpack", "jax.dlpack")
    _import("jax.numpy", "jax.numpy")
    try:
        if not jax.devices("gpu"):
            raise RuntimeError("no GPU device listed")
    except RuntimeError as e:
        pytest.skip(f"JAX {jax.__version__} has no GPU backend: {e}")
    return jax


@pytest.fixture(scope="session")
def cupy():
    """CuPy with a CUDA device."""
    cupy = _import("cupy", "CuPy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no device")
    except Exception as e:
        pytest.skip(f"CuPy {cupy.__version__} sees no CUDA device: {e}")
    return cupy


@pytest.fixture(scope="session")
def tf():
    """TensorFlow with a GPU (absent on the GPU machine as far as we know: then it skips)."""
    tf = _import("tensorflow", "TensorFlow")
    if not tf.config.list_physical_devices("GPU"):
        pytest.skip(f"TensorFlow {tf.__version__} sees no GPU")
    return tf


# ---------------------------------------------------------------- scenes


@pytest.fixture
def make_seed() -> Callable[..., Seed]:
    """``make_seed(res=64, spp=16)``: a fresh seed scene on cuda_rgb."""

    def make(res: int = 64, spp: int = 16) -> Seed:
        scene = hg.load_file(os.path.join(scenes_root(), "scenes", "seed.xml"), res=res, spp=spp)
        return Seed(scene, hg.traverse(scene), res, spp)

    return make


@pytest.fixture
def heavy(make_seed) -> Seed:
    """A seed scene whose renders take ~50 ms on the H200 (races show)."""
    s = make_seed(**HEAVY)
    s.render().numpy()  # first render: module load, scene upload
    return s


@pytest.fixture(scope="session")
def example():
    """python/examples/texture_update_bug.py as a module (its run() is the frame loop)."""
    spec = importlib.util.spec_from_file_location("texture_update_bug", EXAMPLE)
    assert spec is not None and spec.loader is not None, EXAMPLE
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
