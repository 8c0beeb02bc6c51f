"""Threads and processes: whatever a user does from several threads or processes, they get a
result or a Python exception that says what and where; the interpreter never dies, nothing
hangs, and no earlier result is corrupted.

Every scenario runs in a fresh interpreter under a time limit (``_in_child``): a hang fails
its test instead of hanging the suite, and a crash fails it with the signal that ended the
child. A scenario is an ordinary function of this module (``_scenario_*``), run by name in
the child; the workers of the process pools are functions of this module too.

Images are compared bit for bit: the same scene, spp and seed give the same bits on the CPU,
whatever the thread count or scheduling, so anything other than equality is a bug.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings
from typing import Any, Callable, List, Sequence

import numpy as np
import pytest

import heliograph as hg
from conftest import seed_dict
from heliograph import _native

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = "shape.bsdf.reflectance.data"
# the longest any scenario may take on a slow 2-core machine before it counts as hung
LIMIT_S = 240.0


def _in_child(scenario: Callable[[], None], timeout: float = LIMIT_S) -> str:
    """Runs ``scenario`` (a function of this module) in a new interpreter with warnings as
    errors, and returns what it printed; fails the test when it hangs past ``timeout``,
    raises, or dies of a signal."""
    code = f"import test_concurrency as t; t._child_main({scenario.__name__!r})"
    try:
        r = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=HERE, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        pytest.fail(f"{scenario.__name__} hung: no result after {timeout:.0f} s\n"
                    f"--- stdout\n{out}\n--- stderr\n{err}")
    if r.returncode < 0:
        pytest.fail(f"{scenario.__name__}: the interpreter died of {signal.Signals(-r.returncode).name}\n"
                    f"--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}")
    assert r.returncode == 0, f"{scenario.__name__} failed\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"
    assert "scenario passed" in r.stdout, r.stdout
    return r.stdout


def _child_main(name: str) -> None:
    """The child's entry point: the quiet CPU variant (as conftest sets it), then the scenario."""
    hg.set_variant("cpu_rgb")
    hg.set_progress(False)
    globals()[name]()
    print("scenario passed", flush=True)


def in_threads(work: Callable[..., Any], args: Sequence[Any], timeout: float = LIMIT_S / 2) -> List[Any]:
    """Runs ``work(arg)`` for every arg on its own thread, all released at once, and returns
    their results in order; re-raises the first exception; fails if a thread hangs."""
    barrier = threading.Barrier(len(args))
    results: List[Any] = [None] * len(args)
    errors: List[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(args[i])
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,), name=f"worker-{i}", daemon=True) for i in range(len(args))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), f"{t.name} hung"
    if errors:
        raise errors[0]
    return results


def _textures(which: int, n: int = 4) -> List[np.ndarray]:
    rng = np.random.default_rng(100 + which)
    return [rng.random((8, 8, 3), dtype=np.float32) for _ in range(n)]


def _scene(texture: np.ndarray, res: int = 48) -> Any:
    return hg.load_dict(seed_dict(texture, res=res))


def _assert_same(got: Sequence[np.ndarray], expected: Sequence[np.ndarray], what: str) -> None:
    assert len(got) == len(expected), what
    for i, (a, b) in enumerate(zip(got, expected)):
        assert a.shape == b.shape and np.array_equal(a, b), f"{what}: image {i} differs from the sequential run"


# ---------------------------------------------------------------- threads


def _frames(which: int, spp: int = 16) -> List[np.ndarray]:
    """A frame loop on scene ``which``: each frame stages and applies the next texture while
    the previous frame's render may still run, starts a render, then reads the previous one."""
    texs = _textures(which)
    scene = _scene(texs[0])
    params = hg.traverse(scene)
    images = []
    pending = hg.render(scene, spp=spp, seed=which)
    for k, tex in enumerate(texs[1:], 1):
        params[KEY] = tex
        params.update()
        following = hg.render(scene, spp=spp, seed=k)
        images.append(np.array(pending))
        pending = following
    images.append(np.array(pending))
    return images


def _scenario_two_threads_different_scenes() -> None:
    expected = [_frames(0), _frames(1)]
    for _ in range(3):
        got = in_threads(_frames, [0, 1])
        for w in (0, 1):
            _assert_same(got[w], expected[w], f"thread {w}")


def test_two_threads_render_and_update_different_scenes_as_if_alone():
    """Two threads, each loading, updating and rendering its own scene at the same time,
    get exactly the images the same frame loops give one after the other."""
    _in_child(_scenario_two_threads_different_scenes)


