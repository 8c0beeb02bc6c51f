"""CUDA and fork: a child forked from a process that initialised CUDA inherits heliograph's
backend, films, scenes and staging, but no usable CUDA context (CUDA does not support
fork). Every CUDA call of the child raises ``CudaUnavailableError`` saying so and naming
the 'spawn' start method; what it inherited is dropped without calling the driver; the CPU
still renders there; and the parent carries on untouched.

The children run under a time limit (a hang fails the test); the conftest watchdog bounds
the whole test too.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import warnings
from typing import Any, Callable, Dict

import numpy as np

import heliograph as hg
from heliograph import _native

from .common import KEY, scenes_root, settle

CHILD_LIMIT_S = 60.0


def _fork(target: Callable[..., None], *args: Any) -> Any:
    """Starts ``target(*args)`` in a child made by multiprocessing's 'fork' start method."""
    p = multiprocessing.get_context("fork").Process(target=target, args=args)
    with warnings.catch_warnings():
        # Python 3.12+ warns when a process with threads forks (the driver's, heliograph's):
        # forking such a process is what this test does on purpose
        warnings.filterwarnings("ignore", r".*fork\(\) may lead to deadlocks", DeprecationWarning)
        # and JAX, when an earlier test imported it, says the same in its own words
        warnings.filterwarnings("ignore", r"os\.fork\(\) was called", RuntimeWarning)
        p.start()
    return p


def _outcome(call: Callable[[], Any]) -> str:
    try:
        call()
    except Exception as e:  # noqa: BLE001 - reported to the parent
        return f"{type(e).__name__}: {e}"
    return "no error"


def test_a_forked_child_gets_a_clear_error_and_the_parent_carries_on(make_seed):
    # every CUDA object lives in `inherited` only, so that the child can drop them all
    inherited: Dict[str, Any] = {"seed": make_seed(res=64, spp=16)}  # a scene with its device copy
    expected = inherited["seed"].render(seed=0).numpy()
    inherited["read"] = inherited["seed"].render(seed=0)  # a film, read
    inherited["read"].numpy()
    inherited["pending"] = inherited["seed"].render(seed=1)  # enqueued just before the fork
    inherited["tensor"] = hg.TensorXf(inherited["seed"].texture(3))  # a CUDA tensor
    # a CPU scene and its image, for the child's CPU render
    cpu_scene = hg.load_file(os.path.join(scenes_root(), "scenes", "seed.xml"), res=16, spp=4)
    hg.set_variant("cpu_rgb")
    cpu_expected = np.array(hg.render(cpu_scene, seed=2))
    hg.set_variant("cuda_rgb")
    parent = os.getpid()
    reader, writer = multiprocessing.get_context("fork").Pipe(duplex=False)

    def child() -> None:
        out = {
            "render": _outcome(lambda: inherited["seed"].render(seed=0)),
            "read a film": _outcome(lambda: inherited["read"].numpy()),
            "read a pending film": _outcome(lambda: np.array(inherited["pending"])),
            "read a tensor": _outcome(lambda: inherited["tensor"].numpy()),
            "new tensor": _outcome(lambda: hg.TensorXf(np.ones((2, 2, 3), np.float32))),
            "sync_device": _outcome(hg.sync_device),
            "cuda_stream": _outcome(hg.cuda_stream),
            "set_variant": _outcome(lambda: hg.set_variant("cuda_rgb")),
        }
        # the CPU renders in the child
        hg.set_variant("cpu_rgb")
        out["cpu render"] = _outcome(
            lambda: np.testing.assert_array_equal(np.array(hg.render(cpu_scene, seed=2)), cpu_expected))
        # an update of the inherited scene changes the host scene only
        out["update"] = _outcome(lambda: inherited["seed"].set_texture(inherited["seed"].texture(5)))
        writer.send(out)
        # drops everything it inherited: without driver calls, and without hanging
        inherited.clear()
        gc.collect()
        writer.send("dropped")
        writer.close()

    p = _fork(child)
    writer.close()
    assert reader.poll(CHILD_LIMIT_S), "the forked child hung before reporting"
    out = reader.recv()
    assert reader.poll(CHILD_LIMIT_S) and reader.recv() == "dropped", "the child hung dropping what it inherited"
    p.join(CHILD_LIMIT_S)
    if p.is_alive():
        p.kill()
        p.join()
        raise AssertionError("the forked child hung at exit")
    assert p.exitcode == 0, f"the forked child exited with {p.exitcode}"

    why = (f"CudaUnavailableError: CUDA unavailable: CUDA was initialised in process {parent}; "
           f"a forked child (this process, {p.pid}) cannot use it (CUDA does not support fork): "
           "use multiprocessing's 'spawn' start method")
    for call in ("render", "read a film", "read a pending film", "read a tensor", "new tensor",
                 "sync_device", "cuda_stream"):
        assert out[call].startswith(why), f"{call}: {out[call]}"
    assert out["set_variant"].startswith(
        'CudaUnavailableError: CUDA unavailable: variant "cuda_rgb" needs the CUDA backend: '
        f"CUDA was initialised in process {parent}; a forked child"), out["set_variant"]
    assert out["cpu render"] == "no error", out["cpu render"]
    assert out["update"] == "no error", out["update"]

    # the parent: its films, tensors and scene are intact, and it renders on
    seed = inherited["seed"]
    np.testing.assert_array_equal(inherited["read"].numpy(), expected)
    np.testing.assert_array_equal(np.array(inherited["pending"]), seed.render(seed=1).numpy())
    np.testing.assert_array_equal(inherited["tensor"].numpy(), seed.texture(3))
    np.testing.assert_array_equal(seed.render(seed=0).numpy(), expected)
    seed.set_texture(seed.texture(5))
    assert not np.array_equal(seed.render(seed=0).numpy(), expected), "the parent's update took effect"
    np.testing.assert_array_equal(np.array(seed.params[KEY]), seed.texture(5))
    del seed
    inherited.clear()
    settle()
    assert _native._cuda_held_bytes()[1] == 0