def _scenario_two_threads_same_scene() -> None:
    scene = _scene(_textures(0)[0])
    seeds = list(range(6))
    expected = [np.array(hg.render(scene, spp=16, seed=s)) for s in seeds]

    def work(order: List[int]) -> List[np.ndarray]:
        # start them all, then read them all: every render of both threads runs at once
        imgs = {s: hg.render(scene, spp=16, seed=s) for s in order}
        return [np.array(imgs[s]) for s in seeds]

    for _ in range(2):
        a, b = in_threads(work, [seeds, seeds[::-1]])
        _assert_same(a, expected, "thread 0")
        _assert_same(b, expected, "thread 1")
    # both threads read ONE render still running: one waits for it, the other gets the same data
    shared = hg.render(scene, spp=64, seed=9)
    a, b = in_threads(lambda t: np.array(t), [shared, shared])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, np.array(hg.render(scene, spp=64, seed=9)))


def test_two_threads_rendering_one_scene_get_the_sequential_images():
    """Renders of one scene started from two threads at once, and two threads reading the same
    running render, give the images of sequential renders."""
    _in_child(_scenario_two_threads_same_scene)


def _scenario_update_during_a_long_render() -> None:
    old, new = _textures(2)[:2]
    scene = _scene(old, res=64)
    params = hg.traverse(scene)
    hg.render(scene, spp=1).numpy()  # the pool and the scene are warm
    running = hg.render(scene, spp=LONG_SPP, seed=1)

    def update(_: Any) -> bool:
        params[KEY] = new
        params.update()
        return running.ready

    [finished_before_the_update] = in_threads(update, [None])
    assert not finished_before_the_update, "the update must land while the render runs: make it longer"
    after = hg.render(scene, spp=16, seed=2)
    got_running, got_after = np.array(running), np.array(after)
    np.testing.assert_array_equal(np.array(params[KEY]), new)
    # the scene as it was when the render started, and as the update left it
    ref_old = np.array(hg.render(_scene(old, res=64), spp=LONG_SPP, seed=1))
    ref_new = np.array(hg.render(_scene(new, res=64), spp=16, seed=2))
    assert np.array_equal(got_running, ref_old), "the running render saw (part of) the update"
    assert np.array_equal(got_after, ref_new), "the render after the update did not see it"
    assert not np.array_equal(np.array(hg.render(scene, spp=16, seed=2)),
                              np.array(hg.render(_scene(old, res=64), spp=16, seed=2)))


# long enough (about a second on 2 cores) that an update always lands while it runs
LONG_SPP = 1024


def test_an_update_from_another_thread_does_not_touch_a_running_render():
    """A render snapshots its scene: an update applied by another thread while it runs leaves
    its image exactly that of the scene before the update; the next render sees the update."""
    _in_child(_scenario_update_during_a_long_render)


# ---------------------------------------------------------------- processes


def _render_in_worker(which: int) -> Any:
    """A pool worker: loads scene ``which`` and renders it (a fresh process each time under
    'spawn': it selects its variant itself)."""
    hg.set_variant("cpu_rgb")
    hg.set_progress(False)
    img = np.array(hg.render(_scene(_textures(which)[0], res=32), spp=8, seed=which))
    return os.getpid(), img


def _scenario_spawn_pool() -> None:
    expected = [_render_in_worker(i)[1] for i in range(4)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = pool.map_async(_render_in_worker, range(4)).get(timeout=LIMIT_S / 2)
    assert os.getpid() not in {pid for pid, _ in got}, "the images must come from the workers"
    _assert_same([img for _, img in got], expected, "spawn pool")
    # the parent renders on afterwards
    np.testing.assert_array_equal(_render_in_worker(0)[1], expected[0])


def test_a_spawn_pool_renders_what_the_parent_renders():
    """multiprocessing with the 'spawn' start method: two workers each load and render scenes,
    and their images equal the parent's."""
    _in_child(_scenario_spawn_pool)


def _fork_allowed() -> None:
    # Python 3.12+ warns when a process with threads forks (heliograph's render threads);
    # forking is exactly what these scenarios do on purpose
    warnings.filterwarnings("ignore", r".*fork\(\) may lead to deadlocks", DeprecationWarning)


def _join_or_kill(p: Any, what: str) -> int:
    p.join(LIMIT_S / 4)
    if p.is_alive():
        p.kill()
        p.join()
        raise AssertionError(f"{what} hung")
    return p.exitcode


def _scenario_fork_after_a_render() -> None:
    _fork_allowed()
    scene = _scene(_textures(3)[0])
    expected = np.array(hg.render(scene, spp=8, seed=3))  # the parent's render threads exist now
    fresh_expected = np.array(hg.render(_scene(_textures(4)[0]), spp=8, seed=4))

    def child() -> None:
        np.testing.assert_array_equal(np.array(hg.render(scene, spp=8, seed=3)), expected)
        np.testing.assert_array_equal(np.array(hg.render(_scene(_textures(4)[0]), spp=8, seed=4)), fresh_expected)

    # multiprocessing's 'fork' context
    p = multiprocessing.get_context("fork").Process(target=child)
    p.start()
    assert _join_or_kill(p, "a child forked by multiprocessing") == 0
    # os.fork, where the child runs the interpreter's full exit (every object is dropped)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            child()
            code = 0
        except BaseException:  # noqa: BLE001 - reported by the exit code
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    assert _wait_or_kill(pid, "a child of os.fork") == 0
    # the parent renders on
    np.testing.assert_array_equal(np.array(hg.render(scene, spp=8, seed=3)), expected)


def _wait_or_kill(pid: int, what: str) -> int:
    deadline = time.monotonic() + LIMIT_S / 4
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"{what} hung")


def test_a_forked_child_renders_on_the_cpu_after_the_parent_rendered():
    """A child forked (multiprocessing 'fork', os.fork) after the parent rendered renders on
    the CPU itself (the parent's worker threads do not exist in the child), with the
    parent's images; the parent renders on."""
    _in_child(_scenario_fork_after_a_render)


def _scenario_fork_during_a_render() -> None:
    _fork_allowed()
    scene = _scene(_textures(5)[0], res=64)
    expected = np.array(hg.render(scene, spp=2, seed=0))
    running = hg.render(scene, spp=LONG_SPP, seed=5)
    assert not running.ready

    def child() -> None:
        # the render runs on the parent's threads, which the child does not have
        assert running.ready, "a render the child can never finish must not look busy"
        with pytest.raises(hg.RenderError, match=r"started in process \d+.*forked"):
            np.array(running)
        # the child renders on its own
        np.testing.assert_array_equal(np.array(hg.render(scene, spp=2, seed=0)), expected)

    p = multiprocessing.get_context("fork").Process(target=child)
    p.start()
    assert _join_or_kill(p, "a child forked while a render ran") == 0
    pid = os.fork()
    if pid == 0:  # a child that exits through the interpreter's full shutdown
        code = 1
        try:
            child()
            del running  # the parent's render, dropped in the child: nothing waits for it
            gc.collect()
            code = 0
        except BaseException:  # noqa: BLE001 - reported by the exit code
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    assert _wait_or_kill(pid, "a child of os.fork forked while a render ran") == 0
    # the parent's render was not disturbed
    np.testing.assert_array_equal(np.array(running), np.array(hg.render(scene, spp=LONG_SPP, seed=5)))


def test_a_forked_child_reading_a_render_of_the_parent_gets_an_error_not_a_hang():
    """A render still running when the process forks lives on the parent's threads: the child
    reading it gets a RenderError that says so (never a hang), renders on its own, and
    exits without waiting for it; the parent's render finishes with the right image."""
    _in_child(_scenario_fork_during_a_render)


# ---------------------------------------------------------------- exports across threads

exported: dict = {}


def _scenario_thread_exits_holding_exports() -> None:
    from gpu.dlpack_structs import CapsuleHolder

    scene = _scene(_textures(6)[0], res=32)
    expected = np.array(hg.render(scene, spp=8, seed=6))
    gc.collect()
    base = _native._live_exports()

    def producer(_: Any) -> None:
        img = hg.render(scene, spp=8, seed=6)
        exported["view"] = img.numpy()  # a NumPy view of the render's memory
        exported["capsule"] = hg.render(scene, spp=8, seed=6).__dlpack__()
        exported["unread"] = hg.render(scene, spp=8, seed=6).__dlpack__(max_version=(1, 0))

    in_threads(producer, [None])
    assert _native._live_exports() == base + 3
    np.testing.assert_array_equal(exported.pop("view"), expected)
    got = np.from_dlpack(CapsuleHolder(exported.pop("capsule"), (1, 0)))
    np.testing.assert_array_equal(got, expected)
    del got
    exported.clear()  # the last capsule is dropped unconsumed: its destructor frees it
    gc.collect()
    assert _native._live_exports() == base, "an export outlived every reference to it"


def test_a_thread_that_exits_holding_exports_leaves_them_valid_and_freeable():
    """A thread stores a NumPy view and DLPack capsules of renders in a global and exits; the
    main thread reads them (right images), drops them, and every export is freed."""
    _in_child(_scenario_thread_exits_holding_exports)
